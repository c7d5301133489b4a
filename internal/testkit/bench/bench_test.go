package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
)

// benchBinary is the chime-bench command, built once (without -race) into
// a directory TestMain removes; its hidden subcommands node and
// server-node run the nodes.
var benchBinary *nodeproc.Binary

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "chime-bench-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	benchBinary = nodeproc.NewBinary("github.com/chime-scheduler/chime/cmd/chime-bench", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func executable(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path, err := benchBinary.Path(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWorkloadsFireEachFiringExactlyOnce runs W1, W2 and W3, cut down to
// seconds, through node processes on every database, and checks that no
// firing ran twice or was missed. It asserts nothing about timing; it logs
// each result line.
func TestWorkloadsFireEachFiringExactlyOnce(t *testing.T) {
	t.Parallel()
	w3 := Failover(20, 4, 8*time.Second, 4*time.Second, 2*time.Second)
	runs := []struct {
		w     Workload
		nodes int
		seed  string
	}{
		{Burst("W1", 300, time.Second), 2, SeedBatch},
		{Steady("W2", 50, 6*time.Second, time.Second), 2, SeedSingle},
		{w3, 2, ""},
	}
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			exe := executable(t)
			for _, r := range runs {
				t.Run(r.w.Name, func(t *testing.T) {
					w := r.w
					// A missing firing fails the test within half a minute
					// rather than two.
					w.Grace = 30 * time.Second
					rep, err := Run(context.Background(), Options{
						Workload:    w,
						Nodes:       r.nodes,
						DatabaseURL: url,
						Executable:  exe,
						Seed:        r.seed,
						// Short leases, so that the killed node's jobs are
						// recovered within seconds.
						CheckIn:   500 * time.Millisecond,
						DeadAfter: 1500 * time.Millisecond,
						WarmUp:    time.Second,
						Logger:    testLogger(t),
					})
					if err != nil {
						t.Fatal(err)
					}
					res := rep.Result
					t.Logf("%s: %s", db.Name, res)
					if !res.OK() {
						t.Errorf("%d duplicated, %d missed, %d unexpected firings: %v", res.Duplicates, res.Misses, res.Unexpected, res.Problems)
					}
					if res.Created != w.Triggers() {
						t.Errorf("the result says %d jobs were created, want %d (one per trigger)", res.Created, w.Triggers())
					}
					if w.KillAt > 0 && res.Interrupted == 0 {
						t.Errorf("the killed node %s ran no long job: recovery was not exercised", res.Killed)
					}
				})
			}
		})
	}
}

// testLogger logs the run's progress through t.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// TestServerPathFiresEachFiringExactlyOnce runs a burst and the failover
// workload, cut down to seconds, through node processes running package
// server (Via server) on every database, and checks that no firing ran twice or
// was missed and that the run's namespace is gone afterwards. It asserts
// nothing about timing; it logs each result line.
func TestServerPathFiresEachFiringExactlyOnce(t *testing.T) {
	t.Parallel()
	runs := []Workload{
		Burst("W1", 200, time.Second),
		Failover(20, 4, 8*time.Second, 4*time.Second, 2*time.Second),
	}
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			exe := executable(t)
			for _, w := range runs {
				t.Run(w.Name, func(t *testing.T) {
					w.Grace = 30 * time.Second
					dir := t.TempDir()
					rep, err := Run(context.Background(), Options{
						Workload:    w,
						Nodes:       2,
						DatabaseURL: url,
						Via:         ViaServer,
						Executable:  exe,
						CheckIn:     500 * time.Millisecond,
						DeadAfter:   1500 * time.Millisecond,
						WarmUp:      time.Second,
						Dir:         dir,
						Logger:      testLogger(t),
					})
					if err != nil {
						t.Fatal(err)
					}
					res := rep.Result
					t.Logf("%s via server: %s", db.Name, res)
					if !res.OK() {
						t.Errorf("%d duplicated, %d missed, %d unexpected firings: %v", res.Duplicates, res.Misses, res.Unexpected, res.Problems)
					}
					if w.KillAt > 0 && res.Interrupted == 0 {
						t.Errorf("the killed node %s ran no long job: recovery was not exercised", res.Killed)
					}
					if dbs, _ := filepath.Glob(filepath.Join(dir, "*.db")); db.Name == "SQLite" && len(dbs) != 0 {
						t.Errorf("the run's SQLite files are left behind: %v", dbs)
					}
				})
			}
		})
	}
}

