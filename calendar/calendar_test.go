package calendar

import (
	"math/rand/v2"
	"testing"
	"time"
)

// loadLocation loads an IANA zone or fails the test.
func loadLocation(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loc
}

// instant parses an RFC 3339 instant or panics.
func instant(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// probe is an instant and whether the calendar under test includes it.
type probe struct {
	at       string
	included bool
}

// checkProbes compares Includes with each probe.
func checkProbes(t *testing.T, cal Calendar, probes []probe) {
	t.Helper()
	for _, p := range probes {
		if got := cal.Includes(instant(p.at)); got != p.included {
			t.Errorf("Includes(%s) = %v, want %v", p.at, got, p.included)
		}
	}
}

// checkNextIncluded checks NextIncluded(from) against want (empty: none)
// and that it is consistent with Includes: the answer is included, and
// every instant sampled between from and the answer is excluded.
func checkNextIncluded(t *testing.T, cal Calendar, from, want string) {
	t.Helper()
	start := instant(from)
	got := cal.NextIncluded(start)
	if want == "" {
		if !got.IsZero() {
			t.Errorf("NextIncluded(%s) = %s, want none", from, got.UTC().Format(time.RFC3339Nano))
		}
		return
	}
	if !got.Equal(instant(want)) {
		t.Errorf("NextIncluded(%s) = %s, want %s", from, got.UTC().Format(time.RFC3339Nano), want)
		return
	}
	checkGapExcluded(t, cal, start, got)
}

// checkGapExcluded checks that got is included, and that sampled instants
// in [from, got) are not.
func checkGapExcluded(t *testing.T, cal Calendar, from, got time.Time) {
	t.Helper()
	if !cal.Includes(got) {
		t.Errorf("NextIncluded(%s) = %s, which Includes rejects", from.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano))
	}
	gap := got.Sub(from)
	if gap <= 0 {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(from.UnixNano()), 7))
	samples := []time.Time{from, got.Add(-time.Millisecond)}
	for range 200 {
		samples = append(samples, from.Add(time.Duration(rng.Int64N(int64(gap)))))
	}
	for _, s := range samples {
		if !s.Before(from) && s.Before(got) && cal.Includes(s) {
			t.Errorf("NextIncluded(%s) = %s skips included instant %s", from.Format(time.RFC3339Nano),
				got.Format(time.RFC3339Nano), s.Format(time.RFC3339Nano))
			return
		}
	}
}

func TestChain(t *testing.T) {
	t.Parallel()
	ny := loadLocation(t, "America/New_York")
	holiday, err := NewHoliday(ny, Date{2024, time.July, 4}, Date{2024, time.July, 5})
	if err != nil {
		t.Fatal(err)
	}
	weekend, err := NewWeekly(ny, time.Saturday, time.Sunday)
	if err != nil {
		t.Fatal(err)
	}
	office, err := NewDaily(ny, 9*time.Hour, 17*time.Hour, true)
	if err != nil {
		t.Fatal(err)
	}
	cal := office.WithBase(weekend.WithBase(holiday))

	t.Run("includes", func(t *testing.T) {
		t.Parallel()
		checkProbes(t, cal, []probe{
			{"2024-07-03T13:00:00Z", true},  // Wednesday 09:00
			{"2024-07-03T12:59:59Z", false}, // Wednesday 08:59:59
			{"2024-07-04T15:00:00Z", false}, // holiday
			{"2024-07-05T15:00:00Z", false}, // holiday
			{"2024-07-06T15:00:00Z", false}, // Saturday
			{"2024-07-08T15:00:00Z", true},  // Monday
			{"2024-07-08T21:00:00Z", true},  // Monday 17:00:00.000
			{"2024-07-08T21:00:00.001Z", false},
		})
	})
	t.Run("base alone", func(t *testing.T) {
		t.Parallel()
		if cal.Base() == nil || cal.Base().Base() == nil || cal.Base().Base().Base() != nil {
			t.Fatalf("chain has the wrong shape")
		}
		if !cal.Base().Includes(instant("2024-07-03T02:00:00Z")) {
			t.Errorf("weekly base excludes a Tuesday night")
		}
	})
	t.Run("next included", func(t *testing.T) {
		t.Parallel()
		checkNextIncluded(t, cal, "2024-07-03T21:00:00.001Z", "2024-07-08T13:00:00Z")
		checkNextIncluded(t, cal, "2024-07-03T14:00:00Z", "2024-07-03T14:00:00Z")
		checkNextIncluded(t, cal, "2024-07-01T00:00:00Z", "2024-07-01T13:00:00Z")
	})
	t.Run("WithBase copies", func(t *testing.T) {
		t.Parallel()
		if office.Base() != nil {
			t.Errorf("WithBase changed the receiver")
		}
	})
}

// foreign is a Calendar from outside the package: it excludes the first
// half of every UTC hour.
type foreign struct{}

