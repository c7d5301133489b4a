package storetest

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// fixedDelay is the RearmDelay of the suite's fixed-delay triggers.
const fixedDelay = 3 * time.Second

// fixedDelayTrigger stores a fixed-delay trigger of job jk due at next.
func (h *harness) fixedDelayTrigger(k, jk store.Key, next time.Time, mods ...func(*store.TriggerRecord)) store.TriggerRecord {
	h.t.Helper()
	tr := trig(k, jk, next)
	tr.Kind = "fixed_delay"
	tr.Schedule = []byte(`{"kind":"fixed_delay","delay_ms":3000}`)
	tr.RearmDelay = fixedDelay
	for _, m := range mods {
		m(&tr)
	}
	return h.trigger(tr)
}

// fireAwaiting acquires and fires fixed-delay trigger k, which leaves it no
// next fire time, and checks that it awaits its run.
func (h *harness) fireAwaiting(l store.Lease, k store.Key) string {
	h.t.Helper()
	return h.wantAwaiting(k, h.acquireFire(l, k, time.Time{}))
}

// fireBatchAwaiting is fireAwaiting through TriggersFire, as the engine
// fires.
func (h *harness) fireBatchAwaiting(l store.Lease, k store.Key) string {
	h.t.Helper()
	p := h.fireParams(l, h.acquireOne(l, k), time.Time{})
	out, err := h.s.TriggersFire(h.ctx, &store.TriggersFireParams{Lease: l,
		Firings: []store.TriggerFiring{{Trigger: p.Trigger, Execution: p.Execution}}})
	if err != nil || out[0].Err != nil || out[0].Result.Blocked {
		h.t.Fatalf("TriggersFire(%s): %v %+v", k, err, out)
	}
	return h.wantAwaiting(k, p.Execution.ID)
}

// wantAwaiting checks that fixed-delay trigger k, fired for execution id,
// awaits its run, and returns id.
func (h *harness) wantAwaiting(k store.Key, id string) string {
	h.t.Helper()
	got := h.get(k)
	if got.State != store.StateBlocked || !got.NextFireTime.IsZero() || got.RearmDelay != fixedDelay {
		h.t.Fatalf("fired fixed-delay trigger: state %s, next %v, delay %s; want BLOCKED, none, %s",
			got.State, got.NextFireTime, got.RearmDelay, fixedDelay)
	}
	return id
}

// completeRearm records the end of execution id at end with Rearm set, in
// a batch as the engine does.
func (h *harness) completeRearm(l store.Lease, id string, end time.Time) {
	h.t.Helper()
	errs, err := h.s.ExecutionsComplete(h.ctx, &store.ExecutionsCompleteParams{Lease: l, Completions: []store.ExecutionCompletion{
		{ID: id, State: store.ExecutionSucceeded, FinishedTime: end, Instruction: store.InstructionNoop, Rearm: true},
	}})
	if err != nil || errs[0] != nil {
		h.t.Fatalf("ExecutionsComplete(%s): %v %v", id, err, errs)
	}
}

// wantArmed fails the test unless trigger k is in state st with next fire
// time next.
func (h *harness) wantArmed(k store.Key, st store.TriggerState, next time.Time) {
	h.t.Helper()
	got := h.get(k)
	if got.State != st || !got.NextFireTime.Equal(next) {
		h.t.Errorf("trigger %s: state %s, next %v; want %s, %v", k, got.State, got.NextFireTime, st, next)
	}
}

