package storetest

import (
	"errors"
	"testing"

	"github.com/chime-scheduler/chime/store"
)

// snapshot is everything a store holds about jobs and triggers, for
// checking that a refused write changed nothing.
type snapshot struct {
	Jobs     []store.JobRecord
	Triggers []store.TriggerRecord
}

// snapshot reads every job and trigger.
func (h *harness) snapshot() snapshot {
	h.t.Helper()
	jobs, err := h.s.JobList(h.ctx, &store.JobListParams{})
	if err != nil {
		h.t.Fatalf("JobList: %v", err)
	}
	triggers, err := h.s.TriggerList(h.ctx, &store.TriggerListParams{})
	if err != nil {
		h.t.Fatalf("TriggerList: %v", err)
	}
	var s snapshot
	for _, j := range jobs {
		s.Jobs = append(s.Jobs, normJob(j))
	}
	for _, tr := range triggers {
		s.Triggers = append(s.Triggers, normTrigger(tr))
	}
	return s
}

// jobWrite runs JobWrite and fails the test on an error.
func (h *harness) jobWrite(p store.JobWriteParams) *store.JobWriteResult {
	h.t.Helper()
	res, err := h.s.JobWrite(h.ctx, &p)
	if err != nil {
		h.t.Fatalf("JobWrite(%s): %v", p.Job.Key, err)
	}
	return res
}

// calendar stores an empty calendar.
func (h *harness) calendar(name string) {
	h.t.Helper()
	err := h.s.CalendarUpsert(h.ctx, &store.CalendarUpsertParams{Calendar: store.CalendarRecord{Name: name, Data: []byte(`{}`)}})
	if err != nil {
		h.t.Fatalf("CalendarUpsert(%q): %v", name, err)
	}
}

// withCalendar returns tr naming calendar name.
func withCalendar(tr store.TriggerRecord, name string) store.TriggerRecord {
	tr.CalendarName = name
	return tr
}

