package schedule

import (
	"iter"
	"time"
)

// OffsetChanges yields each of times in loc, in order, with whether it
// sits just after a change of loc's UTC offset, such as a daylight-saving
// change: its offset differs from that of the time before it, or, for the
// first, from after's. A list of fire times marked this way shows where
// the clock changed between two firings, so that a wall time that moved
// or a firing that did not happen (in a spring-forward gap, or in the
// repeated hour of a fall-back overlap) is no surprise. In a zone without
// daylight saving nothing is marked.
//
// times are expected in increasing order after after, as a trigger's
// Upcoming returns them. A nil loc is UTC.
func OffsetChanges(after time.Time, times []time.Time, loc *time.Location) iter.Seq2[time.Time, bool] {
	if loc == nil {
		loc = time.UTC
	}
	return func(yield func(time.Time, bool) bool) {
		prev := utcOffset(after.In(loc))
		for _, t := range times {
			t = t.In(loc)
			off := utcOffset(t)
			if !yield(t, off != prev) {
				return
			}
			prev = off
		}
	}
}

// utcOffset returns t's offset from UTC in seconds, in t's location.
func utcOffset(t time.Time) int {
	_, off := t.Zone()
	return off
}
