package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// deadAfter is how long a node may stay silent in the recovery tests. On a
// real clock the suite waits this long once per test that kills a node.
const deadAfter = time.Second

// nodeRecord returns the listed record of a node.
func (h *harness) nodeRecord(id string) (store.NodeRecord, bool) {
	h.t.Helper()
	nodes, err := h.s.NodeList(h.ctx)
	if err != nil {
		h.t.Fatalf("NodeList: %v", err)
	}
	for _, n := range nodes {
		if n.ID == id {
			return n, true
		}
	}
	return store.NodeRecord{}, false
}

var nodeTests = []test{
	{"Register", func(t *testing.T, h *harness) {
		before := h.now()
		n, err := h.s.NodeRegister(h.ctx, "a")
		if err != nil {
			t.Fatalf("NodeRegister: %v", err)
		}
		after := h.now()
		if n.ID != "a" || n.Epoch <= 0 || n.Dead || n.LastCheckIn.Before(before) || n.LastCheckIn.After(after) {
			t.Errorf("NodeRegister = %+v, want ID a, a positive epoch, alive, checked in between %s and %s", n, before, after)
		}
		listed, ok := h.nodeRecord("a")
		if !ok || listed.Epoch != n.Epoch || !listed.LastCheckIn.Equal(n.LastCheckIn) {
			t.Errorf("listed node = %+v (listed %v), want %+v", listed, ok, n)
		}
		h.node("b")
		nodes, err := h.s.NodeList(h.ctx)
		if err != nil {
			t.Fatalf("NodeList: %v", err)
		}
		var ids []string
		for _, n := range nodes {
			ids = append(ids, n.ID)
		}
		slices.Sort(ids)
		wantEqual(t, "node IDs", ids, []string{"a", "b"})
	}},
	{"ReRegisterBumpsEpoch", func(t *testing.T, h *harness) {
		l1 := h.node("a")
		l2 := h.node("a")
		l3 := h.node("a")
		if !(l1.Epoch < l2.Epoch && l2.Epoch < l3.Epoch) {
			t.Errorf("epochs across registrations = %d, %d, %d; want increasing", l1.Epoch, l2.Epoch, l3.Epoch)
		}
		for _, l := range []store.Lease{l1, l2} {
			_, err := h.s.NodeCheckIn(h.ctx, l)
			wantErr(t, "NodeCheckIn with an old epoch", err, store.ErrFenced)
		}
		if _, err := h.s.NodeCheckIn(h.ctx, l3); err != nil {
			t.Errorf("NodeCheckIn with the current epoch: %v", err)
		}
	}},
	{"ReRegisterRecoversPreviousIncarnation", func(t *testing.T, h *harness) {
		rj := h.job(key("g", "recoverable"), requestsRecovery, nonConcurrent)
		pj := h.job(key("g", "plain"), nonConcurrent)
		r := h.simple(key("t", "r"), rj, at(1)).Key
		p := h.simple(key("t", "p"), pj, at(2)).Key
		held := h.simple(key("t", "held"), h.job(key("g", "other")), at(3)).Key
		pSibling := h.simple(key("t", "p-sibling"), pj, at(50)).Key
		old := h.node("a")
		acq := h.acquire(old, at(3), 3)
		if len(acq) != 3 {
			t.Fatalf("acquired %v, want three triggers", keysOf(acq))
		}
		er := h.mustFire(old, acq[0], at(100))
		ep := h.mustFire(old, acq[1], at(101))
		h.wantState(store.StateBlocked, pSibling)

		l := h.node("a") // the node restarted
		h.wantState(store.StateWaiting, held, p, pSibling)
		h.wantState(store.StateBlocked, r) // its job will run again
		if e := h.execution(er); e.State != store.ExecutionRecoverable {
			t.Errorf("recoverable execution state = %s, want RECOVERABLE", e.State)
		}
		if e := h.execution(ep); e.State != store.ExecutionFailed || e.Error != "node lost" || e.FinishedTime.IsZero() {
			t.Errorf("lost execution = %+v, want FAILED, Error \"node lost\", a finished time", e)
		}
		got, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: l, Limit: 10})
		if err != nil || len(got) != 1 || got[0].Execution.ID != er {
			t.Fatalf("ExecutionsAcquireRecoverable = %v, %v; want execution %s", got, err, er)
		}
	}},
	{"CheckIn", func(t *testing.T, h *harness) {
		l := h.node("a")
		h.elapse(50 * time.Millisecond)
		before := h.now()
		got, err := h.s.NodeCheckIn(h.ctx, l)
		if err != nil {
			t.Fatalf("NodeCheckIn: %v", err)
		}
		after := h.now()
		if got.Before(before) || got.After(after) {
			t.Errorf("NodeCheckIn = %s, want the store's clock, between %s and %s", got, before, after)
		}
		if n, _ := h.nodeRecord("a"); !n.LastCheckIn.Equal(got) {
			t.Errorf("LastCheckIn = %s, want %s", n.LastCheckIn, got)
		}
	}},
	{"CheckInErrors", func(t *testing.T, h *harness) {
		_, err := h.s.NodeCheckIn(h.ctx, store.Lease{NodeID: "stranger", Epoch: 1})
		wantErr(t, "NodeCheckIn of an unregistered node", err, store.ErrNodeNotFound)
		l := h.node("a")
		_, err = h.s.NodeCheckIn(h.ctx, store.Lease{NodeID: "a", Epoch: l.Epoch + 1})
		wantErr(t, "NodeCheckIn with a future epoch", err, store.ErrFenced)
	}},
	{"Unregister", func(t *testing.T, h *harness) {
		rj := h.job(key("g", "recoverable"), requestsRecovery)
		pj := h.job(key("g", "plain"), nonConcurrent)
		r := h.simple(key("t", "r"), rj, at(1)).Key
		p := h.simple(key("t", "p"), pj, at(2)).Key
		held := h.simple(key("t", "held"), h.job(key("g", "other")), at(3)).Key
		pSibling := h.simple(key("t", "p-sibling"), pj, at(50)).Key
		l := h.node("a")
		other := h.node("b")
		acq := h.acquire(l, at(3), 3)
		if len(acq) != 3 {
			t.Fatalf("acquired %v, want three triggers", keysOf(acq))
		}
		er := h.mustFire(l, acq[0], at(100))
		ep := h.mustFire(l, acq[1], at(101))

		if err := h.s.NodeUnregister(h.ctx, l); err != nil {
			t.Fatalf("NodeUnregister: %v", err)
		}
		if _, ok := h.nodeRecord("a"); ok {
			t.Errorf("unregistered node still listed")
		}
		if _, ok := h.nodeRecord("b"); !ok {
			t.Errorf("other node no longer listed")
		}
		h.wantState(store.StateWaiting, r, p, held, pSibling)
		if e := h.execution(er); e.State != store.ExecutionRecoverable {
			t.Errorf("recoverable execution state = %s, want RECOVERABLE", e.State)
		}
		if e := h.execution(ep); e.State != store.ExecutionFailed || e.Error != "node stopped" {
			t.Errorf("stopped execution = %+v, want FAILED, Error \"node stopped\"", e)
		}
		_, err := h.s.NodeCheckIn(h.ctx, l)
		wantErr(t, "NodeCheckIn after NodeUnregister", err, store.ErrFenced)
		_, err = h.s.TriggersAcquire(h.ctx, &store.TriggersAcquireParams{Lease: l, NoLaterThan: at(1000), Limit: 10})
		wantErr(t, "TriggersAcquire after NodeUnregister", err, store.ErrFenced)
		err = h.s.NodeUnregister(h.ctx, l)
		wantErr(t, "second NodeUnregister", err, store.ErrFenced)
		if got := h.acquire(other, at(1000), 10); len(got) != 4 {
			t.Errorf("other node acquired %v, want all four triggers", keysOf(got))
		}
		if again := h.node("a"); again.Epoch <= l.Epoch {
			t.Errorf("epoch after re-registration = %d, want > %d", again.Epoch, l.Epoch)
		}
	}},
	{"UnregisterUnknown", func(t *testing.T, h *harness) {
		err := h.s.NodeUnregister(h.ctx, store.Lease{NodeID: "stranger", Epoch: 1})
		wantErr(t, "NodeUnregister of an unregistered node", err, store.ErrNodeNotFound)
	}},
}

