// Package bench runs chime's benchmark workloads (issue 6) on real node
// processes and a real database, and measures how many firings per second
// a cluster sustains, how late they run, and whether any ran twice or
// never. cmd/chime-bench is its command line; docs/performance.md holds
// the figures.
//
// # Workloads
//
// A Workload is a set of trigger Series, each trigger with its own job,
// and what to measure:
//
//	W1a  Burst: K=20,000 one-shot triggers, fire times spread over 10 s
//	W1b  Burst: K=50,000 over 5 s
//	W1c  Burst: K=100,000 due within one second
//	W2a  Steady: R=1,000 triggers firing every second for 60 s, phases
//	     spread over the second; the middle 40 s are measured
//	W2b  Steady: R=5,000 likewise
//	W3   Failover, on 2 nodes: 200 triggers firing every second and 20
//	     jobs running 5 s (each firing every 20 s) for 40 s; the busiest
//	     node (most long jobs running) is killed with SIGKILL at 20 s
//	E1   Executors, on server nodes: R=2,000 jobs of type executor firing
//	     every second for 60 s, a no-op handler on 20 executor processes
//	     of one group, round robin; the middle 40 s are measured
//
// D1 (issue 17) is no trigger workload, and runs through RunD1 instead of
// Run: 1,000 instances of a 10-task diamond workflow (start, 8 tasks in
// parallel, end) started at once through the API by 50 clients spread
// over 2 server nodes. Each task is a Go job type of the server nodes
// that writes one fire log line keyed by its instance and task, which
// gives dup and miss; the task-start lag (a task's start after its last
// upstream task's end) and instances per second come from the instances'
// recorded times, read back through the API once they ended.
//
// C1 fires nothing either, and runs through RunC1: 5,000 one-shot jobs
// due in an hour created through a server node's API by 8 clients, one a
// request, then 5,000 more 1,000 a request, measuring each path's rate,
// the requests' durations and the database server's CPU per job.
//
// Every trigger ignores misfires (schedule.MisfireIgnore), so a late
// firing still runs for its own scheduled time and shows as lag, never as
// a miss. In W3 every job requests recovery, as in the cluster tests: a
// firing the killed node had taken but not finished is re-run by the
// survivor, and that one re-run is not a duplicate.
//
// # A run
//
// Run creates the run's tables in the given database under a table prefix
// of its own (bench_<random>_), and drops them at the end. It seeds the
// triggers through a chime.Scheduler that never starts, before any node
// runs, for a first fire time a day away. Once all are stored and every
// node (and executor) is ready, it moves every trigger's times by one
// UPDATE so that the first fire time (T0) is about WarmUp (5 s) after
// that; a node looks at the store at least every second, so it sees them
// in time.
//
// Each node is a separate process (`chime-bench node`, see RunNode): a
// chime.Scheduler with 10 workers on sqlstore.Open, whose jobs append one
// line per execution to the node's own fire log (package firelog):
//
//	job_key,scheduled_fire_ms,actual_fire_ms,node,recovering[,start|end]
//
// The job key is also the trigger key. A node prints "ready" once its
// scheduler started (package nodeproc), stops on SIGTERM and, with
// CountSQL, prints the statements it sent when it stops.
//
// With Options.Via set to ViaServer, each node runs the product's
// package server instead (`chime-bench server-node`, see RunServerNode:
// the server path, the code `chime server` runs, with its defaults), which
// registers the same job types through the server's job runner
// (Server.RegisterJobType) and prints "ready" once the server is ready.
// The chime binary itself carries no benchmark code. A
// server takes no table prefix, so the run creates a namespace of its own
// (a PostgreSQL schema, a MySQL database or an SQLite file in the run's
// directory) and removes it at the end.
//
// Run follows the fire logs as they grow. It stops the nodes once every
// measured firing ran and the last fire time passed (and, in W3, every
// interrupted job was re-run), or 120 s after the last fire time.
//
// # Figures
//
// The merged logs give one Result: fires (executions of measured
// firings), thr (fires divided by the time from the first measured
// scheduled fire time to the last execution), the lag percentiles p50,
// p95, p99 and max (actual minus scheduled fire time, millisecond
// resolution), dup (measured firings that ran more than once, a single
// recovery re-run excepted) and miss (measured firings that did not run
// within 120 s). W3 adds recovery: from the kill until a survivor had
// started re-running the last of the killed node's interrupted jobs; an
// interrupted job never re-run is a miss.
//
// # Executors
//
// A workload with Executors (E1, ExecutorFailover) runs on server nodes,
// each listening on a free local port, whose first admin gets a password
// of the run's. Once they are ready the run logs in to the first, creates
// a token of role executor for ExecutorGroup, and starts the executor
// processes (`chime-bench executor`, see RunExecutor: the Go SDK),
// connected to the nodes in turn. Their handlers write the fire logs, so
// the lag is the dispatch lag (scheduled time to handler start), and the
// result adds the split of the runs over the executors. The jobs are
// seeded as chime server keeps them (type executor, the target in the
// job's metadata), past the save-time check of their group and handler.
// ExecutorFailover kills a node and then the busiest executor; with
// Options.CheckHistory the run also counts, from the history a live node
// serves, the firings recorded twice, missing, or not ended with exactly
// one succeeded attempt (Report.History).
//
// On PostgreSQL, Run also samples pg_stat_activity every 100 ms while the
// workload fires and counts what the nodes' active sessions wait on
// (Report.Waits): "Lock:…" samples mean a node waited on a row another
// held.
package bench
