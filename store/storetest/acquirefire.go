package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// claimFire calls TriggersAcquireFire for l with fire deciding, failing the
// test on an error for the whole call.
func (h *harness) claimFire(l store.Lease, noLaterThan time.Time, limit int, fire func(store.TriggerRecord) (store.TriggerFiring, bool)) *store.TriggersAcquireFireResult {
	h.t.Helper()
	res, err := h.s.TriggersAcquireFire(h.ctx, &store.TriggersAcquireFireParams{
		TriggersAcquireParams: store.TriggersAcquireParams{Lease: l, NoLaterThan: noLaterThan, Limit: limit},
		Fire:                  fire,
	})
	if err != nil {
		h.t.Fatalf("TriggersAcquireFire(%s): %v", l.NodeID, err)
	}
	return res
}

// fireAt returns a Fire function that fires every trigger it is given,
// advanced to next, as an engine would.
func (h *harness) fireAt(l store.Lease, next time.Time) func(store.TriggerRecord) (store.TriggerFiring, bool) {
	return func(rec store.TriggerRecord) (store.TriggerFiring, bool) {
		p := h.fireParams(l, rec, next)
		return store.TriggerFiring{Trigger: p.Trigger, Execution: p.Execution}, true
	}
}

// executionsOf returns the executions of trigger k.
func (h *harness) executionsOf(k store.Key) []store.ExecutionRecord {
	return h.executions(store.ExecutionListParams{TriggerKey: &k})
}

