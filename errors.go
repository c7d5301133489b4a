package chime

import (
	"errors"
	"strconv"
	"strings"

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

// ValidationError reports an invalid argument. Field is the path from
// the argument to the offending value: field names joined by dots, with
// list indexes in brackets, as in "triggers[2].Schedule.expression".
// Names are Go field names down to a schedule, whose fields have the
// names of package schedule (its JSON names). Each step of validation
// that descends into a value places the errors it gets under its own
// step with Under, so no caller rewrites a path; Steps returns the path
// step by step for callers that translate it, such as an API naming its
// own fields.
type ValidationError struct {
	Field  string
	Reason string
	Err    error
}

// Error returns "chime: <field>: <reason>", followed by the underlying
// error when there is one.
func (e *ValidationError) Error() string {
	msg := "chime: " + e.Field + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *ValidationError) Unwrap() error { return e.Err }

// Problem returns what is wrong without the path: the reason, followed by
// the underlying error when there is one.
func (e *ValidationError) Problem() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

// Under returns a copy of e whose path starts with parent, a field path
// such as "JobDetail" or "triggers[2]": e's own path goes after it.
func (e *ValidationError) Under(parent string) *ValidationError {
	c := *e
	switch {
	case parent == "":
	case c.Field == "":
		c.Field = parent
	case strings.HasPrefix(c.Field, "["):
		c.Field = parent + c.Field
	default:
		c.Field = parent + "." + c.Field
	}
	return &c
}

// underIndex is Under for the i-th element of the list named list.
func (e *ValidationError) underIndex(list string, i int) *ValidationError {
	return e.Under(list + "[" + strconv.Itoa(i) + "]")
}

// PathStep is one step of a ValidationError's path: a field's name, or,
// when IsIndex is set, an index into a list.
type PathStep struct {
	Name    string
	Index   int
	IsIndex bool
}

// Steps returns e's path step by step: "triggers[2].Priority" is the
// name "triggers", the index 2 and the name "Priority".
func (e *ValidationError) Steps() []PathStep {
	var steps []PathStep
	for part := range strings.SplitSeq(e.Field, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			steps = append(steps, PathStep{Name: name})
		}
		for rest != "" {
			var idx string
			idx, rest, _ = strings.Cut(rest, "]")
			rest = strings.TrimPrefix(rest, "[")
			n, err := strconv.Atoi(idx)
			if err != nil {
				// Not an index chime made: keep the text as a name.
				steps = append(steps, PathStep{Name: "[" + idx + "]"})
				continue
			}
			steps = append(steps, PathStep{Index: n, IsIndex: true})
		}
	}
	return steps
}

// placed returns err placed under parent when it is a *ValidationError,
// and err itself otherwise.
func placed(parent string, err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.Under(parent)
	}
	return err
}
