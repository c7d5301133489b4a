package engine

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// pathCounter counts the firings made by TriggersAcquireFire and by
// TriggersFire, and loses the answer of the first lose TriggersAcquireFire
// calls that fired something, and of the first loseClaims that claimed
// something and fired nothing, as when the connection breaks during
// COMMIT.
type pathCounter struct {
	*memstore.Store
	mu          sync.Mutex
	claimFired  int // firings made in the claim
	fired       int // firings made by TriggersFire
	lose        int
	lostFirings int
	loseClaims  int
	lostClaims  int
}

func (s *pathCounter) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	res, err := s.Store.TriggersAcquireFire(ctx, p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.claimFired += len(res.Firings)
		if s.lose > 0 && len(res.Firings) > 0 {
			s.lose--
			s.lostFirings += len(res.Firings)
			return nil, errUnreachable
		}
		if s.loseClaims > 0 && len(res.Firings) == 0 && len(res.Claimed) > 0 {
			s.loseClaims--
			s.lostClaims += len(res.Claimed)
			return nil, errUnreachable
		}
	}
	return res, err
}

func (s *pathCounter) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	s.mu.Lock()
	s.fired += len(p.Firings)
	s.mu.Unlock()
	return s.Store.TriggersFire(ctx, p)
}

func (s *pathCounter) counts() (claimFired, fired, lost int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claimFired, s.fired, s.lostFirings
}

// A trigger due when the engine claims it fires in the claim's store
// call; one due later is claimed, then fired at its instant.
func TestDueTriggersFireInTheClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &pathCounter{Store: memstore.New(nil)}
		h := newHarness(t, st)
		now := time.Now()
		h.addTrigger(t, "due", now.Add(-time.Second), time.Hour, "")
		h.addTrigger(t, "later", now.Add(time.Second), time.Hour, "")
		h.engine.Start()
		time.Sleep(5 * time.Second)
		h.engine.Standby()
		want := []time.Time{now.Add(-time.Second), now.Add(time.Second)}
		if got := h.firedTimes(); !slices.Equal(got, want) {
			t.Errorf("fired %v, want %v", got, want)
		}
		claimFired, fired, _ := st.counts()
		if claimFired != 1 || fired != 1 {
			t.Errorf("%d firings in the claim and %d by TriggersFire, want 1 and 1", claimFired, fired)
		}
	})
}

// A trigger that misfired is claimed and takes the loop's path, which
// applies its misfire instruction: the claim does not fire it.
func TestMisfiredTriggerIsNotFiredInTheClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &pathCounter{Store: memstore.New(nil)}
		h := newHarness(t, st)
		missed := time.Now().Add(-2 * time.Minute) // past the 60s threshold
		h.addTrigger(t, "late", missed, time.Hour, "")
		h.engine.Start()
		time.Sleep(5 * time.Second)
		h.engine.Standby()
		claimFired, _, _ := st.counts()
		if claimFired != 0 {
			t.Errorf("%d firings in the claim, want 0: a misfired trigger gets its instruction first", claimFired)
		}
		if got := h.firedTimes(); slices.Contains(got, missed) {
			t.Errorf("fired %v, want no firing at the missed %s", got, missed)
		}
		rec, err := st.TriggerGet(context.Background(), store.Key{Group: "g", Name: "late"})
		if err != nil {
			t.Fatal(err)
		}
		if !rec.NextFireTime.After(missed) || rec.State != store.StateWaiting {
			t.Errorf("trigger %s next at %s, want WAITING after its misfire instruction moved it past %s", rec.State, rec.NextFireTime, missed)
		}
	})
}

// When the claim that fired a trigger loses its answer, the engine finds
// the execution the store made under its lease and runs the job, once.
func TestClaimThatFiredWhoseAnswerWasLostRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &pathCounter{Store: memstore.New(nil), lose: 1}
		h := newHarness(t, st)
		due := time.Now().Add(-time.Second)
		h.addTrigger(t, "t", due, time.Hour, "")
		h.engine.Start()
		time.Sleep(5 * time.Second)
		h.engine.Standby()
		if _, _, lost := st.counts(); lost != 1 {
			t.Fatalf("%d firings lost their answer, want 1", lost)
		}
		if got := h.firedTimes(); !slices.Equal(got, []time.Time{due}) {
			t.Errorf("fired %v, want once at %s", got, due)
		}
		execs, err := st.Store.ExecutionList(context.Background(), &store.ExecutionListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(execs) != 1 || execs[0].State != store.ExecutionSucceeded {
			t.Errorf("executions %+v, want the one fired, SUCCEEDED", execs)
		}
	})
}

// When a claim of triggers not due yet loses its answer, the store holds
// them ACQUIRED under the node's lease, where no other node claims them
// and no reconciliation returns them: the engine takes them, and they fire
// on time, once. (Before adoptLostClaims they never fired again.)
func TestClaimWhoseAnswerWasLostStillFires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &pathCounter{Store: memstore.New(nil), loseClaims: 1}
		h := newHarness(t, st)
		next := time.Now().Add(time.Second)
		h.addTrigger(t, "t", next, 10*time.Second, "")
		h.engine.Start()
		time.Sleep(15 * time.Second)
		h.engine.Standby()
		st.mu.Lock()
		lost := st.lostClaims
		st.mu.Unlock()
		if lost != 1 {
			t.Fatalf("%d claims lost their answer, want 1", lost)
		}
		want := []time.Time{next, next.Add(10 * time.Second)}
		if got := h.firedTimes(); !slices.Equal(got, want) {
			t.Errorf("fired %v, want %v: the claim whose answer was lost fires too", got, want)
		}
	})
}
