package calendar

import (
	"testing"
	"time"
)

// mustWeekly builds a weekly calendar in UTC or fails the test.
func mustWeekly(t *testing.T, days ...time.Weekday) *Weekly {
	t.Helper()
	cal, err := NewWeekly(time.UTC, days...)
	if err != nil {
		t.Fatal(err)
	}
	return cal
}

// mustDaily builds a daily calendar or fails the test.
func mustDaily(t *testing.T, zone, start, end string, invert bool) *Daily {
	t.Helper()
	s, err := ParseTimeOfDay(start)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ParseTimeOfDay(end)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := NewDaily(loadLocation(t, zone), s, e, invert)
	if err != nil {
		t.Fatal(err)
	}
	return cal
}

func TestDailyIncludes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cal    Calendar
		probes []probe
	}{
		{
			// Chime excludes only the range: unlike Quartz, the first and
			// last millisecond of the day stay included.
			name: "range excluded, day edges included",
			cal:  mustDaily(t, "UTC", "09:00:00.000", "17:00:00.000", false),
			probes: []probe{
				{"2024-01-04T00:00:00Z", true},
				{"2024-01-04T08:59:59.999Z", true},
				{"2024-01-04T09:00:00Z", false},
				{"2024-01-04T17:00:00Z", false},
				{"2024-01-04T17:00:00.001Z", true},
				{"2024-01-04T23:59:59.999Z", true},
			},
		},
		{
			// With a base of its own, a non-inverted calendar still
			// excludes only its range: the day edges are the base's to
			// decide (unlike Quartz, which excludes them too).
			name: "with a base: day edges excluded only by the base",
			cal:  mustDaily(t, "UTC", "09:00:00.000", "17:00:00.000", false).WithBase(mustDaily(t, "UTC", "23:00:00.000", "23:59:59.999", false)),
			probes: []probe{
				{"2024-01-04T00:00:00Z", true},
				{"2024-01-04T03:30:00Z", true},
				{"2024-01-04T12:00:00Z", false},
				{"2024-01-04T22:59:59.999Z", true},
				{"2024-01-04T23:59:59.999Z", false},
			},
		},
		{
			// As the base of another calendar, the same holds.
			name: "as a base: day edges included",
			cal:  mustWeekly(t, time.Sunday).WithBase(mustDaily(t, "UTC", "09:00:00.000", "17:00:00.000", false)),
			probes: []probe{
				{"2024-01-04T00:00:00Z", true},
				{"2024-01-04T12:00:00Z", false},
				{"2024-01-04T23:59:59.999Z", true},
				{"2024-01-07T12:00:00Z", false},
			},
		},
		{
			name: "inverted: only the range is included",
			cal:  mustDaily(t, "UTC", "09:00:00.000", "17:00:00.000", true),
			probes: []probe{
				{"2024-01-04T00:00:00Z", false},
				{"2024-01-04T08:59:59.999Z", false},
				{"2024-01-04T09:00:00Z", true},
				{"2024-01-04T17:00:00Z", true},
				{"2024-01-04T17:00:00.001Z", false},
			},
		},
		{
			name: "sub-millisecond instants count as their millisecond",
			cal:  mustDaily(t, "UTC", "12:00:00.000", "12:00:00.001", false),
			probes: []probe{
				{"2024-01-04T11:59:59.999999Z", true},
				{"2024-01-04T12:00:00.001999Z", false},
				{"2024-01-04T12:00:00.002Z", true},
			},
		},
		{
			// 2024-03-10: 02:30 does not exist in New York; read as 02:30 EST
			// it is 03:30 EDT.
			name: "range end in the spring-forward gap",
			cal:  mustDaily(t, "America/New_York", "01:30:00.000", "02:30:00.000", true),
			probes: []probe{
				{"2024-03-10T06:29:59.999Z", false},
				{"2024-03-10T06:30:00Z", true},
				{"2024-03-10T07:30:00Z", true},
				{"2024-03-10T07:30:00.001Z", false},
				{"2024-03-11T05:30:00Z", true},
				{"2024-03-11T06:30:00.001Z", false},
			},
		},
		{
			// 2024-11-03: 01:00-01:59 happens twice in New York; the range
			// is its second occurrence.
			name: "range in the repeated hour",
			cal:  mustDaily(t, "America/New_York", "01:00:00.000", "01:59:59.999", false),
			probes: []probe{
				{"2024-11-03T05:00:00Z", true},
				{"2024-11-03T05:59:59.999Z", true},
				{"2024-11-03T06:00:00Z", false},
				{"2024-11-03T06:59:59.999Z", false},
				{"2024-11-03T07:00:00Z", true},
			},
		},
		{
			// Lord Howe moves from +10:30 to +11 at 02:00 on 2024-10-06: the
			// range 02:00-02:30 shrinks to the transition's millisecond.
			name: "range swallowed by a half-hour gap",
			cal:  mustDaily(t, "Australia/Lord_Howe", "02:00:00.000", "02:30:00.000", false),
			probes: []probe{
				{"2024-10-05T15:29:59.999Z", true},
				{"2024-10-05T15:30:00Z", false},
				{"2024-10-05T15:30:00.001Z", true},
				{"2024-10-04T15:30:00Z", false},
				{"2024-10-04T16:00:00Z", false},
				{"2024-10-04T16:00:00.001Z", true},
			},
		},
		{
			name: "whole day excluded",
			cal:  mustDaily(t, "Asia/Kolkata", "00:00:00.000", "23:59:59.999", false),
			probes: []probe{
				{"2023-12-31T18:30:00Z", false},
				{"2024-01-01T18:29:59.999Z", false},
			},
		},
		{
			name: "whole day included when inverted",
			cal:  mustDaily(t, "Asia/Kolkata", "00:00:00.000", "23:59:59.999", true),
			probes: []probe{
				{"2023-12-31T18:30:00Z", true},
				{"2024-01-01T18:29:59.999Z", true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkProbes(t, tt.cal, tt.probes)
		})
	}
}

