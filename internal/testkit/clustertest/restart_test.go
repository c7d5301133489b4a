package clustertest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// RestartEnv enables TestDatabaseRestart.
const restartEnv = "CHIME_TEST_RESTART_DATABASES"

// TestDatabaseRestart restarts the database server while three nodes fire a
// load: the firings due meanwhile must run late, none lost or doubled, and
// firing must resume after the restart. The "outage" case keeps the server
// down for longer than DeadAfter, so every node also loses its lease.
//
// Restarting the server disrupts every other test using it, so this test
// runs only when CHIME_TEST_RESTART_DATABASES=1; .ci/run runs it in a step
// of its own after the others.
func TestDatabaseRestart(t *testing.T) {
	if os.Getenv(restartEnv) != "1" {
		t.Skipf("restarts the database servers: runs only with %s=1, which .ci/run sets in a separate step", restartEnv)
	}
	for _, d := range dialects {
		for _, tc := range []struct {
			name    string
			downFor time.Duration
		}{{"restart", 0}, {"outage", 2 * deadAfter}} {
			t.Run(d.name+"/"+tc.name, func(t *testing.T) {
				if d.server == nil {
					t.Skipf("%s has no server to restart", d.name)
				}
				testDatabaseRestart(t, d, tc.name, tc.downFor)
			})
		}
	}
}

func testDatabaseRestart(t *testing.T, d dialect, name string, downFor time.Duration) {
	ctx := context.Background()
	url := d.url(t)
	// Registered after the database was created, so it runs before the
	// database is dropped: whatever happens, the server runs again.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := d.server.EnsureRunning(ctx); err != nil {
			t.Errorf("the %s server is not running again: %v", d.name, err)
		}
	})
	bin := binary(t)
	dir := t.TempDir()
	seeder, _ := newSeeder(t, url)

	load := Load{Group: "load", Triggers: 200, Fires: 20, Interval: time.Second, Spread: time.Second, RequestsRecovery: true}
	load.Start = startIn(load.Triggers)
	seed(t, seeder, load)
	var nodes []*Node
	for _, id := range []string{"a", "b", "c"} {
		nodes = append(nodes, StartNode(t, bin, dir, nodeConfig(id, url)))
	}
	WaitFor(t, time.Until(load.Start)+20*time.Second, "three seconds of the load", func() (bool, string, error) {
		recs, err := Records(nodes...)
		n := 0
		for _, r := range recs {
			if r.IsFire() && r.Scheduled.After(load.Start.Add(3*time.Second)) {
				n++
			}
		}
		return n > 0, "not yet", err
	})

	restartAt := time.Now()
	restartCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := d.server.Restart(restartCtx, downFor); err != nil {
		t.Fatalf("restart %s: %v", d.name, err)
	}
	upAt := time.Now()
	var resumed time.Duration
	WaitFor(t, time.Minute, "firing to resume after the restart", func() (bool, string, error) {
		recs, err := Records(nodes...)
		for _, r := range recs {
			if r.IsFire() && r.Actual.After(upAt) {
				resumed = r.Actual.Sub(upAt)
				return true, "", err
			}
		}
		return false, "no firing since the server came back", err
	})
	t.Logf("server down from %s for %s; firing resumed %s after it was up", restartAt.Format("15:04:05.000"), upAt.Sub(restartAt), resumed)
	waitForLoad(t, load, nodesReader(nodes...))
	stopNodes(t, nodes...)
	// A restart may break a connection after the database committed a
	// claim and before the node read the answer; the node takes those
	// claims when it looks again (docs/cluster.md, "A lost answer").
	for _, n := range nodes {
		claims, firings := n.LogLines("claimed triggers although its answer was lost"), n.LogLines("fired the trigger although its answer was lost")
		if claims+firings > 0 {
			t.Logf("node %s: answers lost after the commit: %d claims taken, %d firings run", n.ID, claims, firings)
		}
	}

	res := Check(records(t, nodes...), load.Expected(), load.Group, CheckOptions{AllowRecoveryReruns: true})
	assertExactlyOnce(t, res)
	Report(t, Figures{Dialect: d.name, Scenario: fmt.Sprintf("database_%s", name), Nodes: len(nodes), Triggers: load.Triggers, Result: res, Recovery: upAt.Sub(restartAt) + resumed})
}
