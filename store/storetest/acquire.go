package storetest

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

var acquireTests = []test{
	{"OrderTimeThenPriority", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		add := func(name string, next time.Time, prio int) store.Key {
			tr := trig(key("t", name), jk, next)
			tr.Priority = prio
			return h.trigger(tr).Key
		}
		late := add("late", at(3), 100)
		mid := add("mid", at(2), 5)
		lowFirst := add("low-first", at(1), 1)
		highFirst := add("high-first", at(1), 10)
		// Same instant in another zone: compared as an instant.
		zoned := add("zoned", at(1).In(time.FixedZone("Z", -5*3600)), 5)
		got := h.acquire(h.node("n"), at(2), 10)
		wantEqual(t, "acquired keys", keysOf(got), []store.Key{highFirst, zoned, lowFirst, mid})
		h.wantState(store.StateWaiting, late)
	}},
	{"Limit", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		for i := range 5 {
			h.simple(key("t", string(rune('a'+i))), jk, at(i))
		}
		l := h.node("n")
		wantEqual(t, "first batch", keysOf(h.acquire(l, at(10), 2)), []store.Key{key("t", "a"), key("t", "b")})
		wantEqual(t, "second batch", keysOf(h.acquire(l, at(10), 2)), []store.Key{key("t", "c"), key("t", "d")})
		wantEqual(t, "third batch", keysOf(h.acquire(l, at(10), 2)), []store.Key{key("t", "e")})
		if got := h.acquire(l, at(10), 2); len(got) != 0 {
			t.Errorf("fourth batch = %v, want nothing", keysOf(got))
		}
		h.simple(key("t", "f"), jk, at(0))
		if got := h.acquire(l, at(10), 0); len(got) != 0 {
			t.Errorf("Limit 0 acquired %v, want nothing", keysOf(got))
		}
	}},
	{"NoLaterThanInclusive", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		h.simple(key("t", "due"), jk, at(5))
		h.simple(key("t", "later"), jk, at(5).Add(time.Millisecond))
		l := h.node("n")
		if got := h.acquire(l, at(4), 10); len(got) != 0 {
			t.Errorf("acquired %v before they are due", keysOf(got))
		}
		wantEqual(t, "acquired keys", keysOf(h.acquire(l, at(5), 10)), []store.Key{key("t", "due")})
	}},
	{"Claim", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		before := h.simple(key("t", "1"), jk, at(1))
		l := h.node("n")
		got := h.acquire(l, at(1), 1)
		if len(got) != 1 {
			t.Fatalf("acquired %v, want one trigger", keysOf(got))
		}
		stored := h.get(before.Key)
		for name, tr := range map[string]store.TriggerRecord{"returned": got[0], "stored": stored} {
			if tr.State != store.StateAcquired || tr.ClaimedBy != l.NodeID || tr.ClaimEpoch != l.Epoch {
				t.Errorf("%s trigger: state %s, claim %q/%d; want ACQUIRED by %q/%d",
					name, tr.State, tr.ClaimedBy, tr.ClaimEpoch, l.NodeID, l.Epoch)
			}
		}
		if stored.Version <= before.Version {
			t.Errorf("Version after acquire = %d, want > %d", stored.Version, before.Version)
		}
		if again := h.acquire(h.node("other"), at(100), 10); len(again) != 0 {
			t.Errorf("another node acquired %v, already claimed", keysOf(again))
		}
	}},
	{"ListClaimedUnder", func(t *testing.T, h *harness) {
		// What a node learns when its claim's answer was lost: the
		// triggers ACQUIRED under its lease, and no one else's.
		jk := h.job(key("g", "j"))
		for _, name := range []string{"1", "2", "3"} {
			h.simple(key("t", name), jk, at(1))
		}
		h.simple(key("t", "later"), jk, at(100))
		a, b := h.node("a"), h.node("b")
		h.acquire(a, at(1), 2)
		h.acquire(b, at(1), 1)
		claimedUnder := func(l store.Lease) []store.Key {
			t.Helper()
			got, err := h.s.TriggerList(h.ctx, &store.TriggerListParams{ClaimedUnder: &l})
			if err != nil {
				t.Fatalf("TriggerList(ClaimedUnder %s/%d): %v", l.NodeID, l.Epoch, err)
			}
			for _, tr := range got {
				if tr.State != store.StateAcquired || tr.ClaimedBy != l.NodeID || tr.ClaimEpoch != l.Epoch {
					t.Errorf("listed %s: state %s, claim %q/%d; want ACQUIRED by %q/%d", tr.Key, tr.State, tr.ClaimedBy, tr.ClaimEpoch, l.NodeID, l.Epoch)
				}
			}
			return keysOf(got)
		}
		wantEqual(t, "claimed by a", claimedUnder(a), []store.Key{key("t", "1"), key("t", "2")})
		wantEqual(t, "claimed by b", claimedUnder(b), []store.Key{key("t", "3")})
		wantEqual(t, "claimed by a in another epoch", claimedUnder(store.Lease{NodeID: a.NodeID, Epoch: a.Epoch + 1}), nil)
		if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: a, Key: key("t", "1")}); err != nil {
			t.Fatalf("TriggerRelease: %v", err)
		}
		wantEqual(t, "claimed by a after a release", claimedUnder(a), []store.Key{key("t", "2")})
		h.mustFire(a, h.get(key("t", "2")), at(50))
		wantEqual(t, "claimed by a after a firing", claimedUnder(a), nil)
	}},
	{"SkipsNotWaiting", func(t *testing.T, h *harness) {
		l := h.node("n")
		busy := h.job(key("g", "busy"), nonConcurrent)
		h.runJob(l, busy)
		plain := h.job(key("g", "plain"))
		h.simple(key("t", "blocked"), busy, at(1))
		paused := h.simple(key("t", "paused"), plain, at(1)).Key
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Trigger: &paused}); err != nil {
			t.Fatalf("TriggersPause: %v", err)
		}
		h.simple(key("t", "complete"), plain, time.Time{})
		errored := h.simple(key("t", "error"), plain, at(1)).Key
		id := h.acquireFire(l, errored, at(2))
		if err := h.complete(l, id, store.ExecutionFailed, store.InstructionSetTriggerError, nil); err != nil {
			t.Fatalf("ExecutionComplete: %v", err)
		}
		h.wantState(store.StateError, errored)
		waiting := h.simple(key("t", "waiting"), plain, at(1)).Key
		wantEqual(t, "acquired keys", keysOf(h.acquire(l, at(100), 10)), []store.Key{waiting})
	}},
	{"ExcludeJobTypes", func(t *testing.T, h *harness) {
		// A node that cannot run some job types claims the triggers of the
		// others, in order and up to its limit, and leaves the rest WAITING
		// for a node that can.
		plain := h.job(key("g", "plain"))
		shell := h.job(key("g", "shell"), withType("shell"))
		goType := h.job(key("g", "go"), withType("report"))
		s1 := h.simple(key("t", "s1"), shell, at(1)).Key
		p1 := h.simple(key("t", "p1"), plain, at(2)).Key
		g1 := h.simple(key("t", "g1"), goType, at(3)).Key
		s2 := h.simple(key("t", "s2"), shell, at(4)).Key
		p2 := h.simple(key("t", "p2"), plain, at(5)).Key
		p3 := h.simple(key("t", "p3"), plain, at(6)).Key
		limited := h.node("limited")
		acquire := func(l store.Lease, limit int, exclude ...string) []store.Key {
			t.Helper()
			got, err := h.s.TriggersAcquire(h.ctx, &store.TriggersAcquireParams{
				Lease: l, NoLaterThan: at(100), Limit: limit, ExcludeJobTypes: exclude,
			})
			if err != nil {
				t.Fatalf("TriggersAcquire(exclude %v): %v", exclude, err)
			}
			return keysOf(got)
		}
		wantEqual(t, "first batch without shell and report", acquire(limited, 2, "shell", "report"), []store.Key{p1, p2})
		h.wantState(store.StateWaiting, s1, g1, s2, p3)
		wantEqual(t, "second batch without shell and report", acquire(limited, 10, "shell", "report"), []store.Key{p3})
		wantEqual(t, "third batch without shell and report", acquire(limited, 10, "shell", "report"), []store.Key(nil))
		// The excluded triggers kept their places in the due order.
		wantEqual(t, "batch of a node without report", acquire(h.node("shell-node"), 10, "report"), []store.Key{s1, s2})
		wantEqual(t, "batch of a node that runs everything", acquire(h.node("full"), 10), []store.Key{g1})
	}},
	{"Fenced", func(t *testing.T, h *harness) {
		h.simple(key("t", "1"), h.job(key("g", "j")), at(1))
		l := h.node("n")
		h.node("n") // re-registration makes l stale
		_, err := h.s.TriggersAcquire(h.ctx, &store.TriggersAcquireParams{Lease: l, NoLaterThan: at(1), Limit: 1})
		wantErr(t, "TriggersAcquire with a stale epoch", err, store.ErrFenced)
		_, err = h.s.TriggersAcquire(h.ctx, &store.TriggersAcquireParams{Lease: store.Lease{NodeID: "stranger", Epoch: 1}, NoLaterThan: at(1), Limit: 1})
		wantErr(t, "TriggersAcquire by an unregistered node", err, store.ErrNodeNotFound)
		h.wantState(store.StateWaiting, key("t", "1"))
	}},
}

