package calendar

import "time"

// zoneMargin bounds how far apart a wall clock reading and the instant it
// names can be: no zone is more than 14 hours from UTC, and no transition
// moves the clock by more than a day.
const zoneMargin = 30 * time.Hour

// transition is an instant at which a location changes its UTC offset.
type transition struct {
	at            time.Time
	before, after time.Duration
}

// offsetAt returns the UTC offset of loc at instant u.
func offsetAt(loc *time.Location, u time.Time) time.Duration {
	_, off := u.In(loc).Zone()
	return time.Duration(off) * time.Second
}

// transitionsNear returns the offset of loc before the window of instants
// around wall (as if wall were UTC) in which wall can be read, and the
// transitions inside that window in order.
//
// The time package's zone segment bounds are not used: past the end of the
// zone's table they can be wrong by a day around the new year.
func transitionsNear(loc *time.Location, wall time.Time) (time.Duration, []transition) {
	lo, hi := wall.Add(-zoneMargin), wall.Add(zoneMargin)
	offLo, offHi := offsetAt(loc, lo), offsetAt(loc, hi)
	mid := offsetAt(loc, wall)
	if offLo == mid && mid == offHi {
		// The common case: one offset all along. Real zones never change
		// their offset and change it back within so short a window.
		return offLo, nil
	}
	var out []transition
	findTransitions(loc, lo, wall, offLo, mid, &out)
	findTransitions(loc, wall, hi, mid, offHi, &out)
	return offLo, out
}

// findTransitions appends the transitions of loc in (a, b], where the
// offsets at a and b are offA and offB, bisecting to the second. Spans of at
// least six hours are examined even when both ends agree.
func findTransitions(loc *time.Location, a, b time.Time, offA, offB time.Duration, out *[]transition) {
	span := b.Sub(a)
	switch {
	case offA == offB && span <= 6*time.Hour:
		return
	case span <= time.Second:
		*out = append(*out, transition{at: b, before: offA, after: offB})
		return
	}
	m := a.Add((span / 2).Truncate(time.Second))
	if !m.After(a) {
		m = a.Add(time.Second)
	}
	offM := offsetAt(loc, m)
	findTransitions(loc, a, m, offA, offM, out)
	findTransitions(loc, m, b, offM, offB, out)
}

// resolveWall turns a local wall clock reading in loc (given as a UTC time
// whose fields are that reading) into an instant the way Java's
// GregorianCalendar does, which is what Quartz's calendars rely on: a zone
// transition takes effect at the wall time the new offset shows at the
// transition instant. A reading inside a gap is therefore read with the
// offset from before the gap (02:30 on a spring-forward night becomes 03:30
// daylight time), and a reading that occurs twice is the later occurrence.
func resolveWall(loc *time.Location, wall time.Time) time.Time {
	off, trs := transitionsNear(loc, wall)
	for _, tr := range trs {
		if !tr.at.Add(tr.after).After(wall) {
			off = tr.after
		}
	}
	return wall.Add(-off).In(loc)
}

// earliestAtWall returns the earliest instant after `after` whose wall clock
// reading in loc is at or past wall. When wall falls in a gap it is the
// transition instant; when it occurs twice it is the first occurrence.
func earliestAtWall(loc *time.Location, wall, after time.Time) time.Time {
	off, trs := transitionsNear(loc, wall)
	// Walk the spans of constant offset; span i runs from trs[i-1].at to
	// trs[i].at, unbounded at both ends of the list.
	var best time.Time
	for i := 0; i <= len(trs); i++ {
		if i > 0 {
			off = trs[i-1].after
		}
		u := wall.Add(-off)
		if i > 0 && u.Before(trs[i-1].at) {
			u = trs[i-1].at
		}
		if i < len(trs) && !u.Before(trs[i].at) {
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
