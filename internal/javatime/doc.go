// Package javatime turns local wall-clock readings into instants the way
// Java's lenient java.util.GregorianCalendar does, and finds the instants at
// which a time zone changes its UTC offset. Quartz computes every fire time
// with that calendar, so chime's cron evaluator, its interval triggers and
// its exclusion calendars all resolve wall-clock times through this package.
//
// # The Java rule
//
// GregorianCalendar reads a wall-clock time with the offset that follows the
// last zone transition whose own wall-clock time (the transition instant
// shown with the new offset) is not after the reading. Two behaviours follow:
//
//   - A reading inside a gap (clocks moving forward) is read with the offset
//     from before the gap, so it lands past the gap: 02:30 on a
//     spring-forward night in New York is 03:30 daylight time.
//   - A reading that occurs twice (clocks moving back) is read with the
//     offset from after the transition: the later of its two occurrences.
//
// # Probing instead of ZoneBounds
//
// Everything here is built on one question to the time package: the
// offset at a single instant. Location.ZoneBounds is not used. Past the end
// of a zone's transition table (2037 for most zones) the time package
// derives the bounds from the zone's POSIX rule one UTC year at a time: it
// cuts periods at year boundaries, and in leap years it reports the last
// period of the year as ending a day early, before the instant that was
// asked about. The offsets it reports are right; only the bounds are not.
//
// Probing is exact because of a property of the tz database: a zone never
// changes its offset twice within 72 hours (the closest pair, Freetown in
// 1939, is 95 hours apart), and no offset is 16 hours or more from UTC. So
// two probes at most 72 hours apart that agree prove the offset constant
// between them, and two that disagree enclose exactly one transition, which
// bisection finds to the second. A wall-clock time w is then resolved with
// two probes: the offset o at instant w+16h, then the offset at instant w-o,
// which is the one Java uses (Zone.WallOffset gives the reasoning).
//
// # Cost
//
// A Zone remembers the stretches of constant offset it has learnt, so one
// evaluation (one cron Next, one calendar query) probes a couple of times
// and then mostly answers from memory, without allocating. A Zone is a
// value owned by a single evaluation and is not safe for concurrent use.
//
// Times are whole Unix seconds; a "wall" value is seconds since 1970-01-01
// 00:00:00 of the local calendar, with no zone attached. Offsets change only
// at whole seconds, so callers with finer readings resolve the whole second
// below them and keep their fraction.
package javatime
