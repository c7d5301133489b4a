package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// runJob makes job jk execute on the node of l: it adds a trigger due
// before anything else in the suite, acquires and fires it, and returns the
// execution ID. The trigger's key is ("running", jk.Name).
func (h *harness) runJob(l store.Lease, jk store.Key) string {
	h.t.Helper()
	k := key("running", jk.Name)
	h.trigger(trig(k, jk, at(-1000)))
	got := h.acquire(l, at(-1000), 1)
	if len(got) != 1 || got[0].Key != k {
		h.t.Fatalf("TriggersAcquire = %v, want %s", keysOf(got), k)
	}
	return h.mustFire(l, got[0], at(1_000_000))
}

var triggerTests = []test{
	{"InsertGetRoundTrip", func(t *testing.T, h *harness) {
		jk := h.job(key("jobs", "j"))
		if err := h.s.CalendarUpsert(h.ctx, &store.CalendarUpsertParams{Calendar: store.CalendarRecord{Name: "cal", Data: []byte(`{}`)}}); err != nil {
			t.Fatalf("CalendarUpsert: %v", err)
		}
		want := store.TriggerRecord{
			Key:                key("triggers", "t"),
			JobKey:             jk,
			Description:        "every second",
			Priority:           7,
			Kind:               "cron",
			Schedule:           []byte(`{"expr":"0 0 12 ? * MON-FRI","tz":"Europe/Paris"}`),
			CalendarName:       "cal",
			MisfireInstruction: "DO_NOTHING",
			Data:               []byte(`{"k":"v"}`),
			Origin:             "backfill",
			Meta:               []byte(`{"id":"x1","scheduled_time":"2030-01-01T00:00:00Z"}`),
			StartTime:          at(-10),
			EndTime:            at(1000),
			NextFireTime:       at(5).In(time.FixedZone("X", 3600)),
			PreviousFireTime:   at(-5),
			TimesTriggered:     3,
			State:              store.StateError, // ignored
			ClaimedBy:          "nobody",         // not a claim
			ClaimEpoch:         9,
			Version:            99,
		}
		got := h.trigger(want)
		if got.Version <= 0 {
			t.Errorf("Version = %d, want > 0", got.Version)
		}
		want.State = store.StateWaiting
		want.ClaimedBy = ""
		want.ClaimEpoch = 0
		want.Version = got.Version
		wantEqual(t, "TriggerGet", normTrigger(got), normTrigger(want))
	}},
	{"OriginAndMetaOutliveFiring", func(t *testing.T, h *harness) {
		// Timing updates (fire, release, misfire) and state changes
		// (pause, resume) keep what made the trigger.
		jk := h.job(key("g", "j"))
		in := trig(key("t", "1"), jk, at(1))
		in.Origin, in.Meta = "retry", []byte(`{"attempt":2}`)
		h.trigger(in)
		plain := h.simple(key("t", "plain"), jk, at(500))
		if plain.Origin != "" || plain.Meta != nil {
			t.Errorf("trigger stored without an origin: origin %q meta %s, want none", plain.Origin, plain.Meta)
		}
		check := func(when string) {
			t.Helper()
			if got := h.get(key("t", "1")); got.Origin != "retry" || string(got.Meta) != `{"attempt":2}` {
				t.Errorf("%s: origin %q meta %s, want retry and {\"attempt\":2}", when, got.Origin, got.Meta)
			}
		}
		l := h.node("n")
		tr := h.acquireOne(l, key("t", "1"))
		if tr.Origin != "retry" || string(tr.Meta) != `{"attempt":2}` {
			t.Errorf("TriggersAcquire returned origin %q meta %s, want retry and {\"attempt\":2}", tr.Origin, tr.Meta)
		}
		timing := tr
		timing.NextFireTime = at(3)
		if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: tr.Key, Timing: &timing}); err != nil {
			t.Fatalf("TriggerRelease: %v", err)
		}
		check("after a release with new timing")
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{All: true}); err != nil {
			t.Fatalf("TriggersPause: %v", err)
		}
		if _, err := h.s.TriggersResume(h.ctx, &store.TriggerSelector{All: true}); err != nil {
			t.Fatalf("TriggersResume: %v", err)
		}
		check("after a pause and a resume")
		h.acquireFire(l, key("t", "1"), at(4))
		check("after a fire")
		list, err := h.s.TriggerList(h.ctx, &store.TriggerListParams{JobKey: &jk})
		if err != nil || len(list) != 2 || list[0].Origin != "retry" || string(list[0].Meta) != `{"attempt":2}` {
			t.Errorf("TriggerList = %+v, %v, want t.1 with its origin and meta first", list, err)
		}
	}},
	{"OriginTooLong", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		tr := trig(key("t", "1"), jk, at(1))
		tr.Origin = strings.Repeat("o", store.MaxOriginLength+1)
		if err := h.s.TriggerInsert(h.ctx, &store.TriggerInsertParams{Trigger: tr}); err == nil {
			t.Errorf("TriggerInsert with a %d-byte origin succeeded, want an error", len(tr.Origin))
		}
		tr.Origin = strings.Repeat("o", store.MaxOriginLength)
		h.trigger(tr)
	}},
	{"InsertErrors", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		h.simple(key("t", "taken"), jk, at(1))
		withCal := trig(key("t", "cal"), jk, at(1))
		withCal.CalendarName = "missing"
		tests := []struct {
			name    string
			trigger store.TriggerRecord
			want    error
		}{
			{"JobMissing", trig(key("t", "new"), key("g", "missing"), at(1)), store.ErrJobNotFound},
			{"CalendarMissing", withCal, store.ErrCalendarNotFound},
			{"KeyTaken", trig(key("t", "taken"), jk, at(9)), store.ErrTriggerExists},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				err := h.s.TriggerInsert(h.ctx, &store.TriggerInsertParams{Trigger: tc.trigger})
				wantErr(t, "TriggerInsert", err, tc.want)
			})
		}
		if got := h.get(key("t", "taken")); !got.NextFireTime.Equal(at(1)) {
			t.Errorf("rejected insert changed the trigger: next %s", got.NextFireTime)
		}
		h.wantNoTrigger(key("t", "new"))
		h.wantNoTrigger(key("t", "cal"))
	}},
	{"InsertReplace", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		old := h.simple(key("t", "1"), jk, at(1))
		nt := trig(key("t", "1"), jk, at(50))
		nt.Priority = 3
		nt.Description = "rescheduled"
		if err := h.s.TriggerInsert(h.ctx, &store.TriggerInsertParams{Trigger: nt, Replace: true}); err != nil {
			t.Fatalf("TriggerInsert with Replace: %v", err)
		}
		got := h.get(nt.Key)
		if !got.NextFireTime.Equal(at(50)) || got.Priority != 3 || got.Description != "rescheduled" {
			t.Errorf("replaced trigger = %+v", got)
		}
		if got.Version <= old.Version {
			t.Errorf("Version after replace = %d, want > %d", got.Version, old.Version)
		}
		// The acquisition index follows the new time.
		l := h.node("n")
		if acq := h.acquire(l, at(49), 10); len(acq) != 0 {
			t.Errorf("acquired %v before the new fire time", keysOf(acq))
		}
		h.acquireOne(l, nt.Key)
	}},
	{"InsertState", func(t *testing.T, h *harness) {
		type setup func(h *harness, l store.Lease, jk store.Key)
		pause := func(sel store.TriggerSelector) setup {
			return func(h *harness, _ store.Lease, _ store.Key) {
				if _, err := h.s.TriggersPause(h.ctx, &sel); err != nil {
					h.t.Fatalf("TriggersPause(%+v): %v", sel, err)
				}
			}
		}
		running := func(h *harness, l store.Lease, jk store.Key) { h.runJob(l, jk) }
		tests := []struct {
			name          string
			nonConcurrent bool
			setup         []setup
			next          time.Time
			want          store.TriggerState
		}{
			{"Waiting", false, nil, at(1), store.StateWaiting},
			{"TriggerGroupPaused", false, []setup{pause(store.TriggerSelector{Group: "tg"})}, at(1), store.StatePaused},
			{"OtherTriggerGroupPaused", false, []setup{pause(store.TriggerSelector{Group: "other"})}, at(1), store.StateWaiting},
			{"JobGroupPaused", false, []setup{pause(store.TriggerSelector{JobGroup: "jg"})}, at(1), store.StatePaused},
			{"OtherJobGroupPaused", false, []setup{pause(store.TriggerSelector{JobGroup: "other"})}, at(1), store.StateWaiting},
			{"AllPaused", false, []setup{pause(store.TriggerSelector{All: true})}, at(1), store.StatePaused},
			{"Blocked", true, []setup{running}, at(1), store.StateBlocked},
			{"ConcurrentJobRunning", false, []setup{running}, at(1), store.StateWaiting},
			{"PausedAndBlocked", true, []setup{running, pause(store.TriggerSelector{Group: "tg"})}, at(1), store.StatePausedBlocked},
			{"NoNextFireTime", false, nil, time.Time{}, store.StateComplete},
			{"NoNextFireTimePaused", false, []setup{pause(store.TriggerSelector{All: true})}, time.Time{}, store.StateComplete},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := h.fresh(t)
				l := h.node("n")
				jk := key("jg", "j")
				if tc.nonConcurrent {
					h.job(jk, nonConcurrent)
				} else {
					h.job(jk)
				}
				for _, s := range tc.setup {
					s(h, l, jk)
				}
				tr := trig(key("tg", "t"), jk, tc.next)
				tr.State = store.StateAcquired // ignored
				h.wantState(tc.want, h.trigger(tr).Key)
			})
		}
	}},
	{"GetMissing", func(t *testing.T, h *harness) {
		_, err := h.s.TriggerGet(h.ctx, key("t", "none"))
		wantErr(t, "TriggerGet", err, store.ErrTriggerNotFound)
	}},
	{"Delete", func(t *testing.T, h *harness) {
		tests := []struct {
			name      string
			durable   bool
			others    int // other triggers of the job
			wantJobOK bool
		}{
			{"NonDurableLastTrigger", false, 0, false},
			{"NonDurableOtherTriggerLeft", false, 1, true},
			{"DurableLastTrigger", true, 0, true},
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
				h.simple(key("t", "del"), jk, at(1))
				for i := range tc.others {
					h.simple(key("t", string(rune('a'+i))), jk, at(2))
				}
				ok, err := h.s.TriggerDelete(h.ctx, key("t", "del"))
				if err != nil || !ok {
					t.Fatalf("TriggerDelete = %v, %v; want true, nil", ok, err)
				}
				h.wantNoTrigger(key("t", "del"))
				_, err = h.s.JobGet(h.ctx, jk)
				if gotOK := err == nil; gotOK != tc.wantJobOK {
					t.Errorf("job exists after deleting the trigger = %v (%v), want %v", gotOK, err, tc.wantJobOK)
				}
				ok, err = h.s.TriggerDelete(h.ctx, key("t", "del"))
				if err != nil || ok {
					t.Errorf("second TriggerDelete = %v, %v; want false, nil", ok, err)
				}
			})
		}
	}},
	{"List", func(t *testing.T, h *harness) {
		j1 := h.job(key("jg", "1"))
		j2 := h.job(key("jg", "2"))
		h.simple(key("b", "2"), j1, at(1))
		h.simple(key("a", "1"), j2, at(1))
		h.simple(key("b", "1"), j2, at(1))
		h.simple(key("a", "2"), j1, at(1))
		tests := []struct {
			name string
			p    store.TriggerListParams
			want []store.Key
		}{
			{"All", store.TriggerListParams{}, []store.Key{key("a", "1"), key("a", "2"), key("b", "1"), key("b", "2")}},
			{"Group", store.TriggerListParams{Group: "b"}, []store.Key{key("b", "1"), key("b", "2")}},
			{"Job", store.TriggerListParams{JobKey: &j1}, []store.Key{key("a", "2"), key("b", "2")}},
			{"GroupAndJob", store.TriggerListParams{Group: "a", JobKey: &j2}, []store.Key{key("a", "1")}},
			{"NoMatch", store.TriggerListParams{Group: "none"}, nil},
			{"Jobs", store.TriggerListParams{JobKeys: []store.Key{j2, j1}}, []store.Key{key("a", "1"), key("a", "2"), key("b", "1"), key("b", "2")}},
			{"OneOfJobs", store.TriggerListParams{JobKeys: []store.Key{key("jg", "none"), j2}}, []store.Key{key("a", "1"), key("b", "1")}},
			{"JobsListedTwice", store.TriggerListParams{JobKeys: []store.Key{j1, j1}}, []store.Key{key("a", "2"), key("b", "2")}},
			{"JobsAndGroup", store.TriggerListParams{Group: "b", JobKeys: []store.Key{j1, j2}}, []store.Key{key("b", "1"), key("b", "2")}},
			{"JobsAndJob", store.TriggerListParams{JobKey: &j1, JobKeys: []store.Key{j2}}, nil},
			{"NoneOfJobs", store.TriggerListParams{JobKeys: []store.Key{key("jg", "none")}}, nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got, err := h.s.TriggerList(h.ctx, &tc.p)
				if err != nil {
					t.Fatalf("TriggerList: %v", err)
				}
				wantEqual(t, "TriggerList keys", keysOf(got), tc.want)
			})
		}
	}},
	{"ListOfManyJobs", func(t *testing.T, h *harness) {
		// A page of a thousand jobs in as many groups is one call, within
		// every database's limits on statements, and still in key order.
		first := h.job(key("zz", "1"))
		last := h.job(key("aa", "1"))
		h.simple(key("b", "1"), first, at(1))
		h.simple(key("a", "1"), last, at(1))
		jobs := []store.Key{first}
		for i := range 1000 {
			jobs = append(jobs, key(fmt.Sprintf("g%d", i), "missing"), key("zz", fmt.Sprintf("missing-%d", i)))
		}
		jobs = append(jobs, last)
		got, err := h.s.TriggerList(h.ctx, &store.TriggerListParams{JobKeys: jobs})
		if err != nil {
			t.Fatalf("TriggerList of %d jobs: %v", len(jobs), err)
		}
		wantEqual(t, "TriggerList keys", keysOf(got), []store.Key{key("a", "1"), key("b", "1")})
	}},
	{"RecordsAreCopies", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		in := trig(key("t", "1"), jk, at(1))
		in.Data = []byte(`{"a":1}`)
		if err := h.s.TriggerInsert(h.ctx, &store.TriggerInsertParams{Trigger: in}); err != nil {
			t.Fatalf("TriggerInsert: %v", err)
		}
		in.Data[2] = 'X'
		in.Schedule[2] = 'X'
		got := h.get(in.Key)
		got.Data[2] = 'Y'
		got.Schedule[2] = 'Y'
		list, err := h.s.TriggerList(h.ctx, &store.TriggerListParams{})
		if err != nil {
			t.Fatalf("TriggerList: %v", err)
		}
		list[0].Data[2] = 'Z'
		list[0].Priority = 100
		acq := h.acquire(h.node("n"), at(1), 1)
		acq[0].Schedule[2] = 'Z'
		acq[0].NextFireTime = at(99)
		again := h.get(in.Key)
		want := trig(in.Key, jk, at(1))
		if string(again.Data) != `{"a":1}` || string(again.Schedule) != string(want.Schedule) ||
			again.Priority != 0 || !again.NextFireTime.Equal(at(1)) {
			t.Errorf("stored trigger changed through a caller's copy: %+v (data %s, schedule %s)", again, again.Data, again.Schedule)
		}
	}},
}