// TestExecutorsRunEachFiringOnce is E1 cut down to seconds: executor jobs
// firing every second through server nodes to executor processes, round
// robin, on every database. No firing may run twice or be missed, and
// every executor must take runs. It asserts nothing about timing; it logs
// the result line (whose lag is the dispatch lag).
func TestExecutorsRunEachFiringOnce(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			w := Executors(20, 4, 6*time.Second, time.Second)
			w.Grace = 30 * time.Second
			rep, err := Run(context.Background(), Options{
				Workload:    w,
				Nodes:       2,
				DatabaseURL: db.URL(t),
				Executable:  executable(t),
				WarmUp:      time.Second,
				Logger:      testLogger(t),
			})
			if err != nil {
				t.Fatal(err)
			}
			res := rep.Result
			t.Logf("%s: %s", db.Name, res)
			if !res.OK() {
				t.Errorf("%d duplicated, %d missed, %d unexpected firings: %v", res.Duplicates, res.Misses, res.Unexpected, res.Problems)
			}
			if len(res.Split) != 4 || slices.Contains(res.Split, 0) {
				t.Errorf("split over the executors %v, want runs on each of 4", res.Split)
			}
		})
	}
}

// TestExecutorsExactlyOnceUnderKills is the exactly-once guarantee of
// executors with real processes: 2 server nodes on PostgreSQL, 6 executor
// processes connected to them in turn, 10 jobs firing every second and 4
// long ones (2 s) firing every second for 40 s, every job requesting
// recovery; one node is killed with SIGKILL at 13 s, and at 20 s the
// executor running the most long jobs. Counted from what the executors
// ran and from the history the surviving node serves: no firing ran
// twice (a recovery re-run excepted) or never, every interrupted run was
// re-run elsewhere, and every firing ended with exactly one succeeded
// attempt. It runs about 70 s, and asserts nothing about timing.
func TestExecutorsExactlyOnceUnderKills(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	w := ExecutorFailover(10, 4, 6, 40*time.Second, 2*time.Second)
	w.Grace = 30 * time.Second
	rep, err := Run(context.Background(), Options{
		Workload:    w,
		DatabaseURL: url,
		Executable:  executable(t),
		// Short leases, so that the killed node's and executor's runs
		// are recovered within seconds.
		CheckIn:       500 * time.Millisecond,
		DeadAfter:     1500 * time.Millisecond,
		ExecutorLease: 2 * time.Second,
		WarmUp:        time.Second,
		CheckHistory:  true,
		Logger:        testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	res, h := rep.Result, rep.History
	t.Logf("%s", res)
	t.Logf("history: %d firings, %d duplicated, %d missed, %d unfinished, %d attempts lost and re-run", h.Firings, h.Duplicates, h.Misses, h.Unfinished, h.Recovered)
	if !res.OK() {
		t.Errorf("executors: %d duplicated, %d missed, %d unexpected firings: %v", res.Duplicates, res.Misses, res.Unexpected, res.Problems)
	}
	if !h.OK() {
		t.Errorf("history: %d duplicated, %d missed, %d unfinished firings: %v", h.Duplicates, h.Misses, h.Unfinished, h.Problems)
	}
	if want := len(w.Expected(time.Time{})); h.Firings != want {
		t.Errorf("the history holds %d firings, want %d", h.Firings, want)
	}
	if res.KilledNode == "" || res.Killed == "" || res.Interrupted == 0 || h.Recovered == 0 {
		t.Errorf("killed node %q and executor %q, %d runs interrupted, %d attempts lost: the kills did not exercise recovery",
			res.KilledNode, res.Killed, res.Interrupted, h.Recovered)
	}
}
