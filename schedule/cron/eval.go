package cron

import (
	"math/bits"
	"time"

	"github.com/chime-scheduler/chime/internal/javatime"
)

// maxIterations bounds the search loop. Real expressions need a few
// iterations per month at most; the bound only guarantees termination.
const maxIterations = 1 << 17

// calendar mirrors the part of java.util.GregorianCalendar that Quartz's
// CronExpression relies on: wall-clock fields that may be set out of range
// and are normalised (lenient carry, then Java's resolution of the wall
// time in the zone, see internal/javatime) the next time they are read.
// Quartz's DST behaviour follows from exactly when that normalisation
// happens, so the search below reads and writes the fields in the same
// order as Quartz 2.3.2 does.
type calendar struct {
	year, month, day, hour, minute, second int // month 1..12 once normalised
	dirty                                  bool
	unix                                   int64
	zone                                   *javatime.Zone
}

func (c *calendar) setInstant(u int64) {
	c.unix = u
	c.setWall(c.zone.Wall(u))
	c.dirty = false
}

func (c *calendar) setWall(w int64) {
	days := floorDiv(w, secondsPerDay)
	rem := int(w - days*secondsPerDay)
	c.year, c.month, c.day = civilFromDays(days)
	c.hour = rem / 3600
	c.minute = rem / 60 % 60
	c.second = rem % 60
}

// normalize carries out-of-range fields and resolves the wall time in the
// zone. Normalised fields are a fixed point, so setting a field to the
// value it already has needs no new normalisation.
func (c *calendar) normalize() {
	if !c.dirty {
		return
	}
	w := wallSeconds(c.year, c.month, c.day, c.hour, c.minute, c.second)
	u := c.zone.Resolve(w)
	c.setWall(c.zone.Wall(u))
	c.unix = u
	c.dirty = false
}

func (c *calendar) setSecond(v int) {
	if v != c.second {
		c.second, c.dirty = v, true
	}
}

func (c *calendar) setMinute(v int) {
	if v != c.minute {
		c.minute, c.dirty = v, true
	}
}

func (c *calendar) setHour(v int) {
	if v != c.hour {
		c.hour, c.dirty = v, true
	}
}

func (c *calendar) setDay(v int) {
	if v != c.day {
		c.day, c.dirty = v, true
	}
}

func (c *calendar) setMonth(v int) {
	if v != c.month {
		c.month, c.dirty = v, true
	}
}

func (c *calendar) setYear(v int) {
	if v != c.year {
		c.year, c.dirty = v, true
	}
}

// setHourSkippingGap sets the hour; when the wall time it lands on does not
// exist and normalisation moves it to another hour, it sets the next hour
// instead (Quartz's setCalendarHour).
func (c *calendar) setHourSkippingGap(hour int) {
	c.setHour(hour)
	c.normalize()
	if c.hour != hour && hour != 24 {
		c.setHour(hour + 1)
	}
}

// addYear adds one year, keeping the day within the month.
func (c *calendar) addYear() {
	c.normalize()
	c.year++
	c.day = min(c.day, monthLength(c.year, c.month))
	c.dirty = true
}

// startOfDay moves the time of day to midnight.
func (c *calendar) startOfDay() {
	c.setSecond(0)
	c.setMinute(0)
	c.setHour(0)
}

