package schedule_test

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/schedule"
)

func TestCalendarIntervalFireTimes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		s     schedule.CalendarInterval
		zone  string
		start string
		end   string
		n     int
		want  []string
	}{
		{
			name:  "hours are fixed lengths across a gap",
			s:     schedule.CalendarInterval{Unit: schedule.UnitHour, Interval: 1},
			zone:  "America/New_York",
			start: "2024-03-10T05:30:00Z", // 00:30 EST
			n:     4,
			want:  []string{"2024-03-10T05:30:00Z", "2024-03-10T06:30:00Z", "2024-03-10T07:30:00Z", "2024-03-10T08:30:00Z"},
		},
		{
			name:  "days keep the wall time across daylight saving",
			s:     schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: 1},
			zone:  "America/New_York",
			start: "2024-03-09T14:00:00Z", // 09:00 EST
			n:     3,
			want:  []string{"2024-03-09T14:00:00Z", "2024-03-10T13:00:00Z", "2024-03-11T13:00:00Z"},
		},
		{
			// 02:30 does not exist on 10 March; Java's calendar lands on
			// 01:30 and the series keeps that time of day afterwards.
			name:  "a day in a gap shifts the series to the hour before",
			s:     schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: 1},
			zone:  "America/New_York",
			start: "2024-03-09T07:30:00Z", // 02:30 EST
			n:     3,
			want:  []string{"2024-03-09T07:30:00Z", "2024-03-10T06:30:00Z", "2024-03-11T05:30:00Z"},
		},
		{
			name:  "preserving the hour fires at the gap's end then returns to 02:30",
			s:     schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: 1, PreserveHourOfDayAcrossDaylightSavings: true},
			zone:  "America/New_York",
			start: "2024-03-09T07:30:00Z",
			n:     3,
			// 10 March 02:30 is read forward as 03:30 EDT; 11 March is 02:30 EDT.
			want: []string{"2024-03-09T07:30:00Z", "2024-03-10T07:30:00Z", "2024-03-11T06:30:00Z"},
		},
		{
			name:  "skipping the day whose hour does not exist",
			s:     schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: 1, PreserveHourOfDayAcrossDaylightSavings: true, SkipDayIfHourDoesNotExist: true},
			zone:  "America/New_York",
			start: "2024-03-09T07:30:00Z",
			n:     3,
			want:  []string{"2024-03-09T07:30:00Z", "2024-03-11T06:30:00Z", "2024-03-12T06:30:00Z"},
		},
		{
			// 01:30 happens twice on 3 November; Java takes the second (EST).
			name:  "a repeated hour is taken at its second occurrence",
			s:     schedule.CalendarInterval{Unit: schedule.UnitMonth, Interval: 1},
			zone:  "America/New_York",
			start: "2024-10-03T05:30:00Z", // 3 Oct 01:30 EDT
			n:     2,
			want:  []string{"2024-10-03T05:30:00Z", "2024-11-03T06:30:00Z"},
		},
		{
			name:  "month ends are clamped and the clamp persists",
			s:     schedule.CalendarInterval{Unit: schedule.UnitMonth, Interval: 1},
			zone:  "UTC",
			start: "2024-01-31T10:00:00Z",
			n:     4,
			want:  []string{"2024-01-31T10:00:00Z", "2024-02-29T10:00:00Z", "2024-03-29T10:00:00Z", "2024-04-29T10:00:00Z"},
		},
		{
			name:  "29 February moves to 28 February",
			s:     schedule.CalendarInterval{Unit: schedule.UnitYear, Interval: 1},
			zone:  "UTC",
			start: "2024-02-29T00:00:00Z",
			n:     3,
			want:  []string{"2024-02-29T00:00:00Z", "2025-02-28T00:00:00Z", "2026-02-28T00:00:00Z"},
		},
		{
			name:  "weeks in the southern hemisphere",
			s:     schedule.CalendarInterval{Unit: schedule.UnitWeek, Interval: 1},
			zone:  "Australia/Sydney",
			start: "2024-03-30T23:00:00Z", // Sunday 31 March 10:00 AEDT
			n:     2,
			want:  []string{"2024-03-30T23:00:00Z", "2024-04-07T00:00:00Z"}, // 10:00 AEST
		},
		{
			name:  "end time excludes a fire at the end",
			s:     schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: 2},
			zone:  "Europe/London",
			start: "2024-06-01T08:00:00Z",
			end:   "2024-06-05T08:00:00Z",
			n:     5,
			want:  []string{"2024-06-01T08:00:00Z", "2024-06-03T08:00:00Z"},
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

