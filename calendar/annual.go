package calendar

import (
	"fmt"
	"slices"
	"time"
)

// MonthDay is a day of the year without a year: a month and a day of that
// month.
type MonthDay struct {
	Month time.Month
	Day   int
}

// ParseMonthDay parses a day of the year in the form "MM-DD", such as
// "12-25" or "02-29".
func ParseMonthDay(s string) (MonthDay, error) {
	// Parse within a leap year so that 02-29 is accepted.
	t, err := time.Parse(time.DateOnly, "2000-"+s)
	if err != nil || len(s) != len("01-02") {
		return MonthDay{}, fmt.Errorf("invalid day %q, want MM-DD", s)
	}
	return MonthDay{Month: t.Month(), Day: t.Day()}, nil
}

// String formats the day as "MM-DD".
func (md MonthDay) String() string {
	return fmt.Sprintf("%02d-%02d", int(md.Month), md.Day)
}

// valid reports whether the day exists in some year (02-29 does).
func (md MonthDay) valid() bool {
	return md.Month >= time.January && md.Month <= time.December && md.Day >= 1 &&
		md.Day <= daysIn(2000, md.Month)
}

// compare orders days of the year chronologically.
func (md MonthDay) compare(o MonthDay) int {
	if md.Month != o.Month {
		return int(md.Month) - int(o.Month)
	}
	return md.Day - o.Day
}

// Annual excludes days of the year, like Quartz's AnnualCalendar: every
// instant whose month and day in the calendar's time zone is excluded, in
// every year. An excluded 02-29 only matters in leap years.
type Annual struct {
	common
	days map[MonthDay]struct{}
	all  bool
}

// NewAnnual returns a calendar that excludes the given days of every year in
// loc. Excluding all 366 days is allowed: the calendar then includes
// nothing.
func NewAnnual(loc *time.Location, days ...MonthDay) (*Annual, error) {
	c, err := newCommon(loc)
	if err != nil {
		return nil, err
	}
	set := make(map[MonthDay]struct{}, len(days))
	for i, md := range days {
		if !md.valid() {
			return nil, fieldErrorf(fmt.Sprintf("excludedDays[%d]", i), "invalid day of the year %s", md)
		}
		set[md] = struct{}{}
	}
	return &Annual{common: c, days: set, all: len(set) == 366}, nil
}

// WithBase returns a copy of the calendar chained to base (nil for none).
func (c *Annual) WithBase(base Calendar) *Annual {
	cp := *c
	cp.base = base
	return &cp
}

// WithDescription returns a copy of the calendar with description desc.
func (c *Annual) WithDescription(desc string) *Annual {
	cp := *c
	cp.desc = desc
	return &cp
}

// Days returns the excluded days of the year in calendar order.
func (c *Annual) Days() []MonthDay {
	out := make([]MonthDay, 0, len(c.days))
	for md := range c.days {
		out = append(out, md)
	}
	slices.SortFunc(out, MonthDay.compare)
	return out
}

// Includes reports whether t is allowed by the calendar and its base.
func (c *Annual) Includes(t time.Time) bool { return chainIncludes(c, t) }

// NextIncluded returns the earliest instant at or after t allowed by the
// calendar and its base, or the zero time when there is none before Horizon.
func (c *Annual) NextIncluded(t time.Time) time.Time { return chainNext(c, t) }

func (c *Annual) ownIncludes(t time.Time) bool { return !c.excluded(t.In(c.loc)) }

func (c *Annual) ownNext(t time.Time) time.Time {
	if c.all {
		return time.Time{}
	}
	return nextIncludedDay(c.loc, t, c.excluded)
}

func (c *Annual) excluded(local time.Time) bool {
	_, ok := c.days[MonthDay{Month: local.Month(), Day: local.Day()}]
	return ok
}
