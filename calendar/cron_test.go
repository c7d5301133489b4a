package calendar

import (
	"math/rand/v2"
	"testing"
	"time"
)

// mustCron builds a cron calendar or fails the test.
func mustCron(t testing.TB, zone, expr string) *Cron {
	t.Helper()
	cal, err := NewCron(loadLocation(t, zone), expr)
	if err != nil {
		t.Fatal(err)
	}
	return cal
}

func TestCronIncludes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cal    *Cron
		probes []probe
	}{
		{
			name: "early hours",
			cal:  mustCron(t, "UTC", "* * 0-5 ? * *"),
			probes: []probe{
				{"2023-12-31T23:59:59.999Z", true},
				{"2024-01-01T00:00:00Z", false},
				{"2024-01-01T05:59:59.999Z", false},
				{"2024-01-01T06:00:00Z", true},
			},
		},
		{
			name: "a whole second is excluded, milliseconds included",
			cal:  mustCron(t, "UTC", "0 0 12 ? * *"),
			probes: []probe{
				{"2024-01-01T11:59:59.999Z", true},
				{"2024-01-01T12:00:00Z", false},
				{"2024-01-01T12:00:00.999Z", false},
				{"2024-01-01T12:00:01Z", true},
			},
		},
		{
			name: "hour 2 does not exist on a spring-forward day",
			cal:  mustCron(t, "America/New_York", "* * 2 ? * *"),
			probes: []probe{
				{"2024-03-09T07:00:00Z", false},
				{"2024-03-10T06:59:59.999Z", true},
				{"2024-03-10T07:00:00Z", true},
				{"2024-03-11T06:00:00Z", false},
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

func TestCronNextIncluded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, zone, expr, from, want string
	}{
		{"included", "UTC", "* * 0-5 ? * *", "2024-01-01T07:00:00.250Z", "2024-01-01T07:00:00.250Z"},
		{"end of an excluded block of hours", "UTC", "* * 0-5 ? * *", "2024-01-01T00:00:00.500Z", "2024-01-01T06:00:00Z"},
		{"one excluded second", "UTC", "0 0 12 ? * *", "2024-01-01T12:00:00.250Z", "2024-01-01T12:00:01Z"},
		{"weekdays excluded", "Europe/Berlin", "* * * ? * MON-FRI", "2024-03-25T10:00:00Z", "2024-03-29T23:00:00Z"},
		{"even seconds excluded", "UTC", "*/2 * * ? * *", "2024-01-01T00:00:10Z", "2024-01-01T00:00:11Z"},
		{"all but the last second of each minute", "UTC", "0-58 * * ? * *", "2024-01-01T00:00:10Z", "2024-01-01T00:00:59Z"},
		{"office hours across the spring-forward night", "America/New_York", "* * 0-8 ? * *", "2024-03-10T05:00:00Z", "2024-03-10T13:00:00Z"},
		// Like Quartz, a repeated wall time matches only at its second
		// occurrence: 01:00 EDT is included, 01:00 EST is not.
		{"night hours into the fall-back night", "America/New_York", "* * 0-3 ? * *", "2024-11-03T04:30:00Z", "2024-11-03T05:00:00Z"},
		{"night hours after the repeated hour", "America/New_York", "* * 0-3 ? * *", "2024-11-03T06:00:00Z", "2024-11-03T09:00:00Z"},
		{"first minute of each hour", "Australia/Lord_Howe", "* 0 * ? * *", "2024-10-05T14:30:30Z", "2024-10-05T14:31:00Z"},
		{"only in 2024", "UTC", "* * * * * ? 2024", "2024-06-01T00:00:00Z", "2025-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkNextIncluded(t, mustCron(t, tt.zone, tt.expr), tt.from, tt.want)
		})
	}
}

// TestCronNextIncludedMatchesScan compares NextIncluded with a second by
// second scan, from random instants around DST changes.
func TestCronNextIncludedMatchesScan(t *testing.T) {
	t.Parallel()
	exprs := []string{
		"* * 0-5 ? * *",
		"* * 1-2 ? * *",
		"* 0-29 * ? * *",
		"0-29 * * ? * *",
		"* 0-30 1 ? * *",
		"*/2 0-10 * ? * *",
		"* * 22-23 ? * SAT,SUN",
	}
	zones := []struct {
		name string
		from string
	}{
		{"America/New_York", "2024-03-09T12:00:00Z"},
		{"America/New_York", "2024-11-02T12:00:00Z"},
		{"Australia/Lord_Howe", "2024-04-06T06:00:00Z"},
		{"Australia/Lord_Howe", "2024-10-05T06:00:00Z"},
		{"UTC", "2024-01-01T00:00:00Z"},
	}
	for _, expr := range exprs {
		for _, z := range zones {
			t.Run(expr+" in "+z.name+" from "+z.from, func(t *testing.T) {
				t.Parallel()
				cal := mustCron(t, z.name, expr)
				rng := rand.New(rand.NewPCG(uint64(len(expr)), uint64(len(z.name))))
				for range 20 {
					from := instant(z.from).Add(time.Duration(rng.Int64N(int64(36 * time.Hour))))
					want := scanNextIncluded(cal, from, 3*24*time.Hour)
					got := cal.NextIncluded(from)
					if !got.Equal(want) {
						t.Errorf("NextIncluded(%s) = %s, scan finds %s", from.Format(time.RFC3339Nano),
							got.UTC().Format(time.RFC3339Nano), want.UTC().Format(time.RFC3339Nano))
					}
				}
			})
		}
	}
}

// scanNextIncluded finds the next included instant by testing every second,
// within limit of from.
func scanNextIncluded(cal Calendar, from time.Time, limit time.Duration) time.Time {
	if cal.Includes(from) {
		return from
	}
	for u := from.Truncate(time.Second).Add(time.Second); u.Sub(from) < limit; u = u.Add(time.Second) {
		if cal.Includes(u) {
			return u
		}
	}
	return time.Time{}
}

func TestNewCronErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		loc   *time.Location
		expr  string
		field string
	}{
		{"no time zone", nil, "* * * ? * *", "tz"},
		{"empty expression", time.UTC, "", "expr"},
		{"junk", time.UTC, "* * * ? * MON!", "expr"},
		{"too few fields", time.UTC, "* * *", "expr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewCron(tt.loc, tt.expr)
			checkFieldError(t, err, tt.field)
		})
	}
}
