package engine

import (
	"context"
	"fmt"
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

// batchCounter is a store that records the size of each batch.
type batchCounter struct {
	*memstore.Store
	mu        sync.Mutex
	fires     []int // firings per TriggersFire call
	completes []int // completions per ExecutionsComplete call
}

func (s *batchCounter) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	s.mu.Lock()
	s.fires = append(s.fires, len(p.Firings))
	s.mu.Unlock()
	return s.Store.TriggersFire(ctx, p)
}

func (s *batchCounter) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	return acquireOnly(ctx, s, p)
}

func (s *batchCounter) ExecutionsComplete(ctx context.Context, p *store.ExecutionsCompleteParams) ([]error, error) {
	s.mu.Lock()
	s.completes = append(s.completes, len(p.Completions))
	s.mu.Unlock()
	return s.Store.ExecutionsComplete(ctx, p)
}

func (s *batchCounter) batches() (fires, completes []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.fires), slices.Clone(s.completes)
}

func TestShortJobsDueTogetherFireAndCompleteInBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &batchCounter{Store: memstore.New(nil)}
		var running, peak atomic.Int32
		h := newHarness(t, st, func(c *Config) {
			c.Workers = 2
			inner := c.Runner
			c.Runner = runFunc(func(ctx context.Context, f *Firing) Outcome {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				defer running.Add(-1)
				return inner.Execute(ctx, f)
			})
		})
		at := time.Now().Add(time.Second)
		const triggers = 60
		for i := range triggers {
			h.addTrigger(t, fmt.Sprintf("t%02d", i), at, time.Hour, "")
		}
		h.engine.Start()
		time.Sleep(5 * time.Second)
		if err := h.engine.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := h.firedTimes(); len(got) != triggers {
			t.Fatalf("ran %d firings, want %d", len(got), triggers)
		}
		if p := peak.Load(); p > 2 {
			t.Errorf("%d jobs ran at once, want at most the 2 workers", p)
		}
		fires, completes := st.batches()
		// Before any job ran the node fires one trigger per free worker;
		// once it knows its jobs are short, the rest at once.
		if len(fires) < 2 || fires[0] != 2 || slices.Max(fires) <= 2 {
			t.Errorf("fire batches %v, want 2 first, then larger ones", fires)
		}
		total := 0
		for _, n := range completes {
			total += n
		}
		if total != triggers || len(completes) >= triggers {
			t.Errorf("completion batches %v, want %d completions in fewer calls", completes, triggers)
		}
		execs, err := st.ExecutionList(context.Background(), &store.ExecutionListParams{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range execs {
			if e.State != store.ExecutionSucceeded {
				t.Errorf("execution %s is %s, want SUCCEEDED", e.ID, e.State)
			}
		}
	})
}

func TestNodeWithBusyWorkersLeavesDueTriggersToOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memstore.New(nil)
		ctx := context.Background()
		type run struct {
			node, trigger string
			at            time.Time
		}
		var (
			mu   sync.Mutex
			runs []run
		)
		newEngine := func(id string) *Engine {
			n, err := st.NodeRegister(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(Config{
				Store:      st,
				Logger:     quiet,
				Workers:    1,
				Membership: &testNode{lease: store.Lease{NodeID: n.ID, Epoch: n.Epoch}},
				Runner: runFunc(func(_ context.Context, f *Firing) Outcome {
					mu.Lock()
					runs = append(runs, run{id, f.Execution.TriggerKey.Name, time.Now()})
					mu.Unlock()
					if f.Execution.TriggerKey.Name == "long" {
						time.Sleep(time.Minute)
					}
					return Outcome{}
				}),
			})
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		h := &harness{store: st}
		if err := st.JobUpsert(ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: store.Key{Group: "g", Name: "j"}, Type: "t", Durable: true}}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		h.addTrigger(t, "long", start.Add(time.Second), time.Hour, "")
		busy := newEngine("busy")
		busy.Start()
		time.Sleep(2 * time.Second) // busy runs the long job
		for i := range 5 {
			h.addTrigger(t, fmt.Sprintf("short%d", i), start.Add(5*time.Second), time.Hour, "")
		}
		idle := newEngine("idle")
		idle.Start()
		time.Sleep(10 * time.Second)
		for _, e := range []*Engine{idle, busy} {
			if err := e.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, r := range runs {
			if r.trigger == "long" {
				continue
			}
			if r.node != "idle" || !r.at.Equal(start.Add(5*time.Second)) {
				t.Errorf("%s ran on %s at +%s, want on idle at +5s", r.trigger, r.node, r.at.Sub(start))
			}
		}
		if len(runs) != 6 {
			t.Errorf("ran %v, want the long job and 5 short ones", runs)
		}
	})
}

func TestTriggersFireInOrderWithOneWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &batchCounter{Store: memstore.New(nil)}
		h := newHarness(t, st, func(c *Config) { c.Workers = 1 })
		at := time.Now().Add(time.Second)
		// A first job, so that the node knows its jobs are short and fires
		// the rest in one batch.
		h.addTrigger(t, "first", at, time.Hour, "")
		var want []time.Time
		for i := range 20 {
			due := at.Add(time.Second + time.Duration(i)*time.Millisecond)
			want = append(want, due)
			tr := &schedule.Trigger{Schedule: &schedule.Simple{}, StartTime: due}
			tr.ComputeFirstFireTime(nil)
			rec := store.TriggerRecord{Key: store.Key{Group: "g", Name: fmt.Sprintf("t%02d", i)}, JobKey: store.Key{Group: "g", Name: "j"}}
			if err := SetTiming(&rec, tr); err != nil {
				t.Fatal(err)
			}
			if err := st.TriggerInsert(context.Background(), &store.TriggerInsertParams{Trigger: rec}); err != nil {
				t.Fatal(err)
			}
		}
		h.engine.Start()
		// The loop is held up past every fire time, so that all twenty are
		// due at its next pass.
		time.Sleep(1100 * time.Millisecond)
		h.engine.Standby()
		time.Sleep(time.Second)
		h.engine.Start()
		time.Sleep(3 * time.Second)
		h.engine.Standby()
		got := h.firedTimes()[1:]
		if !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Errorf("ran the firings of %v, want them in fire-time order %v", got, want)
		}
	})
}
