package wire_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/api/wire"
	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/schedule"
)

// TestScheduleRoundTrip decodes each kind in the current form and encodes
// it back unchanged, with no warning.
func TestScheduleRoundTrip(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"cron":                `{"kind":"cron","expression":"0 30 2 ? * MON-FRI","time_zone":"Europe/Berlin"}`,
		"once":                `{"kind":"once"}`,
		"simple for ever":     `{"kind":"simple","interval":"5m"}`,
		"simple counted":      `{"kind":"simple","interval":"1h30m","repeat_count":3}`,
		"calendar_interval":   `{"kind":"calendar_interval","interval":1,"unit":"month","time_zone":"UTC","preserve_hour_of_day_across_daylight_savings":true}`,
		"daily_time_interval": `{"kind":"daily_time_interval","interval":"15m","start_time_of_day":"09:00:00","end_time_of_day":"17:00:00","days_of_week":["monday","friday"],"time_zone":"Europe/Paris"}`,
		"fixed_delay":         `{"kind":"fixed_delay","delay":"30s"}`,
		"daily counted":       `{"kind":"daily_time_interval","interval":"2h","start_time_of_day":"00:00:00","end_time_of_day":"23:59:59","days_of_week":["sunday","monday","tuesday","wednesday","thursday","friday","saturday"],"repeat_count":10,"time_zone":"UTC"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, warnings, err := wire.DecodeSchedule([]byte(in), "schedule")
			if err != nil || len(warnings) != 0 {
				t.Fatalf("DecodeSchedule = %v, %v; want no error or warning", warnings, err)
			}
			out, err := wire.EncodeSchedule(s)
			if err != nil {
				t.Fatalf("EncodeSchedule: %v", err)
			}
			if string(out) != in {
				t.Errorf("round trip = %s; want %s", out, in)
			}
		})
	}
}

// TestScheduleMeaning checks that what the user wrote is what fires: an
// interval without a count repeats for ever.
func TestScheduleMeaning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		want schedule.Schedule
	}{
		{"interval without count repeats for ever", `{"kind":"simple","interval":"5s"}`, &schedule.Simple{RepeatCount: schedule.RepeatForever, RepeatInterval: 5 * time.Second}},
		{"count is repeats after the first", `{"kind":"simple","interval":"5s","repeat_count":2}`, &schedule.Simple{RepeatCount: 2, RepeatInterval: 5 * time.Second}},
		{"once", `{"kind":"once"}`, &schedule.Simple{}},
		{"daily interval in minutes", `{"kind":"daily_time_interval","interval":"90m","start_time_of_day":"09:00","end_time_of_day":"17:00:00"}`,
			&schedule.DailyTimeInterval{Interval: 90, Unit: schedule.UnitMinute, DaysOfWeek: schedule.EveryDay, RepeatCount: schedule.RepeatForever,
				StartTimeOfDay: schedule.TimeOfDay{Hour: 9}, EndTimeOfDay: schedule.TimeOfDay{Hour: 17}, Location: time.UTC}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := wire.DecodeSchedule([]byte(tc.in), "")
			if err != nil {
				t.Fatalf("DecodeSchedule: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DecodeSchedule = %+v; want %+v", got, tc.want)
			}
		})
	}
}

// TestScheduleRefused checks that every trap of the old form, and every
// unknown or misplaced field, is refused naming the field.
func TestScheduleRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, field string
	}{
		{"interval as a number", `{"kind":"simple","interval":5}`, "triggers[0].schedule.interval"},
		{"interval not a duration", `{"kind":"simple","interval":"5 seconds"}`, "triggers[0].schedule.interval"},
		{"count without interval", `{"kind":"simple","repeat_count":3}`, "triggers[0].schedule.interval"},
		{"bare simple", `{"kind":"simple"}`, "triggers[0].schedule.interval"},
		{"negative count", `{"kind":"simple","interval":"5s","repeat_count":-2}`, "triggers[0].schedule.repeat_count"},
		{"zero interval", `{"kind":"simple","interval":"0s"}`, "triggers[0].schedule.interval"},
		{"misplaced time zone", `{"kind":"simple","interval":"5s","time_zone":"UTC"}`, "triggers[0].schedule.time_zone"},
		{"misplaced interval", `{"kind":"cron","expression":"0 0 * * * ?","interval":"5s"}`, "triggers[0].schedule.interval"},
		{"field of once", `{"kind":"once","interval":"5s"}`, "triggers[0].schedule.interval"},
		{"unknown field", `{"kind":"cron","expression":"0 0 * * * ?","tz":"UTC"}`, "triggers[0].schedule.tz"},
		{"no kind", `{"expression":"0 0 * * * ?"}`, "triggers[0].schedule.kind"},
		{"unknown kind", `{"kind":"weekly"}`, "triggers[0].schedule.kind"},
		{"not an object", `"0 0 * * * ?"`, "triggers[0].schedule"},
		{"bad cron", `{"kind":"cron","expression":"0 0 25 * * ?"}`, "triggers[0].schedule.expression"},
		{"bad zone", `{"kind":"cron","expression":"0 0 * * * ?","time_zone":"Mars/Olympus"}`, "triggers[0].schedule.time_zone"},
		// "Local" is each node's own zone: nodes would disagree on the times.
		{"node-local zone", `{"kind":"cron","expression":"0 0 * * * ?","time_zone":"Local"}`, "triggers[0].schedule.time_zone"},
		{"node-local zone, daily interval", `{"kind":"daily_time_interval","interval":"1h","start_time_of_day":"09:00:00","end_time_of_day":"17:00:00","time_zone":"Local"}`, "triggers[0].schedule.time_zone"},
		{"calendar interval as duration", `{"kind":"calendar_interval","interval":"5s","unit":"second"}`, "triggers[0].schedule.interval"},
		{"unknown unit", `{"kind":"calendar_interval","interval":1,"unit":"fortnight"}`, "triggers[0].schedule.unit"},
		{"daily interval past a day", `{"kind":"daily_time_interval","interval":"25h","start_time_of_day":"00:00","end_time_of_day":"12:00"}`, "triggers[0].schedule.interval"},
		{"daily without start", `{"kind":"daily_time_interval","interval":"1h","end_time_of_day":"12:00"}`, "triggers[0].schedule.start_time_of_day"},
		{"unknown day", `{"kind":"daily_time_interval","interval":"1h","start_time_of_day":"00:00","end_time_of_day":"12:00","days_of_week":["monday","funday"]}`, "triggers[0].schedule.days_of_week[1]"},
		{"old and new interval", `{"kind":"simple","interval":"5s","repeat_interval_ms":5000}`, "triggers[0].schedule.repeat_interval_ms"},
		{"fixed delay without delay", `{"kind":"fixed_delay"}`, "triggers[0].schedule.delay"},
		{"fixed delay not positive", `{"kind":"fixed_delay","delay":"0s"}`, "triggers[0].schedule.delay"},
		{"fixed delay with an interval", `{"kind":"fixed_delay","delay":"30s","interval":"5s"}`, "triggers[0].schedule.interval"},
		{"unit with a duration", `{"kind":"daily_time_interval","interval":"15m","unit":"minute","start_time_of_day":"00:00","end_time_of_day":"12:00"}`, "triggers[0].schedule.unit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := wire.DecodeSchedule([]byte(tc.in), "triggers[0].schedule")
			var apiErr *api.Error
			if !errors.As(err, &apiErr) || apiErr.Code != api.CodeInvalidArgument || apiErr.Field != tc.field || apiErr.Message == "" {
				t.Fatalf("DecodeSchedule(%s) = %v; want invalid_argument naming %s", tc.in, err, tc.field)
			}
		})
	}
}

// TestScheduleDeprecated checks that the previous release's spellings
// keep their meaning, with a warning that names the current form.
func TestScheduleDeprecated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, now string
	}{
		{"one-shot", `{"kind":"simple","repeat_interval_ms":5000}`, `{"kind":"once"}`},
		{"explicit one-shot", `{"kind":"simple","repeat_interval_ms":0,"repeat_count":0}`, `{"kind":"once"}`},
		{"for ever", `{"kind":"simple","repeat_interval_ms":5000,"repeat_count":-1}`, `{"kind":"simple","interval":"5s"}`},
		{"counted", `{"kind":"simple","repeat_interval_ms":60000,"repeat_count":3}`, `{"kind":"simple","interval":"1m","repeat_count":3}`},
		{"minus one", `{"kind":"simple","interval":"5s","repeat_count":-1}`, `{"kind":"simple","interval":"5s"}`},
		{"upper-case unit", `{"kind":"calendar_interval","interval":2,"unit":"WEEK","time_zone":"UTC"}`, `{"kind":"calendar_interval","interval":2,"unit":"week","time_zone":"UTC"}`},
		{"daily with unit", `{"kind":"daily_time_interval","interval":15,"unit":"MINUTE","start_time_of_day":"09:00:00","end_time_of_day":"17:00:00","days_of_week":["Monday"],"repeat_count":-1,"time_zone":"UTC"}`,
			`{"kind":"daily_time_interval","interval":"15m","start_time_of_day":"09:00:00","end_time_of_day":"17:00:00","days_of_week":["monday"],"time_zone":"UTC"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, warnings, err := wire.DecodeSchedule([]byte(tc.in), "triggers[0].schedule")
			if err != nil {
				t.Fatalf("DecodeSchedule: %v", err)
			}
			out, err := wire.EncodeSchedule(s)
			if err != nil {
				t.Fatalf("EncodeSchedule: %v", err)
			}
			if string(out) != tc.now {
				t.Errorf("EncodeSchedule = %s; want %s", out, tc.now)
			}
			if len(warnings) != 1 || warnings[0].Field != "triggers[0].schedule" || !json.Valid(out) {
				t.Fatalf("warnings = %v; want one for triggers[0].schedule", warnings)
			}
			if msg := warnings[0].Message; !strings.Contains(msg, tc.now) {
				t.Errorf("warning %q does not show the current form %s", msg, tc.now)
			}
		})
	}
}