// TestCalendarIntervalLongRun checks a fire time far from the start, where
// the day arithmetic leaps instead of stepping.
func TestCalendarIntervalLongRun(t *testing.T) {
	t.Parallel()
	tr := schedule.Trigger{
		Schedule:  &schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: 1, Location: zone(t, "Europe/Berlin")},
		StartTime: at(t, "2024-01-01T08:00:00Z"), // 09:00 CET
	}
	got := tr.FireTimeAfter(at(t, "2026-07-01T12:00:00Z"))
	if want := at(t, "2026-07-02T07:00:00Z"); !got.Equal(want) { // 09:00 CEST
		t.Errorf("FireTimeAfter = %s, want %s", got, want)
	}
}

func TestCalendarIntervalValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		s     schedule.CalendarInterval
		field string
	}{
		{"missing unit", schedule.CalendarInterval{Interval: 1}, "unit"},
		{"unknown unit", schedule.CalendarInterval{Unit: "FORTNIGHT", Interval: 1}, "unit"},
		{"zero interval", schedule.CalendarInterval{Unit: schedule.UnitDay}, "interval"},
		{"negative interval", schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: -1}, "interval"},
		{"interval beyond 32 bits", schedule.CalendarInterval{Unit: schedule.UnitSecond, Interval: 1 << 40}, "interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantField(t, tt.s.Validate(), tt.field)
		})
	}
	_, err := schedule.NewCalendarInterval(schedule.UnitDay, 1, "Mars/Olympus_Mons")
	wantField(t, err, "time_zone")
	if s, err := schedule.NewCalendarInterval(schedule.UnitDay, 1, ""); err != nil || s.Location != time.UTC {
		t.Errorf("NewCalendarInterval with no zone = %v, %v; want UTC", s, err)
	}
}

func TestCalendarIntervalMisfire(t *testing.T) {
	t.Parallel()
	now := at(t, "2024-06-12T10:00:00Z")
	tests := []struct {
		name string
		m    schedule.MisfireInstruction
		end  string
		want []string
	}{
		{name: "ignore", m: schedule.MisfireIgnore, want: []string{"2024-06-10T09:00:00Z", "2024-06-11T09:00:00Z"}},
		{name: "do nothing", m: schedule.MisfireDoNothing, want: []string{"2024-06-13T09:00:00Z", "2024-06-14T09:00:00Z"}},
		{name: "fire once now", m: schedule.MisfireFireOnceNow, want: []string{"2024-06-12T10:00:00Z", "2024-06-13T09:00:00Z"}},
		{name: "smart policy", m: schedule.MisfireSmartPolicy, want: []string{"2024-06-12T10:00:00Z", "2024-06-13T09:00:00Z"}},
		// chime completes the trigger; Quartz would fire once after the end.
		{name: "fire once now after the end", m: schedule.MisfireFireOnceNow, end: "2024-06-11T12:00:00Z", want: nil},
		{name: "fire once now at the end", m: schedule.MisfireFireOnceNow, end: "2024-06-12T10:00:00Z", want: nil},
		{name: "do nothing after the end", m: schedule.MisfireDoNothing, end: "2024-06-11T12:00:00Z", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := schedule.Trigger{
				Schedule:           &schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: 1},
				StartTime:          at(t, "2024-06-01T09:00:00Z"),
				MisfireInstruction: tt.m,
				NextFireTime:       at(t, "2024-06-10T09:00:00Z"),
				PreviousFireTime:   at(t, "2024-06-09T09:00:00Z"),
				TimesTriggered:     9,
			}
			if tt.end != "" {
				tr.EndTime = at(t, tt.end)
			}
			tr.UpdateAfterMisfire(now, nil)
			if d := diffTimes(times(t, tt.want...), tr.Upcoming(nil, 2)); d != "" {
				t.Errorf("upcoming %s", d)
			}
		})
	}
}
