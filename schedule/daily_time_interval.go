package schedule

import (
	"fmt"
	"strings"
	"time"
)

// TimeOfDay is a local wall-clock time of day, to the second.
type TimeOfDay struct {
	Hour, Minute, Second int
}

// ParseTimeOfDay parses "HH:MM:SS" or "HH:MM".
func ParseTimeOfDay(s string) (TimeOfDay, error) {
	var tod TimeOfDay
	var n int
	var err error
	switch strings.Count(s, ":") {
	case 1:
		n, err = fmt.Sscanf(s, "%d:%d", &tod.Hour, &tod.Minute)
		n++
	case 2:
		n, err = fmt.Sscanf(s, "%d:%d:%d", &tod.Hour, &tod.Minute, &tod.Second)
	}
	if err != nil || n != 3 {
		return TimeOfDay{}, fmt.Errorf("schedule: time of day %q is not HH:MM:SS", s)
	}
	if err := tod.validate("time_of_day"); err != nil {
		return TimeOfDay{}, err
	}
	return tod, nil
}

// String formats the time of day as "HH:MM:SS".
func (d TimeOfDay) String() string {
	return fmt.Sprintf("%02d:%02d:%02d", d.Hour, d.Minute, d.Second)
}

// MarshalText encodes the time of day as "HH:MM:SS".
func (d TimeOfDay) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes "HH:MM:SS" or "HH:MM".
func (d *TimeOfDay) UnmarshalText(b []byte) error {
	v, err := ParseTimeOfDay(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Before reports whether d is earlier in the day than o.
func (d TimeOfDay) Before(o TimeOfDay) bool { return d.seconds() < o.seconds() }

func (d TimeOfDay) seconds() int { return d.Hour*3600 + d.Minute*60 + d.Second }

func (d TimeOfDay) validate(field string) error {
	if d.Hour < 0 || d.Hour > 23 || d.Minute < 0 || d.Minute > 59 || d.Second < 0 || d.Second > 59 {
		return invalid(field, "%02d:%02d:%02d is not a time of day", d.Hour, d.Minute, d.Second)
	}
	return nil
}

// on returns the instant of this time of day on c's local date.
func (d TimeOfDay) on(c jcal) jcal { return c.withTimeOfDay(d.Hour, d.Minute, d.Second, 0) }

// Weekdays is a set of days of the week.
type Weekdays uint8

// Common sets of days.
const (
	EveryDay           Weekdays = 1<<7 - 1
	MondayToFriday     Weekdays = 1<<time.Monday | 1<<time.Tuesday | 1<<time.Wednesday | 1<<time.Thursday | 1<<time.Friday
	SaturdayAndSunday  Weekdays = 1<<time.Saturday | 1<<time.Sunday
	weekdaysValidRange Weekdays = EveryDay
)

// NewWeekdays returns the set of the given days.
func NewWeekdays(days ...time.Weekday) Weekdays {
	var w Weekdays
	for _, d := range days {
		if d >= time.Sunday && d <= time.Saturday {
			w |= 1 << d
		}
	}
	return w
}

// Contains reports whether d is in the set.
func (w Weekdays) Contains(d time.Weekday) bool {
	return d >= time.Sunday && d <= time.Saturday && w&(1<<d) != 0
}

// Days lists the days in the set, Sunday first.
func (w Weekdays) Days() []time.Weekday {
	var out []time.Weekday
	for d := time.Sunday; d <= time.Saturday; d++ {
		if w.Contains(d) {
			out = append(out, d)
		}
	}
	return out
}

// DailyTimeInterval fires every Interval Units between StartTimeOfDay and
// EndTimeOfDay (both inclusive) on the chosen days of the week, in Location
// (Quartz's DailyTimeIntervalTrigger). Each day's series restarts at
// StartTimeOfDay. Unlike Quartz, which uses the JVM's default zone, the
// schedule carries its own time zone.
type DailyTimeInterval struct {
	// StartTimeOfDay is the first fire time of each day.
	StartTimeOfDay TimeOfDay
	// EndTimeOfDay is the last time of day a fire may happen; not before
	// StartTimeOfDay. Quartz's default is 23:59:59.
	EndTimeOfDay TimeOfDay
	// DaysOfWeek are the days the schedule fires on; at least one.
	DaysOfWeek Weekdays
	// Interval is the number of Units between fires, at least 1 and at
	// most 24 hours.
	Interval int
	// Unit is UnitSecond, UnitMinute or UnitHour.
	Unit Unit
	// RepeatCount stops the trigger after RepeatCount+1 fires in total;
	// RepeatForever (-1) never stops it.
	RepeatCount int
	// Location is the time zone of the times of day; nil means UTC.
	Location *time.Location
}

// NewDailyTimeInterval returns a validated daily-time-interval schedule in
// the IANA zone tz ("" means UTC).
func NewDailyTimeInterval(start, end TimeOfDay, days Weekdays, interval int, unit Unit, repeatCount int, tz string) (*DailyTimeInterval, error) {
	loc, err := loadLocation("time_zone", tz)
	if err != nil {
		return nil, err
	}
	s := &DailyTimeInterval{
		StartTimeOfDay: start,
		EndTimeOfDay:   end,
		DaysOfWeek:     days,
		Interval:       interval,
		Unit:           unit,
		RepeatCount:    repeatCount,
		Location:       loc,
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Kind returns KindDailyTimeInterval.
func (s *DailyTimeInterval) Kind() Kind { return KindDailyTimeInterval }

// Validate checks every field.
func (s *DailyTimeInterval) Validate() error {
	if err := s.StartTimeOfDay.validate("start_time_of_day"); err != nil {
		return err
	}
	if err := s.EndTimeOfDay.validate("end_time_of_day"); err != nil {
		return err
	}
	if s.EndTimeOfDay.Before(s.StartTimeOfDay) {
		return invalid("end_time_of_day", "%s is before the start time of day %s", s.EndTimeOfDay, s.StartTimeOfDay)
	}
	if s.DaysOfWeek&weekdaysValidRange == 0 || s.DaysOfWeek&^weekdaysValidRange != 0 {
		return invalid("days_of_week", "must hold at least one day and only days")
	}
	switch s.Unit {
	case UnitSecond, UnitMinute, UnitHour:
	default:
		return invalid("unit", "%q is not one of SECOND, MINUTE, HOUR", string(s.Unit))
	}
	if s.Interval < 1 {
		return invalid("interval", "%d is less than 1", s.Interval)
	}
	if int64(s.Interval)*s.Unit.seconds() > 24*3600 {
		return invalid("interval", "%d %s exceeds 24 hours", s.Interval, strings.ToLower(string(s.Unit)))
	}
	if s.RepeatCount < RepeatForever {
		return invalid("repeat_count", "%d is negative (use -1 to repeat forever)", s.RepeatCount)
	}
	return nil
}

func (s *DailyTimeInterval) location() *time.Location { return locOrUTC(s.Location) }

func (s *DailyTimeInterval) allowsInstruction(m MisfireInstruction) bool {
	return m.universal() || m == MisfireFireOnceNow || m == MisfireDoNothing
}

func (s *DailyTimeInterval) firstFireTime(t *Trigger) time.Time {
	return s.fireTimeAfter(t, t.StartTime.Add(-time.Second))
}

func (s *DailyTimeInterval) fireTimeAfter(t *Trigger, after time.Time) time.Time {
	if s.RepeatCount != RepeatForever && t.TimesTriggered > s.RepeatCount {
		return time.Time{}
	}
	loc := s.location()
	hasEnd := !t.EndTime.IsZero()
	endMs := t.EndTime.UnixMilli()

	c := jcal{after.UnixMilli() + msPerSecond, loc}
	if startMs := t.StartTime.UnixMilli(); c.ms < startMs {
		c.ms = startMs
	}
	pastEndOfDay := c.ms > s.EndTimeOfDay.on(c).ms
	c, ok := s.advanceToFiringDay(c, pastEndOfDay, hasEnd, endMs)
	if !ok {
		return time.Time{}
	}
	dayEnd := s.EndTimeOfDay.on(c)
	dayStart := s.StartTimeOfDay.on(c)
	if c.ms < dayStart.ms {
		c = dayStart
	} else {
		step := int64(s.Interval) * s.Unit.seconds()
		elapsed := (c.ms - dayStart.ms) / msPerSecond
		jumps := elapsed / step
		if elapsed%step != 0 {
			jumps++
		}
		c = dayStart.addMillis(jumps * step * msPerSecond)
		if c.ms > dayEnd.ms {
			sameDay := c.local().YearDay() == dayEnd.local().YearDay() && c.year() == dayEnd.year()
			c, ok = s.advanceToFiringDay(c, sameDay, hasEnd, endMs)
			if !ok {
				return time.Time{}
			}
			c = s.StartTimeOfDay.on(c)
		}
	}
	// Quartz checks the end time only on the day it moves to, so it can
	// return a time of day past the end time; chime never fires after it.
	if hasEnd && c.ms > endMs {
		return time.Time{}
	}
	return msTime(c.ms, loc)
}

// advanceToFiringDay moves c to the start time of day of the next day in
// DaysOfWeek when force is set or c's day is not in it (Quartz's
// advanceToNextDayOfWeekIfNecessary). It reports false when the result is
// after the trigger's end time.
func (s *DailyTimeInterval) advanceToFiringDay(c jcal, force, hasEnd bool, endMs int64) (jcal, bool) {
	dayStart := s.StartTimeOfDay.on(c)
	if force || !s.DaysOfWeek.Contains(dayStart.weekday()) {
		d := dayStart
		for range 7 {
			d = d.addDays(1)
			if s.DaysOfWeek.Contains(d.weekday()) {
				c = d
				break
			}
		}
	}
	if hasEnd && c.ms > endMs {
		return c, false
	}
	return c, true
}
