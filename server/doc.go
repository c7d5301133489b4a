// Package server is chime server: a node of a scheduler service that
// manages jobs through a REST API, runs HTTP requests, shell commands and
// Go job types, records every execution, retries, times out, enforces
// overlap policies across the cluster, and alerts. `chime server`
// (cmd/chime) runs one; a team embeds one in its own binary to add Go job
// types:
//
//	srv, err := server.New(ctx, server.Config{DatabaseURL: "postgres://…"})
//	…
//	err = srv.RegisterJobType("invoice", chime.JobFunc(sendInvoices))
//	…
//	err = srv.Run(ctx) // until ctx ends, then a graceful stop
//
// Run listens on Config.Listen once the database is open. To stop before
// touching the database when the port is taken, as cmd/chime does, call
// Listen before New and pass the listener to Serve instead.
//
// The server is a layer on the library's public API: a chime.Scheduler on a
// sqlstore.Store, package server/history for the execution history,
// decisions and audit log, server/alert for e-mail and webhook alerts,
// server/livelog for the log lines of running executions, which any
// node's API streams while they run (GET
// /api/v1/executions/{id}/logs/stream; see livelogs.go),
// server/auth for users and tokens, server/secret for the secrets jobs
// insert with {{secret "name"}} (encrypted with Config.SecretKey, read
// when a job fires, masked in its recorded output) and server/httpapi for
// the routes. Any number of servers on one PostgreSQL or MySQL database
// form a cluster.
//
// # Jobs
//
// A job of the API (api.Job) is a durable chime job whose type is "http",
// "shell", "executor" or a registered Go type, plus one trigger per schedule, named
// after the job ("nightly-0") unless named. The server-only settings
// (the request or command, retry policy, overlap policy, alert
// recipients, paused) live in the job's data map under one reserved key
// that Go job types never see; its timeout and recovery are the chime
// job's own. Writes are checked first and refused whole, with an error
// naming the field ("triggers[0].schedule.expression"). An upsert by key
// (PutJob) reconciles: fields the request left out keep their stored
// values (its triggers included), triggers no longer listed are removed,
// unchanged triggers keep their firing state, and an upsert that changes
// nothing writes nothing. Schedules and calendars travel in the API's form
// of package api/wire and are stored in the library's own encoding, so
// the previous release's spellings, still accepted with a warning, change
// nothing stored. Every write of the job bumps its version, and an update
// that names the version it read (If-Match) is applied only if nobody
// changed the job since, checked atomically by the store. Every change
// of a job is kept as a version (package server/jobversion; see
// versions.go): who made it, when, and the job's spec with its secrets
// masked, which the API lists, compares and rolls back to.
//
// # Executions
//
// Every job type runs through the server's runner, which for each firing:
//
//  1. works out which attempt of which firing it is: one-shot triggers the
//     server makes for run now, retries and backfills carry the run's
//     execution ID, attempt, first attempt and scheduled time in their
//     data under a second reserved key;
//  2. under the skip or cancel overlap policy takes the job's cluster-wide
//     running marker (a row unique per job); a held marker skips the
//     firing (recorded as a skipped execution and decision) or asks the
//     holder's node to cancel it, and waits;
//  3. records the execution as running, runs the job with its output
//     captured and its log lines kept, and records how it ended:
//     succeeded, failed, timed_out (the job's timeout cancelled it),
//     cancelled, or killed (a person asked any node to kill it: the request
//     is the execution's killed_by column, which the node running it polls
//     every 200ms while it runs anything; see Server.KillExecution);
//  4. after a failure or timeout (not a kill) schedules the next attempt as a one-shot
//     trigger after the policy's backoff (a "retry_scheduled" decision), or
//     when none is left sends the failure or timeout alert.
//
// The execution's start and end (step 3) go through the node's history
// writer, which records those of every worker together, many per
// transaction (see historyWriter): the run does not wait for its start,
// an end that comes before its start was written is written with it, in
// its final state, and a run that did not succeed waits for its end to
// be recorded before step 4 (one that succeeded frees its worker at
// once, and the scheduler records the execution's end only once the
// history took it, so that a node that dies first leaves the run to
// recovery: see chime.JobContext.RecordEndAfter). The writes that follow the run (its end,
// its retry, the decisions) are retried until the database takes them,
// however long it is down (see writeQueue): an outage delays them and
// loses none. The
// retry trigger and each decision are named before the first try, so
// that a try whose answer was lost finds its write there. A node presumed
// dead meanwhile, whose execution another node recorded as node_lost,
// records the outcome it really had.
//
// Each attempt has one execution ID, 32 hex digits: the scheduler's for a
// firing's first attempt, one the server chose when it asked for the run
// otherwise (a retry, a run by hand, a backfill, a recovery). The history,
// the API, the attempt's log records (JobContext.Logger, the job's lines
// and the scheduler's "job failed"), its alerts, its templates'
// {{.ExecutionID}} and a Go job type's JobContext.ExecutionID all use it.
//
// Misfires are recorded as decisions (and alerted); a node that dies has
// its running executions recorded as node_lost by the others (and
// alerted), and a job that requests recovery runs again as a new attempt
// marked recovering. A firing whose node died after firing it and before
// recording it gets its node_lost row too: from the node that re-runs it,
// or, when the job does not request recovery, from the nodes' watch of
// the store's executions of the dead node, which chime.Scheduler.Executions
// reads (see recordLostFirings). Pauses and resumes are recorded too, so
// that Explain can answer "why did job X not run at 02:00?".
//
// # Executors
//
// A job of type "executor" runs on an executor, a process of a team's own
// service (package executor is the Go SDK), instead of on the node: after
// the overlap policy, the runner hands the run over through package
// server/dispatch (routing and fencing token in one transaction), records
// which executor runs it, and waits for its result, which one goroutine
// per node reads in batch with the lapsed leases. An executor lost mid-run
// is recorded executor_lost, and the run handed to another executor as the
// next attempt when the job requests recovery; no live executor is
// recorded no_executor. Both are retried and alerted like failures. Kills
// and timeouts ask the executor to cancel. The executor protocol's routes
// take tokens of role executor, scoped to their groups. See
// docs/executors.md.
//
// The queue overlap policy is chime's DisallowConcurrentExecution: a
// firing due while the job runs waits until it ends.
//
// # Concurrency pools
//
// A job that names a pool (api.Job.Pool) takes a slot of it after step 2
// and gives it back when the attempt ends, however it ends (see
// pools.go). A full pool's firings wait in the order of their scheduled
// times, across the cluster, for at most the job's pool_max_wait; then
// the firing trigger's misfire instruction decides whether the firing
// waits on or is recorded skipped with the reason. The slots are taken
// in the database by package server/pool; a lost node's are freed with
// its executions (markNodeLost). See docs/pools.md.
//
// # Child jobs and workflows
//
// A job's children (api.ChildJob) run when its execution ends for good,
// each as a one-shot trigger named by the parent's execution, and record
// it as their cause (see children.go). A workflow (package
// server/workflow) is a DAG of tasks, each the job workflow.NAME/TASK;
// its ready tasks run as one-shot triggers keyed by (instance, task,
// round), the runner records each task's start and last end in the
// workflow store, which readies the next tasks in the same transaction,
// and every node sweeps for ready tasks whose trigger is missing (see
// workflows.go and docs/workflows.md).
package server
