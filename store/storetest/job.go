package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/chime-scheduler/chime/store"
)

var jobTests = []test{
	{"KeysDifferingInTrailingSpacesAreDistinct", func(t *testing.T, h *harness) {
		// Keys compare byte for byte: a padding collation (MySQL's and
		// MariaDB's utf8mb4_bin) would make these one key.
		keys := []store.Key{key("g", "trail"), key("g", "trail "), key("g ", "trail"), key("g", "trail\t")}
		for i, k := range keys {
			h.job(k, withJobData(fmt.Sprintf(`{"i":%d}`, i)))
		}
		for i, k := range keys {
			if got := h.getJob(k); got.Key != k || string(got.Data) != fmt.Sprintf(`{"i":%d}`, i) {
				t.Errorf("JobGet(%q) = %q with %s, want its own job, %d", k, got.Key, got.Data, i)
			}
		}
		if deleted, err := h.s.JobDelete(h.ctx, keys[1]); err != nil || !deleted {
			t.Fatalf("JobDelete(%q) = %v, %v", keys[1], deleted, err)
		}
		if _, err := h.s.JobGet(h.ctx, keys[1]); !errors.Is(err, store.ErrJobNotFound) {
			t.Errorf("JobGet(%q) after its delete: %v, want ErrJobNotFound", keys[1], err)
		}
		h.getJob(keys[0]) // still there
		h.simple(key("t", "x"), keys[0], at(1))
		h.simple(key("t", "x "), keys[2], at(1))
		if got := h.get(key("t", "x ")); got.JobKey != keys[2] {
			t.Errorf("trigger %q belongs to %q, want %q", "x ", got.JobKey, keys[2])
		}
	}},
	{"UpsertGetRoundTrip", func(t *testing.T, h *harness) {
		want := store.JobRecord{
			Key:                key("reports", "daily"),
			Type:               "http",
			Description:        "daily report",
			Durable:            true,
			RequestsRecovery:   true,
			DisallowConcurrent: true,
			PersistData:        true,
			Data:               []byte(`{"url":"https://example.com","n":1}`),
			Meta:               []byte(`{"retry":{"max_attempts":3},"note":"kept apart from data"}`),
			Version:            42, // ignored: the store counts writes
		}
		if err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: want}); err != nil {
			t.Fatalf("JobUpsert: %v", err)
		}
		got := h.getJob(want.Key)
		if got.Version <= 0 {
			t.Errorf("Version = %d, want > 0", got.Version)
		}
		want.Version = got.Version
		wantEqual(t, "JobGet", normJob(got), normJob(want))
	}},
	{"MetaRoundTrip", func(t *testing.T, h *harness) {
		// Meta is kept byte for byte and apart from Data, through every
		// kind of job write and through the end of an execution that
		// stores new data.
		k := h.job(key("g", "j"), withJobData(`{"chime:server":"user data"}`), func(j *store.JobRecord) {
			j.Meta = []byte(`{"a": [1, 2]}`)
		})
		if got := h.getJob(k); string(got.Meta) != `{"a": [1, 2]}` || string(got.Data) != `{"chime:server":"user data"}` {
			t.Errorf("JobGet = data %s meta %s, want each as written", got.Data, got.Meta)
		}
		v := h.getJob(k).Version
		if err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: k, Type: "noop", Durable: true, Meta: []byte(`"b"`)}, IfVersion: v}); err != nil {
			t.Fatalf("JobUpsert with IfVersion: %v", err)
		}
		if got := h.getJob(k); string(got.Meta) != `"b"` || got.Data != nil {
			t.Errorf("after a conditional write: data %s meta %s, want no data and meta \"b\"", got.Data, got.Meta)
		}
		if err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: k, Type: "noop", Durable: true, Meta: []byte(`{"c":3}`)}, Replace: true}); err != nil {
			t.Fatalf("JobUpsert with Replace: %v", err)
		}
		h.simple(key("t", "1"), k, at(1))
		l := h.node("n")
		id := h.acquireFire(l, key("t", "1"), at(2))
		if err := h.complete(l, id, store.ExecutionSucceeded, store.InstructionNoop, []byte(`{"out":1}`)); err != nil {
			t.Fatalf("ExecutionComplete: %v", err)
		}
		if got := h.getJob(k); string(got.Meta) != `{"c":3}` || string(got.Data) != `{"out":1}` {
			t.Errorf("after an execution stored its data: data %s meta %s, want {\"out\":1} and {\"c\":3}", got.Data, got.Meta)
		}
		jobs, err := h.s.JobList(h.ctx, &store.JobListParams{})
		if err != nil || len(jobs) != 1 || string(jobs[0].Meta) != `{"c":3}` {
			t.Errorf("JobList = %+v, %v, want the job with its meta", jobs, err)
		}
		if err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: k, Type: "noop", Durable: true}, Replace: true}); err != nil {
			t.Fatalf("JobUpsert with Replace: %v", err)
		}
		if got := h.getJob(k); got.Meta != nil {
			t.Errorf("after a write without meta: meta %s, want none", got.Meta)
		}
	}},
	{"UpsertExistingFails", func(t *testing.T, h *harness) {
		k := h.job(key("g", "j"), withJobData(`{"a":1}`))
		err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: k, Type: "other"}})
		wantErr(t, "JobUpsert without Replace", err, store.ErrJobExists)
		if got := h.getJob(k); got.Type != "noop" || string(got.Data) != `{"a":1}` {
			t.Errorf("rejected upsert changed the job: %+v", got)
		}
	}},
	{"ReplaceKeepsTriggers", func(t *testing.T, h *harness) {
		k := h.job(key("g", "j"))
		before := h.getJob(k)
		h.simple(key("t", "1"), k, at(1))
		err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{
			Job:     store.JobRecord{Key: k, Type: "other", Durable: true, Data: []byte(`{"b":2}`)},
			Replace: true,
		})
		if err != nil {
			t.Fatalf("JobUpsert with Replace: %v", err)
		}
		got := h.getJob(k)
		if got.Type != "other" || string(got.Data) != `{"b":2}` {
			t.Errorf("replaced job = %+v, want Type other and the new data", got)
		}
		if got.Version <= before.Version {
			t.Errorf("Version after replace = %d, want > %d", got.Version, before.Version)
		}
		h.wantState(store.StateWaiting, key("t", "1"))
	}},
	{"ReplaceCreatesMissing", func(t *testing.T, h *harness) {
		k := key("g", "new")
		if err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: k, Durable: true}, Replace: true}); err != nil {
			t.Fatalf("JobUpsert with Replace of a new key: %v", err)
		}
		h.getJob(k)
	}},
	{"IfVersionReplacesThatVersionOnly", func(t *testing.T, h *harness) {
		k := h.job(key("g", "j"), withJobData(`{"a":1}`))
		h.simple(key("t", "1"), k, at(1))
		v1 := h.getJob(k).Version
		err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{
			Job:       store.JobRecord{Key: k, Type: "second", Durable: true, Data: []byte(`{"b":2}`)},
			IfVersion: v1,
		})
		if err != nil {
			t.Fatalf("JobUpsert expecting the stored version %d: %v", v1, err)
		}
		v2 := h.getJob(k)
		if v2.Type != "second" || v2.Version <= v1 {
			t.Errorf("job after conditional write = %+v, want Type second and Version > %d", v2, v1)
		}
		h.wantState(store.StateWaiting, key("t", "1"))

		err = h.s.JobUpsert(h.ctx, &store.JobUpsertParams{
			Job:       store.JobRecord{Key: k, Type: "stale", Durable: true},
			IfVersion: v1,
		})
		wantErr(t, "JobUpsert expecting a stale version", err, store.ErrVersionMismatch)
		wantEqual(t, "job after the refused write", normJob(h.getJob(k)), normJob(v2))
	}},
	{"IfVersionOfMissingJob", func(t *testing.T, h *harness) {
		k := key("g", "missing")
		err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: k, Type: "noop", Durable: true}, IfVersion: 1})
		wantErr(t, "JobUpsert expecting a version of a missing job", err, store.ErrJobNotFound)
		_, err = h.s.JobGet(h.ctx, k)
		wantErr(t, "JobGet after the refused write", err, store.ErrJobNotFound)
	}},
	{"IfVersionOneWriterWins", func(t *testing.T, h *harness) {
		const writers = 8
		k := h.job(key("g", "j"))
		v := h.getJob(k).Version
		errs := make(chan error, writers)
		for i := range writers {
			go func() {
				errs <- h.s.JobUpsert(h.ctx, &store.JobUpsertParams{
					Job:       store.JobRecord{Key: k, Type: fmt.Sprintf("writer-%d", i), Durable: true},
					IfVersion: v,
				})
			}()
		}
		won := 0
		for range writers {
			switch err := <-errs; {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrVersionMismatch):
				t.Errorf("JobUpsert of a concurrent writer: %v, want nil or ErrVersionMismatch", err)
			}
		}
		if won != 1 {
			t.Errorf("%d writers expecting version %d succeeded, want exactly 1", won, v)
		}
		if got := h.getJob(k).Version; got != v+1 {
			t.Errorf("Version after the race = %d, want %d", got, v+1)
		}
	}},
	{"GetMissing", func(t *testing.T, h *harness) {
		_, err := h.s.JobGet(h.ctx, key("g", "missing"))
		wantErr(t, "JobGet", err, store.ErrJobNotFound)
	}},
	{"DeleteRemovesTriggers", func(t *testing.T, h *harness) {
		k := h.job(key("g", "j"))
		other := h.job(key("g", "other"))
		h.simple(key("t", "1"), k, at(1))
		h.simple(key("t", "2"), k, at(2))
		h.simple(key("t", "3"), other, at(3))
		ok, err := h.s.JobDelete(h.ctx, k)
		if err != nil || !ok {
			t.Fatalf("JobDelete = %v, %v; want true, nil", ok, err)
		}
		_, err = h.s.JobGet(h.ctx, k)
		wantErr(t, "JobGet after delete", err, store.ErrJobNotFound)
		h.wantNoTrigger(key("t", "1"))
		h.wantNoTrigger(key("t", "2"))
		h.wantState(store.StateWaiting, key("t", "3"))
		ok, err = h.s.JobDelete(h.ctx, k)
		if err != nil || ok {
			t.Errorf("second JobDelete = %v, %v; want false, nil", ok, err)
		}
	}},
	{"ListByGroupOrderedByKey", func(t *testing.T, h *harness) {
		for _, k := range []store.Key{key("b", "2"), key("a", "2"), key("b", "1"), key("a", "1"), key("c", "1")} {
			h.job(k)
		}
		tests := []struct {
			name  string
			group string
			want  []store.Key
		}{
			{"All", "", []store.Key{key("a", "1"), key("a", "2"), key("b", "1"), key("b", "2"), key("c", "1")}},
			{"Group", "b", []store.Key{key("b", "1"), key("b", "2")}},
			{"EmptyGroup", "none", nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got, err := h.s.JobList(h.ctx, &store.JobListParams{Group: tc.group})
				if err != nil {
					t.Fatalf("JobList: %v", err)
				}
				var keys []store.Key
				for _, j := range got {
					keys = append(keys, j.Key)
				}
				wantEqual(t, "JobList keys", keys, tc.want)
			})
		}
	}},
	{"ListPages", func(t *testing.T, h *harness) {
		all := []store.Key{key("a", "1"), key("a", "2"), key("a", "3"), key("b", "1"), key("b", "10"), key("b", "2"), key("c", "1")}
		for _, k := range slices.Backward(all) {
			h.job(k)
		}
		tests := []struct {
			name string
			p    store.JobListParams
			want []store.Key
		}{
			{"FirstPage", store.JobListParams{Limit: 3}, all[:3]},
			{"AfterLastOfGroup", store.JobListParams{After: key("a", "3"), Limit: 3}, all[3:6]},
			{"AfterWithinGroup", store.JobListParams{After: key("b", "1"), Limit: 2}, all[4:6]},
			{"AfterMissingKey", store.JobListParams{After: key("a", "25")}, all[2:]},
			{"AfterGroupOnly", store.JobListParams{After: key("b", "")}, all[3:]},
			{"LastPageShort", store.JobListParams{After: key("b", "2"), Limit: 5}, all[6:]},
			{"PastTheEnd", store.JobListParams{After: key("c", "1"), Limit: 5}, nil},
			{"GroupAfter", store.JobListParams{Group: "b", After: key("b", "1"), Limit: 1}, all[4:5]},
			{"GroupAfterOtherGroup", store.JobListParams{Group: "b", After: key("a", "9")}, all[3:6]},
			{"GroupAfterEnd", store.JobListParams{Group: "a", After: key("a", "3")}, nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got, err := h.s.JobList(h.ctx, &tc.p)
				if err != nil {
					t.Fatalf("JobList(%+v): %v", tc.p, err)
				}
				var keys []store.Key
				for _, j := range got {
					keys = append(keys, j.Key)
				}
				wantEqual(t, "JobList keys", keys, tc.want)
			})
		}
		t.Run("WalkAllPages", func(t *testing.T) {
			var seen []store.Key
			var after store.Key
			for range len(all) + 1 {
				page, err := h.s.JobList(h.ctx, &store.JobListParams{After: after, Limit: 2})
				if err != nil {
					t.Fatalf("JobList: %v", err)
				}
				if len(page) == 0 {
					break
				}
				for _, j := range page {
					seen = append(seen, j.Key)
				}
				after = page[len(page)-1].Key
			}
			wantEqual(t, "keys of every page", seen, all)
		})
	}},
	{"RecordsAreCopies", func(t *testing.T, h *harness) {
		k := key("g", "j")
		in := store.JobRecord{Key: k, Durable: true, Data: []byte(`{"a":1}`)}
		if err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: in}); err != nil {
			t.Fatalf("JobUpsert: %v", err)
		}
		in.Data[2] = 'X'
		got, err := h.s.JobGet(h.ctx, k)
		if err != nil {
			t.Fatalf("JobGet: %v", err)
		}
		got.Data[2] = 'Y'
		got.Description = "changed"
		list, err := h.s.JobList(h.ctx, &store.JobListParams{})
		if err != nil {
			t.Fatalf("JobList: %v", err)
		}
		list[0].Data[2] = 'Z'
		if again := h.getJob(k); string(again.Data) != `{"a":1}` || again.Description != "" {
			t.Errorf("stored job changed through a caller's copy: %+v (data %s)", again, again.Data)
		}
	}},
}