var jobWriteTests = []test{
	{"CreatesJobWithTriggers", func(t *testing.T, h *harness) {
		jk := key("g", "j")
		h.calendar("cal")
		h.jobWrite(store.JobWriteParams{
			Job: store.JobRecord{Key: jk, Type: "noop", Durable: true, Data: []byte(`{"a":1}`)},
			Triggers: []store.TriggerRecord{
				trig(key("t", "1"), jk, at(1)),
				withCalendar(trig(key("t", "2"), jk, at(2)), "cal"),
			},
		})
		if got := h.getJob(jk); got.Type != "noop" || string(got.Data) != `{"a":1}` || got.Version <= 0 {
			t.Errorf("job = %+v, want the written one with a positive version", got)
		}
		h.wantState(store.StateWaiting, key("t", "1"), key("t", "2"))
		if got := h.get(key("t", "2")); got.CalendarName != "cal" || !got.NextFireTime.Equal(at(2)) {
			t.Errorf("trigger t.2 = %+v, want calendar cal and next fire time %s", got, at(2))
		}
		// The acquisition index holds the new triggers.
		l := h.node("n")
		h.acquireOne(l, key("t", "1"))
	}},
	{"OriginAndMeta", func(t *testing.T, h *harness) {
		jk := key("g", "j")
		manual := trig(key("t", "manual"), jk, at(1))
		manual.Origin, manual.Meta = "manual", []byte(`{"id":"e1"}`)
		h.jobWrite(store.JobWriteParams{
			Job:      store.JobRecord{Key: jk, Type: "noop", Durable: true, Data: []byte(`{"a":1}`), Meta: []byte(`{"s":1}`)},
			Triggers: []store.TriggerRecord{manual, trig(key("t", "plain"), jk, at(2))},
		})
		if got := h.getJob(jk); string(got.Meta) != `{"s":1}` || string(got.Data) != `{"a":1}` {
			t.Errorf("job data %s meta %s, want {\"a\":1} and {\"s\":1}", got.Data, got.Meta)
		}
		if got := h.get(key("t", "manual")); got.Origin != "manual" || string(got.Meta) != `{"id":"e1"}` {
			t.Errorf("trigger t.manual: origin %q meta %s, want manual and {\"id\":\"e1\"}", got.Origin, got.Meta)
		}
		if got := h.get(key("t", "plain")); got.Origin != "" || got.Meta != nil {
			t.Errorf("trigger t.plain: origin %q meta %s, want none", got.Origin, got.Meta)
		}
		v := h.getJob(jk).Version
		h.jobWrite(store.JobWriteParams{
			Job:       store.JobRecord{Key: jk, Type: "noop", Durable: true, Meta: []byte(`{"s":2}`)},
			IfVersion: v,
		})
		if got := h.getJob(jk); string(got.Meta) != `{"s":2}` {
			t.Errorf("job meta after a conditional write = %s, want {\"s\":2}", got.Meta)
		}
		if got := h.get(key("t", "manual")); got.Origin != "manual" {
			t.Errorf("trigger t.manual after a job write that kept it: origin %q, want manual", got.Origin)
		}
	}},
	{"RefusedWritesStoreNothing", func(t *testing.T, h *harness) {
		// Every refused write below would, if it were several steps,
		// leave part of itself behind: the job, the first triggers, the
		// deletions or the pause.
		type setup struct {
			jk      store.Key
			version int64 // of the stored job
		}
		tests := []struct {
			name  string
			write func(s setup) store.JobWriteParams
			want  error
		}{
			{"NewJobThirdTriggerNamesMissingCalendar", func(s setup) store.JobWriteParams {
				jk := key("g", "new")
				return store.JobWriteParams{
					Job: store.JobRecord{Key: jk, Type: "noop", Durable: true},
					Triggers: []store.TriggerRecord{
						trig(key("n", "1"), jk, at(1)), trig(key("n", "2"), jk, at(2)),
						withCalendar(trig(key("n", "3"), jk, at(3)), "missing"),
					},
					Pause: store.PauseTriggers,
				}
			}, store.ErrCalendarNotFound},
			{"ReplacementThirdTriggerNamesMissingCalendar", func(s setup) store.JobWriteParams {
				return store.JobWriteParams{
					Job:            store.JobRecord{Key: s.jk, Type: "changed", Durable: true},
					IfVersion:      s.version,
					DeleteTriggers: []store.Key{key("t", "old")},
					Triggers: []store.TriggerRecord{
						trig(key("t", "kept"), s.jk, at(50)), trig(key("t", "new"), s.jk, at(51)),
						withCalendar(trig(key("t", "new2"), s.jk, at(52)), "missing"),
					},
					Pause: store.PauseTriggers,
				}
			}, store.ErrCalendarNotFound},
			{"VersionMismatch", func(s setup) store.JobWriteParams {
				return store.JobWriteParams{
					Job:            store.JobRecord{Key: s.jk, Type: "changed", Durable: true},
					IfVersion:      s.version + 1,
					DeleteTriggers: []store.Key{key("t", "old")},
					Triggers:       []store.TriggerRecord{trig(key("t", "new"), s.jk, at(51))},
					Pause:          store.PauseTriggers,
				}
			}, store.ErrVersionMismatch},
			{"IfVersionOfMissingJob", func(s setup) store.JobWriteParams {
				jk := key("g", "new")
				return store.JobWriteParams{
					Job:       store.JobRecord{Key: jk, Type: "noop", Durable: true},
					IfVersion: 1,
					Triggers:  []store.TriggerRecord{trig(key("n", "1"), jk, at(1))},
				}
			}, store.ErrJobNotFound},
			{"JobExists", func(s setup) store.JobWriteParams {
				return store.JobWriteParams{
					Job:      store.JobRecord{Key: s.jk, Type: "changed", Durable: true},
					Triggers: []store.TriggerRecord{trig(key("t", "new"), s.jk, at(51))},
				}
			}, store.ErrJobExists},
			{"LastTriggerKeyTaken", func(s setup) store.JobWriteParams {
				jk := key("g", "new")
				return store.JobWriteParams{
					Job: store.JobRecord{Key: jk, Type: "noop", Durable: true},
					Triggers: []store.TriggerRecord{
						trig(key("n", "1"), jk, at(1)), trig(key("t", "other"), jk, at(2)),
					},
				}
			}, store.ErrTriggerExists},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := h.fresh(t)
				jk := h.job(key("g", "j"), withJobData(`{"v":1}`))
				h.simple(key("t", "old"), jk, at(1))
				kept := h.simple(key("t", "kept"), jk, at(2)).Key
				if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Trigger: &kept}); err != nil {
					t.Fatalf("TriggersPause: %v", err)
				}
				other := h.job(key("g", "other"))
				h.simple(key("t", "other"), other, at(3))
				before := h.snapshot()
				p := tc.write(setup{jk: jk, version: h.getJob(jk).Version})
				_, err := h.s.JobWrite(h.ctx, &p)
				wantErr(t, "JobWrite", err, tc.want)
				wantEqual(t, "jobs and triggers after the refused write", h.snapshot(), before)
			})
		}
	}},
	{"InvalidParamsStoreNothing", func(t *testing.T, h *harness) {
		jk := key("g", "j")
		tests := []struct {
			name string
			p    store.JobWriteParams
		}{
			{"TriggerOfAnotherJob", store.JobWriteParams{
				Job:      store.JobRecord{Key: jk, Type: "noop", Durable: true},
				Triggers: []store.TriggerRecord{trig(key("t", "1"), jk, at(1)), trig(key("t", "2"), key("g", "x"), at(1))},
			}},
			{"TriggerListedTwice", store.JobWriteParams{
				Job:      store.JobRecord{Key: jk, Type: "noop", Durable: true},
				Triggers: []store.TriggerRecord{trig(key("t", "1"), jk, at(1)), trig(key("t", "1"), jk, at(2))},
			}},
			{"UnknownPauseChange", store.JobWriteParams{
				Job:      store.JobRecord{Key: jk, Type: "noop", Durable: true},
				Triggers: []store.TriggerRecord{trig(key("t", "1"), jk, at(1))},
				Pause:    "SOMETIMES",
			}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if _, err := h.s.JobWrite(h.ctx, &tc.p); err == nil {
					t.Errorf("JobWrite succeeded, want an error")
				}
				if got := h.snapshot(); got.Jobs != nil || got.Triggers != nil {
					t.Errorf("the refused write stored %+v", got)
				}
			})
		}
	}},
	{"DeletesAndInsertsInOneStep", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		h.simple(key("t", "gone"), jk, at(1))
		kept := h.simple(key("t", "kept"), jk, at(2))
		reused := h.simple(key("t", "reused"), jk, at(3))
		other := h.job(key("g", "other"))
		h.simple(key("t", "other"), other, at(4))
		v := h.getJob(jk).Version
		res := h.jobWrite(store.JobWriteParams{
			Job:       store.JobRecord{Key: jk, Type: "changed", Durable: true},
			IfVersion: v,
			// A key of another job's trigger and a missing key are
			// ignored; a deleted key may be stored again in the same
			// step, without Replace.
			DeleteTriggers: []store.Key{key("t", "gone"), key("t", "reused"), key("t", "other"), key("t", "missing")},
			Triggers:       []store.TriggerRecord{trig(key("t", "new"), jk, at(5)), trig(reused.Key, jk, at(60))},
		})
		if got := h.getJob(jk); got.Type != "changed" || got.Version <= v {
			t.Errorf("job = %+v, want Type changed and a version above %d", got, v)
		}
		wantEqual(t, "JobWrite's deleted triggers", res.Deleted, []store.Key{key("t", "gone"), reused.Key})
		h.wantNoTrigger(key("t", "gone"))
		wantEqual(t, "untouched trigger", normTrigger(h.get(kept.Key)), normTrigger(kept))
		h.wantState(store.StateWaiting, key("t", "new"), reused.Key, key("t", "other"))
		if got := h.get(reused.Key); !got.NextFireTime.Equal(at(60)) {
			t.Errorf("re-stored trigger's next fire time = %s, want %s", got.NextFireTime, at(60))
		}
		if got := h.get(key("t", "other")); got.JobKey != other {
			t.Errorf("trigger t.other belongs to %s, want %s", got.JobKey, other)
		}
	}},
	{"ReplaceOverwritesTriggers", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		old := h.simple(key("t", "1"), jk, at(1))
		nt := trig(old.Key, jk, at(70))
		nt.Priority = 7
		h.jobWrite(store.JobWriteParams{Job: store.JobRecord{Key: jk, Type: "noop", Durable: true}, Replace: true,
			Triggers: []store.TriggerRecord{nt}})
		if got := h.get(old.Key); got.Priority != 7 || !got.NextFireTime.Equal(at(70)) || got.State != store.StateWaiting {
			t.Errorf("replaced trigger = %+v, want priority 7, next %s, WAITING", got, at(70))
		}
	}},
	{"PauseAndResumeCoverNewTriggers", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		first := h.simple(key("t", "1"), jk, at(1)).Key
		h.jobWrite(store.JobWriteParams{
			Job: store.JobRecord{Key: jk, Type: "noop", Durable: true}, Replace: true,
			Triggers: []store.TriggerRecord{trig(key("t", "2"), jk, at(2))},
			Pause:    store.PauseTriggers,
		})
		h.wantState(store.StatePaused, first, key("t", "2"))
		l := h.node("n")
		if acq := h.acquire(l, at(10), 10); len(acq) != 0 {
			t.Errorf("acquired %v of a paused job", keysOf(acq))
		}
		h.jobWrite(store.JobWriteParams{
			Job: store.JobRecord{Key: jk, Type: "noop", Durable: true}, Replace: true,
			Triggers: []store.TriggerRecord{trig(key("t", "3"), jk, at(3))},
			Pause:    store.ResumeTriggers,
		})
		h.wantState(store.StateWaiting, first, key("t", "2"), key("t", "3"))
	}},
	{"NoPauseChangeFollowsPausedGroups", func(t *testing.T, h *harness) {
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Group: "pg"}); err != nil {
			t.Fatalf("TriggersPause: %v", err)
		}
		jk := key("g", "j")
		h.jobWrite(store.JobWriteParams{
			Job:      store.JobRecord{Key: jk, Type: "noop", Durable: true},
			Triggers: []store.TriggerRecord{trig(key("pg", "1"), jk, at(1)), trig(key("t", "2"), jk, at(2))},
		})
		h.wantState(store.StatePaused, key("pg", "1"))
		h.wantState(store.StateWaiting, key("t", "2"))
		// Resuming the job resumes its triggers in a paused group, as
		// TriggersResume with a Job selector does; the group stays paused.
		h.jobWrite(store.JobWriteParams{
			Job: store.JobRecord{Key: jk, Type: "noop", Durable: true}, Replace: true,
			Triggers: []store.TriggerRecord{trig(key("pg", "3"), jk, at(3))},
			Pause:    store.ResumeTriggers,
		})
		h.wantState(store.StateWaiting, key("pg", "1"), key("pg", "3"))
		h.wantPausedGroups(store.PausedGroups{TriggerGroups: []string{"pg"}})
	}},
	{"PauseWhileJobRuns", func(t *testing.T, h *harness) {
		l := h.node("n")
		jk := h.job(key("g", "j"), nonConcurrent)
		first := h.simple(key("t", "1"), jk, at(1)).Key
		id := h.runJob(l, jk)
		h.wantState(store.StateBlocked, first)
		write := func(pause store.PauseChange, tk store.Key) {
			h.t.Helper()
			h.jobWrite(store.JobWriteParams{
				Job: store.JobRecord{Key: jk, Type: "noop", Durable: true, DisallowConcurrent: true}, Replace: true,
				Triggers: []store.TriggerRecord{trig(tk, jk, at(2))}, Pause: pause,
			})
		}
		write(store.PauseTriggers, key("t", "2"))
		h.wantState(store.StatePausedBlocked, first, key("t", "2"))
		write(store.ResumeTriggers, key("t", "3"))
		h.wantState(store.StateBlocked, first, key("t", "2"), key("t", "3"))
		h.mustComplete(l, id)
		h.wantState(store.StateWaiting, first, key("t", "2"), key("t", "3"))
	}},
	{"DeletingLastTriggerOfNonDurableJobDeletesIt", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"), nonDurable)
		h.simple(key("t", "1"), jk, at(1))
		h.jobWrite(store.JobWriteParams{
			Job:            store.JobRecord{Key: jk, Type: "noop"},
			Replace:        true,
			DeleteTriggers: []store.Key{key("t", "1")},
		})
		if _, err := h.s.JobGet(h.ctx, jk); !errors.Is(err, store.ErrJobNotFound) {
			t.Errorf("JobGet after its last trigger was deleted: %v, want ErrJobNotFound", err)
		}
	}},
}