// TestCalendar checks the calendar form: snake_case with time_zone,
// encoded from what package calendar stores, the old spelling accepted
// with a warning, and errors naming the API's fields.
func TestCalendar(t *testing.T) {
	t.Parallel()
	now := `{"type":"weekly","time_zone":"Europe/Berlin","excluded_days_of_week":[1,7],"base":{"type":"holiday","time_zone":"Europe/Berlin","description":"Feiertage","excluded_dates":["2026-12-25"],"base":null}}`
	cal, warnings, err := wire.DecodeCalendar([]byte(now), "calendar")
	if err != nil || len(warnings) != 0 {
		t.Fatalf("DecodeCalendar = %v, %v; want no error or warning", warnings, err)
	}
	out, err := wire.EncodeCalendar(cal)
	if err != nil {
		t.Fatalf("EncodeCalendar: %v", err)
	}
	if string(out) != now {
		t.Errorf("round trip = %s; want %s", out, now)
	}

	old := `{"type":"weekly","tz":"Europe/Berlin","excludedDaysOfWeek":[1,7],"base":{"type":"holiday","tz":"Europe/Berlin","description":"Feiertage","excludedDates":["2026-12-25"]}}`
	cal, warnings, err = wire.DecodeCalendar([]byte(old), "calendar")
	if err != nil {
		t.Fatalf("DecodeCalendar(old form): %v", err)
	}
	if out, _ := wire.EncodeCalendar(cal); string(out) != now {
		t.Errorf("old form encodes to %s; want %s", out, now)
	}
	if len(warnings) != 2 || warnings[0].Field != "calendar" || warnings[1].Field != "calendar.base" {
		t.Errorf("warnings = %v; want one for calendar and one for calendar.base", warnings)
	}

	for _, tc := range []struct{ in, field string }{
		{`{"type":"weekly","time_zone":"Nowhere/Land","excluded_days_of_week":[1]}`, "calendar.time_zone"},
		{`{"type":"weekly","time_zone":"UTC","excluded_days_of_week":[9]}`, "calendar.excluded_days_of_week[0]"},
		{`{"type":"weekly","time_zone":"UTC","excluded_dates":["2026-01-01"]}`, "calendar.excluded_dates"},
		{`{"type":"weekly","time_zone":"UTC","zone":"UTC"}`, "calendar.zone"},
		{`{"type":"weekly","time_zone":"UTC","tz":"UTC"}`, "calendar.tz"},
		{`{"type":"holiday","time_zone":"UTC","excluded_dates":"2026-01-01"}`, "calendar.excluded_dates"},
		{`{"type":"weekly","time_zone":"UTC","base":{"type":"daily","time_zone":"UTC","range_start":"25:00"}}`, "calendar.base.range_end"},
	} {
		_, _, err := wire.DecodeCalendar([]byte(tc.in), "calendar")
		var apiErr *api.Error
		if !errors.As(err, &apiErr) || apiErr.Code != api.CodeInvalidArgument || apiErr.Field != tc.field {
			t.Errorf("DecodeCalendar(%s) = %v; want invalid_argument naming %s", tc.in, err, tc.field)
		}
	}
}

