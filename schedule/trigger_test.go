package schedule_test

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/schedule"
)

func hourly(t *testing.T) *schedule.Cron {
	t.Helper()
	c, err := schedule.NewCron("0 0 * * * ?", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTriggerValidate(t *testing.T) {
	t.Parallel()
	start := at(t, "2024-06-15T10:00:00Z")
	tests := []struct {
		name  string
		tr    schedule.Trigger
		field string
	}{
		{"no schedule", schedule.Trigger{StartTime: start}, "schedule"},
		{"invalid schedule", schedule.Trigger{Schedule: &schedule.Simple{RepeatCount: 3}, StartTime: start}, "repeat_interval"},
		{"no start time", schedule.Trigger{Schedule: &schedule.Simple{}}, "start_time"},
		{"end before start", schedule.Trigger{Schedule: &schedule.Simple{}, StartTime: start, EndTime: start.Add(-time.Second)}, "end_time"},
		{"unknown instruction", schedule.Trigger{Schedule: &schedule.Simple{}, StartTime: start, MisfireInstruction: "SOMETIMES"}, "misfire_instruction"},
		{"simple-only instruction on cron", schedule.Trigger{Schedule: hourly(t), StartTime: start, MisfireInstruction: schedule.MisfireRescheduleNextWithExistingCount}, "misfire_instruction"},
		{"cron-only instruction on simple", schedule.Trigger{Schedule: &schedule.Simple{}, StartTime: start, MisfireInstruction: schedule.MisfireDoNothing}, "misfire_instruction"},
		{"fire now on calendar interval", schedule.Trigger{Schedule: &schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: 1}, StartTime: start, MisfireInstruction: schedule.MisfireFireNow}, "misfire_instruction"},
		{"negative times triggered", schedule.Trigger{Schedule: &schedule.Simple{}, StartTime: start, TimesTriggered: -1}, "times_triggered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantField(t, tt.tr.Validate(), tt.field)
		})
	}
	ok := schedule.Trigger{Schedule: hourly(t), StartTime: start, EndTime: start}
	for _, m := range []schedule.MisfireInstruction{"", schedule.MisfireSmartPolicy, schedule.MisfireIgnore, schedule.MisfireFireOnceNow, schedule.MisfireDoNothing} {
		ok.MisfireInstruction = m
		if err := ok.Validate(); err != nil {
			t.Errorf("cron trigger with %q: %v", m, err)
		}
	}
}

// TestCalendarSkippingTerminates checks that a calendar excluding every
// fire time makes each kind of trigger "never fire" promptly.
func TestCalendarSkippingTerminates(t *testing.T) {
	t.Parallel()
	start := at(t, "2024-06-15T10:00:00Z")
	schedules := map[string]schedule.Schedule{
		"cron":              hourly(t),
		"simple":            &schedule.Simple{RepeatCount: schedule.RepeatForever, RepeatInterval: time.Minute},
		"calendar interval": &schedule.CalendarInterval{Unit: schedule.UnitSecond, Interval: 1},
		"daily time interval": &schedule.DailyTimeInterval{
			StartTimeOfDay: tod(0, 0, 0), EndTimeOfDay: tod(23, 59, 59), DaysOfWeek: schedule.EveryDay,
			Interval: 1, Unit: schedule.UnitSecond, RepeatCount: schedule.RepeatForever,
		},
	}
	calendars := map[string]schedule.Calendar{
		"excludes everything":          excludeAll{},
		"claims an hour later, always": liar{},
	}
	for sname, s := range schedules {
		for cname, cal := range calendars {
			t.Run(sname+"/"+cname, func(t *testing.T) {
				t.Parallel()
				tr := schedule.Trigger{Schedule: s, StartTime: start}
				done := make(chan time.Time, 1)
				for name, compute := range map[string]func() time.Time{
					"ComputeFirstFireTime": func() time.Time { return tr.ComputeFirstFireTime(cal) },
					"NextIncludedAfter":    func() time.Time { return tr.NextIncludedAfter(start, cal) },
				} {
					go func() { done <- compute() }()
					select {
					case got := <-done:
						if !got.IsZero() {
							t.Errorf("%s = %s, want never", name, got)
						}
					case <-time.After(30 * time.Second): //nolint:forbidigo // the test's guard against a hang, not the code under test
						t.Fatalf("%s did not return", name)
					}
				}
				tr.NextFireTime = start
				tr.Triggered(cal)
				if tr.MayFireAgain() {
					t.Errorf("after Triggered, NextFireTime = %s, want never", tr.NextFireTime)
				}
			})
		}
	}
}

func TestCalendarSkipsWeekend(t *testing.T) {
	t.Parallel()
	tr := schedule.Trigger{Schedule: hourly(t), StartTime: at(t, "2024-06-14T22:30:00Z")} // Friday
	got := fires(t, tr, weekendCalendar{}, 3)
	want := times(t, "2024-06-14T23:00:00Z", "2024-06-17T00:00:00Z", "2024-06-17T01:00:00Z")
	if d := diffTimes(want, got); d != "" {
		t.Errorf("fire times %s", d)
	}
	if got, want := tr.NextIncludedAfter(at(t, "2024-06-14T23:00:00Z"), weekendCalendar{}), at(t, "2024-06-17T00:00:00Z"); !got.Equal(want) {
		t.Errorf("NextIncludedAfter(Friday 23:00) = %s, want %s", got, want)
	}
}

