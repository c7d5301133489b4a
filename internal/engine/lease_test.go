package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// lapsingStore ends the node's lease while the answer of the first fire
// transaction is on its way back: the store fired the trigger, and the job
// must not start.
type lapsingStore struct {
	store.Store
	valid *atomic.Bool
}

func (s *lapsingStore) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	out, err := s.Store.TriggersFire(ctx, p)
	s.valid.Store(false)
	return out, err
}

func (s *lapsingStore) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	return acquireOnly(ctx, s, p)
}

// A job held because its lease lapsed is not run by Stop, and leaves the
// engine: the node unregistering after Stop hands its execution to recovery.
func TestStopDropsAJobHeldForItsLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var valid atomic.Bool
		valid.Store(true)
		st := &lapsingStore{Store: memstore.New(nil), valid: &valid}
		h := newHarness(t, st, func(c *Config) {
			c.Membership.(*testNode).valid = &valid
		})
		h.addTrigger(t, "t", time.Now().Add(time.Second), time.Hour, "")
		h.engine.Start()
		time.Sleep(5 * time.Second)
		if got := len(h.engine.Running()); got != 1 {
			t.Errorf("%d executions in progress while the job is held, want 1", got)
		}
		if err := h.engine.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := h.firedTimes(); len(got) != 0 {
			t.Errorf("executed %v after the lease lapsed", got)
		}
		if got := h.engine.Running(); len(got) != 0 {
			t.Errorf("executions in progress after Stop: %+v", got)
		}
		execs, err := st.ExecutionList(context.Background(), &store.ExecutionListParams{Running: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(execs) != 1 || execs[0].State != store.ExecutionExecuting {
			t.Errorf("executions %+v, want the fired one still EXECUTING for the node's recovery", execs)
		}
	})
}