// deadNode is a cluster of three nodes where B went silent while holding
// work, A (the rescuer) did not check in either, and C did.
type deadNode struct {
	a, b, c store.Lease
	bBefore store.NodeRecord

	rj, fj          store.Key // jobs: recoverable non-concurrent, failing non-concurrent
	r1, r2, f1, f2  store.Key // triggers of rj and fj; r1 and f1 fired on B
	q1              store.Key // trigger of a recoverable concurrent job, fired on B then deleted
	held            store.Key // trigger B acquired and did not fire
	heldRecord      store.TriggerRecord
	er, eq, ef      string // B's executions of r1, q1 and f1
	recoverableByID []string
}

func (h *harness) deadNode() *deadNode {
	h.t.Helper()
	d := &deadNode{
		rj: h.job(key("g", "recoverable"), requestsRecovery, nonConcurrent),
		fj: h.job(key("g", "failing"), nonConcurrent),
	}
	qj := h.job(key("g", "recoverable-concurrent"), requestsRecovery)
	d.r1 = h.simple(key("t", "r1"), d.rj, at(1)).Key
	d.f1 = h.simple(key("t", "f1"), d.fj, at(2)).Key
	d.q1 = h.simple(key("t", "q1"), qj, at(3)).Key
	d.held = h.simple(key("t", "held"), h.job(key("g", "plain")), at(4)).Key
	d.r2 = h.simple(key("t", "r2"), d.rj, at(50)).Key
	d.f2 = h.simple(key("t", "f2"), d.fj, at(51)).Key
	d.a, d.b, d.c = h.node("a"), h.node("b"), h.node("c")

	acq := h.acquire(d.b, at(4), 4)
	wantEqual(h.t, "B acquired", keysOf(acq), []store.Key{d.r1, d.f1, d.q1, d.held})
	d.er = h.mustFire(d.b, acq[0], at(100))
	d.ef = h.mustFire(d.b, acq[1], at(101))
	d.eq = h.mustFire(d.b, acq[2], at(102))
	d.heldRecord = acq[3]
	if _, err := h.s.TriggerDelete(h.ctx, d.q1); err != nil {
		h.t.Fatalf("TriggerDelete: %v", err)
	}
	d.recoverableByID = []string{d.er, d.eq}
	slices.Sort(d.recoverableByID)

	h.elapse(deadAfter)
	if _, err := h.s.NodeCheckIn(h.ctx, d.c); err != nil {
		h.t.Fatalf("NodeCheckIn(c): %v", err)
	}
	d.bBefore, _ = h.nodeRecord("b")
	return d
}

