package calendar

import (
	"errors"
	"fmt"
	"time"
)

// Calendar excludes instants from the fire times of the triggers that use
// it. Includes and NextIncluded take the whole chain into account: an
// instant is included only when the calendar and every calendar on its Base
// chain include it.
//
// Calendar satisfies schedule.Calendar.
type Calendar interface {
	// Includes reports whether instant t is allowed.
	Includes(t time.Time) bool
	// NextIncluded returns the earliest included instant at or after t, or
	// the zero time when there is none before the year 2200 (Horizon).
	NextIncluded(t time.Time) time.Time
	// Description returns the free-text description, possibly empty.
	Description() string
	// Base returns the next calendar of the chain, or nil.
	Base() Calendar
}

// Horizon is the instant from which NextIncluded reports "none": the zero
// time. Chime evaluates schedules through the year 2199.
var Horizon = time.Date(2200, time.January, 1, 0, 0, 0, 0, time.UTC)

// maxChainSteps bounds the rounds NextIncluded spends reconciling the
// calendars of a chain, a safety net behind Horizon: every round moves the
// candidate forward past at least one excluded piece.
const maxChainSteps = 10_000_000

// ErrInvalid is matched (with errors.Is) by every *FieldError: the
// definition of a calendar was refused.
var ErrInvalid = errors.New("invalid calendar")

// ErrUnknownTimeZone is wrapped by the error for a time zone name that is not
// in the IANA database available to the program.
var ErrUnknownTimeZone = errors.New("unknown time zone")

// FieldError reports a calendar definition that chime refuses. Field names
// the offending field as a JSON path, such as "rangeEnd" or "base.tz".
type FieldError struct {
	Field string
	Err   error
}

// Error implements error.
func (e *FieldError) Error() string {
	return fmt.Sprintf("calendar: %s: %v", e.Field, e.Err)
}

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInvalid) true for every *FieldError.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// fieldErrorf builds a *FieldError for field.
func fieldErrorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// prefixField prepends prefix to the field of a *FieldError, so errors from a
// base calendar name "base.tz" rather than "tz".
func prefixField(prefix string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Field: prefix + "." + fe.Field, Err: fe.Err}
	}
	return err
}

// own is implemented by chime's calendar types: what the calendar itself
// excludes, ignoring its base.
type own interface {
	Calendar
	// ownIncludes reports whether this calendar alone includes t.
	ownIncludes(t time.Time) bool
	// ownNext returns the earliest instant at or after t that this calendar
	// alone includes, or the zero time when there is none before Horizon.
	ownNext(t time.Time) time.Time
}

// common holds what every calendar type has: a time zone, a base and a
// description.
type common struct {
	loc  *time.Location
	base Calendar
	desc string
}

// newCommon validates loc and returns the shared part of a calendar.
func newCommon(loc *time.Location) (common, error) {
	if loc == nil {
		return common{}, fieldErrorf("tz", "time zone is required")
	}
	return common{loc: loc}, nil
}

// Base returns the next calendar of the chain, or nil.
func (c *common) Base() Calendar { return c.base }

// Description returns the free-text description, possibly empty.
func (c *common) Description() string { return c.desc }

// Location returns the time zone in which the calendar reads instants.
func (c *common) Location() *time.Location { return c.loc }

// chainIncludes reports whether every calendar of the chain starting at c
// includes t.
func chainIncludes(c own, t time.Time) bool {
	if !c.ownIncludes(t) {
		return false
	}
	base := c.Base()
	return base == nil || base.Includes(t)
}

// chainNext returns the earliest instant at or after t that every calendar
// of the chain starting at c includes, or the zero time when there is none
// before Horizon.
//
// Each calendar moves the candidate to the earliest instant at or after it
// that the calendar includes; that never passes the answer, so when a full
// round moves nothing the candidate is the answer.
func chainNext(c own, t time.Time) time.Time {
	var parts []Calendar
	for cal := Calendar(c); cal != nil; {
		parts = append(parts, cal)
		o, ok := cal.(own)
		if !ok {
			// A foreign calendar answers for its own chain.
			break
		}
		cal = o.Base()
	}
	loc := t.Location()
	for range maxChainSteps {
		if !t.Before(Horizon) {
			return time.Time{}
		}
		moved := false
		for _, p := range parts {
			var u time.Time
			if o, ok := p.(own); ok {
				u = o.ownNext(t)
			} else {
				u = p.NextIncluded(t)
			}
			if u.IsZero() {
				return time.Time{}
			}
			if u.After(t) {
				t, moved = u, true
			}
		}
		if !moved {
			return t.In(loc)
		}
	}
	return time.Time{}
}

// nextIncludedDay returns the earliest instant at or after t whose local date
// in loc is not excluded, or the zero time when there is none before Horizon.
func nextIncludedDay(loc *time.Location, t time.Time, excluded func(local time.Time) bool) time.Time {
	for t.Before(Horizon) {
		if !excluded(t.In(loc)) {
			return t
		}
		t = startOfNextDay(loc, t)
	}
	return time.Time{}
}
