package cron

import (
	"strings"
	"testing"
	"time"
)

func mustLoad(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loc
}

func mustParse(t testing.TB, expr string) *Expression {
	t.Helper()
	e, err := Parse(expr)
	if err != nil {
		t.Fatalf("Parse(%q): %v", expr, err)
	}
	return e
}

// wall parses "2006-01-02 15:04:05" as a wall time in loc.
func wall(t testing.TB, loc *time.Location, s string) time.Time {
	t.Helper()
	v, err := time.ParseInLocation(time.DateTime, s, loc)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return v
}

// instant parses an RFC 3339 instant.
func instant(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return v
}

func TestNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		expr  string
		zone  string
		after string // RFC 3339 instant
		want  []string
	}{
		{"daily noon", "0 0 12 * * ?", "UTC", "2024-01-01T12:00:00Z",
			[]string{"2024-01-02T12:00:00Z", "2024-01-03T12:00:00Z"}},
		{"strictly after", "0 0 12 * * ?", "UTC", "2024-01-01T11:59:59.999Z",
			[]string{"2024-01-01T12:00:00Z"}},
		{"wrapping hours", "0 0 22-2 * * ?", "UTC", "2024-01-01T21:00:00Z",
			[]string{"2024-01-01T22:00:00Z", "2024-01-01T23:00:00Z", "2024-01-02T00:00:00Z", "2024-01-02T01:00:00Z", "2024-01-02T02:00:00Z", "2024-01-02T22:00:00Z"}},
		{"wrapping step", "0 0 20-4/3 * * ?", "UTC", "2024-01-01T19:00:00Z",
			[]string{"2024-01-01T20:00:00Z", "2024-01-01T23:00:00Z", "2024-01-02T02:00:00Z", "2024-01-02T20:00:00Z"}},
		{"wrapping days of week", "0 0 12 ? * FRI-MON", "UTC", "2024-01-04T00:00:00Z",
			[]string{"2024-01-05T12:00:00Z", "2024-01-06T12:00:00Z", "2024-01-07T12:00:00Z", "2024-01-08T12:00:00Z", "2024-01-12T12:00:00Z"}},
		{"last day", "0 0 12 L * ?", "UTC", "2024-01-31T12:00:00Z",
			[]string{"2024-02-29T12:00:00Z", "2024-03-31T12:00:00Z"}},
		{"last day minus 30 only in long months", "0 0 12 L-30 * ?", "UTC", "2024-01-01T00:00:00Z",
			[]string{"2024-01-01T12:00:00Z", "2024-03-01T12:00:00Z", "2024-05-01T12:00:00Z"}},
		{"last weekday", "0 0 12 LW * ?", "UTC", "2024-03-01T00:00:00Z",
			[]string{"2024-03-29T12:00:00Z", "2024-04-30T12:00:00Z", "2024-05-31T12:00:00Z", "2024-06-28T12:00:00Z"}},
		{"nearest weekday of a Saturday 1st is Monday 3rd", "0 0 12 1W * ?", "UTC", "2024-06-01T00:00:00Z",
			[]string{"2024-06-03T12:00:00Z", "2024-07-01T12:00:00Z"}},
		{"nearest weekday of a Sunday 15th", "0 0 12 15W * ?", "UTC", "2024-09-01T00:00:00Z",
			[]string{"2024-09-16T12:00:00Z", "2024-10-15T12:00:00Z"}},
		{"31W does not fire in 30-day months", "0 0 12 31W * ?", "UTC", "2024-04-01T00:00:00Z",
			[]string{"2024-05-31T12:00:00Z", "2024-07-31T12:00:00Z"}},
		{"29W skips a common-year February", "0 0 12 29W 2 ?", "UTC", "2025-01-01T00:00:00Z",
			[]string{"2028-02-29T12:00:00Z"}},
		{"third Friday", "0 0 10 ? * 6#3", "UTC", "2024-01-01T00:00:00Z",
			[]string{"2024-01-19T10:00:00Z", "2024-02-16T10:00:00Z"}},
		{"fifth Monday skips short months", "0 0 10 ? * 2#5", "UTC", "2024-01-01T00:00:00Z",
			[]string{"2024-01-29T10:00:00Z", "2024-04-29T10:00:00Z", "2024-07-29T10:00:00Z"}},
		{"last Friday", "0 0 12 ? * 6L", "UTC", "2024-01-01T00:00:00Z",
			[]string{"2024-01-26T12:00:00Z", "2024-02-23T12:00:00Z"}},
		{"lone L is Saturday", "0 0 12 ? * L", "UTC", "2024-01-01T00:00:00Z",
			[]string{"2024-01-06T12:00:00Z", "2024-01-13T12:00:00Z"}},
		{"leap day", "0 0 0 29 2 ?", "UTC", "2024-03-01T00:00:00Z",
			[]string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		{"years", "0 0 0 1 1 ? 2024/2", "UTC", "2024-01-01T00:00:00Z",
			[]string{"2026-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{"no 2124 horizon", "0 0 0 1 1 ? 2150,2199", "UTC", "2024-01-01T00:00:00Z",
			[]string{"2150-01-01T00:00:00Z", "2199-01-01T00:00:00Z"}},
		{"ends at 2199", "0 0 0 31 12 ?", "UTC", "2198-06-01T00:00:00Z",
			[]string{"2198-12-31T00:00:00Z", "2199-12-31T00:00:00Z"}},
		{"February 30 never fires", "0 0 0 30 2 ?", "UTC", "2024-01-01T00:00:00Z", nil},
		{"31st of short months never fires", "0 0 12 31 4,6,9,11 ?", "UTC", "2024-01-01T00:00:00Z", nil},
		{"year list in the past", "0 0 12 * * ? 2023", "UTC", "2024-01-01T00:00:00Z", nil},
		{"before 1970", "0 0 0 1 1 ?", "UTC", "1960-05-01T00:00:00Z",
			[]string{"1970-01-01T00:00:00Z"}},
		{"evaluated in the zone of the argument", "0 0 0 * * ?", "Europe/Berlin", "2024-12-31T23:59:59Z",
			[]string{"2025-01-01T23:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := mustParse(t, tt.expr)
			loc := mustLoad(t, tt.zone)
			got := e.NextN(instant(t, tt.after).In(loc), len(tt.want)+1)
			if len(tt.want) == 0 {
				if len(got) != 0 {
					t.Fatalf("got %v, want no fire time", got)
				}
				return
			}
			if len(got) < len(tt.want) {
				t.Fatalf("got %d fire times %v, want at least %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				if !got[i].Equal(instant(t, w)) {
					t.Errorf("fire %d = %s, want %s", i, got[i].UTC().Format(time.RFC3339), w)
				}
				if got[i].Location() != loc {
					t.Errorf("fire %d is in %v, want %v", i, got[i].Location(), loc)
				}
			}
		})
	}
}

// TestNextIgnoresMilliseconds covers README difference 3: W and LW give
// the same answer from an instant with milliseconds as from its second.
func TestNextIgnoresMilliseconds(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"0 0 12 LW * ?", "0 0 12 15W * ?", "0 0 12 L-3W * ?", "* * * * * ?"} {
		t.Run(expr, func(t *testing.T) {
			t.Parallel()
			e := mustParse(t, expr)
			for _, base := range []string{"2024-03-29T11:59:59Z", "2024-03-15T12:00:00Z", "2024-03-26T12:00:00Z"} {
				whole := instant(t, base)
				want := e.Next(whole)
				for _, ms := range []time.Duration{1, 250, 999} {
					if got := e.Next(whole.Add(ms * time.Millisecond)); !got.Equal(want) {
						t.Errorf("Next(%s + %dms) = %s, want %s", base, ms, got, want)
					}
				}
			}
		})
	}
}