// TestEncodeStored checks that what the library stores in its own
// encoding, old spellings included, is served in the current form.
func TestEncodeStored(t *testing.T) {
	t.Parallel()
	stored := `{"kind":"daily_time_interval","unit":"HOUR","interval":2,"start_time_of_day":"08:00:00","end_time_of_day":"18:00:00","days_of_week":["Monday","Tuesday"],"repeat_count":-1,"time_zone":"UTC"}`
	s, err := schedule.Unmarshal([]byte(stored))
	if err != nil {
		t.Fatalf("schedule.Unmarshal: %v", err)
	}
	out, err := wire.EncodeSchedule(s)
	if err != nil {
		t.Fatalf("EncodeSchedule: %v", err)
	}
	want := `{"kind":"daily_time_interval","interval":"2h","start_time_of_day":"08:00:00","end_time_of_day":"18:00:00","days_of_week":["monday","tuesday"],"time_zone":"UTC"}`
	if string(out) != want {
		t.Errorf("EncodeSchedule = %s; want %s", out, want)
	}
	cal, err := calendar.Unmarshal([]byte(`{"type":"cron","tz":"UTC","expr":"* * 0-5 ? * *","base":null}`))
	if err != nil {
		t.Fatalf("calendar.Unmarshal: %v", err)
	}
	if out, err := wire.EncodeCalendar(cal); err != nil || string(out) != `{"type":"cron","time_zone":"UTC","expression":"* * 0-5 ? * *","base":null}` {
		t.Errorf("EncodeCalendar = %s, %v", out, err)
	}
}
