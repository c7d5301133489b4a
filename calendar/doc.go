// Package calendar provides chime's exclusion calendars: rules that take
// instants out of the fire times of the triggers that use them, with the
// semantics of Quartz 2.3.2's calendars.
//
// # Types
//
//   - [Holiday] excludes whole local dates (Quartz's HolidayCalendar).
//   - [Weekly] excludes days of the week (WeeklyCalendar).
//   - [Monthly] excludes days of the month (MonthlyCalendar).
//   - [Annual] excludes days of the year, every year (AnnualCalendar).
//   - [Daily] excludes a time-of-day range, or with InvertTimeRange
//     everything but that range (DailyCalendar).
//   - [Cron] excludes the seconds a Quartz cron expression matches
//     (CronCalendar).
//
// Every calendar reads instants in its own time zone, and may have a base
// calendar: the calendars form a chain, and an instant is included only when
// every calendar of the chain includes it. Calendars are immutable; WithBase
// and WithDescription return modified copies, so a chain cannot loop. Build calendars with their constructors (NewDaily,
// NewWeekly, …) or Unmarshal; zero values are not usable. A calendar is safe
// for concurrent use.
//
// # Evaluation
//
// [Calendar.Includes] answers for one instant. [Calendar.NextIncluded]
// returns the earliest included instant at or after a given one; it jumps
// over excluded days, ranges and runs of cron-matched seconds rather than
// stepping through them, and reports the zero time when nothing is included
// before the year 2200 ([Horizon]). A chain that excludes everything (a
// weekly calendar excluding all seven days, a daily calendar covering the
// whole day, two calendars that exclude each other's gaps) therefore yields
// "never" instead of a search that does not end.
//
// Time zone transitions follow Quartz, which follows Java's
// GregorianCalendar: a day is the span of instants with one local date, so
// a holiday on a spring-forward day lasts 23 hours; a daily range end that
// falls in a spring-forward gap is read with the offset from before the gap,
// and one that occurs twice on a fall-back night is its later occurrence.
//
// # Differences from Quartz
//
// A non-inverted [Daily] calendar excludes only its range; Quartz also
// excludes the first and last millisecond (00:00:00.000 and 23:59:59.999)
// of every day. [Weekly] excludes no day unless told to (Quartz's default
// constructor excludes Saturday and Sunday). Evaluation always terminates,
// as described above.
//
// # JSON
//
// [Marshal] and [Unmarshal] convert calendar chains to and from the JSON
// definition format used by chime's stores, API and conformance cases, for
// example:
//
//	{"type": "daily", "tz": "Europe/Berlin", "rangeStart": "09:00:00.000",
//	 "rangeEnd": "17:00:00.000", "invertTimeRange": true,
//	 "base": {"type": "weekly", "tz": "Europe/Berlin", "excludedDaysOfWeek": [1, 7], "base": null}}
//
// Definitions are validated: a refused one yields a [*FieldError] naming the
// offending field ("rangeEnd", "base.tz", "excludedDates[2]"), which matches
// [ErrInvalid] with errors.Is; an unknown time zone also matches
// [ErrUnknownTimeZone].
package calendar