var releaseTests = []test{
	{"WithoutTiming", func(t *testing.T, h *harness) {
		k := h.simple(key("t", "1"), h.job(key("g", "j")), at(1)).Key
		l := h.node("n")
		acq := h.acquireOne(l, k)
		if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: k}); err != nil {
			t.Fatalf("TriggerRelease: %v", err)
		}
		got := h.get(k)
		if got.State != store.StateWaiting || got.ClaimedBy != "" || !got.NextFireTime.Equal(at(1)) || got.Version <= acq.Version {
			t.Errorf("released trigger = %+v, want WAITING, unclaimed, next %s, version > %d", got, at(1), acq.Version)
		}
		h.acquireOne(h.node("other"), k)
	}},
	{"WithTiming", func(t *testing.T, h *harness) {
		k := h.simple(key("t", "1"), h.job(key("g", "j")), at(1)).Key
		l := h.node("n")
		acq := h.acquireOne(l, k)
		timing := acq
		timing.NextFireTime = at(30)
		timing.PreviousFireTime = at(-30)
		timing.TimesTriggered = 4
		timing.StartTime = at(-60)
		timing.EndTime = at(600)
		timing.Schedule = []byte(`{"repeatCount":10}`)
		timing.MisfireInstruction = "FIRE_NOW"
		timing.Description = "not a timing field"
		if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: k, Timing: &timing}); err != nil {
			t.Fatalf("TriggerRelease: %v", err)
		}
		got := h.get(k)
		want := acq
		want.NextFireTime, want.PreviousFireTime, want.TimesTriggered = at(30), at(-30), 4
		want.StartTime, want.EndTime = at(-60), at(600)
		want.Schedule, want.MisfireInstruction = timing.Schedule, "FIRE_NOW"
		want.State, want.ClaimedBy, want.ClaimEpoch, want.Version = store.StateWaiting, "", 0, got.Version
		wantEqual(t, "released trigger", normTrigger(got), normTrigger(want))
		if got := h.acquire(l, at(29), 10); len(got) != 0 {
			t.Errorf("acquired %v before the new fire time", keysOf(got))
		}
		h.acquireOne(l, k)
	}},
	{"ZeroNextCompletes", func(t *testing.T, h *harness) {
		k := h.simple(key("t", "1"), h.job(key("g", "j")), at(1)).Key
		l := h.node("n")
		timing := h.acquireOne(l, k)
		timing.NextFireTime = time.Time{}
		if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: k, Timing: &timing}); err != nil {
			t.Fatalf("TriggerRelease: %v", err)
		}
		h.wantState(store.StateComplete, k)
	}},
	{"WhileJobRunsBlocks", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"), nonConcurrent)
		a := h.simple(key("t", "a"), jk, at(1)).Key
		b := h.simple(key("t", "b"), jk, at(1)).Key
		l := h.node("n")
		acq := h.acquire(l, at(1), 2)
		if len(acq) != 2 {
			t.Fatalf("acquired %v, want both triggers", keysOf(acq))
		}
		h.mustFire(l, acq[0], at(60))
		if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: acq[1].Key}); err != nil {
			t.Fatalf("TriggerRelease: %v", err)
		}
		h.wantState(store.StateBlocked, a, b)
	}},
	{"ClaimLost", func(t *testing.T, h *harness) {
		tests := []struct {
			name string
			lose func(h *harness, l store.Lease, k store.Key)
		}{
			{"Released", func(h *harness, l store.Lease, k store.Key) {
				if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: k}); err != nil {
					h.t.Fatalf("TriggerRelease: %v", err)
				}
			}},
			{"Paused", func(h *harness, _ store.Lease, k store.Key) {
				if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Trigger: &k}); err != nil {
					h.t.Fatalf("TriggersPause: %v", err)
				}
			}},
			{"Deleted", func(h *harness, _ store.Lease, k store.Key) {
				if _, err := h.s.TriggerDelete(h.ctx, k); err != nil {
					h.t.Fatalf("TriggerDelete: %v", err)
				}
			}},
			{"OtherNode", nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := h.fresh(t)
				k := h.simple(key("t", "1"), h.job(key("g", "j")), at(1)).Key
				l := h.node("n")
				h.acquireOne(l, k)
				if tc.lose != nil {
					tc.lose(h, l, k)
				} else {
					l = h.node("other")
				}
				err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: k})
				wantErr(t, "TriggerRelease", err, store.ErrNotClaimed)
			})
		}
	}},
}

