package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// jobsInsert runs JobsInsert and fails the test on an error.
func (h *harness) jobsInsert(jobs ...store.JobInsert) {
	h.t.Helper()
	if err := h.s.JobsInsert(h.ctx, &store.JobsInsertParams{Jobs: jobs}); err != nil {
		h.t.Fatalf("JobsInsert(%d jobs): %v", len(jobs), err)
	}
}

// newJob is an element of JobsInsert: a durable job of type noop with
// the triggers, each made for the job.
func newJob(jk store.Key, triggers ...store.TriggerRecord) store.JobInsert {
	for i := range triggers {
		triggers[i].JobKey = jk
	}
	return store.JobInsert{Job: store.JobRecord{Key: jk, Type: "noop", Durable: true}, Triggers: triggers}
}

var jobsInsertTests = []test{
	{"StoresEveryJobAndTrigger", func(t *testing.T, h *harness) {
		h.calendar("cal")
		// More jobs than any dialect puts in one statement, so that the
		// batch is several multi-row INSERTs in one transaction.
		const n = 3500
		jobs := make([]store.JobInsert, 0, n)
		for i := range n {
			jk := key("g", fmt.Sprintf("j%05d", i))
			e := newJob(jk, trig(key("t", fmt.Sprintf("t%05d", i)), jk, at(i+1)))
			e.Job.Data = []byte(fmt.Sprintf(`{"i":%d}`, i))
			if i%1000 == 0 {
				e.Triggers[0].CalendarName = "cal"
				e.Triggers = append(e.Triggers, trig(key("t", fmt.Sprintf("t%05d-done", i)), jk, time.Time{}))
			}
			jobs = append(jobs, e)
		}
		h.jobsInsert(jobs...)
		got, err := h.s.JobList(h.ctx, &store.JobListParams{})
		if err != nil {
			t.Fatalf("JobList: %v", err)
		}
		if len(got) != n {
			t.Fatalf("JobList: %d jobs, want %d", len(got), n)
		}
		if j := h.getJob(key("g", "j01234")); string(j.Data) != `{"i":1234}` || j.Version <= 0 || j.Type != "noop" {
			t.Errorf("job g.j01234 = %+v, want type noop, data {\"i\":1234} and a positive version", j)
		}
		if tr := h.get(key("t", "t01000")); tr.CalendarName != "cal" || !tr.NextFireTime.Equal(at(1001)) || tr.State != store.StateWaiting {
			t.Errorf("trigger t.t01000 = %+v, want calendar cal, next fire time %s, WAITING", tr, at(1001))
		}
		h.wantState(store.StateWaiting, key("t", "t00000"), key("t", "t03499"))
		h.wantState(store.StateComplete, key("t", "t02000-done"))
		// The acquisition index holds the new triggers.
		h.acquireOne(h.node("n"), key("t", "t00000"))
	}},
	{"CompleteWithoutNextFireTime", func(t *testing.T, h *harness) {
		jk := key("g", "j")
		h.jobsInsert(newJob(jk, trig(key("t", "done"), jk, time.Time{}), trig(key("t", "live"), jk, at(2))))
		h.wantState(store.StateComplete, key("t", "done"))
		h.wantState(store.StateWaiting, key("t", "live"))
	}},
	{"PausedGroupsApply", func(t *testing.T, h *harness) {
		for _, sel := range []store.TriggerSelector{{Group: "pt"}, {JobGroup: "pj"}} {
			if _, err := h.s.TriggersPause(h.ctx, &sel); err != nil {
				t.Fatalf("TriggersPause(%+v): %v", sel, err)
			}
		}
		a, b, c, d := key("pj", "a"), key("g", "b"), key("g", "c"), key("g", "d")
		paused := newJob(d, trig(key("t", "d"), d, at(4)))
		paused.Pause = store.PauseTriggers
		resumed := newJob(c, trig(key("pt", "c"), c, at(3)))
		resumed.Pause = store.ResumeTriggers
		h.jobsInsert(
			newJob(a, trig(key("t", "a"), a, at(1))),
			newJob(b, trig(key("pt", "b"), b, at(2)), trig(key("t", "b"), b, at(2))),
			resumed, paused,
		)
		h.wantState(store.StatePaused, key("t", "a"), key("pt", "b"), key("t", "d"))
		h.wantState(store.StateWaiting, key("t", "b"), key("pt", "c"))
		h.wantPausedGroups(store.PausedGroups{TriggerGroups: []string{"pt"}, JobGroups: []string{"pj"}})

		// Pausing everything covers every new trigger.
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{All: true}); err != nil {
			t.Fatalf("TriggersPause(All): %v", err)
		}
		e := key("g", "e")
		h.jobsInsert(newJob(e, trig(key("t", "e"), e, at(5))))
		h.wantState(store.StatePaused, key("t", "e"))
	}},
	{"BlockedWhileAnEarlierJobOfTheKeyRuns", func(t *testing.T, h *harness) {
		l := h.node("n")
		jk := h.job(key("g", "j"), nonConcurrent)
		h.simple(key("t", "1"), jk, at(1))
		id := h.runJob(l, jk)
		if _, err := h.s.JobDelete(h.ctx, jk); err != nil {
			t.Fatalf("JobDelete: %v", err)
		}
		again := newJob(jk, trig(key("t", "2"), jk, at(2)))
		again.Job.DisallowConcurrent = true
		other := key("g", "other")
		h.jobsInsert(again, newJob(other, trig(key("t", "other"), other, at(3))))
		h.wantState(store.StateBlocked, key("t", "2"))
		h.wantState(store.StateWaiting, key("t", "other"))
		h.mustComplete(l, id)
		h.wantState(store.StateWaiting, key("t", "2"))
	}},
	{"RefusedBatchesStoreNothing", func(t *testing.T, h *harness) {
		tests := []struct {
			name string
			jobs func() []store.JobInsert
			want error
			// names is in the error's text: the taken key.
			names string
		}{
			{"LastJobKeyTaken", func() []store.JobInsert {
				return []store.JobInsert{
					newJob(key("g", "new1"), trig(key("n", "1"), key("g", "new1"), at(1))),
					newJob(key("g", "new2"), trig(key("n", "2"), key("g", "new2"), at(2))),
					newJob(key("g", "j"), trig(key("n", "3"), key("g", "j"), at(3))),
				}
			}, store.ErrJobExists, "g.j"},
			{"LastTriggerKeyTaken", func() []store.JobInsert {
				return []store.JobInsert{
					newJob(key("g", "new1"), trig(key("n", "1"), key("g", "new1"), at(1))),
					newJob(key("g", "new2"), trig(key("n", "2"), key("g", "new2"), at(2)), trig(key("t", "old"), key("g", "new2"), at(2))),
				}
			}, store.ErrTriggerExists, "t.old"},
			{"OneJobTriggerKeyTaken", func() []store.JobInsert {
				return []store.JobInsert{newJob(key("g", "new1"), trig(key("t", "old"), key("g", "new1"), at(1)))}
			}, store.ErrTriggerExists, "t.old"},
			{"CalendarMissing", func() []store.JobInsert {
				return []store.JobInsert{
					newJob(key("g", "new1"), trig(key("n", "1"), key("g", "new1"), at(1))),
					newJob(key("g", "new2"), withCalendar(trig(key("n", "2"), key("g", "new2"), at(2)), "missing")),
				}
			}, store.ErrCalendarNotFound, "missing"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := h.fresh(t)
				jk := h.job(key("g", "j"))
				h.simple(key("t", "old"), jk, at(1))
				before := h.snapshot()
				err := h.s.JobsInsert(h.ctx, &store.JobsInsertParams{Jobs: tc.jobs()})
				wantErr(t, "JobsInsert", err, tc.want)
				if err != nil && !strings.Contains(err.Error(), tc.names) {
					t.Errorf("JobsInsert: %v, want the error to name %s", err, tc.names)
				}
				wantEqual(t, "jobs and triggers after the refused batch", h.snapshot(), before)
			})
		}
	}},
	{"InvalidBatches", func(t *testing.T, h *harness) {
		a, b := key("g", "a"), key("g", "b")
		tests := []struct {
			name string
			jobs []store.JobInsert
		}{
			{"JobListedTwice", []store.JobInsert{newJob(a, trig(key("t", "1"), a, at(1))), newJob(a, trig(key("t", "2"), a, at(2)))}},
			{"TriggerOfTwoJobs", []store.JobInsert{newJob(a, trig(key("t", "1"), a, at(1))), newJob(b, trig(key("t", "1"), b, at(2)))}},
			{"TriggerOfAnotherJob", []store.JobInsert{{Job: store.JobRecord{Key: a, Type: "noop"}, Triggers: []store.TriggerRecord{trig(key("t", "1"), b, at(1))}}}},
			{"UnknownPauseChange", []store.JobInsert{{Job: store.JobRecord{Key: a, Type: "noop", Durable: true}, Pause: "SOMETIMES"}}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := h.fresh(t)
				err := h.s.JobsInsert(h.ctx, &store.JobsInsertParams{Jobs: tc.jobs})
				if err == nil {
					t.Fatalf("JobsInsert succeeded, want an error")
				}
				if errors.Is(err, store.ErrJobExists) || errors.Is(err, store.ErrTriggerExists) {
					t.Errorf("JobsInsert: %v, want an invalid-request error, not a taken key", err)
				}
				wantEqual(t, "jobs and triggers after the invalid batch", h.snapshot(), snapshot{})
			})
		}
	}},
	{"EmptyBatch", func(t *testing.T, h *harness) {
		h.jobsInsert()
		wantEqual(t, "jobs and triggers after an empty batch", h.snapshot(), snapshot{})
	}},
}