// next returns the first fire time at or after the instant start (unix
// seconds), evaluated in loc.
func (e *Expression) next(start int64, loc *time.Location) (int64, bool) {
	if e.never {
		return 0, false
	}
	zone := javatime.NewZone(loc)
	c := calendar{zone: &zone}
	c.setInstant(start)
	c.dirty = true // Quartz clears the milliseconds, which renormalises.

	for range maxIterations {
		c.normalize()
		if c.year > MaxYear {
			return 0, false
		}

		// Second.
		sec, minute := c.second, c.minute
		if s, ok := nextBit(e.seconds, sec); ok {
			sec = s
		} else {
			sec = firstBit(e.seconds)
			minute++
			c.setMinute(minute)
		}
		c.setSecond(sec)
		c.normalize()

		// Minute.
		minute, hour := c.minute, c.hour
		t := -1
		if m, ok := nextBit(e.minutes, minute); ok {
			t, minute = minute, m
		} else {
			minute = firstBit(e.minutes)
			hour++
		}
		if minute != t {
			c.setSecond(0)
			c.setMinute(minute)
			c.setHourSkippingGap(hour)
			continue
		}

		// Hour.
		hour, day := c.hour, c.day
		t = -1
		if h, ok := nextBit(e.hours, hour); ok {
			t, hour = hour, h
		} else {
			hour = firstBit(e.hours)
			day++
		}
		if hour != t {
			c.setSecond(0)
			c.setMinute(0)
			c.setDay(day)
			c.setHourSkippingGap(hour)
			continue
		}

		// Day.
		if !e.stepDay(&c, start) {
			continue
		}

		// Month.
		month, year := c.month, c.year
		if year > MaxYear {
			return 0, false
		}
		t = -1
		if m, ok := nextBit(e.months, month); ok {
			t, month = month, m
		} else {
			month = firstBit(e.months)
			year++
		}
		if month != t {
			c.startOfDay()
			c.setDay(1)
			c.setMonth(month)
			c.setYear(year)
			continue
		}

		// Year.
		y, ok := e.nextYear(c.year)
		if !ok {
			return 0, false
		}
		if y != c.year {
			c.startOfDay()
			c.setDay(1)
			c.setMonth(1)
			c.setYear(y)
			continue
		}
		c.normalize()
		return c.unix, true
	}
	return 0, false
}

// nextYear returns the first allowed year >= y.
func (e *Expression) nextYear(y int) (int, bool) {
	if y > MaxYear {
		return 0, false
	}
	i := max(y-MinYear, 0)
	for w := i / 64; w < len(e.years); w++ {
		word := e.years[w]
		if w == i/64 {
			word = word >> uint(i%64) << uint(i%64)
		}
		if word != 0 {
			return MinYear + w*64 + bits.TrailingZeros64(word), true
		}
	}
	return 0, false
}

func (e *Expression) hasYearValue(y int) bool {
	if y < MinYear || y > MaxYear {
		return false
	}
	i := y - MinYear
	return e.years[i/64]>>uint(i%64)&1 == 1
}

// stepDay moves c to the first allowed day at or after its current day,
// following Quartz's rules for each day form. It returns false when it
// moved the calendar and the search must start over, true when the
// current day is allowed.
func (e *Expression) stepDay(c *calendar, start int64) bool {
	day, month := c.day, c.month
	switch e.rule {
	case dayByMonth:
		t, tmonth := -1, month
		switch e.monthDay {
		case monthDayLast:
			t = day
			day = monthLength(c.year, month) - e.lastOffset
			if t > day {
				month++
				if month > 12 {
					month = 1
					tmonth = -1
					c.addYear()
				}
				day = 1
			}
		case monthDayLastWeekday:
			t = day
			last := monthLength(c.year, month)
			target := last - e.lastOffset
			if target < 1 {
				// No such day this month (L-30W in February).
				day = 1
				month++
				break
			}
			w := nearestWeekday(c.year, month, target, last)
			if c.wallInstant(c.year, month, w) < start {
				day = 1
				month++
			} else {
				day = w
			}
		case monthDayNearest:
			t = day
			last := monthLength(c.year, month)
			target := e.nearestDay
			if target > last {
				// The month lacks the day (31W in April): no fire in it.
				day = target
				month++
				break
			}
			w := nearestWeekday(c.year, month, target, last)
			if c.wallInstant(c.year, month, w) < start {
				day = target
				month++
			} else {
				day = w
			}
		default:
			if d, ok := nextBit(e.daysOfMonth, day); ok {
				t, day = day, d
				if day > monthLength(c.year, month) {
					day = firstBit(e.daysOfMonth)
					month++
				}
			} else {
				day = firstBit(e.daysOfMonth)
				month++
			}
		}
		if day != t || month != tmonth {
			c.startOfDay()
			c.setDay(day)
			c.setMonth(month)
			return false
		}
		return true

	case dayByWeek:
		current := weekdayOf(c.year, month, day)
		last := monthLength(c.year, month)
		switch e.weekDay {
		case weekDayLast:
			add := daysUntil(current, e.weekDayNum)
			if day+add > last {
				c.nextMonth(month)
				return false
			}
			for day+add+7 <= last {
				add += 7
			}
			if add > 0 {
				c.startOfDay()
				c.setDay(day + add)
				c.setMonth(month)
				return false
			}
		case weekDayNth:
			add := daysUntil(current, e.weekDayNum)
			shifted := add > 0
			day += add
			week := day / 7
			if day%7 > 0 {
				week++
			}
			add = (e.nth - week) * 7
			day += add
			if add < 0 || day > last {
				c.nextMonth(month)
				return false
			}
			if add > 0 || shifted {
				c.startOfDay()
				c.setDay(day)
				c.setMonth(month)
				return false
			}
		default:
			want := firstBit(e.daysOfWeek)
			if d, ok := nextBit(e.daysOfWeek, current); ok {
				want = d
			}
			add := daysUntil(current, want)
			if day+add > last {
				c.nextMonth(month)
				return false
			}
			if add > 0 {
				c.startOfDay()
				c.setDay(day + add)
				c.setMonth(month)
				return false
			}
		}
		return true

	default: // dayBoth, dayEither: the standard dialect.
		last := monthLength(c.year, month)
		wd := weekdayOf(c.year, month, day)
		for d := day; d <= last; d++ {
			byMonth := e.daysOfMonth>>uint(d)&1 == 1
			byWeek := e.daysOfWeek>>uint(wd)&1 == 1
			if (e.rule == dayBoth && byMonth && byWeek) || (e.rule == dayEither && (byMonth || byWeek)) {
				if d == day {
					return true
				}
				c.startOfDay()
				c.setDay(d)
				return false
			}
			wd = wd%7 + 1
		}
		c.nextMonth(month)
		return false
	}
}

