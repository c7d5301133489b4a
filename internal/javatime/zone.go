package javatime

import "time"

const (
	// reach is more than any UTC offset in the tz database (the largest,
	// Manila's local mean time before 1845, is 15h56m08s behind UTC).
	reach = 16 * 3600

	// step is the widest stretch of instants over which two agreeing probes
	// prove the offset constant: no zone changes its offset twice within it
	// (see the package documentation).
	step = 72 * 3600

	// learnBefore is how far before its first instant an evaluation learns
	// offsets; it learns up to step-learnBefore after it.
	learnBefore = 18 * 3600
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
	if z.n == 0 {
		// The first question of an evaluation: learn the stretch around u
		// in which its next wall-clock times usually resolve, with two
		// probes.
		a, b := u-learnBefore, u-learnBefore+step
		z.learn(a, z.probe(a))
		z.learn(b, z.probe(b))
	}
	return z.offsetAt(u)
}

// Wall returns the wall-clock reading (wall seconds) of instant u.
func (z *Zone) Wall(u int64) int64 {
	return u + z.Offset(u)
}

// WallOffset returns the UTC offset with which Java's GregorianCalendar
// reads the wall-clock time wall (wall seconds): the offset after the last
// transition whose own wall-clock time is not after wall, or the zone's
// earliest offset when there is none.
//
// That is the offset at instant wall-o, where o is the offset at wall+reach.
// If the offset is o all the way from wall-o to wall+reach, the transition
// that began it came at or before wall-o, so its wall-clock time is not
// after wall, and any later one comes after wall+reach, where no offset can
// bring its wall-clock time back to wall. Otherwise the offset changes once
// between wall-o and wall+reach, at a wall-clock time after wall, and the
// transition before that change came more than step earlier, early enough
// to count whatever its offset.
func (z *Zone) WallOffset(wall int64) int64 {
	if z.loc == nil {
		return 0
	}
	return z.offsetAt(wall - z.offsetAt(wall+reach))
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
		offFrom, offEnd := z.offsetAt(from), z.offsetAt(end)
		if offFrom != offEnd {
			// Exactly one transition in (from, end]: bisect to the second.
			lo, hi := from, end
			for hi-lo > 1 {
				m := lo + (hi-lo)/2
				if z.probe(m) == offFrom {
					lo = m
				} else {
					hi = m
				}
			}
			z.learn(lo, offFrom)
			z.learn(hi, offEnd)
			dst = append(dst, Transition{At: hi, Before: offFrom, After: offEnd})
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

// offsetAt returns the offset at u from what has been learnt, probing and
// learning when u is not known. When u lies within step beyond a learnt span
// (and not in a gap that probing u would settle), it first probes a whole
// step beyond that span, so that the questions that follow find their
// answers learnt: an evaluation moving on probes about once every few days.
func (z *Zone) offsetAt(u int64) int64 {
	if i := z.find(u); i >= 0 {
		return z.spans[i].off
	}
	var left, right *span // the learnt spans before and after u
	for i := range z.n {
		if s := &z.spans[i]; s.hi < u {
			left = s
		} else if right == nil {
			right = s
		}
	}
	toLeft, toRight := int64(step+1), int64(step+1)
	if left != nil {
		toLeft = u - left.hi
	}
	if right != nil {
		toRight = right.lo - u
	}
	if toLeft+toRight > step && min(toLeft, toRight) <= step {
		var far int64
		if toRight < toLeft {
			far = right.lo - step // after left.hi, as the gap exceeds step
		} else {
			far = left.hi + step // before right.lo, likewise
		}
		z.learn(far, z.probe(far))
		if i := z.find(u); i >= 0 {
			return z.spans[i].off
		}
	}
	off := z.probe(u)
	z.learn(u, off)
	return off
}

// probe asks the time package for the offset at u.
func (z *Zone) probe(u int64) int64 {
	_, off := time.Unix(u, 0).In(z.loc).Zone()
	return int64(off)
}

// learn records that instant u has offset off. A span with that offset within step of u, and no other span in between,
// grows to u: the offset cannot change and change back within step. Two
// spans that come within step of each other with one offset merge.
// Otherwise u starts a span of its own, replacing the learnt span farthest
// from it when there is no room.
func (z *Zone) learn(u, off int64) {
	if z.find(u) >= 0 {
		return
	}
	grown := false
	for i := range z.n {
		s := &z.spans[i]
		if s.off != off || z.between(s, u) {
			continue
		}
		if u > s.hi && u-s.hi <= step {
			s.hi, grown = u, true
		} else if u < s.lo && s.lo-u <= step {
			s.lo, grown = u, true
		}
	}
	if grown {
		if z.n == 2 && z.spans[0].hi >= z.spans[1].lo {
			z.spans[0].hi = z.spans[1].hi
			z.n = 1
		}
		return
	}
	fresh := span{u, u, off}
	switch {
	case z.n < len(z.spans):
		z.spans[z.n] = fresh
		z.n++
	case distance(z.spans[0], u) > distance(z.spans[1], u):
		z.spans[0] = fresh
	default:
		z.spans[1] = fresh
	}
	if z.n == 2 && z.spans[0].lo > z.spans[1].lo {
		z.spans[0], z.spans[1] = z.spans[1], z.spans[0]
	}
}

// between reports whether a learnt span other than s lies between s and u.
func (z *Zone) between(s *span, u int64) bool {
	for i := range z.n {
		o := &z.spans[i]
		if o != s && ((o.lo > s.hi && o.hi < u) || (o.hi < s.lo && o.lo > u)) {
			return true
		}
	}
	return false
}

// distance returns how far instant u lies outside span s.
func distance(s span, u int64) int64 {
	if u < s.lo {
		return s.lo - u
	}
	return u - s.hi
}
