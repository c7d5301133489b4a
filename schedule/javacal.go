package schedule

import (
	"time"

	"github.com/chime-scheduler/chime/internal/javatime"
)

// This file reproduces the few operations of java.util.GregorianCalendar
// (lenient, one time zone) that Quartz's interval triggers are built on. The
// interval triggers' fire times depend on their exact behaviour around
// daylight-saving transitions and month ends, so it is restated here rather
// than approximated with the time package's normalisation:
//
//   - Adding days or weeks keeps the local time of day, computes the instant
//     with the offset in force before the addition, then corrects for an
//     offset change unless the correction would change the date.
//   - Adding months or years keeps the day of month when it exists and clamps
//     it to the month's last day otherwise (31 Jan + 1 month = 29 Feb).
//   - A wall-clock time is resolved to an instant as Java does (see
//     internal/javatime): a time in a gap (spring forward) moves forward, a
//     time that occurs twice (fall back) is its second occurrence.

const (
	msPerSecond = int64(1000)
	msPerMinute = 60 * msPerSecond
	msPerHour   = 60 * msPerMinute
	msPerDay    = 24 * msPerHour
)

// jcal is an instant (Unix milliseconds) viewed in a time zone.
type jcal struct {
	ms  int64
	loc *time.Location
}

func (c jcal) local() time.Time { return time.UnixMilli(c.ms).In(c.loc) }

func (c jcal) hour() int { return c.local().Hour() }

func (c jcal) year() int { return c.local().Year() }

func (c jcal) weekday() time.Weekday { return c.local().Weekday() }

// offsetAt is the zone's total UTC offset at instant ms, in milliseconds.
func offsetAt(ms int64, loc *time.Location) int64 {
	return javatime.OffsetAt(loc, floorDiv(ms, msPerSecond)) * msPerSecond
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// localDay is the local calendar day of instant ms, as days since the epoch.
func localDay(ms int64, loc *time.Location) int64 {
	return floorDiv(ms+offsetAt(ms, loc), msPerDay)
}

func (c jcal) addMillis(n int64) jcal { return jcal{c.ms + n, c.loc} }

// addDays adds n calendar days the way GregorianCalendar.add(DAY_OF_YEAR)
// does.
func (c jcal) addDays(n int64) jcal {
	if n == 0 {
		return c
	}
	off := offsetAt(c.ms, c.loc)
	wall := c.ms + off
	day := floorDiv(wall, msPerDay)
	timeOfDay := wall - day*msPerDay
	day += n
	ms := day*msPerDay + timeOfDay - off
	if diff := off - offsetAt(ms, c.loc); diff != 0 {
		if adjusted := ms + diff; localDay(adjusted, c.loc) == day {
			ms = adjusted
		}
	}
	return jcal{ms, c.loc}
}

// addMonths adds n months the way GregorianCalendar.add(MONTH) does.
func (c jcal) addMonths(n int) jcal {
	t := c.local()
	y, m := t.Year(), int(t.Month())-1+n
	y += int(floorDiv(int64(m), 12))
	m = int(int64(m) - floorDiv(int64(m), 12)*12)
	return c.withDate(y, time.Month(m+1), t.Day())
}

// addYears adds n years the way GregorianCalendar.add(YEAR) does.
func (c jcal) addYears(n int) jcal {
	t := c.local()
	return c.withDate(t.Year()+n, t.Month(), t.Day())
}

// withDate moves to date y-m-d (the day clamped to the month's length),
// keeping the local time of day.
func (c jcal) withDate(y int, m time.Month, d int) jcal {
	if last := daysIn(y, m); d > last {
		d = last
	}
	t := c.local()
	return jcal{wallToInstant(wallMillis(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1e6), c.loc), c.loc}
}

// withTimeOfDay sets the local time of day on the current local date, as a
// series of Calendar.set calls followed by getTime would.
func (c jcal) withTimeOfDay(h, mi, s, ms int) jcal {
	t := c.local()
	return jcal{wallToInstant(wallMillis(t.Year(), t.Month(), t.Day(), h, mi, s, ms), c.loc), c.loc}
}

// withHour sets the local hour, keeping minutes, seconds and milliseconds.
func (c jcal) withHour(h int) jcal {
	t := c.local()
	return c.withTimeOfDay(h, t.Minute(), t.Second(), t.Nanosecond()/1e6)
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// wallMillis is a local date and time as milliseconds since the epoch of the
// same wall clock in UTC; out-of-range fields carry over.
func wallMillis(y int, m time.Month, d, h, mi, s, ms int) int64 {
	return time.Date(y, m, d, h, mi, s, ms*1e6, time.UTC).UnixMilli()
}

// wallToInstant resolves a wall-clock time (wallMillis) in loc to an
// instant, with Java's rules for gaps and repeated hours. Offsets change on
// whole seconds, so the second holding wall decides.
func wallToInstant(wall int64, loc *time.Location) int64 {
	z := javatime.NewZone(loc)
	return wall - z.WallOffset(floorDiv(wall, msPerSecond))*msPerSecond
}
