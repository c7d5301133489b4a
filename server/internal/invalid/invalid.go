// Package invalid defines the error the server's storage packages
// (server/history, server/livelog) return for a request they refuse
// before touching the database: one definition, which each package names
// as its own InvalidError and matches to its own ErrInvalid sentinel.
package invalid

import "fmt"

// Error is a request refused before the database is touched.
// errors.Is(err, e.Err) holds for it.
type Error struct {
	// Err is the sentinel of the package that refused the request, such
	// as history.ErrInvalid; its text starts the message.
	Err error
	// Field names the argument at fault, such as "Query.Limit" or
	// "lines[2].Seq"; empty when it is the whole request.
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// New returns an *Error of sentinel about field.
func New(sentinel error, field, format string, args ...any) *Error {
	return &Error{Err: sentinel, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Error returns the sentinel's text, and the field with the reason.
func (e *Error) Error() string {
	prefix := "invalid request"
	if e.Err != nil {
		prefix = e.Err.Error()
	}
	if e.Field == "" {
		return prefix + ": " + e.Reason
	}
	return prefix + ": " + e.Field + " " + e.Reason
}

// Is reports whether target is the sentinel e.Err.
func (e *Error) Is(target error) bool { return e.Err != nil && target == e.Err }