// recover runs NodesRecover as A and expects B's recovery.
func (h *harness) recover(d *deadNode) store.NodeRecovery {
	h.t.Helper()
	recs, err := h.s.NodesRecover(h.ctx, &store.NodesRecoverParams{Lease: d.a, DeadAfter: deadAfter})
	if err != nil {
		h.t.Fatalf("NodesRecover: %v", err)
	}
	if len(recs) != 1 || recs[0].Node.ID != "b" {
		var ids []string
		for _, r := range recs {
			ids = append(ids, r.Node.ID)
		}
		h.t.Fatalf("NodesRecover recovered %v, want just b", ids)
	}
	return recs[0]
}

var recoveryTests = []test{
	{"RecoverDeadNode", func(t *testing.T, h *harness) {
		d := h.deadNode()
		rec := h.recover(d)
		if rec.Node.Epoch != d.b.Epoch || rec.Node.Dead || !rec.Node.LastCheckIn.Equal(d.bBefore.LastCheckIn) {
			t.Errorf("recovery Node = %+v, want B as it was: %+v", rec.Node, d.bBefore)
		}
		if rec.ReleasedTriggers != 1 {
			t.Errorf("ReleasedTriggers = %d, want 1", rec.ReleasedTriggers)
		}
		var recIDs []string
		for _, e := range rec.Recoverable {
			recIDs = append(recIDs, e.ID)
			if e.State != store.ExecutionRecoverable {
				t.Errorf("recoverable execution %s state = %s, want RECOVERABLE", e.ID, e.State)
			}
		}
		slices.Sort(recIDs)
		wantEqual(t, "recoverable IDs", recIDs, d.recoverableByID)
		if len(rec.Failed) != 1 || rec.Failed[0].ID != d.ef || rec.Failed[0].State != store.ExecutionFailed || rec.Failed[0].Error != "node lost" {
			t.Errorf("Failed = %+v, want execution %s FAILED with \"node lost\"", rec.Failed, d.ef)
		}

		b, ok := h.nodeRecord("b")
		if !ok || !b.Dead || b.Epoch <= d.b.Epoch {
			t.Errorf("node b after recovery = %+v (listed %v), want Dead with an epoch > %d", b, ok, d.b.Epoch)
		}
		for _, l := range []store.Lease{d.a, d.c} {
			if n, _ := h.nodeRecord(l.NodeID); n.Dead || n.Epoch != l.Epoch {
				t.Errorf("node %s after recovery = %+v, want alive at epoch %d", l.NodeID, n, l.Epoch)
			}
		}

		if got := h.get(d.held); got.State != store.StateWaiting || got.ClaimedBy != "" {
			t.Errorf("released trigger = %+v, want WAITING and unclaimed", got)
		}
		h.wantState(store.StateWaiting, d.f1, d.f2) // the failed job no longer runs
		for _, id := range d.recoverableByID {
			if e := h.execution(id); e.State != store.ExecutionRecoverable || e.NodeID != "" {
				t.Errorf("execution %s = %+v, want RECOVERABLE with no node", id, e)
			}
		}
		if e := h.execution(d.ef); e.State != store.ExecutionFailed || e.Error != "node lost" || e.FinishedTime.IsZero() {
			t.Errorf("lost execution = %+v, want FAILED, \"node lost\", a finished time", e)
		}
		if es := h.executions(store.ExecutionListParams{Running: true}); len(es) != 2 {
			t.Errorf("running executions = %v, want the two recoverable ones", execIDs(es))
		}

		again, err := h.s.NodesRecover(h.ctx, &store.NodesRecoverParams{Lease: d.a, DeadAfter: deadAfter})
		if err != nil || len(again) != 0 {
			t.Errorf("second NodesRecover = %+v, %v; want nothing", again, err)
		}
	}},
	{"RecoverableJobStaysBlocked", func(t *testing.T, h *harness) {
		// A non-concurrent job whose execution will be re-run is still
		// running as far as its triggers are concerned.
		d := h.deadNode()
		h.recover(d)
		h.wantState(store.StateBlocked, d.r1, d.r2)
		if got := h.acquire(d.c, at(1000), 10); len(got) != 3 || slices.Contains(keysOf(got), d.r1) || slices.Contains(keysOf(got), d.r2) {
			t.Errorf("acquired %v, want the held and failed job's triggers only", keysOf(got))
		}
		got, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: d.c, Limit: 10})
		if err != nil || len(got) != 2 {
			t.Fatalf("ExecutionsAcquireRecoverable = %d executions, %v; want 2", len(got), err)
		}
		h.wantState(store.StateBlocked, d.r1, d.r2)
		h.mustComplete(d.c, d.er)
		h.wantState(store.StateWaiting, d.r1, d.r2)
	}},
	{"ReleaseForRecovery", func(t *testing.T, h *harness) {
		// A node whose lease lapsed by its own clock, and that no node
		// declared dead, hands the executions it cancelled back for
		// recovery when their jobs request it.
		rj := h.job(key("g", "recoverable"), requestsRecovery, nonConcurrent)
		r := h.simple(key("t", "r"), rj, at(1)).Key
		f := h.simple(key("t", "f"), h.job(key("g", "plain")), at(2)).Key
		a, b := h.node("a"), h.node("b")
		er := h.acquireFire(a, r, at(100))
		ef := h.acquireFire(a, f, at(101))
		release := func(l store.Lease, ids ...string) []error {
			t.Helper()
			errs, err := h.s.ExecutionsRelease(h.ctx, &store.ExecutionsReleaseParams{Lease: l, IDs: ids})
			if err != nil || len(errs) != len(ids) {
				t.Fatalf("ExecutionsRelease(%s, %v) = %v, %v; want one answer per execution", l.NodeID, ids, errs, err)
			}
			return errs
		}
		errs := release(a, er, ef, "missing")
		if errs[0] != nil {
			t.Errorf("releasing %s, which requests recovery: %v", er, errs[0])
		}
		wantErr(t, "releasing an execution that does not request recovery", errs[1], store.ErrExecutionNotFound)
		wantErr(t, "releasing an unknown execution", errs[2], store.ErrExecutionNotFound)
		if e := h.execution(er); e.State != store.ExecutionRecoverable || e.NodeID != "" || e.Epoch != 0 || !e.FinishedTime.IsZero() {
			t.Errorf("released execution = %+v, want RECOVERABLE on no node, unfinished", e)
		}
		if e := h.execution(ef); e.State != store.ExecutionExecuting || e.NodeID != "a" || e.Epoch != a.Epoch {
			t.Errorf("execution refused for release = %+v, want EXECUTING on a", e)
		}
		h.wantState(store.StateBlocked, r)
		// The release happened once: the old run can neither release nor
		// complete it again.
		wantErr(t, "releasing a released execution", release(a, er)[0], store.ErrExecutionNotFound)
		wantErr(t, "completing a released execution", h.complete(a, er, store.ExecutionFailed, store.InstructionNoop, nil), store.ErrExecutionNotFound)

		got, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: b, Limit: 10})
		if err != nil || len(got) != 1 {
			t.Fatalf("ExecutionsAcquireRecoverable = %d executions, %v; want the released one", len(got), err)
		}
		if e := got[0].Execution; e.ID != er || !e.Recovering || e.NodeID != "b" || e.Epoch != b.Epoch {
			t.Errorf("re-run execution = %+v, want %s recovering on b", e, er)
		}
		if again, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: a, Limit: 10}); err != nil || len(again) != 0 {
			t.Errorf("second ExecutionsAcquireRecoverable = %d executions, %v; want none", len(again), err)
		}
		wantErr(t, "releasing an execution another node re-runs", release(a, er)[0], store.ErrExecutionNotFound)
		h.mustComplete(b, er)
		h.wantState(store.StateWaiting, r)
	}},
	{"ReleaseFencedAfterRecovery", func(t *testing.T, h *harness) {
		// A node declared dead while it could not reach the store finds its
		// executions recovered already: its release is refused, and each
		// execution is re-run once.
		d := h.deadNode()
		h.recover(d)
		_, err := h.s.ExecutionsRelease(h.ctx, &store.ExecutionsReleaseParams{Lease: d.b, IDs: []string{d.er, d.eq}})
		wantErr(t, "releasing under a lease another node recovered", err, store.ErrFenced)
		got, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: d.c, Limit: 10})
		if err != nil {
			t.Fatalf("ExecutionsAcquireRecoverable: %v", err)
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.Execution.ID)
		}
		slices.Sort(ids)
		wantEqual(t, "re-run executions", ids, d.recoverableByID)
		if again, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: d.a, Limit: 10}); err != nil || len(again) != 0 {
			t.Errorf("second ExecutionsAcquireRecoverable = %d executions, %v; want none", len(again), err)
		}
	}},
	{"AcquireRecoverable", func(t *testing.T, h *harness) {
		d := h.deadNode()
		h.recover(d)
		var got []store.RecoverableExecution
		for range 2 {
			batch, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: d.c, Limit: 1})
			if err != nil || len(batch) != 1 {
				t.Fatalf("ExecutionsAcquireRecoverable(Limit 1) = %d executions, %v; want 1", len(batch), err)
			}
			got = append(got, batch...)
		}
		slices.SortFunc(got, func(x, y store.RecoverableExecution) int {
			return x.Execution.ScheduledTime.Compare(y.Execution.ScheduledTime)
		})
		wantRun := []struct {
			id        string
			job       store.Key
			trigger   store.Key
			scheduled time.Time
			exists    bool
		}{
			{d.er, d.rj, d.r1, at(1), true},
			{d.eq, key("g", "recoverable-concurrent"), d.q1, at(3), false},
		}
		for i, w := range wantRun {
			r := got[i]
			e := r.Execution
			if e.ID != w.id || e.State != store.ExecutionExecuting || e.NodeID != d.c.NodeID || e.Epoch != d.c.Epoch ||
				!e.Recovering || !e.ScheduledTime.Equal(w.scheduled) || e.TriggerKey != w.trigger || e.JobKey != w.job {
				t.Errorf("recovered execution = %+v; want %s EXECUTING on %s/%d, Recovering, scheduled %s",
					e, w.id, d.c.NodeID, d.c.Epoch, w.scheduled)
			}
			if r.Job.Key != w.job {
				t.Errorf("recovered execution %s job = %s, want %s", e.ID, r.Job.Key, w.job)
			}
			if (r.Trigger != nil) != w.exists || (r.Trigger != nil && r.Trigger.Key != w.trigger) {
				t.Errorf("recovered execution %s trigger = %+v, want present = %v", e.ID, r.Trigger, w.exists)
			}
			if listed := h.execution(e.ID); listed.State != store.ExecutionExecuting || listed.NodeID != d.c.NodeID || !listed.Recovering {
				t.Errorf("stored recovered execution = %+v", listed)
			}
		}
		got[0].Trigger.Schedule[0] = 'X'
		got[0].Job.Description = "changed"
		if tr := h.get(d.r1); tr.Schedule[0] == 'X' {
			t.Errorf("stored trigger changed through a recovered execution's copy")
		}
		if j := h.getJob(d.rj); j.Description != "" {
			t.Errorf("stored job changed through a recovered execution's copy")
		}
		none, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: d.c, Limit: 10})
		if err != nil || len(none) != 0 {
			t.Errorf("third ExecutionsAcquireRecoverable = %d executions, %v; want none", len(none), err)
		}
		for _, r := range got {
			h.mustComplete(d.c, r.Execution.ID)
		}
		if es := h.executions(store.ExecutionListParams{Running: true}); len(es) != 0 {
			t.Errorf("running executions after completion = %v, want none", execIDs(es))
		}
	}},
	{"AcquireRecoverableExcludeJobTypes", func(t *testing.T, h *harness) {
		// A node that cannot run a job's type leaves its recoverable
		// executions to a node that can.
		d := h.deadNode()
		h.recover(d)
		if err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: func() store.JobRecord {
			j := h.getJob(d.rj)
			j.Type = "shell"
			return j
		}(), Replace: true}); err != nil {
			t.Fatalf("JobUpsert: %v", err)
		}
		got, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{
			Lease: d.c, Limit: 10, ExcludeJobTypes: []string{"shell"},
		})
		if err != nil || len(got) != 1 || got[0].Execution.ID != d.eq {
			t.Fatalf("ExecutionsAcquireRecoverable without shell = %v, %v; want only %s", got, err, d.eq)
		}
		if e := h.execution(d.er); e.State != store.ExecutionRecoverable || e.NodeID != "" {
			t.Errorf("execution of the shell job = %+v, want still RECOVERABLE with no node", e)
		}
		got, err = h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: d.a, Limit: 10})
		if err != nil || len(got) != 1 || got[0].Execution.ID != d.er {
			t.Fatalf("ExecutionsAcquireRecoverable of a node that runs shell = %v, %v; want only %s", got, err, d.er)
		}
	}},
	{"AcquireRecoverableJobDeleted", func(t *testing.T, h *harness) {
		// A recoverable execution whose job is gone cannot run again; it
		// must not be handed out, nor stay pending forever.
		d := h.deadNode()
		h.recover(d)
		if _, err := h.s.JobDelete(h.ctx, d.rj); err != nil {
			t.Fatalf("JobDelete: %v", err)
		}
		got, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: d.c, Limit: 10})
		if err != nil || len(got) != 1 || got[0].Execution.ID != d.eq {
			t.Fatalf("ExecutionsAcquireRecoverable = %v, %v; want only %s", got, err, d.eq)
		}
		if e := h.execution(d.er); !e.State.Done() {
			t.Errorf("execution of the deleted job = %+v, want a finished state", e)
		}
	}},
	{"Fencing", func(t *testing.T, h *harness) {
		d := h.deadNode()
		h.recover(d)
		stale := d.b
		ops := []struct {
			name string
			op   func() error
		}{
			{"TriggersAcquire", func() error {
				_, err := h.s.TriggersAcquire(h.ctx, &store.TriggersAcquireParams{Lease: stale, NoLaterThan: at(1000), Limit: 10})
				return err
			}},
			{"TriggerFire", func() error {
				_, err := h.s.TriggerFire(h.ctx, h.fireParams(stale, d.heldRecord, at(200)))
				return err
			}},
			{"TriggerRelease", func() error {
				return h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: stale, Key: d.held})
			}},
			{"ExecutionComplete", func() error {
				return h.complete(stale, d.er, store.ExecutionSucceeded, store.InstructionNoop, nil)
			}},
			{"ExecutionsAcquireRecoverable", func() error {
				_, err := h.s.ExecutionsAcquireRecoverable(h.ctx, &store.ExecutionsAcquireRecoverableParams{Lease: stale, Limit: 10})
				return err
			}},
			{"NodeCheckIn", func() error {
				_, err := h.s.NodeCheckIn(h.ctx, stale)
				return err
			}},
			{"NodesRecover", func() error {
				_, err := h.s.NodesRecover(h.ctx, &store.NodesRecoverParams{Lease: stale, DeadAfter: time.Nanosecond})
				return err
			}},
			{"NodeUnregister", func() error { return h.s.NodeUnregister(h.ctx, stale) }},
		}
		for _, op := range ops {
			wantErr(t, op.name+" by a recovered node", op.op(), store.ErrFenced)
		}
		if got := h.get(d.held); got.State != store.StateWaiting {
			t.Errorf("trigger after fenced writes = %s, want WAITING", got.State)
		}
		for _, id := range d.recoverableByID {
			if e := h.execution(id); e.State != store.ExecutionRecoverable {
				t.Errorf("execution %s after fenced writes = %s, want RECOVERABLE", id, e.State)
			}
		}
		if b, _ := h.nodeRecord("b"); !b.Dead {
			t.Errorf("node b after fenced writes = %+v, want still dead", b)
		}
		// Restarting gives B a fresh lease.
		dead, _ := h.nodeRecord("b")
		l := h.node("b")
		if b, _ := h.nodeRecord("b"); b.Dead || b.Epoch != l.Epoch || l.Epoch <= dead.Epoch {
			t.Errorf("node b after re-registration = %+v, want alive at epoch %d > %d", b, l.Epoch, dead.Epoch)
		}
		if _, err := h.s.NodeCheckIn(h.ctx, l); err != nil {
			t.Errorf("NodeCheckIn after re-registration: %v", err)
		}
	}},
	{"LiveNodesAndCallerKept", func(t *testing.T, h *harness) {
		a := h.node("a")
		h.node("b")
		h.elapse(deadAfter)
		// Nobody checked in; a long DeadAfter keeps everyone alive.
		recs, err := h.s.NodesRecover(h.ctx, &store.NodesRecoverParams{Lease: a, DeadAfter: time.Hour})
		if err != nil || len(recs) != 0 {
			t.Errorf("NodesRecover(DeadAfter 1h) = %+v, %v; want nothing", recs, err)
		}
		recs, err = h.s.NodesRecover(h.ctx, &store.NodesRecoverParams{Lease: a, DeadAfter: deadAfter})
		if err != nil || len(recs) != 1 || recs[0].Node.ID != "b" || recs[0].ReleasedTriggers != 0 ||
			len(recs[0].Recoverable) != 0 || len(recs[0].Failed) != 0 {
			t.Errorf("NodesRecover = %+v, %v; want b recovered with nothing to do", recs, err)
		}
		if n, _ := h.nodeRecord("a"); n.Dead {
			t.Errorf("the caller declared itself dead")
		}
	}},
}