// nextMonth moves c to midnight of the first day of the month after month.
func (c *calendar) nextMonth(month int) {
	c.startOfDay()
	c.setDay(1)
	c.setMonth(month + 1)
}

// wallInstant resolves the given date at c's current time of day.
func (c *calendar) wallInstant(year, month, day int) int64 {
	return c.zone.Resolve(wallSeconds(year, month, day, c.hour, c.minute, c.second))
}

// daysUntil returns how many days from weekday from to the next weekday
// to (0 when equal); both 1 = Sunday … 7 = Saturday.
func daysUntil(from, to int) int {
	return (to - from + 7) % 7
}

// nearestWeekday returns the weekday (Monday to Friday) nearest to day in
// the same month: a Saturday moves back to Friday unless it is the 1st
// (then Monday the 3rd), a Sunday moves on to Monday unless it is the last
// day (then Friday).
func nearestWeekday(year, month, day, last int) int {
	switch weekdayOf(year, month, day) {
	case 7:
		if day == 1 {
			return day + 2
		}
		return day - 1
	case 1:
		if day == last {
			return day - 2
		}
		return day + 1
	}
	return day
}

// provablyNever reports whether no month in the allowed months and years
// can hold an allowed day, so that Next can answer at once.
func (e *Expression) provablyNever() bool {
	if e.dialect == dialectEvery {
		return false
	}
	for y := MinYear; y <= MaxYear; y++ {
		if !e.hasYearValue(y) {
			continue
		}
		for m := 1; m <= 12; m++ {
			if e.months>>uint(m)&1 == 1 && e.monthCanFire(y, m) {
				return false
			}
		}
	}
	return true
}

// monthCanFire reports whether some day of the month satisfies the day
// fields.
func (e *Expression) monthCanFire(year, month int) bool {
	last := monthLength(year, month)
	switch e.rule {
	case dayByMonth:
		switch e.monthDay {
		case monthDayLast, monthDayLastWeekday:
			return last-e.lastOffset >= 1
		case monthDayNearest:
			return e.nearestDay <= last
		default:
			return e.daysOfMonth != 0 && firstBit(e.daysOfMonth) <= last
		}
	case dayByWeek:
		if e.weekDay == weekDayNth {
			first := daysUntil(weekdayOf(year, month, 1), e.weekDayNum) + 1
			return first+(e.nth-1)*7 <= last
		}
		return e.daysOfWeek != 0
	default:
		wd := weekdayOf(year, month, 1)
		for d := 1; d <= last; d++ {
			byMonth := e.daysOfMonth>>uint(d)&1 == 1
			byWeek := e.daysOfWeek>>uint(wd)&1 == 1
			if (e.rule == dayBoth && byMonth && byWeek) || (e.rule == dayEither && (byMonth || byWeek)) {
				return true
			}
			wd = wd%7 + 1
		}
		return false
	}
}
