package schedule

import (
	"errors"
	"fmt"
	"time"
)

// Calendar is what a trigger needs from an exclusion calendar. Package
// calendar implements it; a nil Calendar excludes nothing.
type Calendar interface {
	// Includes reports whether instant t is allowed.
	Includes(t time.Time) bool
	// NextIncluded returns the earliest included instant at or after t, or
	// the zero time when there is none before the year 2200.
	NextIncluded(t time.Time) time.Time
}

// Kind names a schedule type. It is the "kind" discriminator of the JSON
// form and the kind stored with a trigger.
type Kind string

// The five schedule kinds.
const (
	KindCron              Kind = "cron"
	KindSimple            Kind = "simple"
	KindCalendarInterval  Kind = "calendar_interval"
	KindDailyTimeInterval Kind = "daily_time_interval"
	KindFixedDelay        Kind = "fixed_delay"
)

// Schedule is the timing rule of a trigger: one of *Cron, *Simple,
// *CalendarInterval, *DailyTimeInterval or *FixedDelay. The set is closed (the interface
// has unexported methods). Schedule values are immutable once built: to
// change a trigger's timing, replace its Schedule.
type Schedule interface {
	// Kind reports which of the five schedule types this is.
	Kind() Kind
	// Validate reports whether the schedule is well formed. The error is a
	// *ValidationError naming the offending field.
	Validate() error

	// fireTimeAfter is Quartz's getFireTimeAfter for this kind: the first
	// fire time strictly after after, given the trigger's start and end
	// times and firing state, ignoring calendars; zero when there is none.
	fireTimeAfter(t *Trigger, after time.Time) time.Time
	// firstFireTime is the first fire time of a trigger before calendars are
	// applied (Quartz's computeFirstFireTime without the calendar).
	firstFireTime(t *Trigger) time.Time
	// allowsInstruction reports whether a misfire instruction is defined for
	// this kind.
	allowsInstruction(m MisfireInstruction) bool
	// location is the zone the schedule is evaluated in.
	location() *time.Location
}

// ErrInvalid is matched (with errors.Is) by every *ValidationError.
var ErrInvalid = errors.New("invalid schedule")

// ValidationError reports a schedule or trigger field whose value is not
// acceptable. Field uses the JSON field name, for example "repeat_interval".
type ValidationError struct {
	Field  string // the offending field
	Reason string // what is wrong with it
	Err    error  // underlying cause, if any
}

// Error implements error.
func (e *ValidationError) Error() string {
	msg := fmt.Sprintf("schedule: invalid %s: %s", e.Field, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause.
func (e *ValidationError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInvalid) true for every ValidationError.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// horizonYear is the first year chime never fires in: every evaluation gives
// up (reports "no fire time") rather than produce a time in or after it.
const horizonYear = 2200

// loadLocation resolves an IANA zone name; "" means UTC.
func loadLocation(field, name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, &ValidationError{Field: field, Reason: fmt.Sprintf("unknown time zone %q", name), Err: err}
	}
	return loc, nil
}

func locOrUTC(loc *time.Location) *time.Location {
	if loc == nil {
		return time.UTC
	}
	return loc
}

// msTime converts Unix milliseconds to a time in loc.
func msTime(ms int64, loc *time.Location) time.Time {
	return time.UnixMilli(ms).In(loc)
}
