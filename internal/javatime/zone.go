package javatime

import "time"

const (
	// reach is more than any UTC offset in the tz database (the largest,
	// Manila's local mean time before 1845, is 15h56m08s behind UTC). A
	// wall-clock reading can only be shown by instants within reach of it
	// (taking the reading as if it were UTC), and only transitions within
	// reach of it decide how it resolves.
	reach = 16 * 3600

	// step is the widest stretch of instants over which two agreeing probes
	// prove the offset constant: no zone changes its offset twice within it
	// (see the package documentation).
	step = 72 * 3600

	// On a miss, Offset learns the instants from learnBefore before to
	// learnAfter after the one asked about, which covers the wall-clock
	// readings of the following day or so in any zone. Together they span
	// no more than step.
	learnBefore = 28 * 3600
	learnAfter  = step - learnBefore
)

// Transition is a change of a zone's UTC offset.
type Transition struct {
	// At is the first instant (Unix seconds) with the new offset.
	At int64
	// Before and After are the offsets, in seconds east of UTC, in force
	// before At and from At on.
	Before, After int64
}

// span is a stretch of instants lo..hi (both included) known to share the
// UTC offset off.
type span struct {
	lo, hi, off int64
}

// Zone resolves wall-clock readings in one location, remembering the
// offsets it has learnt. Create it with NewZone for each evaluation; the
// zero Zone is UTC. A Zone is not safe for concurrent use.
type Zone struct {
	loc   *time.Location
	spans [2]span // never overlapping; spans[:n] are valid
	n     int
}

// NewZone returns a Zone for loc with nothing learnt yet. A nil loc is UTC.
func NewZone(loc *time.Location) Zone {
	if loc == time.UTC {
		loc = nil
	}
	return Zone{loc: loc}
}

// Location returns the zone's location.
func (z *Zone) Location() *time.Location {
	if z.loc == nil {
		return time.UTC
	}
	return z.loc
}

// OffsetAt returns the UTC offset of loc at instant u (Unix seconds), in
// seconds east of UTC. It is a single lookup, for callers that ask once.
func OffsetAt(loc *time.Location, u int64) int64 {
	if loc == nil {
		return 0
	}
	_, off := time.Unix(u, 0).In(loc).Zone()
	return int64(off)
}

// Offset returns the UTC offset in force at instant u (Unix seconds), in
// seconds east of UTC.
func (z *Zone) Offset(u int64) int64 {
	if z.loc == nil {
		return 0
	}
	if i := z.find(u); i >= 0 {
		return z.spans[i].off
	}
	z.cover(u-learnBefore, u+learnAfter)
	return z.spans[z.find(u)].off
}

// Wall returns the wall-clock reading (wall seconds) of instant u.
func (z *Zone) Wall(u int64) int64 {
	return u + z.Offset(u)
}

// WallOffset returns the UTC offset with which Java's GregorianCalendar
// reads the wall-clock time wall (wall seconds): the offset after the last
// transition whose own wall-clock time is not after wall, or the zone's
// earliest offset when there is none.
func (z *Zone) WallOffset(wall int64) int64 {
	if z.loc == nil {
		return 0
	}
	lo, hi := wall-reach, wall+reach
	z.cover(lo, hi)
	before := z.spans[z.find(lo)]
	if before.hi >= hi {
		return before.off
	}
	// One transition, at before.hi+1, lies within reach.
	after := z.spans[z.find(hi)]
	if after.lo+after.off <= wall {
		return after.off
	}
	return before.off
}

// Resolve returns the instant (Unix seconds) Java's GregorianCalendar gives
// the wall-clock time wall (wall seconds): a time in a gap moves forward by
// the size of the gap, a time that occurs twice is its later occurrence.
func (z *Zone) Resolve(wall int64) int64 {
	return wall - z.WallOffset(wall)
}

// Transitions appends to dst the transitions at instants in (from, to], in
// order, and returns the extended slice.
func (z *Zone) Transitions(from, to int64, dst []Transition) []Transition {
	if z.loc == nil {
		return dst
	}
	for from < to {
		end := min(to, from+step)
		z.cover(from, end)
		s := z.spans[z.find(from)]
		if s.hi < end {
			next := z.spans[z.find(end)]
			dst = append(dst, Transition{At: next.lo, Before: s.off, After: next.off})
		}
		from = end
	}
	return dst
}

// find returns the index of the learnt span holding u, or -1.
func (z *Zone) find(u int64) int {
	for i := range z.n {
		if z.spans[i].lo <= u && u <= z.spans[i].hi {
			return i
		}
	}
	return -1
}

// probe asks the time package for the offset at u.
func (z *Zone) probe(u int64) int64 {
	_, off := time.Unix(u, 0).In(z.loc).Zone()
	return int64(off)
}

// cover learns the offsets of every instant in [a, b], where b-a <= step:
// afterwards either one span holds them all or two adjacent spans do, split
// at the only transition in between.
func (z *Zone) cover(a, b int64) {
	ia, ib := z.find(a), z.find(b)
	if ia >= 0 && ia == ib {
		return
	}
	var sa, sb span
	switch {
	case ia >= 0 && ib >= 0:
		sa, sb = z.spans[ia], z.spans[ib]
		if sa.hi+1 == sb.lo {
			return // already split at the transition
		}
	case ia >= 0:
		// Reach as far ahead as one probe can prove, so that an evaluation
		// moving forward probes again only every few days.
		sa = z.spans[ia]
		far := sa.hi + step
		sb = span{far, far, z.probe(far)}
	case ib >= 0:
		sb = z.spans[ib]
		far := sb.lo - step
		sa = span{far, far, z.probe(far)}
	default:
		sa = span{a, a, z.probe(a)}
		sb = span{b, b, z.probe(b)}
	}
	if sa.off == sb.off {
		z.keep(span{sa.lo, sb.hi, sa.off}, span{}, 1)
		return
	}
	// Exactly one transition in (sa.hi, sb.lo]: bisect to the second.
	lo, hi := sa.hi, sb.lo
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if z.probe(m) == sa.off {
			lo = m
		} else {
			hi = m
		}
	}
	z.keep(span{sa.lo, lo, sa.off}, span{hi, sb.hi, sb.off}, 2)
}

// keep stores the first k of the spans s0, s1 (fresh knowledge, which
// absorbs any learnt span it overlaps) and fills the remaining room with
// the learnt spans that do not overlap them.
func (z *Zone) keep(s0, s1 span, k int) {
	lo, hi := s0.lo, s0.hi
	if k == 2 {
		hi = s1.hi
	}
	old, n := z.spans, z.n
	z.spans[0], z.n = s0, 1
	if k == 2 {
		z.spans[1], z.n = s1, 2
	}
	for i := 0; i < n && z.n < len(z.spans); i++ {
		if old[i].hi < lo || old[i].lo > hi {
			z.spans[z.n] = old[i]
			z.n++
		}
	}
}