// TestNextDST checks gaps and overlaps in several zones: a wall time in a
// gap is skipped, a repeated wall time fires on its second occurrence.
func TestNextDST(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		expr  string
		zone  string
		after string // wall time in zone, or an RFC 3339 instant
		want  []string
	}{
		{"New York gap skips 02:30", "0 30 2 * * ?", "America/New_York", "2024-03-10 00:00:00",
			[]string{"2024-03-11T06:30:00Z"}},
		{"New York gap, every 15 minutes", "0 */15 * * * ?", "America/New_York", "2024-03-10 01:45:00",
			[]string{"2024-03-10T07:00:00Z", "2024-03-10T07:15:00Z"}},
		{"New York overlap fires on the second 01:30", "0 30 1 * * ?", "America/New_York", "2024-11-03 00:00:00",
			[]string{"2024-11-03T06:30:00Z", "2024-11-04T06:30:00Z"}},
		{"New York overlap, every 30 minutes", "0 0/30 * * * ?", "America/New_York", "2024-11-03 00:45:00",
			[]string{"2024-11-03T06:00:00Z", "2024-11-03T06:30:00Z", "2024-11-03T07:00:00Z"}},
		{"Berlin overlap from the first occurrence", "0 */30 0-4 * * ?", "Europe/Berlin", "2024-10-27T00:59:59Z",
			[]string{"2024-10-27T01:00:00Z", "2024-10-27T01:30:00Z", "2024-10-27T02:00:00Z"}},
		{"London gap", "0 30 1 * * ?", "Europe/London", "2024-03-30 12:00:00",
			[]string{"2024-04-01T00:30:00Z"}},
		{"Lord Howe half-hour gap", "0 */15 * * * ?", "Australia/Lord_Howe", "2024-10-06 01:45:00",
			[]string{"2024-10-05T15:30:00Z", "2024-10-05T15:45:00Z"}},
		{"Chatham gap at 02:45", "0 */30 0-4 * * ?", "Pacific/Chatham", "2024-09-29 02:30:00",
			[]string{"2024-09-28T14:15:00Z", "2024-09-28T14:45:00Z"}},
		{"Sao Paulo midnight gap", "0 0 0 * * ?", "America/Sao_Paulo", "2018-11-03 12:00:00",
			[]string{"2018-11-05T02:00:00Z"}},
		// Quartz 2.3.2 (Debian's libquartz2-java) gives these answers: where a
		// clock change is not one hour, its search for an hour inside the gap
		// can end with no fire time at all, and chime follows it there too.
		{"Troll two-hour gap, last Sunday: Quartz finds no fire time", "0 7 1-3 ? 3 SUNL", "Antarctica/Troll",
			"2012-03-24T23:05:49Z", []string{}},
		{"Troll two-hour gap, every day", "0 7 1-3 * * ?", "Antarctica/Troll", "2012-03-24T23:05:49Z",
			[]string{"2012-03-25T23:07:00Z", "2012-03-26T00:07:00Z", "2012-03-26T01:07:00Z"}},
		{"gap far in the future", "0 30 2 * * ?", "America/New_York", "2051-03-12 00:00:00",
			[]string{"2051-03-13T06:30:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := mustParse(t, tt.expr)
			loc := mustLoad(t, tt.zone)
			var after time.Time
			if strings.HasSuffix(tt.after, "Z") {
				after = instant(t, tt.after).In(loc)
			} else {
				after = wall(t, loc, tt.after)
			}
			got := e.NextN(after, len(tt.want))
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %d fire times", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !got[i].Equal(instant(t, w)) {
					t.Errorf("fire %d = %s (%s), want %s", i, got[i].UTC().Format(time.RFC3339), got[i], w)
				}
			}
		})
	}
}

