package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// stallingStore is a store whose TriggersFire calls wait, when stall says
// so for the call's firings, until release is closed.
type stallingStore struct {
	*memstore.Store
	stall   func(keys []string) bool
	release chan struct{}

	mu               sync.Mutex
	calls            [][]string // the trigger names of each call, as it started
	inFlight, peakIn int
}

func (s *stallingStore) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	keys := make([]string, len(p.Firings))
	for i, f := range p.Firings {
		keys[i] = f.Trigger.Key.Name
	}
	s.mu.Lock()
	s.calls = append(s.calls, keys)
	s.inFlight++
	s.peakIn = max(s.peakIn, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if s.stall(keys) {
		<-s.release
	}
	return s.Store.TriggersFire(ctx, p)
}

func (s *stallingStore) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	return acquireOnly(ctx, s, p)
}

func (s *stallingStore) started() (calls [][]string, peak int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls), s.peakIn
}

// addStaggered adds n hourly triggers t0, t1, … whose first fire times
// are 10ms apart from first, and returns those times.
func addStaggered(t *testing.T, h *harness, n int, first time.Time) []time.Time {
	t.Helper()
	var due []time.Time
	for i := range n {
		at := first.Add(time.Duration(i) * 10 * time.Millisecond)
		h.addTrigger(t, fmt.Sprintf("t%d", i), at, time.Hour, "")
		due = append(due, at)
	}
	return due
}

func TestStalledFireCallHoldsUpOnlyItsOwnFirings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &stallingStore{
			Store:   memstore.New(nil),
			stall:   func(keys []string) bool { return slices.Contains(keys, "t0") },
			release: make(chan struct{}),
		}
		h := newHarness(t, st)
		due := addStaggered(t, h, 6, time.Now().Add(5*time.Second))
		h.engine.Start()
		time.Sleep(6 * time.Second)
		// t0's call still waits; the triggers due after it fired meanwhile,
		// each in a call of its own.
		if got, want := h.firedTimes(), due[1:]; !slices.Equal(got, want) {
			t.Errorf("while t0's fire call stalled, fired %v, want %v", got, want)
		}
		close(st.release)
		time.Sleep(time.Second)
		if err := h.engine.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := h.firedTimes()
		slices.SortFunc(got, time.Time.Compare)
		if !slices.Equal(got, due) {
			t.Errorf("fired %v, want each of %v once", got, due)
		}
	})
}

func TestAtMostTwoFireCallsRunAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &stallingStore{
			Store:   memstore.New(nil),
			stall:   func([]string) bool { return true },
			release: make(chan struct{}),
		}
		h := newHarness(t, st)
		due := addStaggered(t, h, 6, time.Now().Add(5*time.Second))
		h.engine.Start()
		time.Sleep(6 * time.Second)
		calls, _ := st.started()
		if want := [][]string{{"t0"}, {"t1"}}; !slices.EqualFunc(calls, want, slices.Equal) {
			t.Errorf("fire calls started while all stalled: %v, want %v", calls, want)
		}
		if got := h.firedTimes(); len(got) != 0 {
			t.Errorf("fired %v while every call stalled, want none", got)
		}
		close(st.release)
		time.Sleep(time.Second)
		if err := h.engine.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		calls, peak := st.started()
		if peak != maxFiresInFlight {
			t.Errorf("%d fire calls ran at once at most, want %d", peak, maxFiresInFlight)
		}
		// The four that waited for a free call went together.
		if got, want := calls[len(calls)-1], []string{"t2", "t3", "t4", "t5"}; len(calls) != 3 || !slices.Equal(got, want) {
			t.Errorf("fire calls %v, want two of one trigger, then [t2 t3 t4 t5]", calls)
		}
		got := h.firedTimes()
		slices.SortFunc(got, time.Time.Compare)
		if !slices.Equal(got, due) {
			t.Errorf("fired %v, want each of %v once", got, due)
		}
	})
}

func TestFireCallInFlightAtStopRunsItsJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &stallingStore{
			Store:   memstore.New(nil),
			stall:   func([]string) bool { return true },
			release: make(chan struct{}),
		}
		h := newHarness(t, st)
		due := addStaggered(t, h, 1, time.Now().Add(5*time.Second))
		h.engine.Start()
		time.Sleep(6 * time.Second)
		stopped := make(chan error)
		go func() { stopped <- h.engine.Stop(context.Background()) }()
		synctest.Wait()
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned %v while a fire call was in flight", err)
		default:
		}
		close(st.release)
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		if got := h.firedTimes(); !slices.Equal(got, due) {
			t.Errorf("fired %v, want %v: the call's firing runs", got, due)
		}
		execs, err := st.ExecutionList(context.Background(), &store.ExecutionListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(execs) != 1 || execs[0].State != store.ExecutionSucceeded {
			t.Errorf("executions %+v, want one SUCCEEDED", execs)
		}
	})
}
