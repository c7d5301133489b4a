// Package chaos is the soak and fault suite of chime server: it runs real
// `chime server` processes as a cluster, hurts them on a seeded random
// schedule, and then audits through the server's HTTP API that every
// scheduled instant of every job is accounted for.
//
// The suite is its test, TestSoak (see docs/reliability.md):
//
//	go test ./internal/testkit/chaos -run Soak                        # CI scale: 45 s per database
//	go test -timeout 0 ./internal/testkit/chaos -run Soak -args -duration 30m   # by hand
//	go test ./internal/testkit/chaos -run Soak -args -seed 7 -nodes 5
//
// # What runs
//
// The test builds ./cmd/chime once (without -race, like the cluster
// scenarios' node program) and starts -nodes server processes on a fresh
// database: an SQLite file shared by the processes, a PostgreSQL schema or
// a MariaDB database (package dbtest). Each PostgreSQL or MariaDB node
// reaches the database through its own TCP proxy (clustertest.Proxy), so
// that its connections can be cut. A recording HTTP target in the test
// process answers the cluster's HTTP jobs and records, for each request,
// the job, the scheduled time, the execution ID, the attempt and the node,
// which the jobs send in their request body ({{.ScheduledTime}} and the
// other template variables of package jobs).
//
// The jobs fire every one or two seconds, from a fixed start time to a
// fixed end time, with the IGNORE_MISFIRE_POLICY instruction so that a
// late firing still runs for its own scheduled time. Some request
// recovery, one fails its first attempt and is retried, and two are slow
// (the target holds their requests for seconds), so that faults hit them
// mid-run.
//
// # Faults
//
// One fault at a time, each after a random pause, on a random node, from a
// math/rand source seeded by -seed (printed, so a run can be repeated):
//
//   - kill9: SIGKILL, then a restart under the same node ID after a random
//     delay of up to twice DeadAfter;
//   - sigstop: SIGSTOP for longer than DeadAfter, then SIGCONT;
//   - cut: the node's proxy closes its database connections and refuses
//     new ones, for 0.5 to 1.5 s (the node keeps its lease and its writes
//     fail) or for longer than DeadAfter (it loses its lease) (PostgreSQL
//     and MariaDB);
//   - dbrestart: the database server restarts (PostgreSQL and MariaDB, only
//     with CHIME_TEST_RESTART_DATABASES=1, because it disrupts every other
//     test using the server; .ci/run sets it in a step of its own).
//
// # Audit
//
// Once the faults stop, every node runs again and the cluster settled
// (nothing left running, nothing new for a while), the test reads every
// execution of every job from the history and classifies each scheduled
// instant (see classify): fired, explained (recorded with a reason: an
// execution node_lost, cancelled, skipped, failed with no retry left, or a
// decision such as a misfire), dup (two first attempts), miss (nothing at
// all) or unexplained (a request the history does not know, a lost firing
// of a job that requests recovery not re-run, a retry that never ran, an
// execution still running, an execution recorded node_lost that the target
// answered while its node held its lease). It prints one "chaos:" figures line per
// database and fails on any dup, miss, unexplained instant or execution
// left running, listing each with its execution IDs and the node log lines
// that mention them.
package chaos
