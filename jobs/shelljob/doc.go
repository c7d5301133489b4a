// Package shelljob is chime's built-in "shell" job type: each firing runs
// one command and records its exit status and output. chime server offers it
// only when started with --enable-shell-jobs (and --shell-allow); this package just runs what
// it is given.
//
// A Spec describes the command; in a job's JSON it looks like this:
//
//	{
//	  "argv": ["/usr/local/bin/backup", "--region", "{{.Params.region}}", "--run", "{{.ExecutionID}}"],
//	  "env": {"BACKUP_BUCKET": "{{.Params.bucket}}"},
//	  "dir": "/var/lib/backup",
//	  "timeout": "10m"
//	}
//
// "argv" runs the program directly, with no shell to interpret its
// arguments; each element is a template over the firing's jobs.Vars (see
// package jobs). For a pipeline or a redirection, set "shell" instead, which
// runs /bin/sh -c with the script:
//
//	{"shell": "pg_dump \"$DATABASE\" | gzip > \"/backups/$CHIME_JOB_NAME-$CHIME_EXECUTION_ID.gz\"", "env": {"DATABASE": "{{.Params.db}}"}}
//
// A script is not a template, so a parameter can never inject shell syntax
// into it; it reads the firing's variables from its environment instead,
// quoted as above:
//
//	CHIME_JOB_GROUP, CHIME_JOB_NAME          the job's key
//	CHIME_TRIGGER_GROUP, CHIME_TRIGGER_NAME  the firing trigger's key
//	CHIME_EXECUTION_ID, CHIME_NODE_ID        this execution and its node
//	CHIME_SCHEDULED_TIME, CHIME_FIRE_TIME    RFC 3339 instants
//	CHIME_ATTEMPT                            1 for the first try
//	CHIME_PARAMS                             the parameters as a JSON object
//	CHIME_SHARD_INDEX, CHIME_SHARD_TOTAL     a sharded job's item: index from 0, of total
//	                                         (set only for the items of sharded jobs)
//
// Every command gets these. Besides them it sees the server's PATH, "env"
// (whose values are templates), and the variables of the server's
// environment that "inherit_env" names, such as ["HOME", "LANG"]; nothing
// else of the server's environment, which may hold its secrets. (The
// boolean "inherit_env": true of earlier versions, which passed all of
// it, is refused with a message giving the new form.) "dir" is an absolute working
// directory; "timeout" (a Go duration string) stops the command, and is
// unlimited when absent. Exactly one of "argv" and "shell" is required;
// unknown fields are refused.
//
// An AllowList limits the programs that may run: with one set on the
// Runner, argv[0] must be an absolute path matching one of its patterns
// (paths or filepath.Match globs), and a script runs only when /bin/sh is
// listed. chime server builds it from its shell_allow setting and checks
// it both when a job is saved and when it fires.
//
// Runner.Run starts the command in a process group of its own and leaves
// nothing of that group running when it returns: on timeout or
// cancellation the group gets SIGTERM and, after a grace period, SIGKILL,
// and processes the command leaves behind when it exits are killed. (On
// systems without process groups only the command itself is stopped.)
// Stdout and stderr go, interleaved, to the writer Run is given, normally a
// jobs.Capture.
//
// When the node dies. A node that loses its lease cancels its running jobs,
// so the group is stopped as above. A node killed outright (kill -9, a
// crash) stops nothing itself: on Linux the command is then sent SIGKILL
// by the kernel (PR_SET_PDEATHSIG), but the processes it started, such as
// a script's pipeline stages, are not and run on until they end; a script
// that must die with its node should exec its last command ("exec
// pg_dump …") or run one program through "argv". On other systems the
// command runs on as well. A node that is frozen (SIGSTOP, a paused VM)
// runs nothing but its jobs' processes keep running: when it resumes it
// finds its lease lost and stops them, by which time a job that requests
// recovery may have started again elsewhere. Jobs with side effects should
// therefore be safe to run twice, or hand the execution ID to what they
// change so that a second run can tell.
package shelljob