// acquireFireTests check TriggersAcquireFire: the claim and the firing of
// triggers due already, in one atomic step.
var acquireFireTests = []test{
	{"FiresWhatFireAsksAndClaimsTheRest", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"), requestsRecovery)
		h.simple(key("t", "again"), jk, at(1))
		h.simple(key("t", "last"), jk, at(1))
		h.simple(key("t", "later"), jk, at(2))
		h.simple(key("t", "future"), jk, at(10))
		l := h.node("n")
		var asked []store.Key
		res := h.claimFire(l, at(2), 10, func(rec store.TriggerRecord) (store.TriggerFiring, bool) {
			asked = append(asked, rec.Key)
			if rec.State != store.StateAcquired || rec.ClaimedBy != l.NodeID || rec.ClaimEpoch != l.Epoch {
				t.Errorf("Fire got %s in state %s claimed by %q epoch %d, want ACQUIRED by %v", rec.Key, rec.State, rec.ClaimedBy, rec.ClaimEpoch, l)
			}
			next := at(60)
			switch rec.Key.Name {
			case "later":
				return store.TriggerFiring{}, false
			case "last":
				next = time.Time{}
			}
			p := h.fireParams(l, rec, next)
			return store.TriggerFiring{Trigger: p.Trigger, Execution: p.Execution}, true
		})
		if len(asked) != 3 {
			t.Fatalf("Fire was asked about %v, want the 3 triggers due by %s", asked, at(2))
		}
		wantEqual(t, "claimed", keysOf(res.Claimed), []store.Key{key("t", "later")})
		if len(res.Firings) != 2 || len(res.Outcomes) != 2 {
			t.Fatalf("fired %d with %d outcomes, want 2", len(res.Firings), len(res.Outcomes))
		}
		for i, f := range res.Firings {
			o := res.Outcomes[i]
			if o.Err != nil || o.Result == nil || o.Result.Blocked {
				t.Fatalf("outcome of %s = %+v, want fired", f.Trigger.Key, o)
			}
			wantEqual(t, "result job", normJob(o.Result.Job), normJob(h.getJob(jk)))
			e := h.execution(f.Execution.ID)
			if e.State != store.ExecutionExecuting || e.NodeID != l.NodeID || e.Epoch != l.Epoch ||
				!e.ScheduledTime.Equal(at(1)) || !e.RequestsRecovery || e.TriggerKey != f.Trigger.Key {
				t.Errorf("execution of %s = %+v, want EXECUTING under %v at %s, requesting recovery", f.Trigger.Key, e, l, at(1))
			}
		}
		h.wantState(store.StateWaiting, key("t", "again"), key("t", "future"))
		h.wantState(store.StateComplete, key("t", "last"))
		h.wantState(store.StateAcquired, key("t", "later"))
		got := h.get(key("t", "again"))
		if !got.NextFireTime.Equal(at(60)) || !got.PreviousFireTime.Equal(at(1)) || got.TimesTriggered != 1 || got.ClaimedBy != "" {
			t.Errorf("fired trigger = %+v, want next %s, previous %s, fired once, unclaimed", got, at(60), at(1))
		}
		if n := len(h.executionsOf(key("t", "later"))); n != 0 {
			t.Errorf("the trigger left claimed has %d executions, want 0", n)
		}
		// The trigger left claimed fires as any claimed trigger does.
		h.mustFire(l, res.Claimed[0], at(70))
	}},
	{"NilFireClaimsOnly", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		h.simple(key("t", "1"), jk, at(1))
		l := h.node("n")
		res := h.claimFire(l, at(1), 10, nil)
		wantEqual(t, "claimed", keysOf(res.Claimed), []store.Key{key("t", "1")})
		if len(res.Firings) != 0 {
			t.Errorf("fired %d, want 0", len(res.Firings))
		}
		h.wantState(store.StateAcquired, key("t", "1"))
	}},
	{"DueTriggerClaimedByTwoNodesAtOnceFiresOnce", func(t *testing.T, h *harness) {
		const triggers, nodes, rounds = 40, 4, 3
		jk := h.job(key("g", "j"))
		for i := range triggers {
			h.simple(key("t", fmt.Sprintf("%02d", i)), jk, at(1))
		}
		leases := make([]store.Lease, nodes)
		for i := range leases {
			leases[i] = h.node(fmt.Sprintf("n%d", i))
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		for _, l := range leases {
			wg.Go(func() {
				for range rounds {
					_, err := h.s.TriggersAcquireFire(h.ctx, &store.TriggersAcquireFireParams{
						TriggersAcquireParams: store.TriggersAcquireParams{Lease: l, NoLaterThan: at(1), Limit: triggers},
						Fire:                  h.fireAt(l, at(100)),
					})
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("TriggersAcquireFire: %v", errors.Join(errs...))
		}
		for i := range triggers {
			k := key("t", fmt.Sprintf("%02d", i))
			execs := h.executionsOf(k)
			if len(execs) != 1 {
				t.Errorf("trigger %s has %d executions, want exactly 1", k, len(execs))
			}
			if got := h.get(k); got.State != store.StateWaiting || !got.NextFireTime.Equal(at(100)) || got.TimesTriggered != 1 {
				t.Errorf("trigger %s = %s next %s fired %d times, want WAITING next %s fired once", k, got.State, got.NextFireTime, got.TimesTriggered, at(100))
			}
		}
	}},
	{"StaleEpochFiresNothing", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		h.simple(key("t", "1"), jk, at(1))
		old := h.node("n")
		h.node("n") // registered again: a new epoch
		_, err := h.s.TriggersAcquireFire(h.ctx, &store.TriggersAcquireFireParams{
			TriggersAcquireParams: store.TriggersAcquireParams{Lease: old, NoLaterThan: at(1), Limit: 10},
			Fire: func(rec store.TriggerRecord) (store.TriggerFiring, bool) {
				t.Errorf("Fire called for %s under a stale lease", rec.Key)
				return h.fireAt(old, at(100))(rec)
			},
		})
		wantErr(t, "TriggersAcquireFire under a stale epoch", err, store.ErrFenced)
		h.wantState(store.StateWaiting, key("t", "1"))
		if n := len(h.executionsOf(key("t", "1"))); n != 0 {
			t.Errorf("%d executions, want 0", n)
		}
	}},
	{"PausedAndBlockedTriggersAreNotFired", func(t *testing.T, h *harness) {
		free := h.job(key("g", "free"))
		single := h.job(key("g", "single"), nonConcurrent)
		h.simple(key("t", "paused"), free, at(1))
		h.simple(key("t", "blocked"), single, at(1))
		h.simple(key("t", "fires"), free, at(1))
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Trigger: new(key("t", "paused"))}); err != nil {
			t.Fatalf("TriggersPause: %v", err)
		}
		l := h.node("n")
		h.runJob(l, single) // the non-concurrent job runs: its triggers are BLOCKED
		h.wantState(store.StateBlocked, key("t", "blocked"))
		res := h.claimFire(l, at(1), 10, h.fireAt(l, at(100)))
		if len(res.Claimed) != 0 || len(res.Firings) != 1 || res.Firings[0].Trigger.Key != key("t", "fires") {
			t.Fatalf("claimed %v and fired %d, want just t.fires fired", keysOf(res.Claimed), len(res.Firings))
		}
		h.wantState(store.StatePaused, key("t", "paused"))
		h.wantState(store.StateBlocked, key("t", "blocked"))
		for _, k := range []store.Key{key("t", "paused"), key("t", "blocked")} {
			if n := len(h.executionsOf(k)); n != 0 {
				t.Errorf("%s has %d executions, want 0", k, n)
			}
		}
	}},
	{"NonConcurrentJobFiresOnceAndBlocks", func(t *testing.T, h *harness) {
		single := h.job(key("g", "single"), nonConcurrent)
		h.simple(key("t", "a"), single, at(1))
		h.simple(key("t", "b"), single, at(1))
		l := h.node("n")
		res := h.claimFire(l, at(1), 10, h.fireAt(l, at(100)))
		// A store may fire such a trigger (then the job's other trigger
		// is blocked, or claimed) or leave it claimed for TriggersFire.
		fired := 0
		for i, o := range res.Outcomes {
			if o.Err == nil && o.Result != nil && !o.Result.Blocked {
				fired++
				if n := len(h.executionsOf(res.Firings[i].Trigger.Key)); n != 1 {
					t.Errorf("fired %s has %d executions, want 1", res.Firings[i].Trigger.Key, n)
				}
			}
		}
		if fired > 1 {
			t.Fatalf("fired %d triggers of a job that disallows concurrency, want at most 1", fired)
		}
		for _, rec := range res.Claimed {
			if got := h.get(rec.Key); got.State != store.StateAcquired {
				t.Errorf("claimed %s is %s, want ACQUIRED", rec.Key, got.State)
			}
			res, _, err := h.fire(l, rec, at(100))
			if err != nil {
				t.Fatalf("TriggerFire(%s): %v", rec.Key, err)
			}
			if !res.Blocked {
				fired++
			}
		}
		if fired != 1 {
			t.Errorf("the job ran %d times, want 1", fired)
		}
		if running := h.executions(store.ExecutionListParams{JobKey: &single, Running: true}); len(running) != 1 {
			t.Errorf("%d running executions of the job, want 1", len(running))
		}
	}},
	{"MisfiredTriggerLeftClaimedGetsItsInstruction", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		h.simple(key("t", "late"), jk, at(1))
		l := h.node("n")
		// An engine leaves a misfired trigger claimed, applies its
		// misfire instruction and releases it with the new timing.
		res := h.claimFire(l, at(1), 10, func(store.TriggerRecord) (store.TriggerFiring, bool) {
			return store.TriggerFiring{}, false
		})
		wantEqual(t, "claimed", keysOf(res.Claimed), []store.Key{key("t", "late")})
		timing := res.Claimed[0]
		timing.NextFireTime = at(500)
		if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: key("t", "late"), Timing: &timing}); err != nil {
			t.Fatalf("TriggerRelease: %v", err)
		}
		got := h.get(key("t", "late"))
		if got.State != store.StateWaiting || !got.NextFireTime.Equal(at(500)) || got.TimesTriggered != 0 {
			t.Errorf("released trigger = %s next %s fired %d times, want WAITING next %s never fired", got.State, got.NextFireTime, got.TimesTriggered, at(500))
		}
		if n := len(h.executionsOf(key("t", "late"))); n != 0 {
			t.Errorf("%d executions, want 0", n)
		}
	}},
}
