package schedule

import (
	"math"
	"time"
)

// Unit is the unit of a calendar-interval or daily-time-interval schedule's
// interval. The names are Quartz's IntervalUnit names.
type Unit string

// Interval units. Daily-time-interval schedules accept only seconds,
// minutes and hours.
const (
	UnitSecond Unit = "SECOND"
	UnitMinute Unit = "MINUTE"
	UnitHour   Unit = "HOUR"
	UnitDay    Unit = "DAY"
	UnitWeek   Unit = "WEEK"
	UnitMonth  Unit = "MONTH"
	UnitYear   Unit = "YEAR"
)

// valid reports whether u is one of the seven units.
func (u Unit) valid() bool {
	switch u {
	case UnitSecond, UnitMinute, UnitHour, UnitDay, UnitWeek, UnitMonth, UnitYear:
		return true
	}
	return false
}

// seconds is the length of a second, minute or hour unit in seconds (zero
// for calendar units).
func (u Unit) seconds() int64 {
	switch u {
	case UnitSecond:
		return 1
	case UnitMinute:
		return 60
	case UnitHour:
		return 3600
	}
	return 0
}

// CalendarInterval fires at StartTime and then every Interval Units on the
// calendar of Location (Quartz's CalendarIntervalTrigger). Seconds, minutes
// and hours are fixed lengths of time; days, weeks, months and years keep
// the local time of day across daylight-saving changes as Java's calendar
// arithmetic does, and a day of month the month lacks is clamped to its last
// day, which then persists (31 Jan, 29 Feb, 29 Mar, …).
type CalendarInterval struct {
	// Unit is the interval's unit. Required.
	Unit Unit
	// Interval is the number of units between fires; at least 1.
	Interval int
	// Location is the time zone of the calendar arithmetic; nil means UTC.
	Location *time.Location
	// PreserveHourOfDayAcrossDaylightSavings keeps the start time's hour of
	// day for day, week, month and year units even when a daylight-saving
	// change would shift it.
	PreserveHourOfDayAcrossDaylightSavings bool
	// SkipDayIfHourDoesNotExist, with PreserveHourOfDayAcrossDaylightSavings,
	// skips a fire whose hour does not exist that day (a spring-forward gap)
	// instead of firing at the shifted hour.
	SkipDayIfHourDoesNotExist bool
}

// NewCalendarInterval returns a validated calendar-interval schedule firing
// every interval units in the IANA zone tz ("" means UTC).
func NewCalendarInterval(unit Unit, interval int, tz string) (*CalendarInterval, error) {
	loc, err := loadLocation("time_zone", tz)
	if err != nil {
		return nil, err
	}
	s := &CalendarInterval{Unit: unit, Interval: interval, Location: loc}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Kind returns KindCalendarInterval.
func (s *CalendarInterval) Kind() Kind { return KindCalendarInterval }

// Validate checks the unit and interval.
func (s *CalendarInterval) Validate() error {
	if !s.Unit.valid() {
		return invalid("unit", "%q is not one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR", string(s.Unit))
	}
	if s.Interval < 1 {
		return invalid("interval", "%d is less than 1", s.Interval)
	}
	if s.Interval > math.MaxInt32 {
		return invalid("interval", "%d exceeds %d", s.Interval, math.MaxInt32)
	}
	return nil
}

func (s *CalendarInterval) location() *time.Location { return locOrUTC(s.Location) }

func (s *CalendarInterval) allowsInstruction(m MisfireInstruction) bool {
	return m.universal() || m == MisfireFireOnceNow || m == MisfireDoNothing
}

func (s *CalendarInterval) firstFireTime(t *Trigger) time.Time {
	return msTime(t.StartTime.UnixMilli(), s.location())
}

func (s *CalendarInterval) fireTimeAfter(t *Trigger, after time.Time) time.Time {
	startMs, afterMs := t.StartTime.UnixMilli(), after.UnixMilli()
	hasEnd := !t.EndTime.IsZero()
	endMs := t.EndTime.UnixMilli()
	if hasEnd && endMs <= afterMs {
		return time.Time{}
	}
	if afterMs < startMs {
		return msTime(startMs, s.location())
	}
	loc := s.location()
	interval := int64(s.Interval)
	secondsAfterStart := 1 + (afterMs-startMs)/1000
	c := jcal{startMs, loc}
	switch s.Unit {
	case UnitSecond, UnitMinute, UnitHour:
		step := interval * s.Unit.seconds()
		jumps := secondsAfterStart / step
		if secondsAfterStart%step != 0 {
			jumps++
		}
		c = c.addMillis(jumps * step * msPerSecond)
	case UnitDay, UnitWeek:
		days := interval
		if s.Unit == UnitWeek {
			days *= 7
		}
		initialHour := c.hour()
		// Leap most of the way, then step: the leap's size decides the
		// path, which matters across daylight-saving changes.
		jumps := secondsAfterStart / (days * 86400)
		if jumps > 20 {
			switch {
			case jumps < 50:
				jumps = int64(float64(jumps) * 0.80)
			case jumps < 500:
				jumps = int64(float64(jumps) * 0.90)
			default:
				jumps = int64(float64(jumps) * 0.95)
			}
			c = c.addDays(days * jumps)
		}
		c = s.stepPast(c, afterMs, initialHour, func(c jcal) jcal { return c.addDays(days) })
	case UnitMonth:
		c = s.stepPast(c, afterMs, c.hour(), func(c jcal) jcal { return c.addMonths(s.Interval) })
	case UnitYear:
		c = s.stepPast(c, afterMs, c.hour(), func(c jcal) jcal { return c.addYears(s.Interval) })
	}
	if c.year() >= horizonYear {
		return time.Time{}
	}
	if hasEnd && endMs <= c.ms {
		return time.Time{}
	}
	return msTime(c.ms, loc)
}

// stepPast adds the interval until c is after afterMs, then applies the
// preserve-hour-of-day rule.
func (s *CalendarInterval) stepPast(c jcal, afterMs int64, initialHour int, add func(jcal) jcal) jcal {
	for c.ms <= afterMs && c.year() < horizonYear {
		c = add(c)
	}
	for {
		var again bool
		c, again = s.restoreHour(c, initialHour, afterMs)
		if !again || c.year() >= horizonYear {
			return c
		}
		c = add(c)
	}
}

// restoreHour puts a fire time shifted by a daylight-saving change back on
// the start time's hour when PreserveHourOfDayAcrossDaylightSavings is set.
// It reports whether the time must move on by one more interval: the hour
// does not exist that day and SkipDayIfHourDoesNotExist is set, or the
// restored time is no longer after afterMs.
func (s *CalendarInterval) restoreHour(c jcal, initialHour int, afterMs int64) (jcal, bool) {
	if !s.PreserveHourOfDayAcrossDaylightSavings || c.hour() == initialHour {
		return c, false
	}
	c = c.withHour(initialHour)
	if c.hour() != initialHour {
		return c, s.SkipDayIfHourDoesNotExist
	}
	return c, c.ms <= afterMs
}
