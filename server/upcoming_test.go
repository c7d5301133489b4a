package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// TestUpcomingManyJobs merges the firings of hundreds of jobs in memory
// and checks them against the per-job lists, merged by hand; paused jobs
// and other groups are left out.
func TestUpcomingManyJobs(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db")
	ctx := t.Context()
	const jobs = 150
	zones := []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"}
	for i := range jobs {
		group := "many"
		if i%10 == 9 {
			group = "other"
		}
		// Minute i%60 of every hour in one of four zones, or every few
		// hours: many equal times, ordered by key.
		expr := fmt.Sprintf("0 %d * * * ?", i%60)
		if i%7 == 0 {
			expr = fmt.Sprintf("0 %d */%d * * ?", i%60, 1+i%5)
		}
		job := api.Job{
			Group: group, Name: fmt.Sprintf("job-%04d", i), Type: "http",
			HTTP: json.RawMessage(`{"url":"http://127.0.0.1:9/"}`), Alerts: &api.JobAlerts{Disabled: true},
			Triggers: []api.Trigger{{Schedule: json.RawMessage(
				`{"kind":"cron","expression":"` + expr + `","time_zone":"` + zones[i%len(zones)] + `"}`)}},
		}
		if _, err := s.CreateJob(ctx, "test", job); err != nil {
			t.Fatalf("CreateJob %d: %v", i, err)
		}
		if i%10 == 3 {
			if err := s.PauseJob(ctx, "test", group, job.Name); err != nil {
				t.Fatal(err)
			}
		}
	}

	began := time.Now()
	got, err := s.Upcoming(ctx, "many", maxUpcomingAll)
	if err != nil {
		t.Fatalf("Upcoming: %v", err)
	}
	t.Logf("Upcoming over %d jobs: %s", jobs, time.Since(began))

	var want []api.UpcomingFiring
	for i := range jobs {
		if i%10 == 9 || i%10 == 3 {
			continue
		}
		name := fmt.Sprintf("job-%04d", i)
		times, err := s.UpcomingFireTimes(ctx, "many", name, maxUpcoming)
		if err != nil {
			t.Fatal(err)
		}
		for _, ft := range times {
			want = append(want, api.UpcomingFiring{JobGroup: "many", JobName: name, TriggerGroup: "many",
				TriggerName: name + "-0", Time: ft.Time, DST: ft.DST})
		}
	}
	slices.SortStableFunc(want, func(a, b api.UpcomingFiring) int { return a.Time.Compare(b.Time) }) // stable: by name
	want = want[:maxUpcomingAll]
	if len(got) != len(want) {
		t.Fatalf("%d firings, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.Time.Equal(w.Time) || g.JobName != w.JobName || g.TriggerName != w.TriggerName || g.DST != w.DST ||
			g.Time.Location().String() != w.Time.Location().String() {
			t.Fatalf("firing %d: %+v, want %+v", i, g, w)
		}
	}
}
