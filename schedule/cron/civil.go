package cron

// Proleptic Gregorian calendar arithmetic on plain integers. Wall-clock
// times are handled as "wall seconds": seconds since 1970-01-01T00:00:00 of
// the local calendar, with no zone attached.

const secondsPerDay = 86400

// floorDiv returns a/b rounded towards negative infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

// daysFromCivil returns the number of days from 1970-01-01 to the given
// date. month must be in 1..12; day may be any value (it is added
// linearly, so day 0 is the last day of the previous month).
func daysFromCivil(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	m := int64(month)
	var mp int64
	if m > 2 {
		mp = m - 3
	} else {
		mp = m + 9
	}
	doy := (153*mp+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(days int64) (year, month, day int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	var m int64
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return int(y), int(m), int(d)
}

// wallSeconds converts possibly out-of-range calendar fields to wall
// seconds, carrying overflow the way a lenient calendar does: month 13 is
// January of the next year, day 32 of January is February 1st, hour 24 is
// midnight of the next day.
func wallSeconds(year, month, day, hour, minute, second int) int64 {
	m := int64(month - 1)
	year += int(floorDiv(m, 12))
	month = int(m-floorDiv(m, 12)*12) + 1
	days := daysFromCivil(year, month, day)
	return days*secondsPerDay + int64(hour)*3600 + int64(minute)*60 + int64(second)
}

func isLeap(year int) bool {
	return year%4 == 0 && (year%100 != 0 || year%400 == 0)
}

// monthLength returns the number of days of month (1..12) in year.
func monthLength(year, month int) int {
	switch month {
	case 2:
		if isLeap(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	default:
		return 31
	}
}

// weekdayOfDays returns the day of the week of a day number, 1 = Sunday …
// 7 = Saturday (Quartz numbering). 1970-01-01 was a Thursday.
func weekdayOfDays(days int64) int {
	w := (days + 4) % 7 // 0 = Sunday
	if w < 0 {
		w += 7
	}
	return int(w) + 1
}

// weekdayOf returns the Quartz day of the week (1 = Sunday) of a date.
func weekdayOf(year, month, day int) int {
	return weekdayOfDays(daysFromCivil(year, month, day))
}
