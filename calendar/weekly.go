package calendar

import (
	"fmt"
	"time"
)

// Weekly excludes days of the week, like Quartz's WeeklyCalendar: every
// instant whose weekday in the calendar's time zone is excluded. Unlike
// Quartz's no-argument constructor, it excludes nothing by default.
type Weekly struct {
	common
	days [7]bool
	all  bool
}

// NewWeekly returns a calendar that excludes the given weekdays in loc.
// Excluding all seven days is allowed: the calendar then includes nothing.
func NewWeekly(loc *time.Location, days ...time.Weekday) (*Weekly, error) {
	c, err := newCommon(loc)
	if err != nil {
		return nil, err
	}
	w := &Weekly{common: c}
	for i, d := range days {
		if d < time.Sunday || d > time.Saturday {
			return nil, fieldErrorf(fmt.Sprintf("excludedDaysOfWeek[%d]", i), "invalid weekday %d", int(d))
		}
		w.days[d] = true
	}
	w.all = true
	for _, ex := range w.days {
		w.all = w.all && ex
	}
	return w, nil
}

// WithBase returns a copy of the calendar chained to base (nil for none).
func (c *Weekly) WithBase(base Calendar) *Weekly {
	cp := *c
	cp.base = base
	return &cp
}

// WithDescription returns a copy of the calendar with description desc.
func (c *Weekly) WithDescription(desc string) *Weekly {
	cp := *c
	cp.desc = desc
	return &cp
}

// Days returns the excluded weekdays, Sunday first.
func (c *Weekly) Days() []time.Weekday {
	var out []time.Weekday
	for d, ex := range c.days {
		if ex {
			out = append(out, time.Weekday(d))
		}
	}
	return out
}

// Includes reports whether t is allowed by the calendar and its base.
func (c *Weekly) Includes(t time.Time) bool { return chainIncludes(c, t) }

// NextIncluded returns the earliest instant at or after t allowed by the
// calendar and its base, or the zero time when there is none before Horizon.
func (c *Weekly) NextIncluded(t time.Time) time.Time { return chainNext(c, t) }

func (c *Weekly) ownIncludes(t time.Time) bool { return !c.excluded(t.In(c.loc)) }

func (c *Weekly) ownNext(t time.Time) time.Time {
	if c.all {
		return time.Time{}
	}
	return nextIncludedDay(c.loc, t, c.excluded)
}

func (c *Weekly) excluded(local time.Time) bool { return c.days[local.Weekday()] }
