package apiclient_test

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestActivity runs jobs on a real server and checks that the activity of
// their window counts exactly the executions the history lists, bucket by
// bucket, and that bad windows and buckets are refused naming the field.
func TestActivity(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	ctx := t.Context()
	c := srv.Client
	_, url := newTarget(t, http.StatusOK)
	since := time.Now().UTC().Add(-time.Minute)

	// A job firing every second (lagged firings) and a failing one run by
	// hand, twice.
	every := httpJob("dash", "every-second", url, "* * * * * ?")
	every.Alerts = &api.JobAlerts{Disabled: true}
	if _, err := c.CreateJob(ctx, every); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	_, badURL := newTarget(t, http.StatusInternalServerError)
	failing := httpJob("dash", "failing", badURL, "")
	failing.Alerts = &api.JobAlerts{Disabled: true}
	if _, err := c.CreateJob(ctx, failing); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	for range 2 {
		if _, err := c.RunJob(ctx, "dash", "failing", api.RunRequest{}); err != nil {
			t.Fatalf("RunJob: %v", err)
		}
	}
	// Wait for three scheduled successes and both failures, then stop the
	// schedule and let what runs finish.
	waitFor(t, "3 successes and 2 failures", func() bool {
		ok, bad := countOutcomes(t, c, since)
		return ok >= 3 && bad >= 2
	})
	if err := c.PauseJob(ctx, "dash", "every-second"); err != nil {
		t.Fatalf("PauseJob: %v", err)
	}
	waitFor(t, "no running execution", func() bool {
		page, err := c.ListExecutions(ctx, api.ExecutionQuery{Outcomes: []string{"running"}})
		return err == nil && len(page.Executions) == 0
	})

	until := time.Now().UTC().Add(time.Minute)
	a, err := c.Activity(ctx, api.ActivityQuery{Since: &since, Until: &until, Bucket: "10s"})
	if err != nil {
		t.Fatalf("Activity: %v", err)
	}
	if a.BucketSeconds != 10 || a.From.After(since) || a.To.Before(until) || a.From.UnixNano()%int64(10*time.Second) != 0 ||
		len(a.Buckets) != int(a.To.Sub(a.From)/(10*time.Second)) {
		t.Fatalf("window %s to %s in %d buckets of %ds; want since %s to until %s moved out to 10s boundaries",
			a.From, a.To, len(a.Buckets), a.BucketSeconds, since, until)
	}
	// The same counts, per bucket, from the execution list.
	want := make([]api.ActivityBucket, len(a.Buckets))
	lagged := 0
	for e, err := range c.Executions(ctx, api.ExecutionQuery{From: &a.From, To: &a.To}) {
		if err != nil {
			t.Fatalf("Executions: %v", err)
		}
		i := int(e.StartedTime.Sub(a.From) / (10 * time.Second))
		want[i].Fires++
		switch e.Outcome {
		case "succeeded":
			want[i].Succeeded++
		case "failed", "timed_out", "node_lost":
			want[i].Failed++
		}
		if !e.Manual && e.Attempt == 1 && !e.Recovering {
			lagged++
		}
	}
	for i := range a.Buckets {
		b := a.Buckets[i]
		want[i].Start = a.From.Add(time.Duration(i) * 10 * time.Second)
		if !b.Start.Equal(want[i].Start) || b.Fires != want[i].Fires || b.Succeeded != want[i].Succeeded || b.Failed != want[i].Failed {
			t.Errorf("bucket %d: %+v, want %+v (lags aside)", i, b, want[i])
		}
		if b.Fires == 0 && (b.LagAvgMs != 0 || b.LagMaxMs != 0) {
			t.Errorf("bucket %d: empty with lags %+v", i, b)
		}
		if b.LagMaxMs < b.LagAvgMs {
			t.Errorf("bucket %d: lag max %v below its mean %v", i, b.LagMaxMs, b.LagAvgMs)
		}
	}
	if a.LagSampled != lagged || lagged < 3 || a.Running != 0 || a.LagP50Ms > a.LagP95Ms || a.LagP95Ms > a.LagP99Ms {
		t.Errorf("lag_sampled %d (want %d, at least 3), running %d (want 0), percentiles %v %v %v (want in order)",
			a.LagSampled, lagged, a.Running, a.LagP50Ms, a.LagP95Ms, a.LagP99Ms)
	}

	// The defaults: the last 6 hours in minutes, moved out to whole
	// minutes.
	d, err := c.Activity(ctx, api.ActivityQuery{})
	if err != nil {
		t.Fatalf("Activity with defaults: %v", err)
	}
	if d.BucketSeconds != 60 || d.From.Second() != 0 || d.To.Second() != 0 || (len(d.Buckets) != 360 && len(d.Buckets) != 361) {
		t.Errorf("defaults: %s to %s, %d buckets of %ds; want 6 hours of whole minutes", d.From, d.To, len(d.Buckets), d.BucketSeconds)
	}

	now := time.Now().UTC()
	long, week := now.Add(-8*24*time.Hour), now.Add(-7*24*time.Hour)
	for _, tc := range []struct {
		name  string
		q     api.ActivityQuery
		field string
	}{
		{"bucket too small", api.ActivityQuery{Bucket: "5s"}, "bucket"},
		{"bucket not a duration", api.ActivityQuery{Bucket: "a minute"}, "bucket"},
		{"bucket not whole seconds", api.ActivityQuery{Bucket: "10.5s"}, "bucket"},
		{"bucket negative", api.ActivityQuery{Bucket: "-60"}, "bucket"},
		{"window longer than 7 days", api.ActivityQuery{Since: &long}, "since"},
		{"too many buckets", api.ActivityQuery{Since: &week, Until: &now, Bucket: "5m"}, "bucket"},
		{"until before since", api.ActivityQuery{Since: &now, Until: &week}, "until"},
	} {
		_, err := c.Activity(ctx, tc.q)
		wantCode(t, err, api.CodeInvalidArgument, tc.field)
	}
	// 7 days in 10-minute buckets is allowed (in 5-minute ones, 2016
	// buckets, it is not).
	if a, err := c.Activity(ctx, api.ActivityQuery{Since: &week, Until: &now, Bucket: "600"}); err != nil || len(a.Buckets) < 1008 {
		t.Errorf("7 days of 300s buckets: %v, %v", a, err)
	}
}

