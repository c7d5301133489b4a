package schedule_test

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/schedule"
)

func tod(h, m, s int) schedule.TimeOfDay { return schedule.TimeOfDay{Hour: h, Minute: m, Second: s} }

func TestDailyTimeIntervalFireTimes(t *testing.T) {
	t.Parallel()
	workday := schedule.DailyTimeInterval{
		StartTimeOfDay: tod(9, 0, 0),
		EndTimeOfDay:   tod(10, 0, 0),
		DaysOfWeek:     schedule.MondayToFriday,
		Interval:       20,
		Unit:           schedule.UnitMinute,
		RepeatCount:    schedule.RepeatForever,
	}
	tests := []struct {
		name  string
		s     schedule.DailyTimeInterval
		zone  string
		start string
		end   string
		n     int
		want  []string
	}{
		{
			name:  "fires within the window, then on the next chosen day",
			s:     workday,
			zone:  "UTC",
			start: "2024-06-14T09:30:00Z", // Friday
			n:     4,
			want:  []string{"2024-06-14T09:40:00Z", "2024-06-14T10:00:00Z", "2024-06-17T09:00:00Z", "2024-06-17T09:20:00Z"},
		},
		{
			name:  "the window is in the schedule's zone",
			s:     workday,
			zone:  "Asia/Kolkata",
			start: "2024-06-14T00:00:00Z",
			n:     2,
			want:  []string{"2024-06-14T03:30:00Z", "2024-06-14T03:50:00Z"},
		},
		{
			name: "the repeat count bounds the total",
			s: func() schedule.DailyTimeInterval {
				s := workday
				s.RepeatCount = 4
				return s
			}(),
			zone:  "UTC",
			start: "2024-06-14T09:30:00Z",
			n:     10,
			want:  []string{"2024-06-14T09:40:00Z", "2024-06-14T10:00:00Z", "2024-06-17T09:00:00Z", "2024-06-17T09:20:00Z", "2024-06-17T09:40:00Z"},
		},
		{
			name: "hours across a spring-forward night",
			s: schedule.DailyTimeInterval{
				StartTimeOfDay: tod(0, 0, 0), EndTimeOfDay: tod(4, 0, 0), DaysOfWeek: schedule.EveryDay,
				Interval: 1, Unit: schedule.UnitHour, RepeatCount: schedule.RepeatForever,
			},
			zone:  "Europe/Berlin",
			start: "2024-03-30T23:00:00Z", // Sunday 31 March 00:00 CET
			n:     5,
			// Elapsed hours from midnight: 01:00 CET, 03:00 CEST, 04:00 CEST; then Monday 00:00.
			want: []string{"2024-03-30T23:00:00Z", "2024-03-31T00:00:00Z", "2024-03-31T01:00:00Z", "2024-03-31T02:00:00Z", "2024-03-31T22:00:00Z"},
		},
		{
			name:  "never after the end time",
			s:     workday,
			zone:  "UTC",
			start: "2024-06-14T09:00:00Z",
			end:   "2024-06-14T09:30:00Z",
			n:     5,
			want:  []string{"2024-06-14T09:00:00Z", "2024-06-14T09:20:00Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tt.s
			s.Location = zone(t, tt.zone)
			tr := schedule.Trigger{Schedule: &s, StartTime: at(t, tt.start)}
			if tt.end != "" {
				tr.EndTime = at(t, tt.end)
			}
			if d := diffTimes(times(t, tt.want...), fires(t, tr, nil, tt.n)); d != "" {
				t.Errorf("fire times %s", d)
			}
		})
	}
}

func TestDailyTimeIntervalValidate(t *testing.T) {
	t.Parallel()
	valid := schedule.DailyTimeInterval{
		StartTimeOfDay: tod(9, 0, 0), EndTimeOfDay: tod(17, 0, 0), DaysOfWeek: schedule.EveryDay,
		Interval: 1, Unit: schedule.UnitHour, RepeatCount: schedule.RepeatForever,
	}
	if err := valid.Validate(); err != nil {
		t.Fatalf("Validate(valid) = %v", err)
	}
	tests := []struct {
		name   string
		change func(*schedule.DailyTimeInterval)
		field  string
	}{
		{"end before start", func(s *schedule.DailyTimeInterval) { s.EndTimeOfDay = tod(8, 0, 0) }, "end_time_of_day"},
		{"hour out of range", func(s *schedule.DailyTimeInterval) { s.StartTimeOfDay = tod(24, 0, 0) }, "start_time_of_day"},
		{"no days", func(s *schedule.DailyTimeInterval) { s.DaysOfWeek = 0 }, "days_of_week"},
		{"day unit", func(s *schedule.DailyTimeInterval) { s.Unit = schedule.UnitDay }, "unit"},
		{"zero interval", func(s *schedule.DailyTimeInterval) { s.Interval = 0 }, "interval"},
		{"more than a day", func(s *schedule.DailyTimeInterval) { s.Interval = 25 }, "interval"},
		{"more than a day in minutes", func(s *schedule.DailyTimeInterval) { s.Unit, s.Interval = schedule.UnitMinute, 1441 }, "interval"},
		{"repeat count below -1", func(s *schedule.DailyTimeInterval) { s.RepeatCount = -3 }, "repeat_count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := valid
			tt.change(&s)
			wantField(t, s.Validate(), tt.field)
			_, err := schedule.NewDailyTimeInterval(s.StartTimeOfDay, s.EndTimeOfDay, s.DaysOfWeek, s.Interval, s.Unit, s.RepeatCount, "UTC")
			wantField(t, err, tt.field)
		})
	}
	_, err := schedule.NewDailyTimeInterval(tod(9, 0, 0), tod(17, 0, 0), schedule.EveryDay, 1, schedule.UnitHour, -1, "Not/AZone")
	wantField(t, err, "time_zone")
}