func TestDailyNextIncluded(t *testing.T) {
	t.Parallel()
	office := mustDaily(t, "Europe/Berlin", "09:00:00.000", "17:00:00.000", true)
	night := mustDaily(t, "Europe/Berlin", "09:00:00.000", "17:00:00.000", false)
	gap := mustDaily(t, "America/New_York", "01:30:00.000", "02:30:00.000", false)
	everyDay, err := NewWeekly(loadLocation(t, "Europe/Berlin"))
	if err != nil {
		t.Fatal(err)
	}
	chained := night.WithBase(everyDay)
	tests := []struct {
		name       string
		cal        *Daily
		from, want string
	}{
		{"inverted, before the range", office, "2024-03-29T05:00:00Z", "2024-03-29T08:00:00Z"},
		{"inverted, in the range", office, "2024-03-29T10:00:00.5Z", "2024-03-29T10:00:00.5Z"},
		{"inverted, after the range, into the DST change", office, "2024-03-30T16:00:00.001Z", "2024-03-31T07:00:00Z"},
		{"range start", night, "2024-03-29T08:00:00Z", "2024-03-29T16:00:00.001Z"},
		{"range end", night, "2024-03-29T16:00:00Z", "2024-03-29T16:00:00.001Z"},
		{"range on a spring-forward day", gap, "2024-03-10T06:45:00Z", "2024-03-10T07:30:00.001Z"},
		{"chained, the day edge is included", chained, "2024-03-29T22:59:59.999Z", "2024-03-29T22:59:59.999Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkNextIncluded(t, tt.cal, tt.from, tt.want)
		})
	}
}

func TestNewDailyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		loc        *time.Location
		start, end time.Duration
		field      string
	}{
		{"no time zone", nil, time.Hour, 2 * time.Hour, "tz"},
		{"start equals end", time.UTC, 10 * time.Hour, 10 * time.Hour, "rangeEnd"},
		{"range across midnight", time.UTC, 22 * time.Hour, 2 * time.Hour, "rangeEnd"},
		{"negative start", time.UTC, -time.Millisecond, 2 * time.Hour, "rangeStart"},
		{"end at 24:00", time.UTC, time.Hour, 24 * time.Hour, "rangeEnd"},
		{"start finer than a millisecond", time.UTC, time.Hour + time.Microsecond, 2 * time.Hour, "rangeStart"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewDaily(tt.loc, tt.start, tt.end, false)
			checkFieldError(t, err, tt.field)
		})
	}
}

func TestParseTimeOfDay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"09:00:00.000", 9 * time.Hour, false},
		{"23:59:59.999", 24*time.Hour - time.Millisecond, false},
		{"08:59:59.500", 9*time.Hour - 500*time.Millisecond, false},
		{"17:30:15", 17*time.Hour + 30*time.Minute + 15*time.Second, false},
		{"17:30", 17*time.Hour + 30*time.Minute, false},
		{"24:00:00.000", 0, true},
		{"12:60:00.000", 0, true},
		{"12:00:60.000", 0, true},
		{"9:00:00.000", 0, true},
		{"12:00:00:000", 0, true},
		{"12:00:00.0000", 0, true},
		{"+1:00:00.000", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseTimeOfDay(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseTimeOfDay(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
			if err == nil && len(tt.in) == len("15:04:05.000") && FormatTimeOfDay(got) != tt.in {
				t.Errorf("FormatTimeOfDay(%v) = %q, want %q", got, FormatTimeOfDay(got), tt.in)
			}
		})
	}
}