var pauseTests = []test{
	{"Selectors", func(t *testing.T, h *harness) {
		// Triggers: tg1.a and tg2.c of job jg1.j1, tg1.b of job jg2.j2.
		j1, j2 := key("jg1", "j1"), key("jg2", "j2")
		a, b, c := key("tg1", "a"), key("tg1", "b"), key("tg2", "c")
		tests := []struct {
			name        string
			sel         store.TriggerSelector
			wantPaused  []store.Key
			wantRunning []store.Key
			wantGroups  store.PausedGroups
		}{
			{"Trigger", store.TriggerSelector{Trigger: &a}, []store.Key{a}, []store.Key{b, c}, store.PausedGroups{}},
			{"Job", store.TriggerSelector{Job: &j1}, []store.Key{a, c}, []store.Key{b}, store.PausedGroups{}},
			{"Group", store.TriggerSelector{Group: "tg1"}, []store.Key{a, b}, []store.Key{c}, store.PausedGroups{TriggerGroups: []string{"tg1"}}},
			{"JobGroup", store.TriggerSelector{JobGroup: "jg2"}, []store.Key{b}, []store.Key{a, c}, store.PausedGroups{JobGroups: []string{"jg2"}}},
			{"All", store.TriggerSelector{All: true}, []store.Key{a, b, c}, nil, store.PausedGroups{All: true}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := h.fresh(t)
				h.job(j1)
				h.job(j2)
				h.simple(a, j1, at(1))
				h.simple(b, j2, at(2))
				h.simple(c, j1, at(3))
				n, err := h.s.TriggersPause(h.ctx, &tc.sel)
				if err != nil || n != len(tc.wantPaused) {
					t.Fatalf("TriggersPause = %d, %v; want %d, nil", n, err, len(tc.wantPaused))
				}
				h.wantState(store.StatePaused, tc.wantPaused...)
				h.wantState(store.StateWaiting, tc.wantRunning...)
				h.wantPausedGroups(tc.wantGroups)
				if acq := h.acquire(h.node("n"), at(10), 10); len(acq) != len(tc.wantRunning) {
					t.Errorf("acquired %v, want only %v", keysOf(acq), tc.wantRunning)
				}

				n, err = h.s.TriggersResume(h.ctx, &tc.sel)
				if err != nil || n != len(tc.wantPaused) {
					t.Fatalf("TriggersResume = %d, %v; want %d, nil", n, err, len(tc.wantPaused))
				}
				h.wantState(store.StateWaiting, tc.wantPaused...)
				h.wantPausedGroups(store.PausedGroups{})
			})
		}
	}},
	{"StateTransitions", func(t *testing.T, h *harness) {
		l := h.node("n")
		busy := h.job(key("g", "busy"), nonConcurrent)
		h.runJob(l, busy)
		plain := h.job(key("g", "plain"))
		acquired := h.simple(key("p", "acquired"), plain, at(0)).Key
		h.acquireOne(l, acquired)
		waiting := h.simple(key("p", "waiting"), plain, at(1)).Key
		blocked := h.simple(key("p", "blocked"), busy, at(2)).Key
		complete := h.simple(key("p", "complete"), plain, time.Time{}).Key
		h.wantState(store.StateBlocked, blocked)
		h.wantState(store.StateComplete, complete)

		n, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Group: "p"})
		if err != nil || n != 3 {
			t.Fatalf("TriggersPause = %d, %v; want 3, nil", n, err)
		}
		h.wantState(store.StatePaused, waiting, acquired)
		h.wantState(store.StatePausedBlocked, blocked)
		h.wantState(store.StateComplete, complete)
		if tr := h.get(acquired); tr.ClaimedBy != "" {
			t.Errorf("paused trigger still claimed by %q", tr.ClaimedBy)
		}
		if n, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Group: "p"}); err != nil || n != 0 {
			t.Errorf("pausing again = %d, %v; want 0, nil", n, err)
		}

		n, err = h.s.TriggersResume(h.ctx, &store.TriggerSelector{Group: "p"})
		if err != nil || n != 3 {
			t.Fatalf("TriggersResume = %d, %v; want 3, nil", n, err)
		}
		h.wantState(store.StateWaiting, waiting, acquired)
		h.wantState(store.StateBlocked, blocked)
		h.wantState(store.StateComplete, complete)
	}},
	{"ResumeWhileJobRuns", func(t *testing.T, h *harness) {
		l := h.node("n")
		busy := h.job(key("g", "busy"), nonConcurrent)
		tk := h.simple(key("p", "t"), busy, at(1)).Key
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Trigger: &tk}); err != nil {
			t.Fatalf("TriggersPause: %v", err)
		}
		h.runJob(l, busy)
		h.wantState(store.StatePausedBlocked, tk)
		if _, err := h.s.TriggersResume(h.ctx, &store.TriggerSelector{Trigger: &tk}); err != nil {
			t.Fatalf("TriggersResume: %v", err)
		}
		h.wantState(store.StateBlocked, tk)
	}},
	{"ResumeToBlockedWhileJobRuns", func(t *testing.T, h *harness) {
		// A trigger acquired before its non-concurrent job started keeps
		// its claim; paused, it is PAUSED, and resumed, BLOCKED.
		jk := h.job(key("g", "j"), nonConcurrent)
		h.simple(key("t", "1"), jk, at(1))
		second := h.simple(key("t", "2"), jk, at(2)).Key
		l := h.node("n")
		acq := h.acquire(l, at(2), 2)
		if len(acq) != 2 {
			t.Fatalf("acquired %v, want both triggers", keysOf(acq))
		}
		id := h.mustFire(l, acq[0], at(60))
		if _, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Trigger: &second}); err != nil {
			t.Fatalf("TriggersPause: %v", err)
		}
		h.wantState(store.StatePaused, second)
		if _, err := h.s.TriggersResume(h.ctx, &store.TriggerSelector{Trigger: &second}); err != nil {
			t.Fatalf("TriggersResume: %v", err)
		}
		h.wantState(store.StateBlocked, second)
		h.mustComplete(l, id)
		h.wantState(store.StateWaiting, second)
	}},
	{"ResumeAllForgetsGroups", func(t *testing.T, h *harness) {
		for _, sel := range []store.TriggerSelector{{Group: "tg"}, {JobGroup: "jg"}, {All: true}} {
			if _, err := h.s.TriggersPause(h.ctx, &sel); err != nil {
				t.Fatalf("TriggersPause(%+v): %v", sel, err)
			}
		}
		h.wantPausedGroups(store.PausedGroups{TriggerGroups: []string{"tg"}, JobGroups: []string{"jg"}, All: true})
		if _, err := h.s.TriggersResume(h.ctx, &store.TriggerSelector{All: true}); err != nil {
			t.Fatalf("TriggersResume(All): %v", err)
		}
		h.wantPausedGroups(store.PausedGroups{})
		jk := h.job(key("jg", "j"))
		h.wantState(store.StateWaiting, h.simple(key("tg", "t"), jk, at(1)).Key)
	}},
	{"GroupPausedWithoutTriggers", func(t *testing.T, h *harness) {
		n, err := h.s.TriggersPause(h.ctx, &store.TriggerSelector{Group: "later"})
		if err != nil || n != 0 {
			t.Fatalf("TriggersPause = %d, %v; want 0, nil", n, err)
		}
		h.wantPausedGroups(store.PausedGroups{TriggerGroups: []string{"later"}})
		jk := h.job(key("g", "j"))
		tk := h.simple(key("later", "t"), jk, at(1)).Key
		h.wantState(store.StatePaused, tk)
		n, err = h.s.TriggersResume(h.ctx, &store.TriggerSelector{Group: "later"})
		if err != nil || n != 1 {
			t.Fatalf("TriggersResume = %d, %v; want 1, nil", n, err)
		}
		h.wantState(store.StateWaiting, tk)
	}},
	{"MissingKeysSelectNothing", func(t *testing.T, h *harness) {
		missing := key("g", "missing")
		for _, sel := range []store.TriggerSelector{{Trigger: &missing}, {Job: &missing}} {
			if n, err := h.s.TriggersPause(h.ctx, &sel); err != nil || n != 0 {
				t.Errorf("TriggersPause(%+v) = %d, %v; want 0, nil", sel, n, err)
			}
			if n, err := h.s.TriggersResume(h.ctx, &sel); err != nil || n != 0 {
				t.Errorf("TriggersResume(%+v) = %d, %v; want 0, nil", sel, n, err)
			}
		}
		h.wantPausedGroups(store.PausedGroups{})
	}},
	{"InvalidSelector", func(t *testing.T, h *harness) {
		k := key("g", "t")
		for name, sel := range map[string]store.TriggerSelector{
			"None": {},
			"Two":  {Trigger: &k, Group: "g"},
		} {
			if _, err := h.s.TriggersPause(h.ctx, &sel); err == nil {
				t.Errorf("TriggersPause(%s selector) succeeded, want an error", name)
			}
			if _, err := h.s.TriggersResume(h.ctx, &sel); err == nil {
				t.Errorf("TriggersResume(%s selector) succeeded, want an error", name)
			}
		}
		h.wantPausedGroups(store.PausedGroups{})
	}},
}

// wantPausedGroups compares PausedGroups, treating nil and empty lists alike.
func (h *harness) wantPausedGroups(want store.PausedGroups) {
	h.t.Helper()
	got, err := h.s.PausedGroups(h.ctx)
	if err != nil {
		h.t.Fatalf("PausedGroups: %v", err)
	}
	if len(got.TriggerGroups) == 0 {
		got.TriggerGroups = nil
	}
	if len(got.JobGroups) == 0 {
		got.JobGroups = nil
	}
	wantEqual(h.t, "PausedGroups", *got, want)
}
