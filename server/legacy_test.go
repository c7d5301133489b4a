package server

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestLegacyFormsAreMigratedAtStart stores jobs and triggers the way
// servers did before metadata and origins (settings and run facts in the
// data maps, one-shot runs told by their trigger group), then starts a
// server on them: it moves them to the new form once, runs the pending
// retry as the attempt its facts say, and leaves a user's look-alike data
// alone.
func TestLegacyFormsAreMigratedAtStart(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		ep := newEndpoint(t, 200)

		st, err := sqlstore.Open(ctx, url, &sqlstore.Options{Logger: quietLogger})
		if err != nil {
			t.Fatalf("sqlstore.Open: %v", err)
		}
		t.Cleanup(func() { _ = st.Close() })
		lib, err := chime.New(chime.Config{Store: st, Logger: quietLogger})
		if err != nil {
			t.Fatalf("chime.New: %v", err)
		}
		settings := map[string]any{"http": map[string]any{"url": ep.URL + "/legacy"}, "retry": map[string]any{"max_attempts": 3}}
		job := chime.JobDetail{
			Key: chime.NewJobKey("reports", "nightly"), Type: typeHTTP, Durable: true,
			Data: chime.JobData{"env": "prod", legacySettingsKey: settings},
		}
		retryKey := chime.NewTriggerKey(retryGroup, "legacy-retry-2")
		backfillKey := chime.NewTriggerKey(backfillGroup, "legacy-backfill")
		far := time.Now().Add(24 * time.Hour)
		triggers := []chime.Trigger{{
			Key: retryKey, Schedule: &schedule.Simple{}, StartTime: time.Now(),
			Data: chime.JobData{"x": 1.0, legacyFactsKey: map[string]any{
				"id": "legacy-retry-2", "first_id": "legacy-first", "attempt": 2, "manual": true,
			}},
		}, {
			Key: backfillKey, Schedule: &schedule.Simple{}, StartTime: far,
			Data: chime.JobData{legacyFactsKey: map[string]any{"id": "legacy-backfill", "scheduled_time": "2024-05-01T00:00:00Z"}},
		}}
		if err := lib.ScheduleJob(ctx, job, triggers, nil); err != nil {
			t.Fatalf("ScheduleJob: %v", err)
		}
		if err := lib.PauseTrigger(ctx, backfillKey); err != nil {
			t.Fatalf("PauseTrigger: %v", err)
		}
		// The oldest rows have no origin at all: stores kept none.
		rec, err := st.TriggerGet(ctx, store.Key{Group: backfillKey.Group, Name: backfillKey.Name})
		if err != nil {
			t.Fatal(err)
		}
		rec.Origin = ""
		if err := st.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: *rec, Replace: true}); err != nil {
			t.Fatal(err)
		}
		if err := lib.PauseTrigger(ctx, backfillKey); err != nil {
			t.Fatalf("PauseTrigger: %v", err)
		}
		// A job of the library whose data merely looks like settings.
		plain := chime.JobDetail{
			Key: chime.NewJobKey("lib", "plain"), Type: "record", Durable: true,
			Data: chime.JobData{legacySettingsKey: map[string]any{"colour": "blue"}},
		}
		if err := lib.AddJob(ctx, plain, nil); err != nil {
			t.Fatalf("AddJob: %v", err)
		}

		s := newServer(t, url)
		got, err := s.GetJob(ctx, "reports", "nightly")
		if err != nil {
			t.Fatalf("GetJob: %v", err)
		}
		if got.Retry == nil || got.Retry.MaxAttempts != 3 || len(got.Data) != 1 || got.Data["env"] != "prod" {
			t.Errorf("migrated job = retry %+v data %v, want 3 attempts and only env=prod in its data", got.Retry, got.Data)
		}
		if len(got.Triggers) != 0 {
			t.Errorf("migrated job lists triggers %+v, want none: its triggers stand for runs", got.Triggers)
		}
		d, err := s.sched.Job(ctx, job.Key)
		if err != nil {
			t.Fatal(err)
		}
		version := d.Version
		bf, err := s.sched.Trigger(ctx, backfillKey)
		if err != nil {
			t.Fatal(err)
		}
		var facts runFacts
		if bf.Origin != chime.OriginBackfill || bf.State != chime.TriggerPaused || len(bf.Data) != 0 ||
			json.Unmarshal(bf.Metadata, &facts) != nil || facts.ID != "legacy-backfill" || !bf.NextFireTime.Equal(rec.NextFireTime) {
			t.Errorf("migrated backfill trigger = origin %s state %s data %v metadata %s next %s, want backfill, paused, no data, its facts, %s",
				bf.Origin, bf.State, bf.Data, bf.Metadata, bf.NextFireTime, rec.NextFireTime)
		}
		p, err := s.sched.Job(ctx, plain.Key)
		if err != nil {
			t.Fatal(err)
		}
		if p.Metadata != nil || p.Data[legacySettingsKey] == nil {
			t.Errorf("library job = data %v metadata %s, want its data as it was and no metadata", p.Data, p.Metadata)
		}

		// A second start changes nothing, and reads the jobs a page at a
		// time: with pages of one job, legacy jobs stored before and after
		// the migrated one (by key) are migrated too.
		for _, k := range []chime.JobKey{chime.NewJobKey("a", "first"), chime.NewJobKey("z", "last")} {
			legacy := job
			legacy.Key = k
			if err := lib.AddJob(ctx, legacy, nil); err != nil {
				t.Fatalf("AddJob %s: %v", k, err)
			}
		}
		if err := s.migrateLegacyForms(ctx, 1); err != nil {
			t.Fatalf("migrateLegacyForms again: %v", err)
		}
		if d, err := s.sched.Job(ctx, job.Key); err != nil || d.Version != version {
			t.Errorf("job after a second migration = %+v, %v; want version %d unchanged", d, err, version)
		}
		for _, k := range []chime.JobKey{chime.NewJobKey("a", "first"), chime.NewJobKey("z", "last")} {
			d, err := s.sched.Job(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Metadata) == 0 || d.Data[legacySettingsKey] != nil {
				t.Errorf("legacy job %s after the paged migration = data %v metadata %s, want its settings in its metadata", k, d.Data, d.Metadata)
			}
		}

		start(t, s)
		e := waitExecution(t, s, "legacy-retry-2")
		if e.Outcome != "succeeded" || e.Attempt != 2 || e.FirstID != "legacy-first" || !e.Manual ||
			e.Params["x"] != json.Number("1") || e.Params["env"] != "prod" || len(e.Params) != 2 {
			t.Errorf("legacy retry = %+v, want succeeded attempt 2 of legacy-first, manual, with params x and env only", e)
		}
	})
}
