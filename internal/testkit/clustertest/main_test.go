package clustertest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// nodeBinary is the testnode binary, built on first use into a directory
// TestMain removes.
var nodeBinary *nodeproc.Binary

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "chime-clustertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nodeBinary = nodeproc.NewBinary(testnodePackage, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// skipShort skips a scenario under go test -short: the scenarios run real
// clusters for tens of seconds each.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: skipped with -short")
	}
}

// binary returns the testnode binary, building it on first use.
func binary(t *testing.T) string {
	t.Helper()
	skipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path, err := nodeBinary.Path(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// dialect is a database the scenarios run on.
type dialect struct {
	name string
	// url creates a fresh database for the test and returns its URL, or
	// skips the test when the database is not configured.
	url func(testing.TB) string
	// server restarts the database server; nil for SQLite, which has none.
	server Server
	// inProcessTriggers sizes TestInProcess's load. The race detector
	// instruments the pure-Go SQLite engine too, which makes it several
	// times slower in the test process than in the node binary.
	inProcessTriggers int
}

var dialects = []dialect{
	{name: "sqlite", url: dbtest.SQLiteURL, inProcessTriggers: 50},
	{name: "postgres", url: dbtest.PostgresURL, server: PostgresServer{}, inProcessTriggers: 200},
	{name: "mariadb", url: dbtest.MySQLURL, server: MariaDBServer{}, inProcessTriggers: 200},
}

// Cluster timing shared by the scenarios: short, so that dead nodes are
// found within seconds.
const (
	checkIn   = 500 * time.Millisecond
	deadAfter = 2 * time.Second
)

// quiet discards logs nobody reads.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// openStore opens a store on url for the test; cleanup closes it.
func openStore(t *testing.T, url string, log *slog.Logger) store.Store {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), url, &sqlstore.Options{Logger: log})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return st
}

// newSeeder returns a scheduler on its own store on url that never starts:
// the test schedules jobs and triggers through it, and reads the store.
func newSeeder(t *testing.T, url string) (*chime.Scheduler, store.Store) {
	t.Helper()
	st := openStore(t, url, quiet)
	s, err := chime.New(chime.Config{Store: st, NodeID: "seeder", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopScheduler(t, s) })
	return s, st
}

// startIn returns a start time for a load of n triggers that leaves time to
// seed it and to start three nodes (a later start would only show as lag).
func startIn(n int) time.Time {
	return time.Now().Add(3*time.Second + time.Duration(n)*5*time.Millisecond)
}

// seed seeds the load through seeder and logs how long it took.
func seed(t *testing.T, seeder *chime.Scheduler, load Load) {
	t.Helper()
	began := time.Now()
	if err := load.Seed(context.Background(), seeder); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d triggers in %s; the first fires %s later", load.Triggers, time.Since(began).Round(time.Millisecond), time.Until(load.Start).Round(time.Millisecond))
}

// startScheduler starts s; the test's cleanup stops it unless the test did.
func startScheduler(t *testing.T, s *chime.Scheduler) {
	t.Helper()
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("start %s: %v", s.NodeID(), err)
	}
	t.Cleanup(func() { stopScheduler(t, s) })
}

// stopScheduler stops s, giving its running jobs a minute.
func stopScheduler(t *testing.T, s *chime.Scheduler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Errorf("stop %s: %v", s.NodeID(), err)
	}
}

// nodeConfig is the configuration of a testnode in the scenarios.
func nodeConfig(id, url string) NodeConfig {
	return NodeConfig{ID: id, DatabaseURL: url, Workers: 16, CheckIn: checkIn, DeadAfter: deadAfter}
}

// records reads the nodes' fire logs, failing the test on a bad file.
func records(t *testing.T, nodes ...*Node) []firelog.Record {
	t.Helper()
	recs, err := Records(nodes...)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// waitForLoad waits until every expected firing of the load has run on
// one of the nodes, allowing two minutes past its last fire time (on a
// loaded two-core machine, lags of half a minute were seen).
func waitForLoad(t *testing.T, load Load, read func() ([]firelog.Record, error)) {
	t.Helper()
	expected := load.Expected()
	WaitFor(t, time.Until(load.Last())+2*time.Minute, "every firing of the load", func() (bool, string, error) {
		recs, err := read()
		if err != nil {
			return false, "", err
		}
		r := Check(recs, expected, load.Group, CheckOptions{AllowRecoveryReruns: true})
		return r.Misses == 0, fmt.Sprintf("%d of %d firings missing", r.Misses, len(expected)), nil
	})
}

// nodesReader reads the fire logs of nodes.
func nodesReader(nodes ...*Node) func() ([]firelog.Record, error) {
	return func() ([]firelog.Record, error) { return Records(nodes...) }
}

// stopNodes stops the nodes with SIGTERM.
func stopNodes(t *testing.T, nodes ...*Node) {
	t.Helper()
	for _, n := range nodes {
		n.Stop(t)
	}
}

// rerunsOnlyOf fails the test for a recovering execution of a load firing
// whose original execution ran on a node other than lost: only a lost
// node's executions may be re-run.
func rerunsOnlyOf(t *testing.T, recs []firelog.Record, group, lost string) {
	t.Helper()
	original := make(map[FireKey]string)
	for _, r := range recs {
		if r.IsFire() && !r.Recovering {
			original[FireKey{Trigger: r.Trigger, ScheduledMs: r.Scheduled.UnixMilli()}] = r.Node
		}
	}
	for _, r := range recs {
		if !r.IsFire() || !r.Recovering || !strings.HasPrefix(r.Trigger, group+".") {
			continue
		}
		k := FireKey{Trigger: r.Trigger, ScheduledMs: r.Scheduled.UnixMilli()}
		if node, ok := original[k]; ok && node != lost {
			t.Errorf("%s re-run on %s as recovering, but it ran on %s, which was not lost", k, r.Node, node)
		}
	}
}
