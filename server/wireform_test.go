package server_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/logtest"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// asJSON decodes a JSON text for comparison with a decoded answer.
func asJSON(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("bad JSON in the test: %v", err)
	}
	return v
}

// TestStoredJobsServedInTheCurrentForm stores a job and a calendar on a
// real database as the previous release did, through the library, whose
// encoding is the previous release's API form (repeat_interval_ms,
// upper-case units, capitalised days, a calendar's tz), then starts a
// server on that database: it serves them in the current form, and
// putting back what it served changes nothing.
func TestStoredJobsServedInTheCurrentForm(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			url := db.URL(t)
			st, err := sqlstore.Open(ctx, url, &sqlstore.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatalf("sqlstore.Open: %v", err)
			}
			sched, err := chime.New(chime.Config{Store: st})
			if err != nil {
				t.Fatalf("chime.New: %v", err)
			}
			hol, err := calendar.NewHoliday(time.UTC, calendar.Date{Year: 2030, Month: time.December, Day: 25})
			if err != nil {
				t.Fatal(err)
			}
			if err := sched.AddCalendar(ctx, "holidays", hol, nil); err != nil {
				t.Fatalf("AddCalendar: %v", err)
			}
			berlin, err := time.LoadLocation("Europe/Berlin")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)
			job := chime.JobDetail{
				Key: chime.NewJobKey("legacy", "report"), Type: "http", Durable: true,
				Data: chime.JobData{"chime:server": map[string]any{"http": map[string]any{"url": "http://127.0.0.1:9/report"}}},
			}
			trigger := func(name string, s schedule.Schedule) chime.Trigger {
				return chime.Trigger{Key: chime.NewTriggerKey("legacy", name), JobKey: job.Key, Schedule: s, StartTime: start}
			}
			triggers := []chime.Trigger{
				trigger("once", &schedule.Simple{RepeatInterval: 5 * time.Second}),
				trigger("forever", &schedule.Simple{RepeatCount: schedule.RepeatForever, RepeatInterval: 90 * time.Minute}),
				trigger("counted", &schedule.Simple{RepeatCount: 3, RepeatInterval: time.Minute}),
				trigger("monthly", &schedule.CalendarInterval{Unit: schedule.UnitMonth, Interval: 1, Location: berlin}),
				trigger("office", &schedule.DailyTimeInterval{
					StartTimeOfDay: schedule.TimeOfDay{Hour: 9}, EndTimeOfDay: schedule.TimeOfDay{Hour: 17},
					DaysOfWeek: schedule.MondayToFriday, Interval: 15, Unit: schedule.UnitMinute,
					RepeatCount: schedule.RepeatForever, Location: berlin,
				}),
			}
			triggers[0].CalendarName = "holidays"
			if err := sched.ScheduleJob(ctx, job, triggers, nil); err != nil {
				t.Fatalf("ScheduleJob: %v", err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}

			rec, logger := logtest.New(slog.LevelWarn)
			srv := servertest.Start(t, &servertest.Options{Config: server.Config{DatabaseURL: url, Logger: logger}})
			path := api.Version + "/jobs/legacy/report"
			status, got, _ := rawCall(t, srv, http.MethodGet, path, nil)
			if status != http.StatusOK {
				t.Fatalf("GET %s: status %d: %v", path, status, got)
			}
			want := map[string]string{
				"once":    `{"kind":"once"}`,
				"forever": `{"kind":"simple","interval":"1h30m"}`,
				"counted": `{"kind":"simple","interval":"1m","repeat_count":3}`,
				"monthly": `{"kind":"calendar_interval","interval":1,"unit":"month","time_zone":"Europe/Berlin"}`,
				"office": `{"kind":"daily_time_interval","interval":"15m","start_time_of_day":"09:00:00","end_time_of_day":"17:00:00",` +
					`"days_of_week":["monday","tuesday","wednesday","thursday","friday"],"time_zone":"Europe/Berlin"}`,
			}
			served := map[string]any{}
			for _, tr := range got["triggers"].([]any) {
				tr := tr.(map[string]any)
				served[tr["name"].(string)] = tr["schedule"]
			}
			for name, w := range want {
				if !reflect.DeepEqual(served[name], asJSON(t, w)) {
					t.Errorf("trigger %s is served as %v; want %s", name, served[name], w)
				}
			}
			status, cal, _ := rawCall(t, srv, http.MethodGet, api.Version+"/calendars/holidays", nil)
			wantCal := `{"type":"holiday","time_zone":"UTC","excluded_dates":["2030-12-25"],"base":null}`
			if status != http.StatusOK || !reflect.DeepEqual(cal["calendar"], asJSON(t, wantCal)) {
				t.Errorf("calendar served as %d %v; want %s", status, cal["calendar"], wantCal)
			}

			// What was served, put back, changes nothing and warns of nothing.
			body := withoutStatus(got)
			status, put, warnings := rawCall(t, srv, http.MethodPut, path, body)
			if status != http.StatusOK || put["version"] != got["version"] || len(warnings) != 0 || put["warnings"] != nil {
				t.Errorf("PUT of the served job: status %d, version %v (was %v), warnings %v %v; want it unchanged, no warning",
					status, put["version"], got["version"], warnings, put["warnings"])
			}

			// The old spelling, sent again, still means what it meant, and
			// is answered with a warning in the body, a Warning header and
			// a log line.
			old := withoutStatus(got)
			old["triggers"] = []any{map[string]any{"name": "once", "calendar": "holidays", "start_time": "2030-01-01T00:00:00Z",
				"schedule": map[string]any{"kind": "simple", "repeat_interval_ms": 5000, "repeat_count": 0}}}
			status, put, warnings = rawCall(t, srv, http.MethodPut, path, old)
			if status != http.StatusOK || len(warnings) != 1 || !strings.Contains(warnings[0], `triggers[0].schedule: deprecated spelling`) {
				t.Fatalf("PUT in the old form: status %d, Warning headers %q; want 200 and one warning", status, warnings)
			}
			if w, _ := put["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(string), `write {"kind":"once"}`) {
				t.Errorf("PUT in the old form answered warnings %v; want one showing {\"kind\":\"once\"}", put["warnings"])
			}
			if n := len(rec.Messages("deprecated spelling accepted")); n != 1 {
				t.Errorf("%d log lines about the deprecated spelling; want 1", n)
			}
			triggersNow := put["triggers"].([]any)
			if len(triggersNow) != 1 || !reflect.DeepEqual(triggersNow[0].(map[string]any)["schedule"], asJSON(t, want["once"])) {
				t.Errorf("after the PUT in the old form, triggers are %v; want the one-shot alone", triggersNow)
			}

			// A calendar in the old form: stored, served in the current
			// form, with a warning.
			status, cal, warnings = rawCall(t, srv, http.MethodPut, api.Version+"/calendars/weekends",
				map[string]any{"calendar": asJSON(t, `{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[1,7]}`)})
			wantCal = `{"type":"weekly","time_zone":"UTC","excluded_days_of_week":[1,7],"base":null}`
			if status != http.StatusCreated || len(warnings) != 1 || !reflect.DeepEqual(cal["calendar"], asJSON(t, wantCal)) {
				t.Errorf("PUT of an old-form calendar: status %d, warnings %q, calendar %v; want 201, one warning, %s", status, warnings, cal["calendar"], wantCal)
			}
		})
	}
}
