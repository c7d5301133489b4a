// Package firelog is the line format in which the jobs of the cluster tests
// (internal/testkit/clustertest) and of the benchmarks (internal/testkit/bench) record what
// they ran, its reader and writer, and Check, which compares what ran with
// what was expected.
//
// One line is one event:
//
//	trigger_key,scheduled_unix_ms,actual_unix_ms,node_id,recovering[,event[,detail]]
//
// A "record" job writes the first five fields only (event "fire"). A "slow"
// job writes "start" when it begins, then "end" when it finished its work
// or "cancel" with the cause of its context's cancellation as detail.
// actual_unix_ms is the writer's true clock, never a skewed one, so lag is
// measured on true time.
//
// A Writer appends each line with one write(2) on a file opened with
// O_APPEND. A process killed with SIGKILL loses nothing it wrote (the data
// is in the kernel's page cache), so the file needs no fsync for the tests'
// purposes: only a machine crash could lose lines.
package firelog