// TestNextTerminates covers README difference 8: inputs on which a naive
// search loops forever return promptly.
func TestNextTerminates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		expr  string
		zone  string
		after string
	}{
		{"Apia skipped a whole day", "0 0 12 LW * ?", "Pacific/Apia", "2011-12-29T00:00:00Z"},
		{"Apia every second across the skipped day", "* * * * * ?", "Pacific/Apia", "2011-12-30T09:59:58Z"},
		{"impossible nth day in a single year", "0 0 12 ? FEB 1#5 2025", "UTC", "2024-01-01T00:00:00Z"},
		{"fifth Sunday of February", "0 0 12 ? FEB 1#5", "UTC", "2024-01-01T00:00:00Z"},
		{"near the end of range", "59 59 23 31 12 ? 2199", "Pacific/Kiritimati", "2199-12-31T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := mustParse(t, tt.expr)
			loc := mustLoad(t, tt.zone)
			after := instant(t, tt.after).In(loc)
			for _, got := range e.NextN(after, 5) {
				if !got.After(after) {
					t.Fatalf("fire time %s is not after %s", got, after)
				}
				after = got
			}
		})
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")
	tests := []struct {
		name string
		expr string
		at   time.Time
		want bool
	}{
		{"matching second", "0 0 12 * * ?", time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), true},
		{"milliseconds are dropped", "0 0 12 * * ?", time.Date(2024, 5, 1, 12, 0, 0, 5e8, time.UTC), true},
		{"other second", "0 0 12 * * ?", time.Date(2024, 5, 1, 12, 0, 1, 0, time.UTC), false},
		{"evaluated in the zone of t", "0 0 12 * * ?", time.Date(2024, 5, 1, 12, 0, 0, 0, ny), true},
		{"same instant elsewhere", "0 0 12 * * ?", time.Date(2024, 5, 1, 16, 0, 0, 0, time.UTC), false},
		{"first occurrence of an overlap does not match", "0 30 1 * * ?", time.Date(2024, 11, 3, 5, 30, 0, 0, time.UTC).In(ny), false},
		{"second occurrence of an overlap matches", "0 30 1 * * ?", time.Date(2024, 11, 3, 6, 30, 0, 0, time.UTC).In(ny), true},
		{"last weekday", "0 0 12 LW * ?", time.Date(2024, 3, 29, 12, 0, 0, 0, time.UTC), true},
		{"every matches anything", "@every 1m", time.Date(2024, 3, 29, 12, 0, 7, 0, time.UTC), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := mustParse(t, tt.expr).Matches(tt.at); got != tt.want {
				t.Errorf("Matches(%s) = %v, want %v", tt.at, got, tt.want)
			}
		})
	}
}
