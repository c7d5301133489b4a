package calendar

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestHoliday(t *testing.T) {
	t.Parallel()
	ny := loadLocation(t, "America/New_York")
	// 2024-03-10 is the spring-forward day in New York: 23 hours long.
	cal, err := NewHoliday(ny, Date{2024, time.March, 10}, Date{2024, time.July, 4}, Date{2024, time.March, 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("includes", func(t *testing.T) {
		t.Parallel()
		checkProbes(t, cal, []probe{
			{"2024-03-10T04:59:59.999Z", true},  // 03-09 23:59:59.999 EST
			{"2024-03-10T05:00:00Z", false},     // 03-10 00:00 EST
			{"2024-03-10T06:59:59.999Z", false}, // 01:59:59.999 EST
			{"2024-03-10T07:00:00Z", false},     // 03:00 EDT
			{"2024-03-11T03:59:59.999Z", false}, // 23:59:59.999 EDT
			{"2024-03-11T04:00:00Z", true},      // 03-11 00:00 EDT
			{"2024-07-04T03:59:59.999Z", true},
			{"2024-07-04T04:00:00Z", false},
			{"2025-07-04T12:00:00Z", true}, // only 2024's date is a holiday
		})
	})
	tests := []struct {
		name, from, want string
	}{
		{"included instant is its own answer", "2024-03-09T12:00:00.123Z", "2024-03-09T12:00:00.123Z"},
		{"holiday on a spring-forward day ends after 23 hours", "2024-03-10T05:00:00Z", "2024-03-11T04:00:00Z"},
		{"last millisecond of the holiday", "2024-03-11T03:59:59.999Z", "2024-03-11T04:00:00Z"},
		{"summer holiday", "2024-07-04T20:00:00Z", "2024-07-05T04:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkNextIncluded(t, cal, tt.from, tt.want)
		})
	}
	t.Run("dates are sorted and distinct", func(t *testing.T) {
		t.Parallel()
		want := []Date{{2024, time.March, 10}, {2024, time.July, 4}}
		if got := cal.Dates(); !slices.Equal(got, want) {
			t.Errorf("Dates() = %v, want %v", got, want)
		}
	})
}

func TestHolidayConsecutiveDates(t *testing.T) {
	t.Parallel()
	var dates []Date
	for d := time.Date(2024, 12, 20, 0, 0, 0, 0, time.UTC); d.Month() == time.December; d = d.AddDate(0, 0, 1) {
		dates = append(dates, DateOf(d))
	}
	cal, err := NewHoliday(loadLocation(t, "Europe/London"), dates...)
	if err != nil {
		t.Fatal(err)
	}
	checkNextIncluded(t, cal, "2024-12-20T09:00:00Z", "2025-01-01T00:00:00Z")
}

func TestNewHolidayErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		loc   *time.Location
		dates []Date
		field string
	}{
		{"no time zone", nil, nil, "tz"},
		{"February 30", time.UTC, []Date{{2024, time.January, 1}, {2024, time.February, 30}}, "excludedDates[1]"},
		{"29 February in a common year", time.UTC, []Date{{2025, time.February, 29}}, "excludedDates[0]"},
		{"month 13", time.UTC, []Date{{2024, 13, 1}}, "excludedDates[0]"},
		{"day 0", time.UTC, []Date{{2024, time.May, 0}}, "excludedDates[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewHoliday(tt.loc, tt.dates...)
			checkFieldError(t, err, tt.field)
		})
	}
}

// checkFieldError checks that err is a *FieldError for field that matches
// ErrInvalid.
func checkFieldError(t *testing.T, err error, field string) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v, want a *FieldError for %s", err, field)
	}
	if fe.Field != field {
		t.Errorf("error %q names field %q, want %q", err, fe.Field, field)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
	}
}

func TestParseDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Date
		wantErr bool
	}{
		{"2024-02-29", Date{2024, time.February, 29}, false},
		{"2025-02-29", Date{}, true},
		{"2024-2-1", Date{}, true},
		{"24-02-01", Date{}, true},
		{"", Date{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseDate(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseDate(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
