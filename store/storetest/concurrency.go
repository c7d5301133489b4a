package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

var concurrencyTests = []test{
	{"NodesFireEveryInstantOnce", func(t *testing.T, h *harness) { testNodesFireEveryInstantOnce(t, h, false) }},
	{"NodesFireEveryInstantOnceInBatches", func(t *testing.T, h *harness) { testNodesFireEveryInstantOnce(t, h, true) }},
}

// testNodesFireEveryInstantOnce lets several nodes acquire, fire and
// complete the same triggers at once, and checks that every (trigger,
// scheduled time) fired exactly once, that no trigger was held by two nodes
// at once, and that the non-concurrent job never ran twice at once. With
// batched, the nodes fire and complete through the batch methods.
func testNodesFireEveryInstantOnce(t *testing.T, h *harness, batched bool) {
	const (
		nodes    = 8
		triggers = 100
		fires    = 5 // fire times per trigger
		batch    = 10
		total    = triggers * fires
	)
	free := h.job(key("g", "free"))
	single := h.job(key("g", "single"), nonConcurrent)
	for i := range triggers {
		jk := free
		if i%4 == 0 {
			jk = single
		}
		h.simple(key("t", fmt.Sprintf("%03d", i)), jk, at(i%10))
	}
	leases := make([]store.Lease, nodes)
	for i := range leases {
		leases[i] = h.node(fmt.Sprintf("node-%d", i))
	}

	type instant struct {
		trigger store.Key
		at      int64 // Unix nanoseconds
	}
	var (
		mu       sync.Mutex
		held     = make(map[store.Key]string) // trigger -> node holding it
		fired    = make(map[instant]string)   // instant -> node that fired it
		running  = make(map[store.Key]int)    // job -> executions we know run
		problems []string
		done     atomic.Int64
	)
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	// A bound on liveness, not a timing assertion: eight nodes on SQLite's
	// single writer, under the race detector on a busy machine, have taken
	// most of a minute.
	ctx, cancel := context.WithTimeout(h.ctx, 3*time.Minute)
	defer cancel()

	work := func(l store.Lease) {
		for done.Load() < total && ctx.Err() == nil {
			acq, err := h.s.TriggersAcquire(ctx, &store.TriggersAcquireParams{Lease: l, NoLaterThan: at(1_000_000), Limit: batch})
			if err != nil {
				problem("%s: TriggersAcquire: %v", l.NodeID, err)
				return
			}
			if len(acq) == 0 {
				// Everything due is held by other nodes or blocked; let
				// them progress rather than spin on the store.
				time.Sleep(time.Millisecond)
				continue
			}
			mu.Lock()
			for _, tr := range acq {
				if other, ok := held[tr.Key]; ok {
					problems = append(problems, fmt.Sprintf("%s acquired by %s while %s holds it", tr.Key, l.NodeID, other))
				}
				held[tr.Key] = l.NodeID
			}
			mu.Unlock()
			firings := make([]store.TriggerFiring, len(acq))
			for i, tr := range acq {
				next := tr.NextFireTime.Add(time.Hour)
				if tr.TimesTriggered+1 >= fires {
					next = time.Time{}
				}
				p := h.fireParams(l, tr, next)
				firings[i] = store.TriggerFiring{Trigger: p.Trigger, Execution: p.Execution}
			}
			mu.Lock()
			for _, tr := range acq {
				delete(held, tr.Key) // the fire below ends this node's claim
			}
			mu.Unlock()
			outcomes := make([]store.TriggerFireOutcome, len(acq))
			if batched {
				out, err := h.s.TriggersFire(ctx, &store.TriggersFireParams{Lease: l, Firings: firings})
				if err != nil {
					problem("%s: TriggersFire: %v", l.NodeID, err)
					continue
				}
				outcomes = out
			} else {
				for i := range firings {
					p := &store.TriggerFireParams{Lease: l, Trigger: firings[i].Trigger, Execution: firings[i].Execution}
					outcomes[i].Result, outcomes[i].Err = h.s.TriggerFire(ctx, p)
					firings[i].Execution.ID = p.Execution.ID
				}
			}
			var completions []store.ExecutionCompletion
			for i, tr := range acq {
				res, err := outcomes[i].Result, outcomes[i].Err
				if err != nil {
					problem("%s: TriggerFire(%s at %s): %v", l.NodeID, tr.Key, tr.NextFireTime, err)
					continue
				}
				if res.Blocked {
					continue // it fires once the running execution completes
				}
				inst := instant{tr.Key, tr.NextFireTime.UnixNano()}
				mu.Lock()
				if other, ok := fired[inst]; ok {
					problems = append(problems, fmt.Sprintf("%s at %s fired by %s and %s", tr.Key, tr.NextFireTime, other, l.NodeID))
				}
				fired[inst] = l.NodeID
				running[tr.JobKey]++
				if tr.JobKey == single && running[single] > 1 {
					problems = append(problems, fmt.Sprintf("non-concurrent job runs %d times at once", running[single]))
				}
				mu.Unlock()
				done.Add(1)
				completions = append(completions, store.ExecutionCompletion{
					ID: firings[i].Execution.ID, State: store.ExecutionSucceeded, Instruction: store.InstructionNoop,
					FinishedTime: tr.NextFireTime,
				})
			}
			mu.Lock()
			for i, tr := range acq {
				if outcomes[i].Err == nil && !outcomes[i].Result.Blocked {
					running[tr.JobKey]-- // before the store can let another run start
				}
			}
			mu.Unlock()
			if batched {
				if len(completions) == 0 {
					continue
				}
				errs, err := h.s.ExecutionsComplete(ctx, &store.ExecutionsCompleteParams{Lease: l, Completions: completions})
				if err != nil {
					problem("%s: ExecutionsComplete: %v", l.NodeID, err)
					continue
				}
				for i, err := range errs {
					if err != nil {
						problem("%s: ExecutionsComplete(%s): %v", l.NodeID, completions[i].ID, err)
					}
				}
				continue
			}
			for _, c := range completions {
				err := h.s.ExecutionComplete(ctx, &store.ExecutionCompleteParams{
					Lease: l, ID: c.ID, State: c.State, Instruction: c.Instruction, FinishedTime: c.FinishedTime,
				})
				if err != nil {
					problem("%s: ExecutionComplete(%s): %v", l.NodeID, c.ID, err)
				}
			}
		}
	}
	var wg sync.WaitGroup
	for _, l := range leases {
		wg.Go(func() { work(l) })
	}
	wg.Wait()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("gave up after three minutes with %d of %d fires", done.Load(), total)
	}
	for _, p := range problems {
		t.Error(p)
	}

	if len(fired) != total {
		t.Errorf("%d instants fired, want %d", len(fired), total)
	}
	all, err := h.s.TriggerList(h.ctx, &store.TriggerListParams{})
	if err != nil {
		t.Fatalf("TriggerList: %v", err)
	}
	for _, tr := range all {
		if tr.State != store.StateComplete || tr.TimesTriggered != fires {
			t.Errorf("trigger %s ended %s after %d fires, want COMPLETE after %d", tr.Key, tr.State, tr.TimesTriggered, fires)
		}
	}
	if es := h.executions(store.ExecutionListParams{}); len(es) != total {
		t.Errorf("%d executions recorded, want %d", len(es), total)
	}
	if es := h.executions(store.ExecutionListParams{Running: true}); len(es) != 0 {
		t.Errorf("%d executions still running, want none", len(es))
	}
}
