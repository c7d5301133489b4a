package calendar

import (
	"slices"
	"testing"
	"time"
)

func TestAnnual(t *testing.T) {
	t.Parallel()
	cal, err := NewAnnual(loadLocation(t, "Europe/London"),
		MonthDay{time.December, 25}, MonthDay{time.December, 26}, MonthDay{time.January, 1}, MonthDay{time.February, 29})
	if err != nil {
		t.Fatal(err)
	}
	checkProbes(t, cal, []probe{
		{"2024-02-28T23:59:59.999Z", true},
		{"2024-02-29T00:00:00Z", false},
		{"2024-03-01T00:00:00Z", true},
		{"2025-02-28T23:59:59.999Z", true},
		{"2025-03-01T00:00:00Z", true},
		{"2030-12-25T12:00:00Z", false},
		{"2031-01-01T00:00:00Z", false},
	})
	tests := []struct {
		name, from, want string
	}{
		{"included", "2024-02-28T10:00:00Z", "2024-02-28T10:00:00Z"},
		{"leap day", "2024-02-29T10:00:00Z", "2024-03-01T00:00:00Z"},
		{"Christmas to the new year", "2024-12-25T10:00:00Z", "2024-12-27T00:00:00Z"},
		{"new year", "2025-01-01T00:00:00Z", "2025-01-02T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkNextIncluded(t, cal, tt.from, tt.want)
		})
	}
	want := []MonthDay{{time.January, 1}, {time.February, 29}, {time.December, 25}, {time.December, 26}}
	if got := cal.Days(); !slices.Equal(got, want) {
		t.Errorf("Days() = %v, want %v", got, want)
	}
}

func TestAnnualAcrossDST(t *testing.T) {
	t.Parallel()
	// 2024-09-29 is the spring-forward day of Pacific/Chatham (+12:45 to
	// +13:45 at 02:45).
	cal, err := NewAnnual(loadLocation(t, "Pacific/Chatham"), MonthDay{time.September, 29})
	if err != nil {
		t.Fatal(err)
	}
	checkProbes(t, cal, []probe{
		{"2024-09-28T11:14:59.999Z", true},
		{"2024-09-28T11:15:00Z", false},
		{"2024-09-29T10:14:59.999Z", false},
		{"2024-09-29T10:15:00Z", true},
	})
	checkNextIncluded(t, cal, "2024-09-28T11:15:00Z", "2024-09-29T10:15:00Z")
}

func TestAnnualOnlyLeapDay(t *testing.T) {
	t.Parallel()
	var days []MonthDay
	for d := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == 2001; d = d.AddDate(0, 0, 1) {
		days = append(days, MonthDay{d.Month(), d.Day()})
	}
	cal, err := NewAnnual(time.UTC, days...)
	if err != nil {
		t.Fatal(err)
	}
	checkNextIncluded(t, cal, "2024-03-01T00:00:00Z", "2028-02-29T00:00:00Z")
	// 2100 is not a leap year.
	checkNextIncluded(t, cal, "2096-03-01T00:00:00Z", "2104-02-29T00:00:00Z")
}

func TestNewAnnualErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		loc   *time.Location
		days  []MonthDay
		field string
	}{
		{"no time zone", nil, nil, "tz"},
		{"February 30", time.UTC, []MonthDay{{time.February, 30}}, "excludedDays[0]"},
		{"April 31", time.UTC, []MonthDay{{time.January, 1}, {time.April, 31}}, "excludedDays[1]"},
		{"month 0", time.UTC, []MonthDay{{0, 1}}, "excludedDays[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewAnnual(tt.loc, tt.days...)
			checkFieldError(t, err, tt.field)
		})
	}
}

func TestParseMonthDay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    MonthDay
		wantErr bool
	}{
		{"02-29", MonthDay{time.February, 29}, false},
		{"12-31", MonthDay{time.December, 31}, false},
		{"02-30", MonthDay{}, true},
		{"2-1", MonthDay{}, true},
		{"13-01", MonthDay{}, true},
		{"2024-01-01", MonthDay{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseMonthDay(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseMonthDay(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
