// Package testkit holds, in its subpackages, everything chime needs to test
// and measure itself and nothing it needs to run. Product code (the library,
// the server, cmd/chime) never imports any of it; a test in cmd/chime checks
// that the chime binary's import graph holds no package under
// internal/testkit.
//
//	bench        the benchmark workloads behind cmd/chime-bench (docs/performance.md)
//	browsertest  a headless Chromium driven from Go tests (the console's browser tests)
//	chaos        the soak and fault suite of chime server (docs/reliability.md)
//	clustertest  the cluster scenarios: kill -9, proxy cuts, clock skew, restarts (docs/cluster.md)
//	dbtest       a fresh SQLite, PostgreSQL or MariaDB database per test, from the environment
//	firelog      the line format in which test and benchmark jobs record what ran, and its check
//	logtest      a slog handler that records, for tests that assert logs
//	mailtest     a real SMTP server for the alert e-mail tests
//	nodeproc     builds and runs the node processes of multi-process tests and benchmarks
//	testreport   go test, then one line saying what was skipped and why (a command)
//
// The package itself is empty: it exists to carry this documentation.
package testkit
