package calendar

import (
	"slices"
	"testing"
	"time"
)

func TestMonthly(t *testing.T) {
	t.Parallel()
	cal, err := NewMonthly(time.UTC, 31, 29, 30)
	if err != nil {
		t.Fatal(err)
	}
	checkProbes(t, cal, []probe{
		{"2024-01-28T23:59:59.999Z", true},
		{"2024-01-29T00:00:00Z", false},
		{"2024-01-31T23:59:59.999Z", false},
		{"2024-02-01T00:00:00Z", true},
		{"2024-02-29T12:00:00Z", false},
		{"2024-04-30T12:00:00Z", false},
	})
	tests := []struct {
		name, from, want string
	}{
		{"included", "2024-02-28T10:00:00Z", "2024-02-28T10:00:00Z"},
		{"three excluded days in January", "2024-01-29T10:00:00Z", "2024-02-01T00:00:00Z"},
		{"leap day", "2024-02-29T10:00:00Z", "2024-03-01T00:00:00Z"},
		{"thirty-day month", "2024-04-29T10:00:00Z", "2024-05-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkNextIncluded(t, cal, tt.from, tt.want)
		})
	}
	if got := cal.Days(); !slices.Equal(got, []int{29, 30, 31}) {
		t.Errorf("Days() = %v, want [29 30 31]", got)
	}
}

func TestMonthlyOnlyThe31st(t *testing.T) {
	t.Parallel()
	var days []int
	for d := 1; d <= 30; d++ {
		days = append(days, d)
	}
	cal, err := NewMonthly(loadLocation(t, "Europe/Paris"), days...)
	if err != nil {
		t.Fatal(err)
	}
	// Only the 31st is included: after 2024-01-31 comes 2024-03-31.
	checkNextIncluded(t, cal, "2024-02-01T12:00:00Z", "2024-03-30T23:00:00Z")
}

func TestNewMonthlyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		loc   *time.Location
		days  []int
		field string
	}{
		{"no time zone", nil, nil, "tz"},
		{"day 0", time.UTC, []int{0}, "excludedDaysOfMonth[0]"},
		{"day 32", time.UTC, []int{1, 32}, "excludedDaysOfMonth[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewMonthly(tt.loc, tt.days...)
			checkFieldError(t, err, tt.field)
		})
	}
}
