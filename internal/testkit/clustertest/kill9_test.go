package clustertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// Correctness bounds on how long the survivors take to take over a lost
// node's work, from the instant it was lost. It is declared dead DeadAfter
// after its last check-in, which was at most a check-in interval before it
// was lost, and a survivor notices at its own next check-in. Sooner would
// mean a node declared dead before DeadAfter; later, recovery waiting for
// something else. The slack is for a loaded machine.
const (
	recoveryNotBefore = deadAfter - checkIn - 250*time.Millisecond
	recoveryBound     = deadAfter + checkIn + 3*time.Second
)

// checkRecovery fails the test when recovery is outside its bounds.
func checkRecovery(t *testing.T, what string, recovery time.Duration) {
	t.Helper()
	if recovery < recoveryNotBefore || recovery > recoveryBound {
		t.Errorf("%s %s after the node was lost, want between %s and %s", what, recovery, recoveryNotBefore, recoveryBound)
	}
}

// slowJob is a long job of the Kill9 and ProxyCut scenarios.
type slowJob struct {
	name     string
	recovers bool
}

func (j slowJob) key() chime.JobKey               { return chime.NewJobKey("slow", j.name) }
func (j slowJob) triggerKey() chime.TriggerKey    { return chime.NewTriggerKey("slow", j.name) }
func (j slowJob) storeKey() store.Key             { return store.Key{Group: "slow", Name: j.name} }
func (j slowJob) is(r firelog.Record) bool        { return r.Trigger == j.triggerKey().String() }
func (j slowJob) startedOn(r firelog.Record) bool { return j.is(r) && r.Event == firelog.EventStart }

// scheduleSlow schedules a one-shot slow job at at, running for d.
func scheduleSlow(t *testing.T, s *chime.Scheduler, j slowJob, at time.Time, d time.Duration) {
	t.Helper()
	job := chime.JobDetail{Key: j.key(), Type: "slow", RequestsRecovery: j.recovers, Data: chime.JobData{"duration": d.String()}}
	tr := chime.Trigger{Key: j.triggerKey(), Schedule: &schedule.Simple{}, StartTime: at, MisfireInstruction: schedule.MisfireIgnore}
	if err := s.ScheduleJob(context.Background(), job, []chime.Trigger{tr}, nil); err != nil {
		t.Fatal(err)
	}
}

// executions returns the stored executions of a job.
func executions(t *testing.T, st store.Store, job store.Key) []store.ExecutionRecord {
	t.Helper()
	execs, err := st.ExecutionList(context.Background(), &store.ExecutionListParams{JobKey: &job})
	if err != nil {
		t.Fatal(err)
	}
	return execs
}

// lastCheckIn returns when node last renewed its lease, on the store's
// clock.
func lastCheckIn(t *testing.T, st store.Store, node string) time.Time {
	t.Helper()
	nodes, err := st.NodeList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.ID == node {
			return n.LastCheckIn
		}
	}
	t.Fatalf("node %s is not registered", node)
	return time.Time{}
}

// TestKill9 kills with SIGKILL the node running long jobs, some requesting
// recovery and some not, while a load fires on every node. The jobs that
// request recovery must re-run on a survivor, marked recovering, for their
// original scheduled time; the others must be recorded as failed with "node
// lost"; and no firing of the load may be lost or doubled.
func TestKill9(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) { testKill9(t, d) })
	}
}

