package schedule_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/schedule"
	"github.com/google/go-cmp/cmp"
)

// at parses an RFC 3339 instant or fails the test.
func at(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return v
}

// times parses a list of RFC 3339 instants.
func times(t testing.TB, list ...string) []time.Time {
	t.Helper()
	out := make([]time.Time, 0, len(list))
	for _, s := range list {
		out = append(out, at(t, s))
	}
	return out
}

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load zone %q: %v", name, err)
	}
	return loc
}

// diffTimes describes how two series of instants differ (-want +got), or
// returns "" when they are the same instants. Instants print in UTC, so
// that the same instant in two zones is no difference.
func diffTimes(want, got []time.Time) string {
	utc := func(ts []time.Time) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = t.UTC().Format(time.RFC3339Nano)
		}
		return out
	}
	if d := cmp.Diff(utc(want), utc(got)); d != "" {
		return "(-want +got)\n" + d
	}
	return ""
}

// wantField asserts err is a *schedule.ValidationError naming field.
func wantField(t *testing.T, err error, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one naming %q", field)
	}
	var ve *schedule.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	if ve.Field != field {
		t.Fatalf("error names field %q, want %q (%v)", ve.Field, field, err)
	}
	if !errors.Is(err, schedule.ErrInvalid) {
		t.Fatalf("errors.Is(%v, ErrInvalid) = false", err)
	}
	if !strings.Contains(err.Error(), field) {
		t.Fatalf("message %q does not name %q", err.Error(), field)
	}
}

// fires validates a fresh trigger, computes its first fire time and lists its first n fire times.
func fires(t testing.TB, tr schedule.Trigger, cal schedule.Calendar, n int) []time.Time {
	t.Helper()
	if err := tr.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	tr.ComputeFirstFireTime(cal)
	return tr.Upcoming(cal, n)
}

// weekendCalendar excludes Saturdays and Sundays in UTC.
type weekendCalendar struct{}

func (weekendCalendar) Includes(t time.Time) bool {
	d := t.UTC().Weekday()
	return d != time.Saturday && d != time.Sunday
}

func (c weekendCalendar) NextIncluded(t time.Time) time.Time {
	for !c.Includes(t) {
		y, m, d := t.UTC().Date()
		t = time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	}
	return t
}

// excludeAll excludes every instant.
type excludeAll struct{}

func (excludeAll) Includes(time.Time) bool          { return false }
func (excludeAll) NextIncluded(time.Time) time.Time { return time.Time{} }

// liar excludes every instant but claims the next hour is included: a
// broken calendar that must still not hang a trigger.
type liar struct{}

func (liar) Includes(time.Time) bool            { return false }
func (liar) NextIncluded(t time.Time) time.Time { return t.Add(time.Hour) }

// hourExcluder excludes one UTC hour of every day.
type hourExcluder struct{ hour int }

func (c hourExcluder) Includes(t time.Time) bool { return t.UTC().Hour() != c.hour }

func (c hourExcluder) NextIncluded(t time.Time) time.Time {
	if c.Includes(t) {
		return t
	}
	return t.UTC().Truncate(time.Hour).Add(time.Hour)
}
