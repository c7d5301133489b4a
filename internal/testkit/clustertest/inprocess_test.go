package clustertest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// probe records the executions of the probe and serial jobs of
// TestInProcess with their fire time on the store's clock and their run
// interval on the test's clock.
type probe struct {
	mu   sync.Mutex
	runs []probeRun
}

type probeRun struct {
	job       string
	node      string
	execution string    // JobContext.ExecutionID
	fireTime  time.Time // JobContext.FireTime: the node's store-corrected clock
	start     time.Time // the test process's clock, with its monotonic reading
	end       time.Time
}

func (p *probe) job(node string, run time.Duration) chime.Job {
	return chime.JobFunc(func(ctx context.Context, jc *chime.JobContext) error {
		r := probeRun{job: jc.Job.Key.String(), node: node, execution: jc.ExecutionID, fireTime: jc.FireTime, start: time.Now()}
		if run > 0 {
			t := time.NewTimer(run)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		r.end = time.Now()
		p.mu.Lock()
		p.runs = append(p.runs, r)
		p.mu.Unlock()
		return nil
	})
}

// executionIDs returns the IDs of a job's stored executions.
func executionIDs(t *testing.T, st store.Store, job store.Key) map[string]bool {
	t.Helper()
	ids := make(map[string]bool)
	for _, e := range executions(t, st, job) {
		ids[e.ID] = true
	}
	return ids
}

func (p *probe) of(job chime.JobKey) []probeRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []probeRun
	for _, r := range p.runs {
		if r.job == job.String() {
			out = append(out, r)
		}
	}
	return out
}

// TestInProcess runs three schedulers in the test process, each with its
// own connections to one database, so the race detector watches the whole
// cluster. Besides a load of thousands of firings it checks that a
// non-concurrent job never overlaps across nodes, that a trigger paused on
// one node fires on none until resumed on another, and that a job deleted
// on a third node fires nowhere afterwards.
func TestInProcess(t *testing.T) {
	skipShort(t)
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) { testInProcess(t, d) })
	}
}