var calendarTests = []test{
	{"UpsertGetReplace", func(t *testing.T, h *harness) {
		c := store.CalendarRecord{Name: "holidays", Data: []byte(`{"type":"holiday","excludedDates":["2030-12-25"]}`)}
		if err := h.s.CalendarUpsert(h.ctx, &store.CalendarUpsertParams{Calendar: c}); err != nil {
			t.Fatalf("CalendarUpsert: %v", err)
		}
		got, err := h.s.CalendarGet(h.ctx, "holidays")
		if err != nil {
			t.Fatalf("CalendarGet: %v", err)
		}
		if got.Name != c.Name || !bytesEqual(got.Data, c.Data) || got.Version <= 0 {
			t.Errorf("CalendarGet = %+v, want %+v with a positive version", got, c)
		}
		err = h.s.CalendarUpsert(h.ctx, &store.CalendarUpsertParams{Calendar: store.CalendarRecord{Name: "holidays"}})
		wantErr(t, "CalendarUpsert without Replace", err, store.ErrCalendarExists)

		c2 := store.CalendarRecord{Name: "holidays", Data: []byte(`{"type":"weekly"}`)}
		if err := h.s.CalendarUpsert(h.ctx, &store.CalendarUpsertParams{Calendar: c2, Replace: true}); err != nil {
			t.Fatalf("CalendarUpsert with Replace: %v", err)
		}
		got2, err := h.s.CalendarGet(h.ctx, "holidays")
		if err != nil {
			t.Fatalf("CalendarGet: %v", err)
		}
		if !bytesEqual(got2.Data, c2.Data) || got2.Version <= got.Version {
			t.Errorf("replaced calendar = %+v, want data %s and version > %d", got2, c2.Data, got.Version)
		}
		got2.Data[0] = 'X'
		if again, _ := h.s.CalendarGet(h.ctx, "holidays"); !bytesEqual(again.Data, c2.Data) {
			t.Errorf("stored calendar changed through a caller's copy: %s", again.Data)
		}
	}},
	{"GetMissing", func(t *testing.T, h *harness) {
		_, err := h.s.CalendarGet(h.ctx, "none")
		wantErr(t, "CalendarGet", err, store.ErrCalendarNotFound)
	}},
	{"ListOrderedByName", func(t *testing.T, h *harness) {
		for _, n := range []string{"b", "c", "a"} {
			if err := h.s.CalendarUpsert(h.ctx, &store.CalendarUpsertParams{Calendar: store.CalendarRecord{Name: n, Data: []byte(`{}`)}}); err != nil {
				t.Fatalf("CalendarUpsert(%s): %v", n, err)
			}
		}
		got, err := h.s.CalendarList(h.ctx)
		if err != nil {
			t.Fatalf("CalendarList: %v", err)
		}
		var names []string
		for _, c := range got {
			names = append(names, c.Name)
		}
		wantEqual(t, "CalendarList names", names, []string{"a", "b", "c"})
	}},
	{"DeleteInUse", func(t *testing.T, h *harness) {
		if err := h.s.CalendarUpsert(h.ctx, &store.CalendarUpsertParams{Calendar: store.CalendarRecord{Name: "cal", Data: []byte(`{}`)}}); err != nil {
			t.Fatalf("CalendarUpsert: %v", err)
		}
		jk := h.job(key("g", "j"))
		tr := trig(key("t", "1"), jk, at(1))
		tr.CalendarName = "cal"
		h.trigger(tr)
		_, err := h.s.CalendarDelete(h.ctx, "cal")
		wantErr(t, "CalendarDelete of a calendar in use", err, store.ErrCalendarInUse)
		if _, err := h.s.CalendarGet(h.ctx, "cal"); err != nil {
			t.Errorf("CalendarGet after refused delete: %v", err)
		}
		if _, err := h.s.TriggerDelete(h.ctx, tr.Key); err != nil {
			t.Fatalf("TriggerDelete: %v", err)
		}
		ok, err := h.s.CalendarDelete(h.ctx, "cal")
		if err != nil || !ok {
			t.Fatalf("CalendarDelete = %v, %v; want true, nil", ok, err)
		}
		ok, err = h.s.CalendarDelete(h.ctx, "cal")
		if err != nil || ok {
			t.Errorf("second CalendarDelete = %v, %v; want false, nil", ok, err)
		}
	}},
}