func testKill9(t *testing.T, d dialect) {
	url := d.url(t)
	bin := binary(t)
	dir := t.TempDir()
	seeder, st := newSeeder(t, url)

	// Node a runs alone at first, so it takes the long jobs. They are due
	// before the load and run long enough to outlast seeding it, as in
	// testDisconnectionOn.
	slow := []slowJob{{"recovers1", true}, {"recovers2", true}, {"fails1", false}, {"fails2", false}}
	slowAt := time.Now().Add(time.Second).Truncate(time.Millisecond)
	const slowRun = 25 * time.Second
	for _, j := range slow {
		scheduleSlow(t, seeder, j, slowAt, slowRun)
	}
	a := StartNode(t, bin, dir, nodeConfig("a", url))
	WaitFor(t, 20*time.Second, "node a to start the long jobs", func() (bool, string, error) {
		recs, err := a.Records()
		started := 0
		for _, r := range recs {
			for _, j := range slow {
				if j.startedOn(r) {
					started++
				}
			}
		}
		return started == len(slow), fmt.Sprintf("%d of %d started", started, len(slow)), err
	})
	load := Load{Group: "load", Triggers: 200, Fires: 12, Interval: time.Second, Spread: time.Second, RequestsRecovery: true}
	load.Start = startIn(load.Triggers)
	seed(t, seeder, load)
	b := StartNode(t, bin, dir, nodeConfig("b", url))
	c := StartNode(t, bin, dir, nodeConfig("c", url))
	a.Kill(t)
	killedAt := time.Now()

	WaitFor(t, 30*time.Second+slowRun, "the jobs requesting recovery to re-run to their end on a survivor", func() (bool, string, error) {
		recs, err := Records(b, c)
		ended := 0
		for _, r := range recs {
			for _, j := range slow {
				if j.recovers && j.is(r) && r.Event == firelog.EventEnd && r.Recovering {
					ended++
				}
			}
		}
		return ended == 2, fmt.Sprintf("%d of 2 re-runs ended", ended), err
	})
	WaitFor(t, 30*time.Second, "the jobs not requesting recovery to be recorded as failed", func() (bool, string, error) {
		for _, j := range slow {
			if j.recovers {
				continue
			}
			execs := executions(t, st, j.storeKey())
			if len(execs) != 1 || execs[0].State != store.ExecutionFailed {
				return false, fmt.Sprintf("%s: %+v", j.name, execs), nil
			}
		}
		return true, "", nil
	})
	waitForLoad(t, load, nodesReader(a, b, c))
	stopNodes(t, b, c)

	all := records(t, a, b, c)
	var recovery time.Duration
	for _, j := range slow {
		var original *firelog.Record
		var reruns []firelog.Record
		for _, r := range all {
			switch {
			case !j.startedOn(r):
			case r.Recovering:
				reruns = append(reruns, r)
			case original != nil:
				t.Errorf("%s started twice without recovering: on %s and on %s", j.name, original.Node, r.Node)
			default:
				original = &r
			}
		}
		if original == nil || original.Node != "a" {
			t.Errorf("%s: original run %+v, want one on node a", j.name, original)
			continue
		}
		execs := executions(t, st, j.storeKey())
		if !j.recovers {
			if len(reruns) != 0 {
				t.Errorf("%s does not request recovery but re-ran: %+v", j.name, reruns)
			}
			if len(execs) != 1 || execs[0].State != store.ExecutionFailed || execs[0].Error != "node lost" {
				t.Errorf("%s: stored executions %+v, want one FAILED with \"node lost\"", j.name, execs)
			}
			continue
		}
		if len(reruns) != 1 {
			t.Errorf("%s: %d recovering runs %+v, want 1", j.name, len(reruns), reruns)
			continue
		}
		rr := reruns[0]
		if rr.Node == "a" || !rr.Scheduled.Equal(original.Scheduled) {
			t.Errorf("%s re-ran on %s for %s, want a survivor and the original scheduled time %s", j.name, rr.Node, rr.Scheduled, original.Scheduled)
		}
		// A node starved of CPU may have last checked in well before
		// it was killed: the store counts DeadAfter from its last
		// check-in, which is the bound that matters, and the test
		// process shares the machine's clock with the database.
		if since := rr.Actual.Sub(lastCheckIn(t, st, "a")); since < deadAfter-250*time.Millisecond {
			t.Errorf("%s re-ran %s after node a's last check-in, want at least DeadAfter (%s)", j.name, since, deadAfter)
		}
		if d := rr.Actual.Sub(killedAt); d > recoveryBound {
			t.Errorf("%s re-ran %s after the node was lost, want at most %s", j.name, d, recoveryBound)
		}
		recovery = max(recovery, rr.Actual.Sub(killedAt))
		if len(execs) != 1 || execs[0].State != store.ExecutionSucceeded || !execs[0].Recovering || !execs[0].ScheduledTime.Equal(original.Scheduled) {
			t.Errorf("%s: stored executions %+v, want one SUCCEEDED, recovering, for %s", j.name, execs, original.Scheduled)
		}
	}

	res := Check(all, load.Expected(), load.Group, CheckOptions{AllowRecoveryReruns: true})
	assertExactlyOnce(t, res)
	rerunsOnlyOf(t, all, load.Group, "a")
	Report(t, Figures{Dialect: d.name, Scenario: "kill9", Nodes: 3, Triggers: load.Triggers + len(slow), Result: res, Recovery: recovery})
}