func testInProcess(t *testing.T, d dialect) {
	ctx := context.Background()
	dir := t.TempDir()
	url := d.url(t)
	// Each node has its own store, so its own connections, as separate
	// processes would.
	var stores []store.Store
	for _, id := range []string{"a", "b", "c"} {
		stores = append(stores, openStore(t, url, FileLogger(t, dir, id+"-store")))
	}
	st := stores[0]
	fires := &MemoryLog{}
	runs := &probe{}
	const serialRun = 300 * time.Millisecond
	var nodes []*chime.Scheduler
	for i, id := range []string{"a", "b", "c"} {
		s, err := chime.New(chime.Config{
			Store:           stores[i],
			NodeID:          id,
			Workers:         16,
			CheckInInterval: checkIn,
			DeadAfter:       deadAfter,
			Logger:          FileLogger(t, dir, id),
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, job := range map[string]chime.Job{
			"record": fires.RecordJob(id),
			"probe":  runs.job(id, 0),
			"serial": runs.job(id, serialRun),
		} {
			if err := s.Register(name, job); err != nil {
				t.Fatal(err)
			}
		}
		nodes = append(nodes, s)
	}
	a, b, c := nodes[0], nodes[1], nodes[2]

	// The load's jobs request recovery. On a loaded machine a node starved
	// for longer than DeadAfter may be declared dead after it fired
	// triggers and before their jobs started: it must not start them then,
	// and they are re-run by a survivor, marked recovering (or, for jobs
	// that do not request recovery, recorded FAILED "node lost", which this
	// test would count as missing). The jobs are durable: a non-durable job
	// is deleted when its trigger completes, and an execution of it still
	// waiting for recovery then fails with "job not found".
	load := Load{
		Group:            "load",
		Triggers:         d.inProcessTriggers,
		Fires:            10,
		Interval:         time.Second,
		Spread:           time.Second,
		Start:            time.Now().Add(3 * time.Second),
		RequestsRecovery: true,
		Durable:          true,
	}
	if err := load.Seed(ctx, a); err != nil {
		t.Fatal(err)
	}
	every100ms := func() schedule.Schedule {
		return &schedule.Simple{RepeatCount: schedule.RepeatForever, RepeatInterval: 100 * time.Millisecond}
	}
	// A job that runs 300ms, disallows concurrency, and two triggers that
	// want it every 100ms.
	serial := chime.JobDetail{Key: chime.NewJobKey("serial", "job"), Type: "serial", DisallowConcurrentExecution: true}
	if err := a.ScheduleJob(ctx, serial, []chime.Trigger{
		{Key: chime.NewTriggerKey("serial", "t1"), Schedule: every100ms()},
		{Key: chime.NewTriggerKey("serial", "t2"), Schedule: every100ms()},
	}, nil); err != nil {
		t.Fatal(err)
	}
	pauseJob := chime.JobDetail{Key: chime.NewJobKey("probe", "pause"), Type: "probe"}
	pauseKey := chime.NewTriggerKey("probe", "pause")
	deleteJob := chime.JobDetail{Key: chime.NewJobKey("probe", "delete"), Type: "probe"}
	for _, j := range []chime.JobDetail{pauseJob, deleteJob} {
		if err := a.ScheduleJob(ctx, j, []chime.Trigger{{Key: chime.NewTriggerKey(j.Key.Group, j.Key.Name), Schedule: every100ms()}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range nodes {
		startScheduler(t, s)
	}

	// Pause on a, hold the pause while everything else fires, resume on b.
	WaitFor(t, 20*time.Second, "the pause probe to fire", func() (bool, string, error) {
		n := len(runs.of(pauseJob.Key))
		return n >= 5, fmt.Sprintf("%d fires", n), nil
	})
	// Executions are created by the store in the same step that fires a
	// trigger, so a set of execution IDs taken after an operation returned
	// holds every firing that happened before it, and only those: the
	// checks below need no clock.
	if err := a.PauseTrigger(ctx, pauseKey); err != nil {
		t.Fatal(err)
	}
	pauseStore := store.Key{Group: pauseJob.Key.Group, Name: pauseJob.Key.Name}
	beforePause := executionIDs(t, st, pauseStore)
	paused, err := a.Trigger(ctx, pauseKey)
	if err != nil {
		t.Fatal(err)
	}
	// Hold the pause for two seconds while everything else fires, looking
	// at the paused trigger all along.
	holdUntil := time.Now().Add(2 * time.Second)
	for time.Now().Before(holdUntil) {
		info, err := c.Trigger(ctx, pauseKey)
		if err != nil {
			t.Fatal(err)
		}
		if info.State != chime.TriggerPaused || info.TimesTriggered != paused.TimesTriggered {
			t.Fatalf("paused trigger is %s, triggered %d times, want PAUSED and still %d", info.State, info.TimesTriggered, paused.TimesTriggered)
		}
		time.Sleep(100 * time.Millisecond) // polling the store, which signals nothing
	}
	if during := executionIDs(t, st, pauseStore); !maps.Equal(during, beforePause) {
		t.Errorf("the paused trigger fired while paused: %d executions when it was paused, %d before its resumption", len(beforePause), len(during))
	}
	if err := b.ResumeTrigger(ctx, pauseKey); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 20*time.Second, "the pause probe to fire after its resumption", func() (bool, string, error) {
		for _, r := range runs.of(pauseJob.Key) {
			if !beforePause[r.execution] {
				return true, "", nil
			}
		}
		return false, "no fire after the resumption", nil
	})

	// Delete on c.
	if ok, err := c.DeleteJob(ctx, deleteJob.Key); err != nil || !ok {
		t.Fatalf("DeleteJob = %v, %v; want true, nil", ok, err)
	}
	deleteStore := store.Key{Group: deleteJob.Key.Group, Name: deleteJob.Key.Name}
	beforeDelete := executionIDs(t, st, deleteStore)

	expected := load.Expected()
	WaitFor(t, time.Until(load.Last())+2*time.Minute, "every firing of the load", func() (bool, string, error) {
		r := Check(fires.Records(), expected, load.Group, CheckOptions{AllowRecoveryReruns: true})
		return r.Misses == 0, fmt.Sprintf("%d of %d firings missing", r.Misses, len(expected)), nil
	})
	for _, s := range nodes {
		stopScheduler(t, s)
	}

	res := Check(fires.Records(), expected, load.Group, CheckOptions{AllowRecoveryReruns: true})
	assertExactlyOnce(t, res)
	Report(t, Figures{Dialect: d.name, Scenario: "in_process", Nodes: len(nodes), Triggers: load.Triggers, Result: res})

	deleteRuns := runs.of(deleteJob.Key)
	if len(deleteRuns) == 0 {
		t.Errorf("the deleted job never fired before its deletion")
	}
	for _, r := range deleteRuns {
		if !beforeDelete[r.execution] {
			t.Errorf("deleted job fired on node %s after its deletion (execution %s at %s)", r.node, r.execution, r.fireTime.Format(time.RFC3339Nano))
		}
	}
	if after := executionIDs(t, st, deleteStore); !maps.Equal(after, beforeDelete) {
		t.Errorf("the deleted job has %d executions at the end, %d when it was deleted", len(after), len(beforeDelete))
	}

	serialRuns := runs.of(serial.Key)
	slices.SortFunc(serialRuns, func(x, y probeRun) int { return x.start.Compare(y.start) })
	serialNodes := map[string]int{}
	for i, r := range serialRuns {
		serialNodes[r.node]++
		if i > 0 && r.start.Before(serialRuns[i-1].end) {
			p := serialRuns[i-1]
			t.Errorf("non-concurrent job overlapped: run on %s [%s, %s] and run on %s from %s",
				p.node, p.start.Format("15:04:05.000"), p.end.Format("15:04:05.000"), r.node, r.start.Format("15:04:05.000"))
		}
	}
	if len(serialRuns) < 10 {
		t.Errorf("the non-concurrent job ran %d times, want at least 10 in the run", len(serialRuns))
	}
	t.Logf("non-concurrent job: %d runs, by node %v; pause probe: %d runs; delete probe: %d runs before deletion",
		len(serialRuns), serialNodes, len(runs.of(pauseJob.Key)), len(deleteRuns))
}