func TestDailyTimeIntervalMisfire(t *testing.T) {
	t.Parallel()
	now := at(t, "2024-06-15T12:00:00Z") // Saturday
	tests := []struct {
		name string
		m    schedule.MisfireInstruction
		end  string
		want []string
	}{
		{name: "ignore", m: schedule.MisfireIgnore, want: []string{"2024-06-14T16:45:00Z", "2024-06-14T17:00:00Z", "2024-06-17T09:00:00Z"}},
		{name: "do nothing waits for Monday", m: schedule.MisfireDoNothing, want: []string{"2024-06-17T09:00:00Z", "2024-06-17T09:15:00Z", "2024-06-17T09:30:00Z"}},
		{name: "fire once now, then Monday", m: schedule.MisfireFireOnceNow, want: []string{"2024-06-15T12:00:00Z", "2024-06-17T09:00:00Z", "2024-06-17T09:15:00Z"}},
		{name: "smart policy is fire once now", m: schedule.MisfireSmartPolicy, want: []string{"2024-06-15T12:00:00Z", "2024-06-17T09:00:00Z", "2024-06-17T09:15:00Z"}},
		{name: "fire once now after the end completes", m: schedule.MisfireFireOnceNow, end: "2024-06-15T11:00:00Z", want: nil},
		// Firing at the end time itself is allowed for these triggers.
		{name: "fire once now at the end", m: schedule.MisfireFireOnceNow, end: "2024-06-15T12:00:00Z", want: []string{"2024-06-15T12:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := schedule.Trigger{
				Schedule: &schedule.DailyTimeInterval{
					StartTimeOfDay: tod(9, 0, 0), EndTimeOfDay: tod(17, 0, 0), DaysOfWeek: schedule.MondayToFriday,
					Interval: 15, Unit: schedule.UnitMinute, RepeatCount: schedule.RepeatForever,
				},
				StartTime:          at(t, "2024-06-03T00:00:00Z"),
				MisfireInstruction: tt.m,
				NextFireTime:       at(t, "2024-06-14T16:45:00Z"),
				PreviousFireTime:   at(t, "2024-06-14T16:30:00Z"),
				TimesTriggered:     300,
			}
			if tt.end != "" {
				tr.EndTime = at(t, tt.end)
			}
			tr.UpdateAfterMisfire(now, nil)
			if d := diffTimes(times(t, tt.want...), tr.Upcoming(nil, 3)); d != "" {
				t.Errorf("upcoming %s", d)
			}
		})
	}
}

func TestTimeOfDay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    schedule.TimeOfDay
		wantErr bool
	}{
		{in: "09:30:15", want: tod(9, 30, 15)},
		{in: "23:59", want: tod(23, 59, 0)},
		{in: "24:00:00", wantErr: true},
		{in: "9h", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := schedule.ParseTimeOfDay(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseTimeOfDay(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ParseTimeOfDay(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if !tt.wantErr && got.String()[:5] != tt.in[:5] {
				t.Errorf("String() = %q, want prefix %q", got.String(), tt.in[:5])
			}
		})
	}
}

func TestWeekdays(t *testing.T) {
	t.Parallel()
	w := schedule.NewWeekdays(time.Monday, time.Friday, time.Weekday(9))
	if !w.Contains(time.Monday) || !w.Contains(time.Friday) || w.Contains(time.Sunday) {
		t.Errorf("NewWeekdays(Mon, Fri) = %v, wrong membership", w.Days())
	}
	if got := len(schedule.EveryDay.Days()); got != 7 {
		t.Errorf("EveryDay has %d days, want 7", got)
	}
	if schedule.MondayToFriday|schedule.SaturdayAndSunday != schedule.EveryDay {
		t.Errorf("weekdays and weekend do not make the whole week")
	}
}
