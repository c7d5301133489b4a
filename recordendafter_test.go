package chime_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store/memstore"
)

// An execution whose job asked to record its end after a gate stays
// running in the store, and its non-concurrent job does not fire again,
// until the gate opens; then the end is recorded and the next firing runs.
func TestRecordEndAfterHoldsTheEndUntilTheGateOpens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, rec := newScheduler(t, chime.Config{})
		gate := make(chan struct{})
		rec.run = func(_ context.Context, jc *chime.JobContext) error {
			if jc.RefireCount == 0 && len(rec.all()) == 1 {
				jc.RecordEndAfter(gate)
			}
			return nil
		}
		j := job("gated")
		j.DisallowConcurrentExecution = true
		tr := trig("every-second", &schedule.Simple{RepeatCount: schedule.RepeatForever, RepeatInterval: time.Second})
		first := time.Now().Add(time.Second)
		tr.StartTime = first
		scheduleJob(t, s, j, tr)
		start(t, s)

		time.Sleep(5 * time.Second)
		if n := len(rec.all()); n != 1 {
			t.Fatalf("%d runs while the first one's end waits, want 1", n)
		}
		running, err := s.Executions(ctx, &chime.ExecutionFilter{Running: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(running) != 1 || !running[0].ScheduledFireTime.Equal(first) {
			t.Fatalf("running executions %+v, want the first one's", running)
		}

		close(gate)
		time.Sleep(1500 * time.Millisecond)
		stop(t, s)
		if n := len(rec.all()); n < 2 {
			t.Errorf("%d runs after the gate opened, want the next firing too", n)
		}
		execs, err := s.Executions(ctx, &chime.ExecutionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range execs {
			if e.ScheduledFireTime.Equal(first) && e.State != chime.ExecutionSucceeded {
				t.Errorf("first execution is %s once the gate opened, want SUCCEEDED", e.State)
			}
		}
	})
}

// When Stop gives up waiting for a gate that never opens, the end is not
// recorded: the execution is recovered by another node, as that of a node
// that died while its job ran.
func TestRecordEndAfterNeverOpenedIsRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := memstore.New(nil)
		a, recA := newScheduler(t, chime.Config{Store: shared, NodeID: "a"})
		recA.run = func(_ context.Context, jc *chime.JobContext) error {
			jc.RecordEndAfter(make(chan struct{}))
			return nil
		}
		j := job("unrecorded")
		j.RequestsRecovery = true
		tr := trig("once", &schedule.Simple{})
		tr.StartTime = time.Now().Add(time.Second)
		scheduleJob(t, a, j, tr)
		start(t, a)
		time.Sleep(2 * time.Second)
		if n := len(recA.all()); n != 1 {
			t.Fatalf("node a ran %d times, want 1", n)
		}
		stopCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := a.Stop(stopCtx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop = %v, want it to give up waiting for the gate", err)
		}

		b, recB := newScheduler(t, chime.Config{Store: shared, NodeID: "b"})
		start(t, b)
		time.Sleep(30 * time.Second)
		stop(t, b)
		fires := recB.all()
		if len(fires) != 1 || !fires[0].Recover {
			t.Fatalf("node b ran %+v, want one recovery of the unrecorded run", fires)
		}
	})
}
