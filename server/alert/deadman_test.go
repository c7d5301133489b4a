package alert_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/alert"
)

// successHistory is an in-memory SuccessHistory.
type successHistory struct {
	mu   sync.Mutex
	last map[alert.JobKey]time.Time
	errs map[alert.JobKey]error
}

func newSuccessHistory() *successHistory {
	return &successHistory{last: make(map[alert.JobKey]time.Time), errs: make(map[alert.JobKey]error)}
}

func (h *successHistory) LastSuccess(_ context.Context, group, name string) (time.Time, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := alert.JobKey{Group: group, Name: name}
	return h.last[key], h.errs[key]
}

func (h *successHistory) succeed(group, name string, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last[alert.JobKey{Group: group, Name: name}] = at
}

func TestDeadManChecker(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		at        time.Duration // after t0
		succeeded time.Duration // when > 0, the job succeeds at t0 + succeeded before the check
		alert     bool
		detail    string // part of the alert's Detail
	}
	tests := []struct {
		name  string
		since time.Duration // the watch's Since, after t0; negative leaves it zero
		steps []step
	}{
		{
			name:  "never succeeded, watched since t0",
			since: 0,
			steps: []step{
				{at: 59 * time.Minute},
				{at: time.Hour, alert: true, detail: "it has not succeeded since watching began at 2025-03-01T00:00:00Z"},
				{at: 90 * time.Minute},             // same window: no second alert
				{at: 2 * time.Hour, alert: true},   // another silent window
				{at: 2*time.Hour + time.Second},    // not again
				{at: 5 * time.Hour, alert: true},   // a long gap between checks alerts once
				{at: 5*time.Hour + 30*time.Minute}, // not again
			},
		},
		{
			name:  "a success starts the count over",
			since: 0,
			steps: []step{
				{at: time.Hour, alert: true},
				{at: 70 * time.Minute, succeeded: 65 * time.Minute},
				{at: 2*time.Hour + 4*time.Minute},
				{at: 2*time.Hour + 5*time.Minute, alert: true, detail: "No success within 1h0m0s; the last one finished at 2025-03-01T01:05:00Z."},
				{at: 2*time.Hour + 6*time.Minute},
			},
		},
		{
			name:  "success before the watch began counts",
			since: 10 * time.Hour,
			steps: []step{
				{at: 10 * time.Hour, succeeded: time.Minute, alert: true, detail: "the last one finished at 2025-03-01T00:01:00Z"},
				{at: 10*time.Hour + time.Minute, alert: true}, // a window boundary: 10h after the success
				{at: 10*time.Hour + 59*time.Minute},
			},
		},
		{
			name:  "without Since, the first check starts the window",
			since: -1,
			steps: []step{
				{at: 3 * time.Hour},
				{at: 4*time.Hour - time.Nanosecond},
				{at: 4 * time.Hour, alert: true, detail: "since watching began at 2025-03-01T03:00:00Z"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newSuccessHistory()
			c := alert.NewDeadManChecker(h, nil)
			w := alert.DeadManWatch{JobGroup: "etl", JobName: "nightly", Window: time.Hour,
				Recipients: alert.Recipients{Emails: []string{"data@example.com"}}}
			if tt.since >= 0 {
				w.Since = t0.Add(tt.since)
			}
			for _, s := range tt.steps {
				if s.succeeded > 0 {
					h.succeed("etl", "nightly", t0.Add(s.succeeded))
				}
				now := t0.Add(s.at)
				evs, err := c.Check(t.Context(), now, []alert.DeadManWatch{w})
				if err != nil {
					t.Fatalf("at +%v: Check: %v", s.at, err)
				}
				if got := len(evs) == 1; got != s.alert || len(evs) > 1 {
					t.Fatalf("at +%v: %d events, want alert %v: %+v", s.at, len(evs), s.alert, evs)
				}
				if !s.alert {
					continue
				}
				ev := evs[0]
				if ev.Kind != alert.KindDeadMan || ev.JobGroup != "etl" || ev.JobName != "nightly" ||
					!ev.At.Equal(now) || ev.Recipients.Emails[0] != "data@example.com" {
					t.Errorf("at +%v: event %+v, want a dead-man alert for etl.nightly at now with the watch's recipients", s.at, ev)
				}
				if !strings.Contains(ev.Detail, s.detail) {
					t.Errorf("at +%v: detail %q lacks %q", s.at, ev.Detail, s.detail)
				}
			}
		})
	}
}

func TestDeadManCheckerForgetsUnwatchedJobs(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	c := alert.NewDeadManChecker(newSuccessHistory(), nil)
	w := alert.DeadManWatch{JobName: "j", Window: time.Hour}
	check := func(at time.Duration, watches ...alert.DeadManWatch) int {
		t.Helper()
		evs, err := c.Check(t.Context(), t0.Add(at), watches)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}
	check(0, w) // starts the window
	check(30 * time.Minute)
	// Watched again: its window starts over from this check.
	if got := check(time.Hour, w); got != 0 {
		t.Errorf("re-watched job alerted %d times at once, want 0", got)
	}
	if got := check(2*time.Hour, w); got != 1 {
		t.Errorf("re-watched job alerted %d times a window later, want 1", got)
	}
}

func TestDeadManCheckerErrors(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	h := newSuccessHistory()
	h.errs[alert.JobKey{Group: "g", Name: "broken"}] = errors.New("database is down")
	c := alert.NewDeadManChecker(h, nil)
	watches := []alert.DeadManWatch{
		{JobGroup: "g", JobName: "broken", Window: time.Minute},
		{JobGroup: "g", JobName: "nowindow"},
		{JobGroup: "g", JobName: "ok", Window: time.Minute, Since: now.Add(-time.Hour)},
	}

	evs, err := c.Check(t.Context(), now, watches)

	if len(evs) != 1 || evs[0].JobName != "ok" {
		t.Errorf("events %+v, want one for g.ok", evs)
	}
	if miss := missing(errString(err), "g.broken: last success: database is down", "g.nowindow: Window: 0s is not positive"); len(miss) > 0 {
		t.Errorf("error %q lacks %q", err, miss)
	}
}

func TestDeadManWatchValidate(t *testing.T) {
	t.Parallel()
	err := alert.DeadManWatch{Window: -time.Second, Recipients: alert.Recipients{Webhooks: []string{"x"}}}.Validate()
	if miss := missing(errString(err), "JobName: required", "Window: -1s is not positive", "Recipients: Webhooks[0]"); len(miss) > 0 {
		t.Errorf("error %q lacks %q", err, miss)
	}
}
