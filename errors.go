package chime

import (
	"errors"

	"github.com/chime-scheduler/chime/internal/engine"
	"github.com/chime-scheduler/chime/store"
)

// Errors returned by the scheduler. Store errors keep their identity, so
// callers test them with errors.Is.
var (
	// ErrJobNotFound: no job has the key.
	ErrJobNotFound = store.ErrJobNotFound
	// ErrJobExists: a job with the key exists and replace was not asked.
	ErrJobExists = store.ErrJobExists
	// ErrTriggerNotFound: no trigger has the key.
	ErrTriggerNotFound = store.ErrTriggerNotFound
	// ErrTriggerExists: a trigger with the key exists and replace was not
	// asked.
	ErrTriggerExists = store.ErrTriggerExists
	// ErrCalendarNotFound: no calendar has the name.
	ErrCalendarNotFound = store.ErrCalendarNotFound
	// ErrCalendarExists: a calendar with the name exists and replace was not
	// asked.
	ErrCalendarExists = store.ErrCalendarExists
	// ErrCalendarInUse: a trigger still uses the calendar.
	ErrCalendarInUse = store.ErrCalendarInUse
	// ErrVersionMismatch: a write conditional on a job's version (IfVersion)
	// found another version stored.
	ErrVersionMismatch = store.ErrVersionMismatch
	// ErrWillNeverFire: the trigger's schedule yields no fire time.
	ErrWillNeverFire = errors.New("chime: trigger will never fire")
	// ErrShutdown is ErrStopped, under its older name.
	//
	// Deprecated: use ErrStopped.
	ErrShutdown = ErrStopped
	// ErrInterrupted is the context cause of an interrupted job.
	ErrInterrupted = engine.ErrInterrupted
	// ErrStopped is the context cause of a job cancelled because the
	// scheduler stopped before it finished, and what Start returns on a
	// scheduler that was stopped.
	ErrStopped = engine.ErrStopped
	// ErrLeaseLost is the context cause of a job cancelled because its node
	// lost its cluster lease. When such a job fails and requests recovery,
	// its firing is re-run on a node that claims it (see Clusters in the
	// package documentation), not recorded as failed.
	ErrLeaseLost = engine.ErrLeaseLost
	// ErrTimeout is the context cause of a job that ran past its Timeout.
	ErrTimeout = errors.New("chime: job timed out")
)

// ValidationError reports an invalid argument; Field names it.
type ValidationError struct {
	Field  string
	Reason string
	Err    error
}

// Error returns "chime: <field>: <reason>".
func (e *ValidationError) Error() string {
	msg := "chime: " + e.Field + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *ValidationError) Unwrap() error { return e.Err }
