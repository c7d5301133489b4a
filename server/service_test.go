package server

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/alert"
)

func TestListJobsPagesFiltersAndAudits(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		for i := range 5 {
			j := httpJob(t, "batch", fmt.Sprintf("job-%d", i), "https://example.com")
			j.Description = map[bool]string{true: "nightly export", false: "cleanup"}[i%2 == 0]
			if _, err := s.CreateJob(ctx, "alice", j); err != nil {
				t.Fatalf("CreateJob: %v", err)
			}
		}
		if err := s.PauseJob(ctx, "bob", "batch", "job-1"); err != nil {
			t.Fatalf("PauseJob: %v", err)
		}
		var names []string
		q := api.JobQuery{Limit: 2}
		for {
			page, err := s.ListJobs(ctx, q)
			if err != nil {
				t.Fatalf("ListJobs: %v", err)
			}
			for _, j := range page.Jobs {
				names = append(names, j.Name)
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
		if fmt.Sprint(names) != "[job-0 job-1 job-2 job-3 job-4]" {
			t.Errorf("pages listed %v, want every job once, in order", names)
		}
		for _, tt := range []struct {
			q    api.JobQuery
			want string
		}{
			{api.JobQuery{Text: "EXPORT"}, "[job-0 job-2 job-4]"},
			{api.JobQuery{State: "paused"}, "[job-1]"},
			{api.JobQuery{State: "active", Text: "cleanup"}, "[job-3]"},
		} {
			page, err := s.ListJobs(ctx, tt.q)
			if err != nil {
				t.Fatalf("ListJobs(%+v): %v", tt.q, err)
			}
			var got []string
			for _, j := range page.Jobs {
				got = append(got, j.Name)
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("ListJobs(%+v) = %v, want %s", tt.q, got, tt.want)
			}
		}
		_, err := s.ListJobs(ctx, api.JobQuery{Cursor: "garbage!"})
		wantAPIError(t, err, api.CodeInvalidArgument, "cursor")
		_, err = s.ListJobs(ctx, api.JobQuery{State: "sleeping"})
		wantAPIError(t, err, api.CodeInvalidArgument, "state")

		paused, err := s.GetJob(ctx, "batch", "job-1")
		if err != nil || !paused.Paused || paused.Triggers[0].State != "PAUSED" || paused.Version != 2 {
			t.Errorf("paused job = %+v, %v; want paused triggers and version 2", paused, err)
		}
		audit, err := s.ListAudit(ctx, api.AuditQuery{Actor: "bob"})
		if err != nil || len(audit.Entries) != 1 || audit.Entries[0].Action != "job.pause" || audit.Entries[0].Target != "jobs/batch/job-1" {
			t.Errorf("bob's audit entries = %+v, %v; want the pause", audit, err)
		}
	})
}