var fireTests = []test{
	{"Fire", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"), withJobData(`{"n":1}`))
		tr := trig(key("t", "1"), jk, at(1))
		tr.Priority = 4
		k := h.trigger(tr).Key
		l := h.node("n")
		acq := h.acquireOne(l, k)
		p := h.fireParams(l, acq, at(11))
		p.Trigger.Schedule = []byte(`{"advanced":true}`)
		p.Trigger.MisfireInstruction = "DO_NOTHING"
		p.Trigger.StartTime = at(-1)
		p.Trigger.EndTime = at(1000)
		p.Trigger.Description = "not a timing field"
		res, err := h.s.TriggerFire(h.ctx, p)
		if err != nil {
			t.Fatalf("TriggerFire: %v", err)
		}
		if res.Blocked {
			t.Errorf("Blocked = true for a concurrent job")
		}
		wantEqual(t, "result job", normJob(res.Job), normJob(h.getJob(jk)))

		got := h.get(k)
		want := acq
		want.NextFireTime, want.PreviousFireTime, want.TimesTriggered = at(11), at(1), 1
		want.StartTime, want.EndTime = at(-1), at(1000)
		want.Schedule, want.MisfireInstruction = p.Trigger.Schedule, "DO_NOTHING"
		want.State, want.ClaimedBy, want.ClaimEpoch, want.Version = store.StateWaiting, "", 0, got.Version
		wantEqual(t, "fired trigger", normTrigger(got), normTrigger(want))
		if got.Version <= acq.Version {
			t.Errorf("Version after fire = %d, want > %d", got.Version, acq.Version)
		}

		e := h.execution(p.Execution.ID)
		wantE := p.Execution
		wantE.Priority = 4
		wantEqual(t, "execution", normExecution(e), normExecution(wantE))
		h.acquireOne(l, k) // waiting for its next fire time
	}},
	{"StoreFillsExecution", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"), requestsRecovery)
		tr := trig(key("t", "1"), jk, at(1))
		tr.Priority = 6
		k := h.trigger(tr).Key
		h.simple(key("t", "2"), jk, at(1))
		l := h.node("n")
		var ids []string
		for _, acq := range h.acquire(l, at(1), 2) {
			p := h.fireParams(l, acq, at(2))
			p.Execution = store.ExecutionRecord{ScheduledTime: acq.NextFireTime, FiredTime: at(1)}
			if _, err := h.s.TriggerFire(h.ctx, p); err != nil {
				t.Fatalf("TriggerFire(%s): %v", acq.Key, err)
			}
		}
		for _, e := range h.executions(store.ExecutionListParams{}) {
			ids = append(ids, e.ID)
			if e.ID == "" || e.JobKey != jk || e.NodeID != l.NodeID || e.Epoch != l.Epoch ||
				e.State != store.ExecutionExecuting || !e.RequestsRecovery || e.Recovering || !e.FinishedTime.IsZero() {
				t.Errorf("execution = %+v; want an ID, job %s, node %s/%d, EXECUTING, RequestsRecovery", e, jk, l.NodeID, l.Epoch)
			}
			if e.TriggerKey == k && e.Priority != 6 {
				t.Errorf("execution priority = %d, want the trigger's 6", e.Priority)
			}
		}
		if len(ids) != 2 || ids[0] == ids[1] {
			t.Errorf("execution IDs = %q, want two distinct IDs", ids)
		}
	}},
	{"LastFireCompletes", func(t *testing.T, h *harness) {
		k := h.simple(key("t", "1"), h.job(key("g", "j")), at(1)).Key
		l := h.node("n")
		h.acquireFire(l, k, time.Time{})
		h.wantState(store.StateComplete, k)
		if got := h.get(k); got.TimesTriggered != 1 || !got.PreviousFireTime.Equal(at(1)) || !got.NextFireTime.IsZero() {
			t.Errorf("completed trigger timing = next %s, previous %s, times %d", got.NextFireTime, got.PreviousFireTime, got.TimesTriggered)
		}
	}},
	{"ClaimLost", func(t *testing.T, h *harness) {
		tests := []struct {
			name string
			lose func(h *harness, l store.Lease, k store.Key)
		}{
			{"Paused", func(h *harness, _ store.Lease, k store.Key) {
				if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Trigger: &k}); err != nil {
					h.t.Fatalf("TriggersPause: %v", err)
				}
			}},
			{"PausedAndResumed", func(h *harness, _ store.Lease, k store.Key) {
				if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Group: k.Group}); err != nil {
					h.t.Fatalf("TriggersPause: %v", err)
				}
				if _, err := h.s.TriggersResume(h.ctx, &store.TriggerSelector{Group: k.Group}); err != nil {
					h.t.Fatalf("TriggersResume: %v", err)
				}
			}},
			{"Replaced", func(h *harness, _ store.Lease, k store.Key) {
				err := h.s.TriggerInsert(h.ctx, &store.TriggerInsertParams{Trigger: trig(k, key("g", "j"), at(1)), Replace: true})
				if err != nil {
					h.t.Fatalf("TriggerInsert with Replace: %v", err)
				}
			}},
			{"Deleted", func(h *harness, _ store.Lease, k store.Key) {
				if _, err := h.s.TriggerDelete(h.ctx, k); err != nil {
					h.t.Fatalf("TriggerDelete: %v", err)
				}
			}},
			{"JobDeleted", func(h *harness, _ store.Lease, _ store.Key) {
				if _, err := h.s.JobDelete(h.ctx, key("g", "j")); err != nil {
					h.t.Fatalf("JobDelete: %v", err)
				}
			}},
			{"Released", func(h *harness, l store.Lease, k store.Key) {
				if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: k}); err != nil {
					h.t.Fatalf("TriggerRelease: %v", err)
				}
			}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := h.fresh(t)
				k := h.simple(key("t", "1"), h.job(key("g", "j")), at(1)).Key
				l := h.node("n")
				acq := h.acquireOne(l, k)
				tc.lose(h, l, k)
				_, _, err := h.fire(l, acq, at(2))
				wantErr(t, "TriggerFire", err, store.ErrNotClaimed)
				if es := h.executions(store.ExecutionListParams{}); len(es) != 0 {
					t.Errorf("refused fire recorded executions %v", execIDs(es))
				}
			})
		}
	}},
	{"OtherNodesClaim", func(t *testing.T, h *harness) {
		k := h.simple(key("t", "1"), h.job(key("g", "j")), at(1)).Key
		owner := h.node("owner")
		acq := h.acquireOne(owner, k)
		_, _, err := h.fire(h.node("thief"), acq, at(2))
		wantErr(t, "TriggerFire by another node", err, store.ErrNotClaimed)
		h.mustFire(owner, acq, at(2))
	}},
	{"NeverAcquired", func(t *testing.T, h *harness) {
		tr := h.simple(key("t", "1"), h.job(key("g", "j")), at(1))
		_, _, err := h.fire(h.node("n"), tr, at(2))
		wantErr(t, "TriggerFire of a WAITING trigger", err, store.ErrNotClaimed)
	}},
	{"AlreadyFired", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		k := h.simple(key("t", "1"), jk, at(1)).Key
		h.simple(key("t", "2"), jk, at(1))
		l := h.node("n")
		acq := h.acquire(l, at(1), 2)
		// A (buggy) advance that leaves the trigger at the instant it fired.
		for _, tr := range acq {
			h.mustFire(l, tr, at(1))
		}
		again := h.acquire(l, at(1), 2)
		if len(again) != 2 {
			t.Fatalf("re-acquired %v, want both triggers", keysOf(again))
		}
		if again[0].Key != k {
			again[0], again[1] = again[1], again[0]
		}
		_, _, err := h.fire(l, again[0], at(2))
		wantErr(t, "second TriggerFire of one instant", err, store.ErrAlreadyFired)
		if got := h.get(k); got.State != store.StateAcquired || got.ClaimedBy != l.NodeID || !got.NextFireTime.Equal(at(1)) {
			t.Errorf("refused fire changed the trigger: %+v", got)
		}
		if es := h.executions(store.ExecutionListParams{TriggerKey: &k}); len(es) != 1 {
			t.Errorf("executions of %s = %v, want one", k, execIDs(es))
		}
		if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: k}); err != nil {
			t.Errorf("TriggerRelease after refused fire: %v", err)
		}
	}},
	{"NonConcurrent", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"), nonConcurrent)
		first := h.simple(key("t", "1"), jk, at(1)).Key
		second := h.simple(key("t", "2"), jk, at(2)).Key
		paused := h.simple(key("t", "3"), jk, at(3)).Key
		done := h.simple(key("t", "4"), jk, time.Time{}).Key
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Trigger: &paused}); err != nil {
			t.Fatalf("TriggersPause: %v", err)
		}
		waiting := h.simple(key("t", "5"), jk, at(100)).Key
		l := h.node("n")
		acq := h.acquire(l, at(2), 2)
		wantEqual(t, "acquired keys", keysOf(acq), []store.Key{first, second})

		id := h.mustFire(l, acq[0], at(61))
		h.wantState(store.StateBlocked, first, waiting)
		h.wantState(store.StateAcquired, second)
		h.wantState(store.StatePausedBlocked, paused)
		h.wantState(store.StateComplete, done)
		if got := h.acquire(l, at(1000), 10); len(got) != 0 {
			t.Errorf("acquired %v while the job runs", keysOf(got))
		}

		// The other trigger was claimed before the job started: firing it
		// reports Blocked and fires nothing.
		res, _, err := h.fire(l, acq[1], at(62))
		if err != nil {
			t.Fatalf("TriggerFire of the second trigger: %v", err)
		}
		if !res.Blocked || res.Job.Key != jk {
			t.Errorf("TriggerFire result = %+v, want Blocked with job %s", res, jk)
		}
		if got := h.get(second); got.State != store.StateBlocked || !got.NextFireTime.Equal(at(2)) || got.TimesTriggered != 0 || got.ClaimedBy != "" {
			t.Errorf("blocked trigger = %+v, want BLOCKED, unclaimed, unchanged timing", got)
		}
		if es := h.executions(store.ExecutionListParams{TriggerKey: &second}); len(es) != 0 {
			t.Errorf("blocked fire recorded executions %v", execIDs(es))
		}

		inserted := h.simple(key("t", "6"), jk, at(5)).Key
		h.wantState(store.StateBlocked, inserted)

		h.mustComplete(l, id)
		h.wantState(store.StateWaiting, first, second, waiting, inserted)
		h.wantState(store.StatePaused, paused)
		h.wantState(store.StateComplete, done)
		wantEqual(t, "acquired keys", keysOf(h.acquire(l, at(5), 10)), []store.Key{second, inserted})
	}},
	{"NonConcurrentLastFireCompletes", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"), nonConcurrent)
		k := h.simple(key("t", "1"), jk, at(1)).Key
		other := h.simple(key("t", "2"), jk, at(50)).Key
		l := h.node("n")
		id := h.acquireFire(l, k, time.Time{})
		h.wantState(store.StateComplete, k)
		h.wantState(store.StateBlocked, other)
		h.mustComplete(l, id)
		h.wantState(store.StateComplete, k)
		h.wantState(store.StateWaiting, other)
	}},
	{"ConcurrentJobRunsTwice", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		h.simple(key("t", "1"), jk, at(1))
		h.simple(key("t", "2"), jk, at(1))
		l := h.node("n")
		for _, tr := range h.acquire(l, at(1), 2) {
			h.mustFire(l, tr, at(2))
			h.wantState(store.StateWaiting, tr.Key)
		}
		if es := h.executions(store.ExecutionListParams{Running: true}); len(es) != 2 {
			t.Errorf("running executions = %v, want two", execIDs(es))
		}
	}},
}
