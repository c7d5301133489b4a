package calendar

import (
	"time"

	"github.com/chime-scheduler/chime/internal/javatime"
)

// zoneMargin bounds how far apart a wall clock reading and the instant it
// names can be: no zone is more than 16 hours from UTC, and no transition
// moves the clock by more than a day.
const zoneMargin = 30 * time.Hour

// transition is an instant at which a location changes its UTC offset.
type transition struct {
	at            time.Time
	before, after time.Duration
}

// transitionsBetween returns the transitions of loc at instants in
// (from, to], in order, with their instants in from's location.
func transitionsBetween(loc *time.Location, from, to time.Time) []transition {
	z := javatime.NewZone(loc)
	var buf [4]javatime.Transition
	found := z.Transitions(from.Unix(), to.Unix(), buf[:0])
	if len(found) == 0 {
		return nil
	}
	out := make([]transition, len(found))
	for i, tr := range found {
		out[i] = transition{
			at:     time.Unix(tr.At, 0).In(from.Location()),
			before: time.Duration(tr.Before) * time.Second,
			after:  time.Duration(tr.After) * time.Second,
		}
	}
	return out
}

// resolveWall turns a local wall clock reading in loc (given as a UTC time
// whose fields are that reading) into an instant the way Java's
// GregorianCalendar does, which is what Quartz's calendars rely on: a
// reading inside a gap is read with the offset from before the gap (02:30
// on a spring-forward night becomes 03:30 daylight time), and a reading
// that occurs twice is the later occurrence. Offsets change on whole
// seconds, so the second holding the reading decides.
func resolveWall(loc *time.Location, wall time.Time) time.Time {
	z := javatime.NewZone(loc)
	off := z.WallOffset(wall.Unix())
	return wall.Add(-time.Duration(off) * time.Second).In(loc)
}

// earliestAtWall returns the earliest instant after `after` whose wall clock
// reading in loc is at or past wall. When wall falls in a gap it is the
// transition instant; when it occurs twice it is the first occurrence.
func earliestAtWall(loc *time.Location, wall, after time.Time) time.Time {
	z := javatime.NewZone(loc)
	lo, hi := wall.Add(-zoneMargin), wall.Add(zoneMargin)
	off := time.Duration(z.Offset(lo.Unix())) * time.Second
	var buf [4]javatime.Transition
	trs := z.Transitions(lo.Unix(), hi.Unix(), buf[:0])
	// Walk the spans of constant offset; span i runs from trs[i-1].At to
	// trs[i].At, unbounded at both ends of the list.
	var best time.Time
	for i := 0; i <= len(trs); i++ {
		u := wall.Add(-off)
		if i > 0 {
			off = time.Duration(trs[i-1].After) * time.Second
			u = wall.Add(-off)
			if start := time.Unix(trs[i-1].At, 0); u.Before(start) {
				u = start
			}
		}
		if i < len(trs) && !u.Before(time.Unix(trs[i].At, 0)) {
			continue
		}
		if u.After(after) && (best.IsZero() || u.Before(best)) {
			best = u
		}
	}
	if best.IsZero() {
		// Unreachable for real zones; stay monotonic regardless.
		best = after.Add(time.Millisecond)
	}
	return best.In(loc)
}

// startOfNextDay returns the first instant after u whose local date in loc
// is later than u's.
func startOfNextDay(loc *time.Location, u time.Time) time.Time {
	y, m, d := u.In(loc).Date()
	return earliestAtWall(loc, time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC), u)
}

// truncateMillis drops everything below the millisecond, the precision of
// Quartz's calendars.
func truncateMillis(u time.Time) time.Time {
	return u.Truncate(time.Millisecond)
}