func TestCalendarsCronAndUpcoming(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db")
	weekends := json.RawMessage(`{"type":"weekly","time_zone":"UTC","excluded_days_of_week":[1,7]}`)
	_, created, err := s.PutCalendar(ctx, "alice", api.Calendar{Name: "weekdays", Calendar: weekends})
	if err != nil || !created {
		t.Fatalf("PutCalendar = %v, %v; want created", created, err)
	}
	_, _, err = s.PutCalendar(ctx, "alice", api.Calendar{Name: "bad", Calendar: json.RawMessage(`{"type":"weekly","time_zone":"Nowhere/Land"}`)})
	wantAPIError(t, err, api.CodeInvalidArgument, "calendar.time_zone")

	j := api.Job{Group: "g", Name: "daily", Type: "http", HTTP: httpSpec(t, map[string]any{"url": "https://example.com"}),
		Triggers: []api.Trigger{{Schedule: json.RawMessage(`{"kind":"cron","expression":"0 30 2 * * ?","time_zone":"Europe/Berlin"}`), Calendar: "weekdays"}}}
	if _, err := s.CreateJob(ctx, "alice", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	times, err := s.UpcomingFireTimes(ctx, "g", "daily", 10)
	if err != nil || len(times) != 10 {
		t.Fatalf("UpcomingFireTimes = %v, %v; want 10", times, err)
	}
	for i, ft := range times {
		if wd := ft.Time.Weekday(); wd == time.Saturday || wd == time.Sunday {
			t.Errorf("fire time %s is on a %s, which the calendar excludes", ft.Time, wd)
		}
		if h, m, _ := ft.Time.Clock(); h != 2 || m != 30 || ft.Time.Location().String() != "Europe/Berlin" {
			t.Errorf("fire time %d = %s, want 02:30 Berlin time", i, ft.Time)
		}
	}
	_, err = s.UpcomingFireTimes(ctx, "g", "daily", 1000)
	wantAPIError(t, err, api.CodeInvalidArgument, "count")

	cals, err := s.ListCalendars(ctx)
	if err != nil || len(cals) != 1 || fmt.Sprint(cals[0].UsedBy) != "[g.daily-0]" {
		t.Errorf("ListCalendars = %+v, %v; want weekdays used by g.daily-0", cals, err)
	}
	err = s.DeleteCalendar(ctx, "alice", "weekdays")
	wantAPIError(t, err, api.CodeConflict, "")
	err = s.DeleteCalendar(ctx, "alice", "none")
	wantAPIError(t, err, api.CodeNotFound, "")

	ex, err := s.ExplainCron(ctx, "0 30 2 ? * SUN", "Europe/Berlin", 100)
	if err != nil || len(ex.Next) != 100 || ex.Description == "" {
		t.Fatalf("ExplainCron = %+v, %v", ex, err)
	}
	dst := 0
	for _, ft := range ex.Next {
		if ft.DST {
			dst++
		}
	}
	if dst < 1 {
		t.Errorf("100 weeks of fire times in Berlin cross no marked DST change")
	}
	_, err = s.ExplainCron(ctx, "0 30 2 * * ?", "Mars/Olympus", 1)
	wantAPIError(t, err, api.CodeInvalidArgument, "time_zone")
	_, err = s.ExplainCron(ctx, "61 * * * * ?", "UTC", 1)
	wantAPIError(t, err, api.CodeInvalidArgument, "expression")
}

func TestAlertSettingsApplyToAlerts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	configured, stored := newWebhook(t), newWebhook(t)
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", func(c *Config) { c.Alert.DefaultWebhooks = []string{configured.URL} })
	start(t, s)
	got, err := s.AlertSettings(ctx)
	if err != nil || len(got.DefaultWebhooks) != 1 || got.DefaultWebhooks[0] != configured.URL {
		t.Fatalf("AlertSettings = %+v, %v; want the configured webhook", got, err)
	}
	if err := s.TestAlert(ctx, "admin"); err != nil {
		t.Fatalf("TestAlert: %v", err)
	}
	if p := configured.next(t, testAlertKind); p.Detail == "" {
		t.Errorf("test alert = %+v, want a detail", p)
	}

	err = s.PutAlertSettings(ctx, "admin", api.AlertSettings{DefaultWebhooks: []string{"ftp://nope"}})
	wantAPIError(t, err, api.CodeInvalidArgument, "default_webhooks")
	err = s.PutAlertSettings(ctx, "admin", api.AlertSettings{RateLimit: "often"})
	wantAPIError(t, err, api.CodeInvalidArgument, "rate_limit")
	if err := s.PutAlertSettings(ctx, "admin", api.AlertSettings{DefaultWebhooks: []string{stored.URL}, RateLimit: "1h"}); err != nil {
		t.Fatalf("PutAlertSettings: %v", err)
	}
	got, err = s.AlertSettings(ctx)
	if err != nil || got.DefaultWebhooks[0] != stored.URL || got.RateLimit != "1h0m0s" {
		t.Fatalf("AlertSettings after a change = %+v, %v", got, err)
	}
	// A failing job alerts the new default recipient; the rate limit of one
	// an hour holds its second failure back.
	if _, err := s.CreateJob(ctx, "alice", api.Job{Group: "g", Name: "sleepy", Type: "http",
		HTTP: httpSpec(t, map[string]any{"url": newEndpoint(t, 500).URL})}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	for range 2 {
		acc, err := s.RunJob(ctx, "alice", "g", "sleepy", api.RunRequest{})
		if err != nil {
			t.Fatalf("RunJob: %v", err)
		}
		waitExecution(t, s, acc.ExecutionIDs[0])
	}
	if p := stored.next(t, alert.KindFailure); p.Job.Name != "sleepy" {
		t.Errorf("failure alert = %+v, want one about g/sleepy", p)
	}
	waitFor(t, "the second alert to be suppressed", func() bool { return s.alerts.stats().Suppressed == 1 })
}