func TestUpcomingDoesNotChangeTheTrigger(t *testing.T) {
	t.Parallel()
	tr := schedule.Trigger{
		Schedule:  &schedule.Simple{RepeatCount: 3, RepeatInterval: time.Minute},
		StartTime: at(t, "2024-06-15T10:00:00Z"),
	}
	tr.ComputeFirstFireTime(nil)
	before := tr
	got := tr.Upcoming(nil, 10)
	if len(got) != 4 {
		t.Errorf("Upcoming = %d times, want 4", len(got))
	}
	if tr != before {
		t.Errorf("Upcoming changed the trigger: %+v, was %+v", tr, before)
	}
	if got := tr.Upcoming(nil, 0); got != nil {
		t.Errorf("Upcoming(0) = %v, want nil", got)
	}
}

func TestTriggeredAdvancesState(t *testing.T) {
	t.Parallel()
	tr := schedule.Trigger{
		Schedule:  &schedule.Simple{RepeatCount: 1, RepeatInterval: time.Minute},
		StartTime: at(t, "2024-06-15T10:00:00Z"),
	}
	if got := tr.ComputeFirstFireTime(nil); !got.Equal(tr.StartTime) {
		t.Fatalf("first fire time = %s, want the start time", got)
	}
	tr.Triggered(nil)
	if tr.TimesTriggered != 1 || !tr.PreviousFireTime.Equal(tr.StartTime) || !tr.NextFireTime.Equal(tr.StartTime.Add(time.Minute)) {
		t.Fatalf("after one fire: %+v", tr)
	}
	tr.Triggered(nil)
	if tr.MayFireAgain() || tr.TimesTriggered != 2 {
		t.Fatalf("after two fires: %+v, want complete", tr)
	}
	tr.Triggered(nil)
	if tr.TimesTriggered != 2 {
		t.Errorf("Triggered on a complete trigger counted a fire")
	}
}

func TestFireTimeAfter(t *testing.T) {
	t.Parallel()
	tr := schedule.Trigger{Schedule: hourly(t), StartTime: at(t, "2024-06-15T10:30:00Z")}
	tests := []struct {
		name  string
		after time.Time
		want  time.Time
	}{
		{"zero means before the start", time.Time{}, at(t, "2024-06-15T11:00:00Z")},
		{"strictly after", at(t, "2024-06-15T12:00:00Z"), at(t, "2024-06-15T13:00:00Z")},
		{"milliseconds are dropped", at(t, "2024-06-15T12:59:59.999Z"), at(t, "2024-06-15T13:00:00Z")},
		{"nothing from the year 2200", at(t, "2199-12-31T23:30:00Z"), time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tr.FireTimeAfter(tt.after); !got.Equal(tt.want) {
				t.Errorf("FireTimeAfter(%s) = %s, want %s", tt.after, got, tt.want)
			}
		})
	}
}

func TestMisfireInstructions(t *testing.T) {
	t.Parallel()
	all := schedule.MisfireInstructions()
	if len(all) != 9 {
		t.Fatalf("MisfireInstructions() has %d, want 9", len(all))
	}
	counts := map[schedule.Kind]int{}
	for _, m := range all {
		for _, s := range []schedule.Schedule{hourly(t), &schedule.Simple{}, &schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: 1}} {
			tr := schedule.Trigger{Schedule: s, StartTime: at(t, "2024-01-01T00:00:00Z"), MisfireInstruction: m}
			if tr.Validate() == nil {
				counts[s.Kind()]++
			}
		}
	}
	if counts[schedule.KindCron] != 4 || counts[schedule.KindCalendarInterval] != 4 || counts[schedule.KindSimple] != 7 {
		t.Errorf("instructions accepted per kind = %v, want cron 4, calendar_interval 4, simple 7", counts)
	}
}

// TestInvalidTriggersDoNotPanic checks that computing fire times of an
// invalid trigger reports "none" instead of panicking.
func TestInvalidTriggersDoNotPanic(t *testing.T) {
	t.Parallel()
	start := at(t, "2024-06-15T10:00:00Z")
	tests := []struct {
		name string
		tr   schedule.Trigger
	}{
		{"no schedule", schedule.Trigger{StartTime: start}},
		{"zero calendar interval", schedule.Trigger{Schedule: &schedule.CalendarInterval{Unit: schedule.UnitHour}, StartTime: start}},
		{"zero simple interval", schedule.Trigger{Schedule: &schedule.Simple{RepeatCount: -1}, StartTime: start}},
		{"zero daily time interval", schedule.Trigger{Schedule: &schedule.DailyTimeInterval{Unit: schedule.UnitHour, DaysOfWeek: schedule.EveryDay}, StartTime: start}},
		{"zero cron", schedule.Trigger{Schedule: &schedule.Cron{}, StartTime: start}},
		{"no start time", schedule.Trigger{Schedule: &schedule.Simple{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := tt.tr
			if got := tr.ComputeFirstFireTime(excludeAll{}); !got.IsZero() {
				t.Errorf("ComputeFirstFireTime = %s, want zero", got)
			}
			if got := tr.FireTimeAfter(start); !got.IsZero() {
				t.Errorf("FireTimeAfter = %s, want zero", got)
			}
			tr.NextFireTime = start
			tr.UpdateAfterMisfire(start.Add(time.Hour), nil)
			tr.Triggered(nil)
			if tr.MayFireAgain() {
				t.Errorf("after Triggered, NextFireTime = %s, want none", tr.NextFireTime)
			}
		})
	}
}
