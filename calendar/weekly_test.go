package calendar

import (
	"slices"
	"testing"
	"time"
)

func TestWeekly(t *testing.T) {
	t.Parallel()
	// Thursdays in Shanghai (UTC+8): 2025-01-02 is a Thursday.
	cal, err := NewWeekly(loadLocation(t, "Asia/Shanghai"), time.Thursday)
	if err != nil {
		t.Fatal(err)
	}
	checkProbes(t, cal, []probe{
		{"2025-01-01T15:59:59.999Z", true},
		{"2025-01-01T16:00:00Z", false},
		{"2025-01-02T15:59:59.999Z", false},
		{"2025-01-02T16:00:00Z", true},
	})
	tests := []struct {
		name, from, want string
	}{
		{"included", "2025-01-01T10:00:00Z", "2025-01-01T10:00:00Z"},
		{"start of the excluded day", "2025-01-01T16:00:00Z", "2025-01-02T16:00:00Z"},
		{"end of the excluded day", "2025-01-02T15:59:59.999Z", "2025-01-02T16:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkNextIncluded(t, cal, tt.from, tt.want)
		})
	}
	if got := cal.Days(); !slices.Equal(got, []time.Weekday{time.Thursday}) {
		t.Errorf("Days() = %v, want [Thursday]", got)
	}
}

func TestWeeklyAcrossDST(t *testing.T) {
	t.Parallel()
	// Every day but Monday excluded in New York; 2024-11-03 (Sunday) is the
	// fall-back day, 25 hours long.
	cal, err := NewWeekly(loadLocation(t, "America/New_York"),
		time.Sunday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday)
	if err != nil {
		t.Fatal(err)
	}
	checkNextIncluded(t, cal, "2024-10-29T12:00:00Z", "2024-11-04T05:00:00Z")
	checkNextIncluded(t, cal, "2024-03-05T12:00:00Z", "2024-03-11T04:00:00Z")
}

func TestNewWeeklyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		loc   *time.Location
		days  []time.Weekday
		field string
	}{
		{"no time zone", nil, nil, "tz"},
		{"weekday 7", time.UTC, []time.Weekday{time.Monday, 7}, "excludedDaysOfWeek[1]"},
		{"negative weekday", time.UTC, []time.Weekday{-1}, "excludedDaysOfWeek[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewWeekly(tt.loc, tt.days...)
			checkFieldError(t, err, tt.field)
		})
	}
}
