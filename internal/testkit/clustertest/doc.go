// Package clustertest proves chime's cluster guarantees against real
// databases: every scheduled firing runs exactly once across the nodes, dead
// nodes' work is recovered, and neither a node cut off from the database,
// nor a restart of the database server, nor node clocks minutes apart
// loses or doubles a firing.
//
// # Scenarios
//
// Each scenario runs on SQLite (several processes on one file), PostgreSQL
// and MariaDB, and reports one "cluster:" line of figures (see Report):
//
//   - TestInProcess: three schedulers in the test process (so under -race);
//     thousands of firings; a non-concurrent job never overlaps across
//     nodes; a trigger paused on one node fires nowhere until resumed on
//     another; a job deleted on a third fires nowhere afterwards.
//   - TestMultiProcess: three testnode processes, thousands of firings.
//   - TestKill9: the node running long jobs is killed with SIGKILL; the jobs
//     that request recovery re-run on a survivor with Recovering set and
//     their original scheduled time, the others are recorded as failed with
//     "node lost".
//   - TestProxyCut: one node reaches the database through a Proxy that cuts
//     it off (closes its connections) for three times DeadAfter; the others
//     take over its claims and its long jobs, its running jobs see their
//     context cancelled with ErrLeaseLost, and it rejoins when the proxy is
//     restored.
//   - TestProxyPartition: the same with a silent partition (the proxy holds
//     every byte), so the node's store calls hang instead of failing. See
//     the known gap documented at the partition variable: the node cancels
//     its jobs only once the network heals, and the "overlap" figure says
//     how long a recovered job ran on two nodes at once.
//   - TestSIGSTOP: a node stops itself with SIGSTOP after it fired a job and
//     before the job starts, and is resumed with SIGCONT once a survivor
//     declared it dead and re-ran the job; it must not start the job
//     (PostgreSQL and MariaDB).
//   - TestClockSkew: nodes five minutes ahead and behind fire on true time.
//   - TestDatabaseRestart: the database server restarts mid-run. It
//     disrupts every other test using the server, so it runs only with
//     CHIME_TEST_RESTART_DATABASES=1, which .ci/run sets in a separate step.
//
// # How a scenario judges
//
// A Load is a set of fixed-interval triggers whose every fire time is known
// by arithmetic (and checked against the stored triggers' schedule math).
// Its triggers ignore misfires, so a late firing still runs for its own
// scheduled time: lateness never passes for a miss. Jobs append one line
// per execution to a fire log (package firelog) on true time; Check merges
// the nodes' logs and counts, per (trigger, scheduled time), duplicates,
// misses and unexpected firings, and the lag of each execution
// (firelog.Check). Tests wait for conditions with deadlines (WaitFor) and
// assert durations only as generous correctness bounds.
//
// # Processes
//
// nodeproc.Binary builds the node program (package testnode) once per
// test run, without -race; StartNode runs it (a nodeproc.Process),
// Node.Stop sends SIGTERM and Node.Kill SIGKILL. The test seeds triggers through its own scheduler, which never
// starts, on the same database.
package clustertest
