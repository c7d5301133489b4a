package storetest

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

var executionTests = []test{
	{"CompleteInstructions", func(t *testing.T, h *harness) {
		tests := []struct {
			name        string
			durable     bool
			sibling     bool
			instruction store.Instruction
			state       store.ExecutionState
			wantFiring  store.TriggerState // "" when deleted
			wantSibling store.TriggerState
			wantJob     bool
		}{
			{"Noop", true, true, store.InstructionNoop, store.ExecutionSucceeded, store.StateWaiting, store.StateWaiting, true},
			{"DeleteTrigger", true, true, store.InstructionDeleteTrigger, store.ExecutionSucceeded, "", store.StateWaiting, true},
			{"DeleteLastTriggerDurable", true, false, store.InstructionDeleteTrigger, store.ExecutionSucceeded, "", "", true},
			{"DeleteLastTriggerNonDurable", false, false, store.InstructionDeleteTrigger, store.ExecutionSucceeded, "", "", false},
			{"DeleteTriggerNonDurableSiblingLeft", false, true, store.InstructionDeleteTrigger, store.ExecutionSucceeded, "", store.StateWaiting, true},
			{"SetTriggerComplete", true, true, store.InstructionSetTriggerComplete, store.ExecutionFailed, store.StateComplete, store.StateWaiting, true},
			{"SetAllJobTriggersComplete", true, true, store.InstructionSetAllJobTriggersComplete, store.ExecutionFailed, store.StateComplete, store.StateComplete, true},
			{"SetTriggerError", true, true, store.InstructionSetTriggerError, store.ExecutionVetoed, store.StateError, store.StateWaiting, true},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := h.fresh(t)
				jk := key("g", "j")
				if tc.durable {
					h.job(jk)
				} else {
					h.job(jk, nonDurable)
				}
				firing := h.simple(key("t", "firing"), jk, at(1)).Key
				l := h.node("n")
				id := h.acquireFire(l, firing, at(60))
				sibling := key("t", "sibling")
				if tc.sibling {
					h.simple(sibling, jk, at(30))
				}
				err := h.s.ExecutionComplete(h.ctx, &store.ExecutionCompleteParams{
					Lease: l, ID: id, State: tc.state, Error: "boom", FinishedTime: at(5), Instruction: tc.instruction,
				})
				if err != nil {
					t.Fatalf("ExecutionComplete: %v", err)
				}
				for k, want := range map[store.Key]store.TriggerState{firing: tc.wantFiring, sibling: tc.wantSibling} {
					if want == "" {
						h.wantNoTrigger(k)
					} else {
						h.wantState(want, k)
					}
				}
				if _, err := h.s.JobGet(h.ctx, jk); (err == nil) != tc.wantJob {
					t.Errorf("JobGet after completion: %v, want job to exist = %v", err, tc.wantJob)
				}
				e := h.execution(id)
				if e.State != tc.state || e.Error != "boom" || !e.FinishedTime.Equal(at(5)) {
					t.Errorf("execution = %+v, want %s, Error boom, finished %s", e, tc.state, at(5))
				}
			})
		}
	}},
	{"JobData", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"), withJobData(`{"n":1}`), func(j *store.JobRecord) { j.PersistData = true })
		k := h.simple(key("t", "1"), jk, at(1)).Key
		l := h.node("n")
		before := h.getJob(jk)
		id := h.acquireFire(l, k, at(2))
		if err := h.complete(l, id, store.ExecutionSucceeded, store.InstructionNoop, []byte(`{"n":2}`)); err != nil {
			t.Fatalf("ExecutionComplete: %v", err)
		}
		got := h.getJob(jk)
		if string(got.Data) != `{"n":2}` || got.Version <= before.Version {
			t.Errorf("job after completion = data %s version %d, want {\"n\":2} and version > %d", got.Data, got.Version, before.Version)
		}
		id = h.acquireFire(l, k, at(3))
		if err := h.complete(l, id, store.ExecutionSucceeded, store.InstructionNoop, nil); err != nil {
			t.Fatalf("ExecutionComplete: %v", err)
		}
		if again := h.getJob(jk); string(again.Data) != `{"n":2}` {
			t.Errorf("job data after completion without data = %s, want it kept", again.Data)
		}
	}},
	{"CompleteErrors", func(t *testing.T, h *harness) {
		k := h.simple(key("t", "1"), h.job(key("g", "j")), at(1)).Key
		l := h.node("n")
		id := h.acquireFire(l, k, at(2))
		err := h.complete(l, "no-such-execution", store.ExecutionSucceeded, store.InstructionNoop, nil)
		wantErr(t, "ExecutionComplete of an unknown ID", err, store.ErrExecutionNotFound)
		err = h.complete(h.node("other"), id, store.ExecutionSucceeded, store.InstructionNoop, nil)
		wantErr(t, "ExecutionComplete by another node", err, store.ErrExecutionNotFound)
		if e := h.execution(id); e.State != store.ExecutionExecuting {
			t.Errorf("execution state after refused completion = %s, want EXECUTING", e.State)
		}
		if err := h.complete(l, id, store.ExecutionExecuting, store.InstructionNoop, nil); err == nil {
			t.Errorf("ExecutionComplete with state EXECUTING succeeded, want an error")
		}
		if err := h.complete(l, id, store.ExecutionSucceeded, "REPEAT_FOREVER", nil); err == nil {
			t.Errorf("ExecutionComplete with an unknown instruction succeeded, want an error")
		}
		h.mustComplete(l, id)
		err = h.complete(l, id, store.ExecutionFailed, store.InstructionSetTriggerError, nil)
		wantErr(t, "second ExecutionComplete", err, store.ErrExecutionNotFound)
		if e := h.execution(id); e.State != store.ExecutionSucceeded {
			t.Errorf("execution state after second completion = %s, want SUCCEEDED", e.State)
		}
		h.wantState(store.StateWaiting, k)
	}},
	{"List", func(t *testing.T, h *harness) {
		j1, j2 := h.job(key("g", "j1")), h.job(key("g", "j2"))
		a := h.simple(key("t", "a"), j1, at(1)).Key
		b := h.simple(key("t", "b"), j2, at(2)).Key
		c := h.simple(key("t", "c"), j1, at(3)).Key
		n1, n2 := h.node("n1"), h.node("n2")
		fireNext := func(l store.Lease, noLaterThan time.Time, want store.Key) string {
			got := h.acquire(l, noLaterThan, 1)
			if len(got) != 1 || got[0].Key != want {
				t.Fatalf("acquired %v, want %s", keysOf(got), want)
			}
			return h.mustFire(l, got[0], at(1000))
		}
		ea := fireNext(n1, at(1), a)
		eb := fireNext(n2, at(2), b)
		ec := fireNext(n1, at(3), c)
		h.mustComplete(n1, ea)
		tests := []struct {
			name string
			p    store.ExecutionListParams
			want []string
		}{
			{"All", store.ExecutionListParams{}, []string{ec, eb, ea}},
			{"Job", store.ExecutionListParams{JobKey: &j1}, []string{ec, ea}},
			{"Trigger", store.ExecutionListParams{TriggerKey: &b}, []string{eb}},
			{"Node", store.ExecutionListParams{NodeID: "n1"}, []string{ec, ea}},
			{"Running", store.ExecutionListParams{Running: true}, []string{ec, eb}},
			{"RunningOnNode", store.ExecutionListParams{Running: true, NodeID: "n1"}, []string{ec}},
			{"Limit", store.ExecutionListParams{Limit: 2}, []string{ec, eb}},
			{"NoMatch", store.ExecutionListParams{NodeID: "none"}, nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				wantEqual(t, "ExecutionList IDs", execIDs(h.executions(tc.p)), tc.want)
			})
		}
	}},
	{"Prune", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		l := h.node("n")
		var ids []string
		for i := range 3 {
			k := h.simple(key("t", string(rune('a'+i))), jk, at(i)).Key
			ids = append(ids, h.acquireFire(l, k, at(1000+i)))
		}
		for i, finished := range []time.Time{at(10), at(20)} {
			err := h.s.ExecutionComplete(h.ctx, &store.ExecutionCompleteParams{
				Lease: l, ID: ids[i], State: store.ExecutionSucceeded, FinishedTime: finished, Instruction: store.InstructionNoop,
			})
			if err != nil {
				t.Fatalf("ExecutionComplete: %v", err)
			}
		}
		prune := func(before time.Time, want int, left []string) {
			t.Helper()
			n, err := h.s.ExecutionsPrune(h.ctx, before)
			if err != nil || n != want {
				t.Errorf("ExecutionsPrune(%s) = %d, %v; want %d, nil", before, n, err, want)
			}
			wantEqual(t, "executions left", execIDs(h.executions(store.ExecutionListParams{})), left)
		}
		prune(at(10), 0, []string{ids[2], ids[1], ids[0]})
		prune(at(20), 1, []string{ids[2], ids[1]})
		prune(at(1_000_000), 1, []string{ids[2]})
	}},
}
