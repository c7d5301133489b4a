// Package cron parses and evaluates cron expressions with the exact
// semantics of Quartz 2.3.2's CronExpression, plus the standard 5-field
// dialect and @-descriptors.
//
// # Quartz dialect
//
// ParseQuartz accepts 6 or 7 fields separated by spaces or tabs:
//
//	second minute hour day-of-month month day-of-week [year]
//
//	field          values            special forms
//	second         0-59              * , - /
//	minute         0-59              * , - /
//	hour           0-23              * , - /
//	day-of-month   1-31              * , - / ? L L-n LW L-nW nW
//	month          1-12 or JAN-DEC   * , - /
//	day-of-week    1-7 or SUN-SAT    * , - / ? L nL n#k   (1 = Sunday)
//	year           1970-2199         * , - /
//
// Names are case-insensitive. A range whose end is before its start wraps
// around (FRI-MON, hours 22-2, months NOV-FEB), and a step walks on across
// the wrap (hours 20-4/3 is 20, 23, 2). Exactly one of day-of-month and
// day-of-week must be '?'. L is the last day of the month, L-n the n-th day
// before it (n ≤ 30; no fire in a month where that day does not exist), nW
// the weekday nearest day n within the same month, LW the last weekday. In
// day-of-week a lone L is Saturday, nL the last such day of the month and
// n#k the k-th such day (k 1-5). Steps are limited to 59 (seconds,
// minutes), 23 (hours), 31 (day-of-month), 12 (month) and 7 (day-of-week).
//
// chime is stricter than Quartz: it rejects, with a *ParseError naming the
// field, everything Quartz silently accepts or ignores — fields after the
// seventh, trailing junk (MON!, MONDAY, 1.5, 5C, *5), empty list items,
// zero, negative or oversized steps, L, W or # where Quartz ignores them or
// inside lists and ranges, a step after a name (MON/2), years outside
// 1970-2199, a bare /5, and 0W (on which Quartz loops forever).
//
// # Evaluation
//
// Next follows Quartz's search field by field on the wall clock of the
// zone of its argument, so results agree with Quartz also around DST
// changes: a wall time in a gap does not exist and is skipped, and a wall
// time that occurs twice (an overlap) fires at its second occurrence only.
// Where chime deliberately differs from Quartz: nW or L-nW for a day the
// month does not have (31W in April, L-30W in February) does not fire in
// that month; W and LW give the
// same answer whatever the milliseconds of the input; evaluation goes on
// through 2199 (Quartz stops 100 years after its clock); and every search
// terminates, an expression that can never fire (Feb 30) returning the zero
// time at once.
//
// # Standard dialect
//
// ParseStandard accepts the 5 fields of Vixie cron,
//
//	minute hour day-of-month month day-of-week
//
// with * , - / and month and day names; day-of-week 0 and 7 are both
// Sunday, and '?' in a day field means '*'. It fires at second 0. When both
// day fields are restricted (neither starts with '*'), a day matches when
// either matches, as in Vixie cron; otherwise both must match, so
// "0 0 */2 * MON" fires on Mondays that are odd days of the month. L, W
// and # are Quartz-only. The standard expression "m h dom mon dow" is the
// Quartz expression "0 m h dom mon dow" except for that OR rule and the
// day-of-week numbering. DST is handled as in the Quartz dialect.
//
// Descriptors are part of the standard dialect:
//
//	@yearly, @annually   0 0 1 1 *
//	@monthly             0 0 1 * *
//	@weekly              0 0 * * 0
//	@daily, @midnight    0 0 * * *
//	@hourly              0 * * * *
//	@every <duration>    a fixed interval, whole seconds, at least 1s
//
// @every has no calendar grid: Next(after) is after, truncated to the
// second, plus the interval, and Matches is true for every instant.
//
// # Choosing the dialect
//
// Parse decides by shape: an expression starting with '@' is a descriptor,
// one with 5 fields is standard, one with 6 or 7 fields is Quartz, and
// anything else is an error. String returns a canonical form in the
// dialect the expression was parsed from (descriptors keep their canonical
// name: @annually becomes @yearly), and parsing it again gives the same
// schedule.
//
// Expressions are immutable and safe for concurrent use; the package has
// no mutable state and never reads the clock.
package cron
