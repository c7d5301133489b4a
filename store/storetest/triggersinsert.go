package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

var triggersInsertTests = []test{
	{"StoresEveryTrigger", func(t *testing.T, h *harness) {
		h.calendar("cal")
		a := h.job(key("g", "a"))
		b := h.job(key("g", "b"), nonConcurrent)
		l := h.node("n")
		h.simple(key("t", "b-running"), b, at(1))
		id := h.runJob(l, b)
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Group: "p"}); err != nil {
			t.Fatalf("TriggersPause: %v", err)
		}
		batch := []store.TriggerRecord{
			trig(key("t", "a2"), a, at(2)),
			withCalendar(trig(key("t", "a1"), a, at(1)), "cal"),
			trig(key("t", "done"), a, time.Time{}),
			trig(key("p", "a3"), a, at(3)),
			trig(key("t", "b2"), b, at(2)),
		}
		got, err := h.s.TriggersInsert(h.ctx, &store.TriggersInsertParams{Triggers: batch})
		if err != nil {
			t.Fatalf("TriggersInsert: %v", err)
		}
		wantEqual(t, "stored keys", got, keysOf(batch))
		if tr := h.get(key("t", "a1")); tr.CalendarName != "cal" || !tr.NextFireTime.Equal(at(1)) || tr.JobKey != a {
			t.Errorf("trigger t.a1 = %+v, want calendar cal, next fire time %s, job %s", tr, at(1), a)
		}
		h.wantState(store.StateWaiting, key("t", "a1"), key("t", "a2"))
		h.wantState(store.StateComplete, key("t", "done"))
		h.wantState(store.StatePaused, key("p", "a3"))
		h.wantState(store.StateBlocked, key("t", "b2"))
		// The acquisition index holds the new triggers.
		h.acquireOne(l, key("t", "a1"))
		h.mustComplete(l, id)
		h.wantState(store.StateWaiting, key("t", "b2"))
	}},
	{"SkipExistingLeavesTakenKeys", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		old := h.simple(key("t", "old"), jk, at(5))
		got, err := h.s.TriggersInsert(h.ctx, &store.TriggersInsertParams{
			Triggers:     []store.TriggerRecord{trig(key("t", "new"), jk, at(1)), trig(key("t", "old"), jk, at(1))},
			SkipExisting: true,
		})
		if err != nil {
			t.Fatalf("TriggersInsert(SkipExisting): %v", err)
		}
		wantEqual(t, "stored keys", got, []store.Key{key("t", "new")})
		if tr := h.get(key("t", "old")); !tr.NextFireTime.Equal(old.NextFireTime) {
			t.Errorf("trigger t.old fires at %s, want %s: it was replaced", tr.NextFireTime, old.NextFireTime)
		}
		h.wantState(store.StateWaiting, key("t", "new"))
	}},
	{"RefusedBatchesStoreNothing", func(t *testing.T, h *harness) {
		tests := []struct {
			name     string
			triggers []store.TriggerRecord
			skip     bool
			want     error
			// names is in the error's text: the key at fault.
			names string
		}{
			{"KeyTaken", []store.TriggerRecord{trig(key("n", "1"), key("g", "j"), at(1)), trig(key("t", "old"), key("g", "j"), at(2))}, false, store.ErrTriggerExists, "t.old"},
			{"JobMissing", []store.TriggerRecord{trig(key("n", "1"), key("g", "j"), at(1)), trig(key("n", "2"), key("g", "missing"), at(2))}, true, store.ErrJobNotFound, "g.missing"},
			{"CalendarMissing", []store.TriggerRecord{trig(key("n", "1"), key("g", "j"), at(1)), withCalendar(trig(key("n", "2"), key("g", "j"), at(2)), "missing")}, true, store.ErrCalendarNotFound, "missing"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := h.fresh(t)
				jk := h.job(key("g", "j"))
				h.simple(key("t", "old"), jk, at(1))
				before := h.snapshot()
				_, err := h.s.TriggersInsert(h.ctx, &store.TriggersInsertParams{Triggers: tc.triggers, SkipExisting: tc.skip})
				wantErr(t, "TriggersInsert", err, tc.want)
				if err != nil && !strings.Contains(err.Error(), tc.names) {
					t.Errorf("TriggersInsert: %v, want the error to name %s", err, tc.names)
				}
				wantEqual(t, "jobs and triggers after the refused batch", h.snapshot(), before)
			})
		}
	}},
	{"KeyListedTwice", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		before := h.snapshot()
		_, err := h.s.TriggersInsert(h.ctx, &store.TriggersInsertParams{
			Triggers: []store.TriggerRecord{trig(key("t", "1"), jk, at(1)), trig(key("t", "1"), jk, at(2))},
		})
		if err == nil {
			t.Fatalf("TriggersInsert of one key twice succeeded, want an error")
		}
		wantEqual(t, "jobs and triggers after the invalid batch", h.snapshot(), before)
	}},
	{"EmptyBatch", func(t *testing.T, h *harness) {
		got, err := h.s.TriggersInsert(h.ctx, &store.TriggersInsertParams{})
		if err != nil || len(got) != 0 {
			t.Errorf("TriggersInsert(no triggers) = %v, %v; want nothing stored and no error", got, err)
		}
	}},
}
