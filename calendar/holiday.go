package calendar

import (
	"fmt"
	"slices"
	"time"
)

// Date is a local calendar date, without a time of day or a zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate parses a date in the form "2006-01-02".
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("invalid date %q, want YYYY-MM-DD", s)
	}
	return DateOf(t), nil
}

// DateOf returns the date of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{Year: y, Month: m, Day: d}
}

// String formats the date as "2006-01-02".
func (d Date) String() string {
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// valid reports whether the date exists in the Gregorian calendar.
func (d Date) valid() bool {
	return d.Month >= time.January && d.Month <= time.December && d.Day >= 1 &&
		d.Day <= daysIn(d.Year, d.Month)
}

// compare orders dates chronologically.
func (d Date) compare(o Date) int {
	switch {
	case d.Year != o.Year:
		return d.Year - o.Year
	case d.Month != o.Month:
		return int(d.Month) - int(o.Month)
	default:
		return d.Day - o.Day
	}
}

// daysIn returns the number of days of month m in year y.
func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// Holiday excludes whole local dates, like Quartz's HolidayCalendar: every
// instant whose date in the calendar's time zone is one of the excluded
// dates.
type Holiday struct {
	common
	dates map[Date]struct{}
}

// NewHoliday returns a calendar that excludes the given local dates in loc.
func NewHoliday(loc *time.Location, dates ...Date) (*Holiday, error) {
	c, err := newCommon(loc)
	if err != nil {
		return nil, err
	}
	set := make(map[Date]struct{}, len(dates))
	for i, d := range dates {
		if !d.valid() {
			return nil, fieldErrorf(fmt.Sprintf("excludedDates[%d]", i), "invalid date %s", d)
		}
		set[d] = struct{}{}
	}
	return &Holiday{common: c, dates: set}, nil
}

// WithBase returns a copy of the calendar chained to base (nil for none).
func (c *Holiday) WithBase(base Calendar) *Holiday {
	cp := *c
	cp.base = base
	return &cp
}

// WithDescription returns a copy of the calendar with description desc.
func (c *Holiday) WithDescription(desc string) *Holiday {
	cp := *c
	cp.desc = desc
	return &cp
}

// Dates returns the excluded dates in chronological order.
func (c *Holiday) Dates() []Date {
	out := make([]Date, 0, len(c.dates))
	for d := range c.dates {
		out = append(out, d)
	}
	slices.SortFunc(out, Date.compare)
	return out
}

// Includes reports whether t is allowed by the calendar and its base.
func (c *Holiday) Includes(t time.Time) bool { return chainIncludes(c, t) }

// NextIncluded returns the earliest instant at or after t allowed by the
// calendar and its base, or the zero time when there is none before Horizon.
func (c *Holiday) NextIncluded(t time.Time) time.Time { return chainNext(c, t) }

func (c *Holiday) ownIncludes(t time.Time) bool { return !c.excluded(t.In(c.loc)) }

func (c *Holiday) ownNext(t time.Time) time.Time { return nextIncludedDay(c.loc, t, c.excluded) }

// excluded reports whether the local date of local is a holiday.
func (c *Holiday) excluded(local time.Time) bool {
	_, ok := c.dates[DateOf(local)]
	return ok
}
