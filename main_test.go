package chime_test

import (
	"context"
	"sync"
	"testing"

	"github.com/chime-scheduler/chime"
	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// goroutine the code starts must be stopped by its owner.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestUnstartedSchedulerHoldsNoGoroutine checks that a scheduler that was
// created and used but never started or stopped leaves no goroutine behind
// once its listeners have heard what happened: the goroutines belong to
// Start and Stop, not to New. It does not run in parallel, since it counts
// the process's goroutines.
func TestUnstartedSchedulerHoldsNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, _ := newScheduler(t, chime.Config{})
	var heard sync.WaitGroup
	heard.Add(1)
	s.AddSchedulerListener("added", func(_ context.Context, ev chime.SchedulerEvent) {
		if ev.Type == chime.EventJobAdded {
			heard.Done()
		}
	})
	j := job("j")
	j.Durable = true
	if err := s.AddJob(context.Background(), j, nil); err != nil {
		t.Fatal(err)
	}
	heard.Wait()
}
