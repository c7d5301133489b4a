package cron

import (
	"strings"
	"time"
)

// MaxYear is the last year chime evaluates. Next returns the zero time when
// an expression has no fire time through the end of this year.
const MaxYear = 2199

// MinYear is the first year a Quartz year field may name.
const MinYear = 1970

type dialect uint8

const (
	dialectQuartz dialect = iota
	dialectStandard
	dialectDescriptor
	dialectEvery
)

// dayRule says how the day-of-month and day-of-week fields combine.
type dayRule uint8

const (
	dayByMonth dayRule = iota // Quartz: day-of-week is '?'
	dayByWeek                 // Quartz: day-of-month is '?'
	dayBoth                   // standard: both fields must match
	dayEither                 // standard: either field may match
)

// monthDayKind refines dayByMonth.
type monthDayKind uint8

const (
	monthDaySet         monthDayKind = iota // plain set of days
	monthDayLast                            // L or L-n
	monthDayNearest                         // nW
	monthDayLastWeekday                     // LW or L-nW
)

// weekDayKind refines dayByWeek.
type weekDayKind uint8

const (
	weekDaySet  weekDayKind = iota // plain set of days of the week
	weekDayLast                    // nL: last such day of the month
	weekDayNth                     // n#k: k-th such day of the month
)

// Expression is a parsed cron schedule. It is immutable and safe for
// concurrent use.
type Expression struct {
	dialect dialect
	text    string    // canonical form, returned by String
	fields  [7]string // canonical text of each field (Quartz order)
	hasYear bool      // the year field was given and restricts something

	seconds, minutes, hours uint64 // bit n set = value n allowed
	daysOfMonth             uint64 // bits 1..31
	months                  uint64 // bits 1..12
	daysOfWeek              uint64 // bits 1..7, 1 = Sunday
	years                   [4]uint64

	rule       dayRule
	monthDay   monthDayKind
	weekDay    weekDayKind
	lastOffset int // L-n: n
	nearestDay int // nW: n
	weekDayNum int // nL, n#k: n (1 = Sunday)
	nth        int // n#k: k

	never bool          // provably never fires
	every time.Duration // @every
}

// String returns the canonical form of the expression. Parsing it again
// (with Parse, or with the parser of the expression's dialect) gives an
// equal schedule.
func (e *Expression) String() string { return e.text }

// Next returns the first fire time strictly after after, evaluated in
// after.Location(). Sub-second precision of after is dropped first, so
// fire times are always whole seconds. Next returns the zero time when the
// expression has no fire time through the end of MaxYear.
//
// For an @every schedule, Next returns after, truncated to the second,
// plus the interval.
func (e *Expression) Next(after time.Time) time.Time {
	loc := after.Location()
	start := after.Unix() + 1
	if e.dialect == dialectEvery {
		u := start - 1 + int64(e.every/time.Second)
		t := time.Unix(u, 0).In(loc)
		if t.Year() > MaxYear {
			return time.Time{}
		}
		return t
	}
	u, ok := e.next(start, loc)
	if !ok {
		return time.Time{}
	}
	return time.Unix(u, 0).In(loc)
}

// NextN returns up to n successive fire times after after; fewer when the
// schedule ends.
func (e *Expression) NextN(after time.Time, n int) []time.Time {
	if n <= 0 {
		return nil
	}
	out := make([]time.Time, 0, n)
	t := after
	for len(out) < n {
		t = e.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

// Matches reports whether t, truncated to the second, is a fire time of the
// expression in t.Location(): whether Next of the second before t is t.
// A wall time that occurs twice at a DST overlap matches only at its second
// occurrence, and a wall time in a DST gap never matches, as in Quartz.
// An @every schedule has no fixed grid; Matches reports true for it.
func (e *Expression) Matches(t time.Time) bool {
	if e.dialect == dialectEvery {
		return true
	}
	u, ok := e.next(t.Unix(), t.Location())
	return ok && u == t.Unix()
}

// Parse parses an expression in either dialect. The rule is:
//
//   - an expression whose first non-blank character is '@' is a descriptor
//     of the standard dialect (@daily, @every 5m, …);
//   - an expression with 5 fields is a standard cron expression;
//   - an expression with 6 or 7 fields is a Quartz cron expression;
//   - anything else is an error.
func Parse(expr string) (*Expression, error) {
	trimmed := trimBlank(expr)
	if strings.HasPrefix(trimmed, "@") {
		return ParseStandard(expr)
	}
	switch n := len(splitFields(trimmed)); n {
	case 5:
		return ParseStandard(expr)
	case 6, 7:
		return ParseQuartz(expr)
	default:
		return nil, &ParseError{Expr: expr, Value: expr, Reason: fieldCountReason(n, "5, 6 or 7")}
	}
}

// trimBlank removes ASCII white space around an expression.
func trimBlank(s string) string {
	return strings.Trim(s, " \t\n\r\v\f")
}

// splitFields splits on runs of spaces and tabs; other characters,
// including line breaks inside the expression, belong to the fields.
func splitFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
}
