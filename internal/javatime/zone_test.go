package javatime

import (
	"math/rand/v2"
	"testing"
	"time"
)

func loadLocation(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

// unix parses an RFC 3339 time as Unix seconds; for wall values the reading
// is written as if it were UTC.
func unix(t testing.TB, s string) int64 {
	t.Helper()
	u, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return u.Unix()
}

func format(u int64) string { return time.Unix(u, 0).UTC().Format(time.RFC3339) }

func TestResolve(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		zone string
		wall string // local reading, written as UTC
		want string
	}{
		{"utc", "UTC", "2024-03-10T02:30:00Z", "2024-03-10T02:30:00Z"},
		{"fixed zone", "Etc/GMT-5", "2024-03-10T02:30:00Z", "2024-03-09T21:30:00Z"},
		{"winter time", "America/New_York", "2024-01-15T09:00:00Z", "2024-01-15T14:00:00Z"},
		{"summer time", "America/New_York", "2024-07-15T09:00:00Z", "2024-07-15T13:00:00Z"},
		{"last second before the gap", "America/New_York", "2024-03-10T01:59:59Z", "2024-03-10T06:59:59Z"},
		{"start of the gap is the transition", "America/New_York", "2024-03-10T02:00:00Z", "2024-03-10T07:00:00Z"},
		{"inside the gap reads as standard time", "America/New_York", "2024-03-10T02:30:00Z", "2024-03-10T07:30:00Z"},
		{"end of the gap", "America/New_York", "2024-03-10T03:00:00Z", "2024-03-10T07:00:00Z"},
		{"before the repeated hour", "America/New_York", "2024-11-03T00:59:59Z", "2024-11-03T04:59:59Z"},
		{"repeated hour is its later occurrence", "America/New_York", "2024-11-03T01:00:00Z", "2024-11-03T06:00:00Z"},
		{"end of the repeated hour", "America/New_York", "2024-11-03T01:59:59Z", "2024-11-03T06:59:59Z"},
		{"after the repeated hour", "America/New_York", "2024-11-03T02:00:00Z", "2024-11-03T07:00:00Z"},
		{"half-hour gap", "Australia/Lord_Howe", "2024-10-06T02:15:00Z", "2024-10-05T15:45:00Z"},
		{"after the half-hour gap", "Australia/Lord_Howe", "2024-10-06T02:30:00Z", "2024-10-05T15:30:00Z"},
		{"half-hour overlap", "Australia/Lord_Howe", "2024-04-07T01:45:00Z", "2024-04-06T15:15:00Z"},
		{"before the half-hour overlap", "Australia/Lord_Howe", "2024-04-07T01:29:59Z", "2024-04-06T14:29:59Z"},
		{"midnight in a gap", "America/Santiago", "2024-09-08T00:00:00Z", "2024-09-08T04:00:00Z"},
		{"repeated midnight", "America/Havana", "2024-11-03T00:30:00Z", "2024-11-03T05:30:00Z"},
		{"gap past 2037", "Europe/Berlin", "2150-03-29T02:30:00Z", "2150-03-29T01:30:00Z"},
		{"overlap past 2037", "Europe/Berlin", "2152-10-29T02:30:00Z", "2152-10-29T01:30:00Z"},
		{"last day of a leap year past 2037", "Europe/Berlin", "2152-12-31T12:00:00Z", "2152-12-31T11:00:00Z"},
		{"new year after a leap year past 2037", "Europe/Berlin", "2153-01-01T00:00:00Z", "2152-12-31T23:00:00Z"},
		{"southern summer over a leap new year past 2037", "Australia/Sydney", "2152-12-31T12:00:00Z", "2152-12-31T01:00:00Z"},
		{"southern summer new year past 2037", "Australia/Sydney", "2153-01-01T00:30:00Z", "2152-12-31T13:30:00Z"},
		{"day skipped at the date line", "Pacific/Apia", "2011-12-30T12:00:00Z", "2011-12-30T22:00:00Z"},
		{"before the skipped day", "Pacific/Apia", "2011-12-29T23:59:59Z", "2011-12-30T09:59:59Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			z := NewZone(loadLocation(t, tt.zone))
			if got := z.Resolve(unix(t, tt.wall)); got != unix(t, tt.want) {
				t.Errorf("Resolve(%s in %s) = %s, want %s", tt.wall, tt.zone, format(got), tt.want)
			}
		})
	}
}

