package calendar

import (
	"fmt"
	"time"
)

// Monthly excludes days of the month, like Quartz's MonthlyCalendar: every
// instant whose day of the month in the calendar's time zone is excluded.
// Excluding day 31 affects only the months that have one.
type Monthly struct {
	common
	days [32]bool // index 0 unused
	all  bool
}

// NewMonthly returns a calendar that excludes the given days of the month
// (1 to 31) in loc. Excluding all 31 days is allowed: the calendar then
// includes nothing.
func NewMonthly(loc *time.Location, days ...int) (*Monthly, error) {
	c, err := newCommon(loc)
	if err != nil {
		return nil, err
	}
	m := &Monthly{common: c}
	for i, d := range days {
		if d < 1 || d > 31 {
			return nil, fieldErrorf(fmt.Sprintf("excludedDaysOfMonth[%d]", i), "invalid day of month %d", d)
		}
		m.days[d] = true
	}
	m.all = true
	for _, ex := range m.days[1:] {
		m.all = m.all && ex
	}
	return m, nil
}

// WithBase returns a copy of the calendar chained to base (nil for none).
func (c *Monthly) WithBase(base Calendar) *Monthly {
	cp := *c
	cp.base = base
	return &cp
}

// WithDescription returns a copy of the calendar with description desc.
func (c *Monthly) WithDescription(desc string) *Monthly {
	cp := *c
	cp.desc = desc
	return &cp
}

// Days returns the excluded days of the month in increasing order.
func (c *Monthly) Days() []int {
	var out []int
	for d, ex := range c.days {
		if ex {
			out = append(out, d)
		}
	}
	return out
}

// Includes reports whether t is allowed by the calendar and its base.
func (c *Monthly) Includes(t time.Time) bool { return chainIncludes(c, t) }

// NextIncluded returns the earliest instant at or after t allowed by the
// calendar and its base, or the zero time when there is none before Horizon.
func (c *Monthly) NextIncluded(t time.Time) time.Time { return chainNext(c, t) }

func (c *Monthly) ownIncludes(t time.Time) bool { return !c.excluded(t.In(c.loc)) }

func (c *Monthly) ownNext(t time.Time) time.Time {
	if c.all {
		return time.Time{}
	}
	return nextIncludedDay(c.loc, t, c.excluded)
}

func (c *Monthly) excluded(local time.Time) bool { return c.days[local.Day()] }
