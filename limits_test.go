package chime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// limitStores returns a constructor of each store the limits tests run on:
// the in-memory store and every configured SQL database.
func limitStores() map[string]func(t *testing.T) store.Store {
	out := map[string]func(t *testing.T) store.Store{
		"memstore": func(*testing.T) store.Store { return memstore.New(nil) },
	}
	for _, db := range dbtest.Databases() {
		out[db.Name] = func(t *testing.T) store.Store {
			st, err := sqlstore.Open(t.Context(), db.URL(t), &sqlstore.Options{Logger: quietLogger, MaxOpenConns: 2})
			if err != nil {
				t.Fatalf("sqlstore.Open: %v", err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		}
	}
	return out
}

// mustWeekly returns a calendar that excludes nothing.
func mustWeekly(t *testing.T) *calendar.Weekly {
	t.Helper()
	c, err := calendar.NewWeekly(time.UTC)
	if err != nil {
		t.Fatalf("NewWeekly: %v", err)
	}
	return c
}

// TestValuesAtTheLimitsAreStoredOnEveryStore stores a job whose every
// bounded value sits at its limit (keys of MaxKeyLength four-byte
// characters, the extreme priorities and instants) and reads it back
// unchanged, on every store: what validation lets through, every store
// keeps.
func TestValuesAtTheLimitsAreStoredOnEveryStore(t *testing.T) {
	t.Parallel()
	long := func(r string) string { return strings.Repeat(r, chime.MaxKeyLength) }
	for name, newStore := range limitStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := chime.New(chime.Config{Store: newStore(t), Logger: quietLogger, NodeID: long("n")})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer s.Stop(ctx)
			calName := long("€")
			if err := s.AddCalendar(ctx, calName, mustWeekly(t), nil); err != nil {
				t.Fatalf("AddCalendar: %v", err)
			}
			j := chime.JobDetail{
				Key:         chime.NewJobKey(long("😀"), long("é")),
				Type:        long("t"),
				Description: "line one\nline two, 😀, and a tab\t",
				Durable:     true,
				Timeout:     time.Duration(1<<63 - 1),
			}
			latest, earliest := chime.LatestTime(), chime.EarliestTime()
			triggers := []chime.Trigger{
				{Key: chime.NewTriggerKey(long("g"), long("😀")), Priority: chime.MaxPriority, CalendarName: calName,
					Schedule: &schedule.Simple{}, StartTime: time.Date(2199, time.December, 31, 0, 0, 0, 0, time.UTC), EndTime: latest},
				{Key: chime.NewTriggerKey("g", "earliest"), Priority: chime.MinPriority,
					Schedule: &schedule.Simple{}, StartTime: earliest.Add(time.Millisecond).Truncate(time.Millisecond)},
			}
			if err := s.ScheduleJob(ctx, j, triggers, nil); err != nil {
				t.Fatalf("ScheduleJob: %v", err)
			}
			got, err := s.Job(ctx, j.Key)
			if err != nil {
				t.Fatalf("Job: %v", err)
			}
			if got.Key != j.Key || got.Type != j.Type || got.Description != j.Description || got.Timeout != j.Timeout {
				t.Errorf("job read back = %+v, want %+v", got, j)
			}
			for _, want := range triggers {
				ti, err := s.Trigger(ctx, want.Key)
				if err != nil {
					t.Fatalf("Trigger(%s): %v", want.Key, err)
				}
				if ti.Key != want.Key || ti.Priority != want.Priority || ti.CalendarName != want.CalendarName ||
					!ti.StartTime.Equal(want.StartTime) || !ti.EndTime.Equal(want.EndTime) || !ti.NextFireTime.Equal(want.StartTime) {
					t.Errorf("trigger read back = key %s priority %d calendar %q start %s end %s next %s, want %+v",
						ti.Key, ti.Priority, ti.CalendarName, ti.StartTime, ti.EndTime, ti.NextFireTime, want)
				}
			}
		})
	}
}

