package engine

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// lapse is a node whose job requests recovery and runs until its context
// is cancelled, the first time, and succeeds when it runs again.
type lapse struct {
	st    *flakyStore
	valid atomic.Bool
	h     *harness
	mu    sync.Mutex
	runs  []store.ExecutionRecord // the executions the runner was handed
}

func newLapse(t *testing.T) *lapse {
	t.Helper()
	l := &lapse{st: &flakyStore{Store: memstore.New(nil)}}
	l.valid.Store(true)
	l.h = newHarness(t, l.st, func(c *Config) {
		c.Membership.(*testNode).valid = &l.valid
		c.Runner = runFunc(func(ctx context.Context, f *Firing) Outcome {
			l.mu.Lock()
			l.runs = append(l.runs, f.Execution)
			first := len(l.runs) == 1
			l.mu.Unlock()
			if first {
				<-ctx.Done()
				return Outcome{Err: context.Cause(ctx)}
			}
			return Outcome{}
		})
	})
	job := store.JobRecord{Key: store.Key{Group: "g", Name: "j"}, Type: "t", Durable: true, RequestsRecovery: true}
	if err := l.st.JobUpsert(context.Background(), &store.JobUpsertParams{Job: job, Replace: true}); err != nil {
		t.Fatal(err)
	}
	l.h.addTrigger(t, "t", time.Now().Add(time.Second), time.Hour, "")
	return l
}

// outage takes the store down once the job runs, as a database server
// restarting does: the node's lease lapses by its clock, so it cancels its
// running job with ErrLeaseLost, as cluster.Member has it do.
func (l *lapse) outage() {
	time.Sleep(2 * time.Second)
	l.st.failNext(1<<30, "")
	l.valid.Store(false)
	l.h.engine.CancelAll(ErrLeaseLost)
}

func (l *lapse) ran() []store.ExecutionRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.runs)
}

// A database down longer than DeadAfter: every node's lease lapses and each
// cancels its running jobs, then renews its lease under the same epoch when
// the database returns, as no node could declare another dead. The
// cancelled execution of a job that requests recovery is re-run, once, with
// Recovering set; it is not recorded as failed.
func TestJobCancelledForALapsedLeaseIsRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLapse(t)
		l.h.engine.Start()
		l.outage()
		time.Sleep(40 * time.Second)
		l.st.failNext(0, "")
		l.valid.Store(true) // the store renewed the lease: same epoch
		time.Sleep(20 * time.Second)
		l.h.engine.Standby()

		runs := l.ran()
		if len(runs) != 2 {
			t.Fatalf("the job ran %d times, want twice: cancelled, then recovered", len(runs))
		}
		if runs[0].Recovering || !runs[1].Recovering || runs[1].ID != runs[0].ID {
			t.Errorf("runs %+v, want execution %s then its recovery", runs, runs[0].ID)
		}
		execs, err := l.st.ExecutionList(context.Background(), &store.ExecutionListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(execs) != 1 || execs[0].State != store.ExecutionSucceeded || !execs[0].Recovering {
			t.Errorf("executions %+v, want one, recovered and SUCCEEDED", execs)
		}
		if n := l.h.node.refused.Load(); n != 0 {
			t.Errorf("the store refused the lease %d times, want none", n)
		}
	})
}

// When another node did declare this one dead during the outage, it
// recovered the execution already: the lapsed node's hand-off is refused by
// the store's fencing, and the execution is re-run once, by the other node.
func TestJobCancelledForALeaseTrulyLostIsNotHandedOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLapse(t)
		ctx := context.Background()
		other, err := l.st.Store.NodeRegister(ctx, "n2")
		if err != nil {
			t.Fatal(err)
		}
		l2 := store.Lease{NodeID: other.ID, Epoch: other.Epoch}
		l.h.engine.Start()
		l.outage()
		// n2 still reaches the store: it declares n1 dead.
		time.Sleep(30 * time.Second)
		if _, err := l.st.Store.NodeCheckIn(ctx, l2); err != nil {
			t.Fatal(err)
		}
		recs, err := l.st.Store.NodesRecover(ctx, &store.NodesRecoverParams{Lease: l2, DeadAfter: 10 * time.Second})
		if err != nil || len(recs) != 1 || len(recs[0].Recoverable) != 1 {
			t.Fatalf("NodesRecover = %+v, %v; want n1's execution recoverable", recs, err)
		}
		time.Sleep(10 * time.Second)
		l.st.failNext(0, "") // n1 reaches the store again; its lease stays refused
		time.Sleep(20 * time.Second)
		l.h.engine.Standby()

		if n := len(l.ran()); n != 1 {
			t.Errorf("n1 ran the job %d times, want once", n)
		}
		if n := l.h.node.refused.Load(); n == 0 {
			t.Errorf("the store never refused n1's stale lease")
		}
		got, err := l.st.ExecutionsAcquireRecoverable(ctx, &store.ExecutionsAcquireRecoverableParams{Lease: l2, Limit: 10})
		if err != nil || len(got) != 1 || got[0].Execution.ID != recs[0].Recoverable[0].ID || !got[0].Execution.Recovering {
			t.Fatalf("n2 acquired %+v, %v; want n1's execution, recovering", got, err)
		}
		execs, err := l.st.ExecutionList(ctx, &store.ExecutionListParams{})
		if err != nil || len(execs) != 1 {
			t.Fatalf("executions %+v, %v; want exactly one", execs, err)
		}
	})
}