func TestOffset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		zone string
		at   string
		want time.Duration
	}{
		{"utc", "UTC", "2024-07-01T00:00:00Z", 0},
		{"last second of standard time", "America/New_York", "2024-03-10T06:59:59Z", -5 * time.Hour},
		{"first second of daylight time", "America/New_York", "2024-03-10T07:00:00Z", -4 * time.Hour},
		{"lord howe summer", "Australia/Lord_Howe", "2024-01-01T00:00:00Z", 11 * time.Hour},
		{"lord howe winter", "Australia/Lord_Howe", "2024-07-01T00:00:00Z", 10*time.Hour + 30*time.Minute},
		{"last day of a leap year past 2037", "Europe/Berlin", "2152-12-31T12:00:00Z", time.Hour},
		{"southern last day of a leap year past 2037", "Australia/Sydney", "2152-12-31T12:00:00Z", 11 * time.Hour},
		{"local mean time", "Asia/Manila", "1800-01-01T00:00:00Z", -(15*time.Hour + 56*time.Minute + 8*time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := loadLocation(t, tt.zone)
			u := unix(t, tt.at)
			want := int64(tt.want / time.Second)
			z := NewZone(loc)
			if got := z.Offset(u); got != want {
				t.Errorf("Offset(%s) = %d, want %d", tt.at, got, want)
			}
			if got := z.Wall(u); got != u+want {
				t.Errorf("Wall(%s) = %s, want %s", tt.at, format(got), format(u+want))
			}
			if got := OffsetAt(loc, u); got != want {
				t.Errorf("OffsetAt(%s) = %d, want %d", tt.at, got, want)
			}
		})
	}
}

func TestTransitions(t *testing.T) {
	t.Parallel()
	type tr struct {
		at            string
		before, after time.Duration
	}
	tests := []struct {
		name     string
		zone     string
		from, to string
		want     []tr
	}{
		{"utc", "UTC", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z", nil},
		{"new york 2024", "America/New_York", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z", []tr{
			{"2024-03-10T07:00:00Z", -5 * time.Hour, -4 * time.Hour},
			{"2024-11-03T06:00:00Z", -4 * time.Hour, -5 * time.Hour},
		}},
		{"from is excluded, to is included", "America/New_York", "2024-03-10T07:00:00Z", "2024-11-03T06:00:00Z", []tr{
			{"2024-11-03T06:00:00Z", -4 * time.Hour, -5 * time.Hour},
		}},
		{"half-hour shifts", "Australia/Lord_Howe", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z", []tr{
			{"2024-04-06T15:00:00Z", 11 * time.Hour, 10*time.Hour + 30*time.Minute},
			{"2024-10-05T15:30:00Z", 10*time.Hour + 30*time.Minute, 11 * time.Hour},
		}},
		{"leap year past 2037 has no new year transition", "Europe/Berlin", "2152-01-01T00:00:00Z", "2153-06-01T00:00:00Z", []tr{
			{"2152-03-26T01:00:00Z", time.Hour, 2 * time.Hour},
			{"2152-10-29T01:00:00Z", 2 * time.Hour, time.Hour},
			{"2153-03-25T01:00:00Z", time.Hour, 2 * time.Hour},
		}},
		{"short window without a transition", "Europe/Berlin", "2024-06-01T00:00:00Z", "2024-06-01T00:00:01Z", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			z := NewZone(loadLocation(t, tt.zone))
			got := z.Transitions(unix(t, tt.from), unix(t, tt.to), nil)
			var want []Transition
			for _, w := range tt.want {
				want = append(want, Transition{At: unix(t, w.at), Before: int64(w.before / time.Second), After: int64(w.after / time.Second)})
			}
			if len(got) != len(want) {
				t.Fatalf("Transitions = %v, want %v", got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("transition %d = %+v (%s), want %+v (%s)", i, got[i], format(got[i].At), want[i], format(want[i].At))
				}
			}
		})
	}
}

// tableTransitions lists the offset changes of loc in [from, to) from the
// time package's zone bounds, which are exact within a zone's table.
func tableTransitions(loc *time.Location, from, to int64) []Transition {
	var out []Transition
	u := from
	prev := OffsetAt(loc, u)
	for u < to {
		_, end := time.Unix(u, 0).In(loc).ZoneBounds()
		if end.IsZero() || end.Unix() >= to {
			break
		}
		u = end.Unix()
		if off := OffsetAt(loc, u); off != prev {
			out = append(out, Transition{At: u, Before: prev, After: off})
			prev = off
		}
	}
	return out
}

// javaOffset is the Java rule written out over a list of transitions.
func javaOffset(first int64, trs []Transition, wall int64) int64 {
	off := first
	for _, tr := range trs {
		if tr.At+tr.After <= wall {
			off = tr.After
		}
	}
	return off
}

var tableZones = []string{
	"America/New_York", "America/Santiago", "America/Havana", "America/Sao_Paulo",
	"Europe/Berlin", "Europe/London", "Europe/Moscow", "Africa/Casablanca", "Africa/Freetown",
	"Asia/Tehran", "Asia/Kolkata", "Asia/Gaza", "Australia/Lord_Howe", "Australia/Sydney",
	"Pacific/Apia", "Pacific/Kiritimati", "Pacific/Chatham", "Antarctica/Troll",
}

