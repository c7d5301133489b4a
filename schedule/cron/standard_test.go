package cron

import (
	"errors"
	"testing"
	"time"
)

// TestStandardMapsToQuartz checks that a standard expression fires exactly
// when its Quartz counterpart does, where the two dialects agree.
func TestStandardMapsToQuartz(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		standard string
		quartz   string
	}{
		{"every minute", "* * * * *", "0 * * * * ?"},
		{"every 5 minutes", "*/5 * * * *", "0 */5 * * * ?"},
		{"weekdays", "30 9 * * 1-5", "0 30 9 ? * MON-FRI"},
		{"sunday as 0", "0 0 * * 0", "0 0 0 ? * SUN"},
		{"sunday as 7", "0 0 * * 7", "0 0 0 ? * SUN"},
		{"range ending on 7", "0 0 * * 5-7", "0 0 0 ? * FRI-SUN"},
		{"wrapping days", "0 0 * * FRI-MON", "0 0 0 ? * FRI-MON"},
		{"7-1 is Sunday and Monday", "0 0 * * 7-1", "0 0 0 ? * SUN-MON"},
		{"day-of-week step", "0 0 * * */2", "0 0 0 ? * SUN,TUE,THU,SAT"},
		{"days of month", "15 10 1,15 * *", "0 15 10 1,15 * ?"},
		{"months by name", "0 12 1 jan-mar *", "0 0 12 1 JAN-MAR ?"},
		{"question mark means star", "0 12 ? * MON", "0 0 12 ? * MON"},
		{"descriptor yearly", "@yearly", "0 0 0 1 1 ?"},
		{"descriptor annually", "@annually", "0 0 0 1 1 ?"},
		{"descriptor monthly", "@monthly", "0 0 0 1 * ?"},
		{"descriptor weekly", "@weekly", "0 0 0 ? * SUN"},
		{"descriptor daily", "@daily", "0 0 0 * * ?"},
		{"descriptor midnight", "@midnight", "0 0 0 * * ?"},
		{"descriptor hourly", "@hourly", "0 0 * * * ?"},
	}
	ny := mustLoad(t, "America/New_York")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := ParseStandard(tt.standard)
			if err != nil {
				t.Fatalf("ParseStandard(%q): %v", tt.standard, err)
			}
			q, err := ParseQuartz(tt.quartz)
			if err != nil {
				t.Fatalf("ParseQuartz(%q): %v", tt.quartz, err)
			}
			for _, after := range []time.Time{
				time.Date(2024, 2, 27, 13, 7, 0, 0, time.UTC),
				time.Date(2024, 11, 2, 23, 59, 0, 0, ny),
			} {
				got, want := s.NextN(after, 20), q.NextN(after, 20)
				if len(got) != len(want) {
					t.Fatalf("got %d fire times, want %d", len(got), len(want))
				}
				for i := range want {
					if !got[i].Equal(want[i]) {
						t.Fatalf("fire %d after %s = %s, want %s", i, after, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestStandardDayFields checks Vixie's rule: both day fields restricted
// means either may match; a field starting with '*' means both must.
func TestStandardDayFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
		want []string // dates of the first fire times from 2024-01-01
	}{
		{"OR when both are restricted", "0 0 1,15 * MON",
			[]string{"2024-01-01", "2024-01-08", "2024-01-15", "2024-01-22", "2024-01-29", "2024-02-01"}},
		{"AND when day-of-month starts with star", "0 0 */2 * MON",
			[]string{"2024-01-01", "2024-01-15", "2024-01-29", "2024-02-05", "2024-02-19"}},
		{"AND when day-of-week starts with star", "0 0 13 * */3",
			[]string{"2024-01-13", "2024-03-13", "2024-04-13"}},
		{"only day-of-month", "0 0 13 * *",
			[]string{"2024-01-13", "2024-02-13"}},
		{"only day-of-week", "0 0 * * SAT",
			[]string{"2024-01-06", "2024-01-13"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := ParseStandard(tt.expr)
			if err != nil {
				t.Fatalf("ParseStandard(%q): %v", tt.expr, err)
			}
			got := e.NextN(time.Date(2023, 12, 31, 23, 0, 0, 0, time.UTC), len(tt.want))
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %d fire times", got, len(tt.want))
			}
			for i, w := range tt.want {
				if d := got[i].Format(time.DateOnly); d != w {
					t.Errorf("fire %d on %s, want %s", i, d, w)
				}
			}
		})
	}
}

func TestStandardRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		expr  string
		field string
	}{
		{"Quartz L", "0 0 L * *", "day-of-month"},
		{"Quartz W", "0 0 15W * *", "day-of-month"},
		{"Quartz #", "0 0 * * 5#3", "day-of-week"},
		{"day of week 8", "0 0 * * 8", "day-of-week"},
		{"minute 60", "60 * * * *", "minute"},
		{"zero step", "*/0 * * * *", "minute"},
		{"six fields", "0 0 0 * * *", ""},
		{"every without a duration", "@every", ""},
		{"every below a second", "@every 500ms", ""},
		{"every with fractions", "@every 1500ms", ""},
		{"every negative", "@every -5s", ""},
		{"every junk", "@every soon", ""},
		{"descriptor with extra text", "@daily now", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := ParseStandard(tt.expr)
			if err == nil {
				t.Fatalf("ParseStandard(%q) = %q, want an error", tt.expr, e)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Field != tt.field {
				t.Errorf("field = %q, want %q (%v)", pe.Field, tt.field, err)
			}
		})
	}
}

func TestEvery(t *testing.T) {
	t.Parallel()
	e, err := Parse("@every 1h30m")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.String(), "@every 1h30m0s"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	ny := mustLoad(t, "America/New_York")
	after := time.Date(2024, 5, 1, 10, 20, 30, 999e6, ny)
	got := e.NextN(after, 2)
	want := []time.Time{time.Date(2024, 5, 1, 11, 50, 30, 0, ny), time.Date(2024, 5, 1, 13, 20, 30, 0, ny)}
	for i := range want {
		if i >= len(got) || !got[i].Equal(want[i]) || got[i].Location() != ny {
			t.Fatalf("NextN = %v, want %v in %v", got, want, ny)
		}
	}
	if end := e.Next(time.Date(MaxYear, 12, 31, 23, 0, 0, 0, time.UTC)); !end.IsZero() {
		t.Errorf("Next past %d = %s, want the zero time", MaxYear, end)
	}
}
