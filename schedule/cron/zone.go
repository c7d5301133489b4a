package cron

import (
	"math"
	"time"
)

// Quartz computes fire times with java.util.GregorianCalendar, so chime
// reproduces how that calendar turns wall-clock fields into an instant:
//
//   - A wall time that falls in a DST gap is read with the offset in force
//     before the transition, which moves it forward past the gap.
//   - A wall time that occurs twice (an overlap) is read with the offset in
//     force after the transition: the second occurrence.
//
// Both follow from one rule: use the most recent zone period whose first
// wall time is not after the wall time being resolved.

// maxOffsetSpan bounds the difference of any two UTC offsets, in seconds.
const maxOffsetSpan = 30 * 3600

const (
	minInstant = math.MinInt64
	maxInstant = math.MaxInt64
)

// period is a stretch of instants [start, end) with one UTC offset.
type period struct {
	start, end int64
	offset     int64
}

func (p period) contains(u int64) bool { return u >= p.start && u < p.end }

// zoneCache looks up zone periods for one evaluation. It is a value owned
// by a single call, never shared.
type zoneCache struct {
	loc   *time.Location
	fixed bool  // the location has a single offset
	off   int64 // that offset, when fixed
	cache [2]period
	n     int // number of valid cache entries
	next  int // slot replaced on the next miss
}

func newZoneCache(loc *time.Location) zoneCache {
	z := zoneCache{loc: loc}
	if loc == time.UTC {
		z.fixed = true
		return z
	}
	t := time.Unix(0, 0).In(loc)
	start, end := t.ZoneBounds()
	if start.IsZero() && end.IsZero() {
		_, off := t.Zone()
		z.fixed = true
		z.off = int64(off)
	}
	return z
}

// lookup returns the period containing instant u.
func (z *zoneCache) lookup(u int64) period {
	for i := 0; i < z.n; i++ {
		if z.cache[i].contains(u) {
			return z.cache[i]
		}
	}
	t := time.Unix(u, 0).In(z.loc)
	_, off := t.Zone()
	s, e := t.ZoneBounds()
	p := period{start: minInstant, end: maxInstant, offset: int64(off)}
	if !s.IsZero() {
		p.start = s.Unix()
	}
	if !e.IsZero() {
		p.end = e.Unix()
	}
	z.cache[z.next] = p
	z.next = (z.next + 1) % len(z.cache)
	if z.n < len(z.cache) {
		z.n++
	}
	return p
}

// offsetAt returns the UTC offset in force at instant u.
func (z *zoneCache) offsetAt(u int64) int64 {
	if z.fixed {
		return z.off
	}
	return z.lookup(u).offset
}

// resolve turns wall seconds into an instant the way Java's lenient
// GregorianCalendar does (see the comment at the top of this file).
func (z *zoneCache) resolve(w int64) int64 {
	if z.fixed {
		return w - z.off
	}
	guess := int64(0)
	if z.n > 0 {
		guess = z.cache[(z.next+len(z.cache)-1)%len(z.cache)].offset
	}
	p := z.lookup(w - guess)
	for range 8 {
		if p.start != minInstant && p.start+p.offset > w {
			p = z.lookup(p.start - 1)
			continue
		}
		if p.end != maxInstant && w >= p.end-maxOffsetSpan {
			n := z.lookup(p.end)
			if n.start+n.offset <= w {
				p = n
				continue
			}
		}
		break
	}
	return w - p.offset
}

// wallOf returns the wall seconds of instant u.
func (z *zoneCache) wallOf(u int64) int64 {
	return u + z.offsetAt(u)
}