// countOutcomes counts the succeeded and failed executions started since.
func countOutcomes(t *testing.T, c *apiclient.Client, since time.Time) (ok, bad int) {
	t.Helper()
	for e, err := range c.Executions(t.Context(), api.ExecutionQuery{From: &since}) {
		if err != nil {
			t.Fatalf("Executions: %v", err)
		}
		switch e.Outcome {
		case "succeeded":
			ok++
		case "failed":
			bad++
		}
	}
	return ok, bad
}

// waitFor polls cond until it holds, failing the test after 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond) // polling a real server: nothing to wait on
	}
}

// TestUpcomingFirings checks the merged list against the per-job lists
// of the same server.
func TestUpcomingFirings(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	ctx := t.Context()
	c := srv.Client
	cronJob := func(group, name, expr, zone, cal string) api.Job {
		return api.Job{
			Group: group, Name: name, Type: "http", HTTP: json.RawMessage(`{"url":"http://127.0.0.1:9/"}`),
			Alerts: &api.JobAlerts{Disabled: true},
			Triggers: []api.Trigger{{
				Schedule: json.RawMessage(`{"kind":"cron","expression":"` + expr + `","time_zone":"` + zone + `"}`), Calendar: cal,
			}},
		}
	}
	if _, err := c.PutCalendar(ctx, api.Calendar{Name: "no-mondays",
		Calendar: json.RawMessage(`{"type":"weekly","time_zone":"America/New_York","excluded_days_of_week":[2]}`)}); err != nil {
		t.Fatalf("PutCalendar: %v", err)
	}
	jobs := []api.Job{
		cronJob("c", "sunday-noon", "0 0 12 ? * SUN", "Europe/Berlin", ""), // crosses daylight-saving changes
		cronJob("a", "hourly", "0 17 * * * ?", "UTC", ""),
		cronJob("b", "weekdays", "0 0 9 ? * MON-FRI", "America/New_York", "no-mondays"),
		cronJob("b", "paused", "0 * * * * ?", "UTC", ""),
	}
	for _, j := range jobs {
		if _, err := c.CreateJob(ctx, j); err != nil {
			t.Fatalf("CreateJob %s: %v", j.Name, err)
		}
	}
	if err := c.PauseJob(ctx, "b", "paused"); err != nil {
		t.Fatalf("PauseJob: %v", err)
	}

	// The per-job lists, merged by hand.
	perJob := func(group string, count int) []api.UpcomingFiring {
		var out []api.UpcomingFiring
		for _, j := range jobs {
			if group != "" && j.Group != group {
				continue
			}
			times, err := c.Upcoming(ctx, j.Group, j.Name, min(count, 100))
			if err != nil {
				t.Fatalf("Upcoming %s/%s: %v", j.Group, j.Name, err)
			}
			for _, ft := range times {
				out = append(out, api.UpcomingFiring{JobGroup: j.Group, JobName: j.Name, TriggerGroup: j.Group,
					TriggerName: j.Name + "-0", Time: ft.Time, DST: ft.DST})
			}
		}
		slices.SortStableFunc(out, func(x, y api.UpcomingFiring) int { return x.Time.Compare(y.Time) })
		return out[:min(count, len(out))]
	}
	for _, tc := range []struct {
		group string
		count int
	}{{"", 0}, {"", 60}, {"b", 5}, {"a", 100}, {"c", 100}} {
		got, err := c.UpcomingFirings(ctx, tc.group, tc.count)
		if err != nil {
			t.Fatalf("UpcomingFirings(%q, %d): %v", tc.group, tc.count, err)
		}
		n := tc.count
		if n == 0 {
			n = 20 // the server's default
		}
		want := perJob(tc.group, n)
		if len(got) != len(want) {
			t.Fatalf("UpcomingFirings(%q, %d): %d firings, want %d", tc.group, tc.count, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if !g.Time.Equal(w.Time) || g.JobGroup != w.JobGroup || g.JobName != w.JobName || g.TriggerGroup != w.TriggerGroup ||
				g.TriggerName != w.TriggerName || g.DST != w.DST {
				t.Errorf("UpcomingFirings(%q, %d)[%d] = %+v, want %+v", tc.group, tc.count, i, g, w)
			}
			if g.JobName == "paused" || (g.JobName == "weekdays" && g.Time.Weekday() == time.Monday) {
				t.Errorf("UpcomingFirings(%q, %d)[%d] = %+v: paused, or excluded by the calendar", tc.group, tc.count, i, g)
			}
		}
	}
	// A Sunday-noon job over 100 weeks crosses daylight-saving changes,
	// and marks them as the per-job list does.
	sundays, err := c.UpcomingFirings(ctx, "c", 200)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(sundays, func(f api.UpcomingFiring) bool { return f.DST && f.JobName == "sunday-noon" }) {
		t.Errorf("no Sunday-noon firing is marked dst in %d firings", len(sundays))
	}
	for _, count := range []string{"0", "201"} {
		status, apiErr := send(t, srv.URL, http.MethodGet, api.Version+"/upcoming?count="+count, nil, srv.AdminToken)
		if status != http.StatusBadRequest || apiErr.Field != "count" {
			t.Errorf("count=%s: %d %+v, want 400 naming count", count, status, apiErr)
		}
	}
}

// TestImportCalendar imports a real holidays file into a real server.
func TestImportCalendar(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	ctx := t.Context()
	c := srv.Client
	ics, err := os.ReadFile("../server/internal/ics/testdata/google-holidays.ics")
	if err != nil {
		t.Fatal(err)
	}
	wantDates := []string{"2026-04-06", "2026-05-25", "2026-10-03", "2026-12-25", "2026-12-26", "2026-12-31"}

	// A dry run answers and stores nothing.
	dry, err := c.ImportCalendar(ctx, "de", api.CalendarImport{ICS: string(ics), DryRun: true})
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if !dry.DryRun || !dry.Created || dry.Events != 5 || !reflect.DeepEqual(dry.Dates, wantDates) {
		t.Errorf("dry run: %+v; want created, dry_run, 5 events, dates %v", dry, wantDates)
	}
	if _, err := c.GetCalendar(ctx, "de"); err == nil {
		t.Errorf("the dry run stored calendar de")
	}

	res, err := c.ImportCalendar(ctx, "de", api.CalendarImport{ICS: string(ics)})
	if err != nil {
		t.Fatalf("ImportCalendar: %v", err)
	}
	wantCal := `{"type":"holiday","time_zone":"Europe/Berlin","description":"Holidays in Germany","excluded_dates":["` +
		strings.Join(wantDates, `","`) + `"],"base":null}`
	if !res.Created || res.DryRun || res.Events != 5 || !reflect.DeepEqual(res.Dates, wantDates) || string(res.Calendar.Calendar) != wantCal {
		t.Errorf("import: %+v\n calendar %s\n want created, 5 events, dates %v, calendar %s", res, res.Calendar.Calendar, wantDates, wantCal)
	}
	stored, err := c.GetCalendar(ctx, "de")
	if err != nil || string(stored.Calendar) != wantCal {
		t.Errorf("stored: %v, %v; want %s", stored, err, wantCal)
	}

	// Again, in another zone and with a description: replaced, not
	// created. 23:00Z on October 2nd is October 2nd in New York.
	res, err = c.ImportCalendar(ctx, "de", api.CalendarImport{ICS: string(ics), TimeZone: "America/New_York", Description: "DE in NY"})
	if err != nil {
		t.Fatalf("second import: %v", err)
	}
	if res.Created || !slices.Contains(res.Dates, "2026-10-02") || slices.Contains(res.Dates, "2026-10-03") {
		t.Errorf("second import: %+v; want replaced, 2026-10-02 and not 2026-10-03", res)
	}
	stored, err = c.GetCalendar(ctx, "de")
	if err != nil || !strings.Contains(string(stored.Calendar), `"time_zone":"America/New_York","description":"DE in NY"`) {
		t.Errorf("stored after the second import: %s, %v", stored.Calendar, err)
	}
	audit, err := c.ListAudit(ctx, api.AuditQuery{Target: "calendars/de"})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range audit.Entries {
		actions = append(actions, e.Action)
		if e.Detail["source"] != "ics import" || e.Detail["events"] != float64(5) {
			t.Errorf("audit entry %+v: want source ics import and 5 events in the detail", e)
		}
	}
	if !reflect.DeepEqual(actions, []string{"calendar.update", "calendar.create"}) {
		t.Errorf("audit actions %v, want calendar.update then calendar.create, newest first", actions)
	}

	for _, tc := range []struct {
		name  string
		req   api.CalendarImport
		field string
		msg   string
	}{
		{"malformed", api.CalendarImport{ICS: "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE20261225\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"},
			"ics", "line 3: DTSTART: no ':' after the parameters"},
		{"no events", api.CalendarImport{ICS: "BEGIN:VCALENDAR\nVERSION:2.0\nEND:VCALENDAR\n"}, "ics", "no events"},
		{"no ics", api.CalendarImport{TimeZone: "UTC"}, "ics", "is required"},
		{"years too many", api.CalendarImport{ICS: string(ics), Years: 51}, "years", "want 1 to 50"},
		{"years negative", api.CalendarImport{ICS: string(ics), Years: -1}, "years", "want 1 to 50"},
		{"unknown zone", api.CalendarImport{ICS: string(ics), TimeZone: "Europe/Atlantis"}, "time_zone", "Europe/Atlantis"},
	} {
		_, err := c.ImportCalendar(ctx, "refused", tc.req)
		wantCode(t, err, api.CodeInvalidArgument, tc.field)
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want a message with %q", tc.name, err, tc.msg)
		}
	}
	if _, err := c.GetCalendar(ctx, "refused"); err == nil {
		t.Errorf("a refused import stored calendar refused")
	}
}
