package engine

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// refusingStore refuses the first firings it is asked for with a given
// error, each on its own as a store refuses one element of TriggersFire,
// and fires the others.
type refusingStore struct {
	store.Store
	mu      sync.Mutex
	refuse  error
	refusal int // how many more firings to refuse
}

func (s *refusingStore) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	out := make([]store.TriggerFireOutcome, len(p.Firings))
	rest := &store.TriggersFireParams{Lease: p.Lease}
	var restAt []int // index in p.Firings of each element of rest
	s.mu.Lock()
	for i, f := range p.Firings {
		if s.refusal > 0 {
			s.refusal--
			out[i].Err = s.refuse
			continue
		}
		rest.Firings = append(rest.Firings, f)
		restAt = append(restAt, i)
	}
	s.mu.Unlock()
	if len(rest.Firings) == 0 {
		return out, nil
	}
	fired, err := s.Store.TriggersFire(ctx, rest)
	if err != nil {
		return nil, err
	}
	for j, i := range restAt {
		out[i] = fired[j]
		p.Firings[i].Execution.ID = rest.Firings[j].Execution.ID
	}
	return out, nil
}

// acquireOnly claims as TriggersAcquireFire may, firing nothing: the
// wrappers that test the fire path use it, so that every firing goes
// through their TriggersFire.
func acquireOnly(ctx context.Context, st store.Store, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	recs, err := st.TriggersAcquire(ctx, &p.TriggersAcquireParams)
	if err != nil {
		return nil, err
	}
	return &store.TriggersAcquireFireResult{Claimed: recs}, nil
}

func (s *refusingStore) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	return acquireOnly(ctx, s, p)
}

type harness struct {
	store  store.Store
	node   *testNode
	engine *Engine
	mu     sync.Mutex
	fired  []time.Time // scheduled times of executed firings
	ranAt  []time.Time // when they ran
}

// testNode is a Membership holding one lease: held while valid is nil or
// true. It counts the store's refusals.
type testNode struct {
	lease   store.Lease
	valid   *atomic.Bool
	refused atomic.Int32
}

func (n *testNode) Lease() store.Lease { return n.lease }

func (n *testNode) LeaseHeld(l store.Lease) bool {
	return l == n.lease && (n.valid == nil || n.valid.Load())
}

func (n *testNode) LeaseRefused(store.Lease) { n.refused.Add(1) }

// runFunc is a Runner that runs every job by calling itself.
type runFunc func(ctx context.Context, f *Firing) Outcome

func (run runFunc) Execute(ctx context.Context, f *Firing) Outcome { return run(ctx, f) }

// newHarness registers node n1 on st, stores a durable job g.j and returns
// an engine for n1; opts adjust its configuration.
func newHarness(t *testing.T, st store.Store, opts ...func(*Config)) *harness {
	t.Helper()
	ctx := context.Background()
	node, err := st.NodeRegister(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{store: st, node: &testNode{lease: store.Lease{NodeID: node.ID, Epoch: node.Epoch}}}
	if err := st.JobUpsert(ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: store.Key{Group: "g", Name: "j"}, Type: "t", Durable: true}}); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Store:      st,
		Logger:     quiet,
		Membership: h.node,
		Runner: runFunc(func(_ context.Context, f *Firing) Outcome {
			h.mu.Lock()
			h.fired = append(h.fired, f.Execution.ScheduledTime)
			h.ranAt = append(h.ranAt, time.Now())
			h.mu.Unlock()
			return Outcome{}
		}),
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	h.engine, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// addTrigger stores a trigger firing every interval from start.
func (h *harness) addTrigger(t *testing.T, name string, start time.Time, every time.Duration, misfire schedule.MisfireInstruction) {
	t.Helper()
	tr := &schedule.Trigger{Schedule: &schedule.Simple{RepeatCount: schedule.RepeatForever, RepeatInterval: every}, StartTime: start, MisfireInstruction: misfire}
	tr.ComputeFirstFireTime(nil)
	rec := store.TriggerRecord{Key: store.Key{Group: "g", Name: name}, JobKey: store.Key{Group: "g", Name: "j"}}
	if err := SetTiming(&rec, tr); err != nil {
		t.Fatal(err)
	}
	if err := h.store.TriggerInsert(context.Background(), &store.TriggerInsertParams{Trigger: rec}); err != nil {
		t.Fatal(err)
	}
}

// ranTimes returns when the executed firings ran.
func (h *harness) ranTimes() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.ranAt...)
}

func (h *harness) firedTimes() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.fired...)
}

func TestAlreadyFiredInstantIsSkippedNotRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &refusingStore{Store: memstore.New(nil), refuse: store.ErrAlreadyFired, refusal: 1}
		h := newHarness(t, st)
		start := time.Now().Add(time.Second)
		h.addTrigger(t, "t", start, 10*time.Second, "")
		h.engine.Start()
		time.Sleep(15 * time.Second)
		h.engine.Standby()
		got := h.firedTimes()
		// The first instant was refused: it must not run, and the trigger
		// must move on to the next instant rather than stay stuck.
		if len(got) != 1 || !got[0].Equal(start.Add(10*time.Second)) {
			t.Errorf("executed %v, want only %s", got, start.Add(10*time.Second))
		}
	})
}

func TestLostClaimRunsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &refusingStore{Store: memstore.New(nil), refuse: store.ErrNotClaimed, refusal: 1}
		h := newHarness(t, st)
		h.addTrigger(t, "t", time.Now().Add(time.Second), time.Hour, "")
		h.engine.Start()
		time.Sleep(5 * time.Second)
		h.engine.Standby()
		if got := h.firedTimes(); len(got) != 0 {
			t.Errorf("executed %v although the store refused the claim", got)
		}
	})
}

func TestFencedLeaseIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memstore.New(nil)
		h := newHarness(t, st)
		h.addTrigger(t, "t", time.Now().Add(time.Second), time.Hour, "")
		// Another node declares this one dead: its epoch is bumped.
		other, err := st.NodeRegister(context.Background(), "n2")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		if _, err := st.NodeCheckIn(context.Background(), store.Lease{NodeID: other.ID, Epoch: other.Epoch}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.NodesRecover(context.Background(), &store.NodesRecoverParams{Lease: store.Lease{NodeID: other.ID, Epoch: other.Epoch}, DeadAfter: 30 * time.Second}); err != nil {
			t.Fatal(err)
		}
		h.engine.Start()
		time.Sleep(2 * time.Second)
		h.engine.Standby()
		if h.node.refused.Load() == 0 {
			t.Error("OnFenced not called for a stale lease")
		}
		if got := h.firedTimes(); len(got) != 0 {
			t.Errorf("a fenced node executed %v", got)
		}
	})
}

func TestIgnoreMisfirePolicyFiresEveryMissedInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, memstore.New(nil))
		start := time.Now().Add(-5 * time.Minute)
		h.addTrigger(t, "t", start, time.Minute, schedule.MisfireIgnore)
		h.engine.Start()
		time.Sleep(time.Second)
		h.engine.Standby()
		got := h.firedTimes()
		// Firings run on the worker pool, so they may finish in any order.
		slices.SortFunc(got, time.Time.Compare)
		if len(got) != 6 {
			t.Fatalf("executed %d firings, want the 5 missed ones and the current one: %v", len(got), got)
		}
		for i, at := range got {
			if want := start.Add(time.Duration(i) * time.Minute); !at.Equal(want) {
				t.Errorf("firing %d scheduled %s, want %s", i, at, want)
			}
		}
	})
}

func TestWorkersBoundConcurrentJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memstore.New(nil)
		node, err := st.NodeRegister(context.Background(), "n1")
		if err != nil {
			t.Fatal(err)
		}
		var running, peak atomic.Int32
		var total atomic.Int32
		e, err := New(Config{
			Store:      st,
			Logger:     quiet,
			Workers:    3,
			Membership: &testNode{lease: store.Lease{NodeID: node.ID, Epoch: node.Epoch}},
			Runner: runFunc(func(context.Context, *Firing) Outcome {
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(time.Second)
				running.Add(-1)
				total.Add(1)
				return Outcome{}
			}),
		})
		if err != nil {
			t.Fatal(err)
		}
		h := &harness{store: st}
		if err := st.JobUpsert(context.Background(), &store.JobUpsertParams{Job: store.JobRecord{Key: store.Key{Group: "g", Name: "j"}, Type: "t", Durable: true}}); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(time.Second)
		for _, name := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			h.addTrigger(t, name, at, time.Hour, "")
		}
		e.Start()
		time.Sleep(10 * time.Second)
		if err := e.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if peak.Load() != 3 {
			t.Errorf("peak concurrency %d, want the 3 workers", peak.Load())
		}
		if total.Load() != 7 {
			t.Errorf("ran %d jobs, want 7", total.Load())
		}
	})
}

func TestScheduleCacheReturnsOneValuePerDefinition(t *testing.T) {
	t.Parallel()
	var c scheduleCache
	data, err := schedule.Marshal(&schedule.Simple{RepeatCount: 3, RepeatInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.decode(data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.decode(append([]byte(nil), data...))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("the same definition decoded twice")
	}
	if _, err := c.decode([]byte(`{"kind":"nope"}`)); err == nil {
		t.Error("an unknown kind decoded")
	}
}

func TestFinishedExecutionsArePrunedAfterRetention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memstore.New(nil)
		h := newHarness(t, st)
		h.engine.cfg.ExecutionRetention = 10 * time.Minute
		h.addTrigger(t, "t", time.Now().Add(time.Second), time.Hour, "")
		h.engine.Start()
		time.Sleep(5 * time.Second)
		execs, err := st.ExecutionList(context.Background(), &store.ExecutionListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(execs) != 1 || execs[0].State != store.ExecutionSucceeded {
			t.Fatalf("executions after the firing: %+v, want one succeeded", execs)
		}
		time.Sleep(12 * time.Minute)
		h.engine.Standby()
		execs, err = st.ExecutionList(context.Background(), &store.ExecutionListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(execs) != 0 {
			t.Errorf("%d executions kept past the retention", len(execs))
		}
	})
}