// TestAgainstZoneTable checks probing against the time package's own
// transition table (exact before 2037), which also checks the 72-hour
// property the probing relies on for these zones.
func TestAgainstZoneTable(t *testing.T) {
	t.Parallel()
	from := unix(t, "1900-01-01T00:00:00Z")
	to := unix(t, "2037-01-01T00:00:00Z")
	for _, name := range tableZones {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			loc := loadLocation(t, name)
			want := tableTransitions(loc, from, to)
			for i := 1; i < len(want); i++ {
				if gap := want[i].At - want[i-1].At; gap <= step {
					t.Fatalf("offset changes at %s and %s, %ds apart: probing assumes more than %ds", format(want[i-1].At), format(want[i].At), gap, step)
				}
			}
			z := NewZone(loc)
			got := z.Transitions(from, to-1, nil)
			if len(got) != len(want) {
				t.Fatalf("%d transitions, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("transition %d = %+v (%s), want %+v (%s)", i, got[i], format(got[i].At), want[i], format(want[i].At))
				}
			}

			rng := rand.New(rand.NewPCG(1, uint64(len(name))))
			first := OffsetAt(loc, from)
			shared := NewZone(loc)
			for range 2000 {
				var wall int64
				if len(want) > 0 && rng.IntN(2) == 0 {
					// Near a transition's wall-clock time.
					tr := want[rng.IntN(len(want))]
					wall = tr.At + tr.Before + rng.Int64N(4*3600) - 2*3600
				} else {
					wall = from + 2*86400 + rng.Int64N(to-from-4*86400)
				}
				wantOff := javaOffset(first, want, wall)
				fresh := NewZone(loc)
				if got := fresh.WallOffset(wall); got != wantOff {
					t.Fatalf("WallOffset(%s) = %d, want %d", format(wall), got, wantOff)
				}
				if got := shared.Resolve(wall); got != wall-wantOff {
					t.Fatalf("Resolve(%s) on a used Zone = %s, want %s", format(wall), format(got), format(wall-wantOff))
				}
				u := wall - rng.Int64N(30*3600)
				if got, want := shared.Offset(u), OffsetAt(loc, u); got != want {
					t.Fatalf("Offset(%s) on a used Zone = %d, want %d", format(u), got, want)
				}
			}
		})
	}
}

// TestSequentialQueries walks a Zone forwards and backwards the way an
// evaluation does and compares every answer with a fresh Zone's.
func TestSequentialQueries(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Europe/Berlin", "Australia/Lord_Howe", "America/Santiago", "UTC"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			loc := loadLocation(t, name)
			rng := rand.New(rand.NewPCG(7, 11))
			z := NewZone(loc)
			u := unix(t, "2140-01-01T00:00:00Z")
			for range 5000 {
				u += rng.Int64N(4*86400) - 86400
				fresh := NewZone(loc)
				if got, want := z.Offset(u), fresh.Offset(u); got != want {
					t.Fatalf("Offset(%s) = %d, fresh Zone says %d", format(u), got, want)
				}
				w := u + rng.Int64N(3*86400)
				fresh = NewZone(loc)
				if got, want := z.Resolve(w), fresh.Resolve(w); got != want {
					t.Fatalf("Resolve(%s) = %s, fresh Zone says %s", format(w), format(got), format(want))
				}
			}
		})
	}
}

func TestZeroZoneIsUTC(t *testing.T) {
	t.Parallel()
	var z Zone
	if got := z.Offset(1234); got != 0 {
		t.Errorf("Offset(1234) = %d, want 0", got)
	}
	if got := z.Resolve(1234); got != 1234 {
		t.Errorf("Resolve(1234) = %d, want 1234", got)
	}
	if got := z.Transitions(0, 1<<32, nil); len(got) != 0 {
		t.Errorf("Transitions = %v, want none", got)
	}
}

func TestNoAllocations(t *testing.T) {
	loc := loadLocation(t, "Europe/Berlin")
	start := unix(t, "2024-03-01T00:00:00Z")
	allocs := testing.AllocsPerRun(100, func() {
		z := NewZone(loc)
		for d := range int64(60) {
			u := z.Resolve(start + d*86400 + 12*3600)
			_ = z.Wall(u)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per evaluation, want 0", allocs)
	}
}

func BenchmarkResolve(b *testing.B) {
	loc := loadLocation(b, "Europe/Berlin")
	start := unix(b, "2024-03-07T13:47:12Z")
	b.ReportAllocs()
	for b.Loop() {
		z := NewZone(loc)
		w := z.Wall(start)
		_ = z.Resolve(w + 22*3600)
	}
}
