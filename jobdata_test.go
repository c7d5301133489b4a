package chime_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/schedule"
)

func TestJobDataAccessors(t *testing.T) {
	t.Parallel()
	when := time.Date(2024, 3, 10, 7, 0, 0, 0, time.UTC)
	d := chime.JobData{
		"s": "text", "i": 42, "n": json.Number("7"), "f": 2.5, "whole": 3.0,
		"b": true, "t": when, "ts": "2024-03-10T07:00:00Z", "big": json.Number("1e400"),
	}
	tests := []struct {
		name string
		got  func() (any, bool)
		want any
		ok   bool
	}{
		{"string", func() (any, bool) { return d.String("s") }, "text", true},
		{"string of a number", func() (any, bool) { return d.String("i") }, "", false},
		{"int", func() (any, bool) { return d.Int("i") }, int64(42), true},
		{"int from json.Number", func() (any, bool) { return d.Int("n") }, int64(7), true},
		{"int from whole float", func() (any, bool) { return d.Int("whole") }, int64(3), true},
		{"int from fraction", func() (any, bool) { return d.Int("f") }, int64(0), false},
		{"float", func() (any, bool) { return d.Float("f") }, 2.5, true},
		{"float from json.Number", func() (any, bool) { return d.Float("n") }, 7.0, true},
		{"bool", func() (any, bool) { return d.Bool("b") }, true, true},
		{"missing bool", func() (any, bool) { return d.Bool("nope") }, false, false},
		{"time", func() (any, bool) { return d.Time("t") }, when, true},
		{"time from RFC 3339", func() (any, bool) { return d.Time("ts") }, when, true},
		{"time from other text", func() (any, bool) { return d.Time("s") }, time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.got()
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if gt, isTime := got.(time.Time); isTime {
				if !gt.Equal(tt.want.(time.Time)) {
					t.Errorf("got %v, want %v", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got %v (%T), want %v (%T)", got, got, tt.want, tt.want)
			}
		})
	}
}

func TestTypedJobDecodesMergedData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type params struct {
			URL     string `json:"url"`
			Retries int    `json:"retries"`
		}
		got := make(chan params, 1)
		s, _ := newScheduler(t, chime.Config{})
		err := s.Register("typed", chime.TypedJob(func(_ context.Context, _ *chime.JobContext, p params) error {
			got <- p
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Register("typed", chime.JobFunc(func(context.Context, *chime.JobContext) error { return nil })); err == nil {
			t.Error("registering a type name twice succeeded")
		}
		j := chime.JobDetail{Key: chime.NewJobKey("", "j"), Type: "typed", Data: chime.JobData{"url": "http://example.invalid", "retries": 1}}
		tr := trig("t", &schedule.Simple{})
		tr.Data = chime.JobData{"retries": 3}
		scheduleJob(t, s, j, tr)
		start(t, s)
		p := <-got
		stop(t, s)
		if p.URL != "http://example.invalid" || p.Retries != 3 {
			t.Errorf("decoded %+v, want the job's url and the trigger's retries", p)
		}
	})
}

func TestKeyMatchers(t *testing.T) {
	t.Parallel()
	a := chime.NewJobKey("reports", "daily")
	b := chime.NewJobKey("reports", "weekly")
	c := chime.NewJobKey("", "other")
	tests := []struct {
		name    string
		matcher chime.Matcher[chime.JobKey]
		want    []bool // a, b, c
	}{
		{"nil matches all", nil, []bool{true, true, true}},
		{"key", chime.KeyEquals(a), []bool{true, false, false}},
		{"group", chime.GroupEquals[chime.JobKey]("reports"), []bool{true, true, false}},
		{"default group", chime.GroupEquals[chime.JobKey](""), []bool{false, false, true}},
		{"or", chime.Or(chime.KeyEquals(b), chime.KeyEquals(c)), []bool{false, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, k := range []chime.JobKey{a, b, c} {
				if got := tt.matcher.Match(k); got != tt.want[i] {
					t.Errorf("Match(%s) = %v, want %v", k, got, tt.want[i])
				}
			}
		})
	}
}

func TestTriggerSkipsInstantsItsCalendarExcludes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, rec := newScheduler(t, chime.Config{})
		// The bubble starts on Saturday 2000-01-01 at midnight UTC.
		weekend, err := calendar.NewWeekly(time.UTC, time.Saturday, time.Sunday)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddCalendar(ctx, "weekdays", weekend, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.AddCalendar(ctx, "weekdays", weekend, nil); !errors.Is(err, chime.ErrCalendarExists) {
			t.Errorf("adding a calendar twice: %v, want ErrCalendarExists", err)
		}
		tr := trig("hourly", mustCron(t, "0 0 * * * ?"))
		tr.CalendarName = "weekdays"
		scheduleJob(t, s, job("j"), tr)
		info, err := s.Trigger(ctx, tr.Key)
		if err != nil {
			t.Fatal(err)
		}
		monday := time.Date(2000, 1, 3, 0, 0, 0, 0, time.UTC)
		if !info.NextFireTime.Equal(monday) {
			t.Errorf("next fire time %s, want Monday midnight %s", info.NextFireTime, monday)
		}
		upcoming, err := s.UpcomingFireTimes(ctx, tr.Key, 26)
		if err != nil {
			t.Fatal(err)
		}
		if len(upcoming) != 26 || !upcoming[0].Equal(monday) || !upcoming[25].Equal(monday.Add(25*time.Hour)) {
			t.Errorf("upcoming %v, want every hour from Monday midnight", upcoming)
		}
		if _, err := s.DeleteCalendar(ctx, "weekdays"); !errors.Is(err, chime.ErrCalendarInUse) {
			t.Errorf("deleting a calendar in use: %v, want ErrCalendarInUse", err)
		}
		// Replacing the calendar by one that excludes nothing moves the
		// trigger's next fire time forward to the next hour.
		none, err := calendar.NewHoliday(time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddCalendar(ctx, "weekdays", none, &chime.AddCalendarOptions{Replace: true, UpdateTriggers: true}); err != nil {
			t.Fatal(err)
		}
		start(t, s)
		time.Sleep(90 * time.Minute)
		stop(t, s)
		if n := len(rec.all()); n != 1 {
			t.Errorf("fired %d times in 90 minutes after the calendar was replaced, want 1", n)
		}
	})
}
