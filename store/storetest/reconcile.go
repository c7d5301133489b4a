package storetest

import (
	"testing"

	"github.com/chime-scheduler/chime/store"
)

// reconcileTests check that Reconcile leaves healthy work alone. Stores
// whose rows can be edited behind their back (SQL stores) test the repairs
// themselves by corrupting rows.
var reconcileTests = []test{
	{"HealthyStoreReportsNothing", func(t *testing.T, h *harness) {
		a := h.node("a")
		b := h.node("b")
		nc := h.job(key("g", "nc"), nonConcurrent, requestsRecovery)
		running := h.simple(key("t", "running"), nc, at(1)).Key
		sibling := h.simple(key("t", "sibling"), nc, at(100)).Key
		claimed := h.simple(key("t", "claimed"), h.job(key("g", "plain")), at(2)).Key
		paused := h.simple(key("t", "paused"), h.job(key("g", "p")), at(3)).Key
		execID := h.acquireFire(a, running, at(200))
		h.acquireOne(b, claimed)
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Trigger: &paused}); err != nil {
			t.Fatalf("TriggersPause: %v", err)
		}
		got, err := h.s.Reconcile(h.ctx, a)
		if err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		if !got.Empty() {
			t.Errorf("Reconcile on a healthy store = %+v, want nothing repaired", got)
		}
		h.wantState(store.StateBlocked, running, sibling)
		h.wantState(store.StateAcquired, claimed)
		h.wantState(store.StatePaused, paused)
		if e := h.execution(execID); e.State != store.ExecutionExecuting || e.NodeID != "a" {
			t.Errorf("execution after Reconcile = %+v, want EXECUTING on a", e)
		}
		// The repairs it would make are the ones recovery makes: once the
		// work is done, blocked triggers are free again and nothing is left.
		h.mustComplete(a, execID)
		h.wantState(store.StateWaiting, running, sibling)
		got, err = h.s.Reconcile(h.ctx, b)
		if err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		if !got.Empty() {
			t.Errorf("Reconcile after completion = %+v, want nothing repaired", got)
		}
	}},
	{"StaleLeaseFenced", func(t *testing.T, h *harness) {
		old := h.node("a")
		h.node("a")
		_, err := h.s.Reconcile(h.ctx, old)
		wantErr(t, "Reconcile with an old epoch", err, store.ErrFenced)
	}},
}
