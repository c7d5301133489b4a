package cron

import "fmt"

// ParseError reports why an expression was rejected. Callers that need the
// details use errors.As.
type ParseError struct {
	// Expr is the whole expression as given.
	Expr string
	// Field names the offending field ("second", "minute", "hour",
	// "day-of-month", "month", "day-of-week", "year"), or is empty when
	// the problem concerns the expression as a whole.
	Field string
	// Value is the offending text: the field, or the whole expression
	// when Field is empty.
	Value string
	// Reason says what is wrong, in lower case.
	Reason string
}

// Error formats the error as `cron: day-of-month "32": value out of range
// 1-31`, or `cron: "<expr>": <reason>` for whole-expression problems.
func (e *ParseError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("cron: %q: %s", e.Value, e.Reason)
	}
	return fmt.Sprintf("cron: %s %q: %s", e.Field, e.Value, e.Reason)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
