package schedule_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/schedule"
)

func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	paris := zone(t, "Europe/Paris")
	cron, err := schedule.NewCron("0 15 10 ? * MON-FRI", "Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		s    schedule.Schedule
		kind string
	}{
		{"cron", cron, `"kind":"cron"`},
		{"simple", &schedule.Simple{RepeatCount: 7, RepeatInterval: 90 * time.Second}, `"repeat_interval_ms":90000`},
		{"simple one shot", &schedule.Simple{}, `"repeat_count":0`},
		{"calendar interval", &schedule.CalendarInterval{Unit: schedule.UnitMonth, Interval: 2, Location: paris, PreserveHourOfDayAcrossDaylightSavings: true, SkipDayIfHourDoesNotExist: true}, `"unit":"MONTH"`},
		{"daily time interval", &schedule.DailyTimeInterval{
			StartTimeOfDay: tod(8, 30, 0), EndTimeOfDay: tod(18, 0, 5), DaysOfWeek: schedule.NewWeekdays(time.Monday, time.Saturday),
			Interval: 45, Unit: schedule.UnitMinute, RepeatCount: 100, Location: paris,
		}, `"days_of_week":["Monday","Saturday"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, err := schedule.Marshal(tt.s)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if !strings.Contains(string(data), tt.kind) {
				t.Errorf("Marshal = %s, want it to contain %s", data, tt.kind)
			}
			got, err := schedule.Unmarshal(data)
			if err != nil {
				t.Fatalf("Unmarshal(%s): %v", data, err)
			}
			if got.Kind() != tt.s.Kind() {
				t.Fatalf("kind = %s, want %s", got.Kind(), tt.s.Kind())
			}
			if c, ok := tt.s.(*schedule.Cron); ok {
				g := got.(*schedule.Cron)
				if g.Expression() != c.Expression() || g.Location().String() != c.Location().String() {
					t.Errorf("round trip = %q in %v, want %q in %v", g.Expression(), g.Location(), c.Expression(), c.Location())
				}
				return
			}
			if !reflect.DeepEqual(got, tt.s) {
				t.Errorf("round trip = %+v, want %+v", got, tt.s)
			}
			again, err := schedule.Marshal(got)
			if err != nil || string(again) != string(data) {
				t.Errorf("second Marshal = %s, %v; want %s", again, err, data)
			}
		})
	}
}

func TestUnmarshalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		field string
	}{
		{"unknown kind", `{"kind":"lunar"}`, "kind"},
		{"missing kind", `{}`, "kind"},
		{"bad cron", `{"kind":"cron","expression":"0 0 99 * * ?"}`, "expression"},
		{"unknown zone", `{"kind":"cron","expression":"0 0 * * * ?","time_zone":"Atlantis/Capital"}`, "time_zone"},
		{"simple without interval", `{"kind":"simple","repeat_count":1}`, "repeat_interval_ms"},
		{"simple forever without interval", `{"kind":"simple","repeat_count":-1}`, "repeat_interval_ms"},
		{"simple with zero interval", `{"kind":"simple","repeat_count":1,"repeat_interval_ms":0}`, "repeat_interval"},
		{"calendar interval without interval", `{"kind":"calendar_interval","unit":"DAY"}`, "interval"},
		{"daily time interval with a bad day", `{"kind":"daily_time_interval","unit":"HOUR","interval":1,"repeat_count":-1,"start_time_of_day":"09:00:00","end_time_of_day":"17:00:00","days_of_week":["Caturday"]}`, "days_of_week"},
		{"daily time interval with end before start", `{"kind":"daily_time_interval","unit":"HOUR","interval":1,"repeat_count":-1,"start_time_of_day":"09:00:00","end_time_of_day":"08:00:00","days_of_week":["Monday"]}`, "end_time_of_day"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := schedule.Unmarshal([]byte(tt.in))
			wantField(t, err, tt.field)
		})
	}
	for _, in := range []string{`not json`, `{"kind":"simple","repeat_count":1,"repeat_interval_ms":5,"colour":"blue"}`} {
		if _, err := schedule.Unmarshal([]byte(in)); err == nil {
			t.Errorf("Unmarshal(%s) succeeded, want an error", in)
		}
	}
	if _, err := schedule.Marshal(nil); err == nil {
		t.Errorf("Marshal(nil) succeeded, want an error")
	}
}

// A simple schedule fires once unless told to repeat, as Quartz's
// SimpleTrigger does, so the one-shot forms need neither field.
func TestUnmarshalSimpleOneShot(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"kind":"simple"}`, `{"kind":"simple","repeat_count":0}`} {
		got, err := schedule.Unmarshal([]byte(in))
		if err != nil {
			t.Fatalf("Unmarshal(%s): %v", in, err)
		}
		if s, ok := got.(*schedule.Simple); !ok || *s != (schedule.Simple{}) {
			t.Errorf("Unmarshal(%s) = %#v, want a one-shot simple schedule", in, got)
		}
	}
}