var fixedDelayTests = []test{
	{"CompletionRearms", func(t *testing.T, h *harness) {
		for _, mods := range [][]func(*store.JobRecord){nil, {nonConcurrent}} {
			h := h.fresh(t)
			jk := h.job(key("g", "j"), mods...)
			k := h.fixedDelayTrigger(key("t", "fd"), jk, at(1)).Key
			l := h.node("n")
			id := h.fireAwaiting(l, k)
			h.completeRearm(l, id, at(10).Add(250*time.Millisecond))
			h.wantArmed(k, store.StateWaiting, at(13).Add(250*time.Millisecond))
			// The chain goes on: it is claimed and fired again, in a batch.
			id = h.fireBatchAwaiting(l, k)
			h.completeRearm(l, id, at(20))
			h.wantArmed(k, store.StateWaiting, at(23))
		}
	}},
	{"OtherCompletionsLeaveItAwaiting", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		k := h.fixedDelayTrigger(key("t", "fd"), jk, at(1)).Key
		other := h.simple(key("t", "other"), jk, at(2)).Key
		l := h.node("n")
		id := h.fireAwaiting(l, k)
		// Another run of the job ends, and this one ends without Rearm:
		// neither frees the trigger.
		h.mustComplete(l, h.acquireFire(l, other, at(60)))
		h.wantArmed(k, store.StateBlocked, time.Time{})
		h.mustComplete(l, id)
		h.wantArmed(k, store.StateBlocked, time.Time{})
	}},
	{"PausedMeanwhile", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		k := h.fixedDelayTrigger(key("t", "fd"), jk, at(1)).Key
		l := h.node("n")
		id := h.fireAwaiting(l, k)
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Trigger: &k}); err != nil {
			t.Fatalf("TriggersPause: %v", err)
		}
		h.wantArmed(k, store.StatePausedBlocked, time.Time{})
		h.completeRearm(l, id, at(10))
		h.wantArmed(k, store.StatePaused, at(13))
		if _, err := h.s.TriggersResume(h.ctx, &store.TriggerSelector{Trigger: &k}); err != nil {
			t.Fatalf("TriggersResume: %v", err)
		}
		h.wantArmed(k, store.StateWaiting, at(13))
	}},
	{"PastEndTimeCompletes", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		k := h.fixedDelayTrigger(key("t", "fd"), jk, at(1), func(tr *store.TriggerRecord) { tr.EndTime = at(12) }).Key
		l := h.node("n")
		h.completeRearm(l, h.fireAwaiting(l, k), at(10))
		h.wantArmed(k, store.StateComplete, time.Time{})
	}},
	{"NodeLostRearms", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		k := h.fixedDelayTrigger(key("t", "fd"), jk, at(1)).Key
		a, b := h.node("a"), h.node("b")
		id := h.fireAwaiting(b, k)
		h.elapse(deadAfter)
		if _, err := h.s.NodeCheckIn(h.ctx, a); err != nil {
			t.Fatalf("NodeCheckIn(a): %v", err)
		}
		recs, err := h.s.NodesRecover(h.ctx, &store.NodesRecoverParams{Lease: a, DeadAfter: deadAfter})
		if err != nil || len(recs) != 1 || len(recs[0].Failed) != 1 {
			t.Fatalf("NodesRecover = %+v, %v; want b's run failed", recs, err)
		}
		e := h.execution(id)
		if e.State != store.ExecutionFailed || e.Error != store.ErrorNodeLost {
			t.Fatalf("lost run = %+v, want FAILED node lost", e)
		}
		h.wantArmed(k, store.StateWaiting, e.FinishedTime.Truncate(time.Millisecond).Add(fixedDelay))
	}},
	{"RecoveredRunRearms", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"), requestsRecovery)
		k := h.fixedDelayTrigger(key("t", "fd"), jk, at(1)).Key
		a, b := h.node("a"), h.node("b")
		id := h.fireAwaiting(b, k)
		h.elapse(deadAfter)
		if _, err := h.s.NodeCheckIn(h.ctx, a); err != nil {
			t.Fatalf("NodeCheckIn(a): %v", err)
		}
		if _, err := h.s.NodesRecover(h.ctx, &store.NodesRecoverParams{Lease: a, DeadAfter: deadAfter}); err != nil {
			t.Fatalf("NodesRecover: %v", err)
		}
		// The run is to be re-run: the trigger still awaits it.
		h.wantArmed(k, store.StateBlocked, time.Time{})
		got, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: a, Limit: 10})
		if err != nil || len(got) != 1 || got[0].Execution.ID != id {
			t.Fatalf("ExecutionsAcquireRecoverable = %+v, %v; want %s", got, err, id)
		}
		h.completeRearm(a, id, at(40))
		h.wantArmed(k, store.StateWaiting, at(43))
	}},
}
