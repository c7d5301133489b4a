package clustertest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/firelog"
	"github.com/chime-scheduler/chime/store"
)

// TestSIGSTOP stops a node with SIGSTOP after its fire transaction for a job
// that requests recovery committed and before the job starts (in a trigger
// listener, the last step before the job), and resumes it with SIGCONT once
// the survivor declared it dead and re-ran the job. The resumed node must
// not start the job: its lease lapsed while it was stopped, by its own
// monotonic clock, whatever its check-in loop has noticed yet. The job runs
// once, on the survivor, marked recovering.
//
// It runs on PostgreSQL and MariaDB only. A process stopped inside a write
// transaction would hold SQLite's single write lock, and no other node
// could recover it until it resumed; the databases with sessions end such a
// transaction after their idle-in-transaction timeout. The guarantee itself
// is the same on every store; lease_test.go in package chime proves it step
// by step with a clock the test controls.
func TestSIGSTOP(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			if d.server == nil {
				t.Skip("SQLite: a stopped process may hold the database's one write lock (see the test's comment)")
			}
			testSIGSTOP(t, d)
		})
	}
}

func testSIGSTOP(t *testing.T, d dialect) {
	url := d.url(t)
	bin := binary(t)
	dir := t.TempDir()
	seeder, st := newSeeder(t, url)
	j := slowJob{"stopped", true}
	var nodes []*Node
	for _, id := range []string{"b", "c"} {
		cfg := nodeConfig(id, url)
		cfg.StopOnFire = j.triggerKey().String()
		nodes = append(nodes, StartNode(t, bin, dir, cfg))
	}
	scheduleSlow(t, seeder, j, time.Now().Add(time.Second), time.Second)

	var stopped, survivor *Node
	WaitFor(t, 30*time.Second, "a node to fire the job and stop", func() (bool, string, error) {
		for i, n := range nodes {
			if n.Stopped() {
				stopped, survivor = n, nodes[1-i]
				return true, "", nil
			}
		}
		return false, "no node stopped", nil
	})
	WaitFor(t, 60*time.Second, "the survivor to re-run the job to its end", func() (bool, string, error) {
		recs, err := survivor.Records()
		for _, r := range recs {
			if j.is(r) && r.Event == firelog.EventEnd {
				return true, "", err
			}
		}
		return false, "not yet", err
	})
	stopped.Continue(t)
	WaitFor(t, 30*time.Second, "the resumed node to register again", func() (bool, string, error) {
		log, err := os.ReadFile(stopped.Log)
		n := strings.Count(string(log), `msg="node registered"`)
		return n >= 2, fmt.Sprintf("registered %d times", n), err
	})
	stopNodes(t, nodes...)

	var starts []firelog.Record
	for _, r := range records(t, nodes...) {
		if j.startedOn(r) {
			starts = append(starts, r)
		}
	}
	if len(starts) != 1 || starts[0].Node != survivor.ID || !starts[0].Recovering {
		t.Errorf("the job started %+v; want once, recovering, on the survivor %s (node %s was stopped before the job started and resumed after its lease lapsed)", starts, survivor.ID, stopped.ID)
	}
	execs := executions(t, st, j.storeKey())
	if len(execs) != 1 || execs[0].State != store.ExecutionSucceeded || !execs[0].Recovering || execs[0].NodeID != survivor.ID {
		t.Errorf("stored executions %+v, want one SUCCEEDED, recovering, on %s", execs, survivor.ID)
	}
}
