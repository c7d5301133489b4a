package calendar

import (
	"fmt"
	"time"
)

// day is the length of a day on the wall clock.
const day = 24 * time.Hour

// Daily excludes a time-of-day range on every day, like Quartz's
// DailyCalendar. The range runs from start to end of the local wall clock,
// both inclusive, with millisecond precision; when inverted, the range is
// the only part of each day that is included.
//
// Chime differs from Quartz in one respect: a non-inverted calendar excludes
// only its range, wherever it sits in a chain (alone, as the base of another
// calendar, or with a base of its own), where Quartz also excludes the first
// (00:00:00.000) and last (23:59:59.999) millisecond of every day.
//
// On days with a time zone transition the range ends are read like Quartz
// reads them: a wall time inside a spring-forward gap means the offset from
// before the gap, and a wall time that occurs twice means its later
// occurrence.
type Daily struct {
	common
	start, end time.Duration
	invert     bool
}

// NewDaily returns a calendar that excludes, every day in loc, the wall
// clock range [start, end], both given as the time elapsed since midnight
// with millisecond precision; with invert it includes only that range.
// start must be before end: a range cannot cross midnight.
func NewDaily(loc *time.Location, start, end time.Duration, invert bool) (*Daily, error) {
	c, err := newCommon(loc)
	if err != nil {
		return nil, err
	}
	if err := checkTimeOfDay(start); err != nil {
		return nil, &FieldError{Field: "rangeStart", Err: err}
	}
	if err := checkTimeOfDay(end); err != nil {
		return nil, &FieldError{Field: "rangeEnd", Err: err}
	}
	if start >= end {
		return nil, fieldErrorf("rangeEnd", "range end %s is not after range start %s",
			FormatTimeOfDay(end), FormatTimeOfDay(start))
	}
	return &Daily{common: c, start: start, end: end, invert: invert}, nil
}

// checkTimeOfDay validates a time of day given as time since midnight.
func checkTimeOfDay(d time.Duration) error {
	if d < 0 || d >= day {
		return fmt.Errorf("time of day %v is outside 00:00:00.000-23:59:59.999", d)
	}
	if d%time.Millisecond != 0 {
		return fmt.Errorf("time of day %v is finer than a millisecond", d)
	}
	return nil
}

// ParseTimeOfDay parses a wall clock time "HH:MM:SS.mmm" (also "HH:MM:SS"
// and "HH:MM") into the time elapsed since midnight.
func ParseTimeOfDay(s string) (time.Duration, error) {
	var h, m, sec, ms int
	var ok bool
	switch len(s) {
	case len("15:04"):
		ok = scanDigits(s, "dd:dd", &h, &m)
	case len("15:04:05"):
		ok = scanDigits(s, "dd:dd:dd", &h, &m, &sec)
	case len("15:04:05.000"):
		ok = scanDigits(s, "dd:dd:dd.ddd", &h, &m, &sec, &ms)
	}
	if !ok || h > 23 || m > 59 || sec > 59 {
		return 0, fmt.Errorf("invalid time of day %q, want HH:MM:SS.mmm", s)
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(sec)*time.Second + time.Duration(ms)*time.Millisecond, nil
}

// scanDigits matches s against layout, where each run of 'd' is a decimal
// number stored in the next of nums and every other byte must match
// exactly.
func scanDigits(s, layout string, nums ...*int) bool {
	if len(s) != len(layout) {
		return false
	}
	n := -1
	for i := 0; i < len(layout); i++ {
		if layout[i] != 'd' {
			if s[i] != layout[i] {
				return false
			}
			continue
		}
		if i == 0 || layout[i-1] != 'd' {
			n++
			*nums[n] = 0
		}
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		*nums[n] = *nums[n]*10 + int(s[i]-'0')
	}
	return true
}

// FormatTimeOfDay formats a time since midnight as "HH:MM:SS.mmm".
func FormatTimeOfDay(d time.Duration) string {
	return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Add(d).Format("15:04:05.000")
}

// WithBase returns a copy of the calendar chained to base (nil for none).
func (c *Daily) WithBase(base Calendar) *Daily {
	cp := *c
	cp.base = base
	return &cp
}

// WithDescription returns a copy of the calendar with description desc.
func (c *Daily) WithDescription(desc string) *Daily {
	cp := *c
	cp.desc = desc
	return &cp
}

// Range returns the start and end of the range as time since midnight.
func (c *Daily) Range() (start, end time.Duration) { return c.start, c.end }

// Inverted reports whether the range is the included part of the day.
func (c *Daily) Inverted() bool { return c.invert }

// Includes reports whether t is allowed by the calendar and its base.
func (c *Daily) Includes(t time.Time) bool { return chainIncludes(c, t) }

// NextIncluded returns the earliest instant at or after t allowed by the
// calendar and its base, or the zero time when there is none before Horizon.
func (c *Daily) NextIncluded(t time.Time) time.Time { return chainNext(c, t) }

// excludesAll reports whether the range covers the whole day of a calendar
// that is not inverted.
func (c *Daily) excludesAll() bool {
	return !c.invert && c.start == 0 && c.end == day-time.Millisecond
}

// rangeOn returns the instants at which the range starts and ends on the
// local date of t.
func (c *Daily) rangeOn(t time.Time) (start, end time.Time) {
	y, m, d := t.In(c.loc).Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return resolveWall(c.loc, midnight.Add(c.start)), resolveWall(c.loc, midnight.Add(c.end))
}

func (c *Daily) ownIncludes(t time.Time) bool {
	if c.excludesAll() {
		return false
	}
	start, end := c.rangeOn(t)
	t = truncateMillis(t)
	inRange := !t.Before(start) && !t.After(end)
	return inRange == c.invert
}

func (c *Daily) ownNext(t time.Time) time.Time {
	if c.excludesAll() {
		return time.Time{}
	}
	for t.Before(Horizon) {
		start, end := c.rangeOn(t)
		tm := truncateMillis(t)
		switch {
		case c.invert && tm.Before(start):
			t = start
		case c.invert && tm.After(end):
			t = startOfNextDay(c.loc, t)
		case c.invert:
			return t
		case tm.Before(start) || tm.After(end):
			return t
		default:
			t = end.Add(time.Millisecond)
		}
	}
	return time.Time{}
}