func (foreign) Includes(t time.Time) bool { return t.UTC().Minute() >= 30 }
func (foreign) NextIncluded(t time.Time) time.Time {
	if t.UTC().Minute() >= 30 {
		return t
	}
	return t.UTC().Truncate(time.Hour).Add(30 * time.Minute)
}
func (foreign) Description() string { return "second half of each hour" }
func (foreign) Base() Calendar      { return nil }

func TestChainWithForeignBase(t *testing.T) {
	t.Parallel()
	weekly, err := NewWeekly(time.UTC, time.Monday)
	if err != nil {
		t.Fatal(err)
	}
	cal := weekly.WithBase(foreign{})
	checkProbes(t, cal, []probe{
		{"2024-01-02T10:29:59Z", false},
		{"2024-01-02T10:30:00Z", true},
		{"2024-01-01T10:30:00Z", false},
	})
	checkNextIncluded(t, cal, "2024-01-01T10:00:00Z", "2024-01-02T00:30:00Z")
	if _, err := Marshal(cal); err == nil {
		t.Errorf("Marshal of a chain with a foreign calendar succeeded")
	}
}

// TestNextIncludedTerminates checks chains that exclude every instant:
// NextIncluded must answer "none" instead of searching forever.
func TestNextIncludedTerminates(t *testing.T) {
	t.Parallel()
	mustDaily := func(start, end time.Duration, invert bool) *Daily {
		d, err := NewDaily(loadLocation(t, "Europe/Berlin"), start, end, invert)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	allWeek, err := NewWeekly(time.UTC, time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday)
	if err != nil {
		t.Fatal(err)
	}
	weekdays, err := NewWeekly(time.UTC, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday)
	if err != nil {
		t.Fatal(err)
	}
	weekends, err := NewWeekly(time.UTC, time.Saturday, time.Sunday)
	if err != nil {
		t.Fatal(err)
	}
	var days []int
	for d := 1; d <= 31; d++ {
		days = append(days, d)
	}
	allMonth, err := NewMonthly(time.UTC, days...)
	if err != nil {
		t.Fatal(err)
	}
	var yearDays []MonthDay
	for d := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == 2000; d = d.AddDate(0, 0, 1) {
		yearDays = append(yearDays, MonthDay{d.Month(), d.Day()})
	}
	allYear, err := NewAnnual(time.UTC, yearDays...)
	if err != nil {
		t.Fatal(err)
	}
	allCron, err := NewCron(time.UTC, "* * * ? * *")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cal  Calendar
	}{
		{"weekly excluding all seven days", allWeek},
		{"monthly excluding all 31 days", allMonth},
		{"annual excluding all 366 days", allYear},
		{"daily excluding the whole day", mustDaily(0, day-time.Millisecond, false)},
		{"weekdays then weekends", weekdays.WithBase(weekends)},
		{"inverted daily inside a wider excluded range", mustDaily(9*time.Hour, 17*time.Hour, true).WithBase(mustDaily(8*time.Hour, 18*time.Hour, false))},
		{"cron matching every second", allCron},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			from := instant("2024-06-01T12:00:00Z")
			if tt.cal.Includes(from) {
				t.Errorf("Includes(%s) = true for a calendar that excludes everything", from)
			}
			if got := tt.cal.NextIncluded(from); !got.IsZero() {
				t.Errorf("NextIncluded = %s, want none", got)
			}
		})
	}
}

func TestNextIncludedAtHorizon(t *testing.T) {
	t.Parallel()
	lastDay := Horizon.Add(-time.Hour)
	weekly, err := NewWeekly(time.UTC, lastDay.Weekday(), (lastDay.Weekday()+6)%7)
	if err != nil {
		t.Fatal(err)
	}
	if got := weekly.NextIncluded(lastDay); !got.IsZero() {
		t.Errorf("NextIncluded an hour before the horizon = %s, want none", got)
	}
	checkNextIncluded(t, weekly, "2199-12-29T12:00:00Z", "2199-12-29T12:00:00Z")
	checkNextIncluded(t, weekly, "2199-12-30T12:00:00Z", "")
}

// BenchmarkNextIncluded measures NextIncluded on a realistic office-hours
// chain, and on a cron calendar excluding weekdays.
func BenchmarkNextIncluded(b *testing.B) {
	ny := loadLocation(b, "America/New_York")
	holiday, _ := NewHoliday(ny, Date{2024, time.December, 25}, Date{2025, time.January, 1})
	weekend, _ := NewWeekly(ny, time.Saturday, time.Sunday)
	office, _ := NewDaily(ny, 9*time.Hour, 17*time.Hour, true)
	chain := office.WithBase(weekend.WithBase(holiday))
	weekdays, err := NewCron(ny, "* * * ? * MON-FRI")
	if err != nil {
		b.Fatal(err)
	}
	start := instant("2024-12-20T22:00:00Z")
	b.Run("office hours chain", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if chain.NextIncluded(start.Add(time.Duration(i%500) * time.Hour)).IsZero() {
				b.Fatal("no included instant")
			}
		}
	})
	b.Run("cron weekdays", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if weekdays.NextIncluded(start.Add(time.Duration(i%500) * time.Hour)).IsZero() {
				b.Fatal("no included instant")
			}
		}
	})
}