// TestValuesBeyondTheLimitsAreRefusedNamingTheField checks that a value
// no store can keep is a ValidationError naming its field, before
// anything is stored, on every store.
func TestValuesBeyondTheLimitsAreRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	tooLong := strings.Repeat("x", chime.MaxKeyLength+1)
	simple := func(name string) chime.Trigger {
		return chime.Trigger{Key: chime.NewTriggerKey("g", name), Schedule: &schedule.Simple{}}
	}
	with := func(edit func(*chime.Trigger)) chime.Trigger {
		tr := simple("t")
		edit(&tr)
		return tr
	}
	job := func(edit func(*chime.JobDetail)) chime.JobDetail {
		j := chime.JobDetail{Key: chime.NewJobKey("g", "j"), Type: "record", Durable: true}
		edit(&j)
		return j
	}
	keep := func(*chime.JobDetail) {}
	tests := []struct {
		name     string
		job      chime.JobDetail
		triggers []chime.Trigger
		field    string
	}{
		{"job name too long", job(func(j *chime.JobDetail) { j.Key.Name = tooLong }), nil, "JobDetail.Key.Name"},
		{"job group too long", job(func(j *chime.JobDetail) { j.Key.Group = tooLong }), nil, "JobDetail.Key.Group"},
		{"job name not UTF-8", job(func(j *chime.JobDetail) { j.Key.Name = "a\xffb" }), nil, "JobDetail.Key.Name"},
		{"job type too long", job(func(j *chime.JobDetail) { j.Type = tooLong }), nil, "JobDetail.Type"},
		{"description with NUL", job(func(j *chime.JobDetail) { j.Description = "a\x00b" }), nil, "JobDetail.Description"},
		{"trigger name too long", job(keep), []chime.Trigger{simple("ok"), simple(tooLong)}, "triggers[1].Key.Name"},
		{"trigger group with NUL", job(keep), []chime.Trigger{with(func(tr *chime.Trigger) { tr.Key.Group = "g\x00" })}, "triggers[0].Key.Group"},
		{"trigger description not UTF-8", job(keep), []chime.Trigger{with(func(tr *chime.Trigger) { tr.Description = "\xc3" })}, "triggers[0].Description"},
		{"calendar name too long", job(keep), []chime.Trigger{with(func(tr *chime.Trigger) { tr.CalendarName = tooLong })}, "triggers[0].CalendarName"},
		{"end time in 9999", job(keep), []chime.Trigger{simple("ok"), with(func(tr *chime.Trigger) {
			tr.EndTime = time.Date(9999, time.December, 31, 0, 0, 0, 0, time.UTC)
		})}, "triggers[1].EndTime"},
		{"start time after the latest instant", job(keep), []chime.Trigger{with(func(tr *chime.Trigger) {
			tr.StartTime = chime.LatestTime().Add(time.Nanosecond)
		})}, "triggers[0].StartTime"},
		{"start time before the earliest instant", job(keep), []chime.Trigger{with(func(tr *chime.Trigger) {
			tr.StartTime = chime.EarliestTime().Add(-time.Nanosecond)
		})}, "triggers[0].StartTime"},
		{"first fire time before the earliest instant", job(keep), []chime.Trigger{with(func(tr *chime.Trigger) {
			tr.StartTime = chime.EarliestTime() // a simple schedule first fires at its start cut to the millisecond
		})}, "triggers[0].StartTime"},
		{"priority beyond 32 bits", job(keep), []chime.Trigger{with(func(tr *chime.Trigger) { tr.Priority = chime.MinPriority - 1 })}, "triggers[0].Priority"},
	}
	for name, newStore := range limitStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := chime.New(chime.Config{Store: newStore(t), Logger: quietLogger})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer s.Stop(ctx)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					err := s.ScheduleJob(ctx, tt.job, tt.triggers, nil)
					var ve *chime.ValidationError
					if !errors.As(err, &ve) || ve.Field != tt.field {
						t.Fatalf("ScheduleJob: err = %v, want a ValidationError on %s", err, tt.field)
					}
				})
			}
			if err := s.AddCalendar(ctx, tooLong, mustWeekly(t), nil); err == nil {
				t.Errorf("AddCalendar with a name of %d characters succeeded", len(tooLong))
			}
			if jobs, err := s.Jobs(ctx, ""); err != nil || len(jobs) != 0 {
				t.Errorf("refused writes stored %d jobs (err %v)", len(jobs), err)
			}
			if names, err := s.CalendarNames(ctx); err != nil || len(names) != 0 {
				t.Errorf("refused writes stored calendars %q (err %v)", names, err)
			}
		})
	}
	_, err := chime.New(chime.Config{NodeID: tooLong, Logger: quietLogger})
	var ve *chime.ValidationError
	if !errors.As(err, &ve) || ve.Field != "Config.NodeID" {
		t.Errorf("New with a node ID of %d characters: err = %v, want a ValidationError on Config.NodeID", len(tooLong), err)
	}
}
