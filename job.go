package chime

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"
)

// Job is the code a job type runs. Execute returns nil on success; an error
// built with RefireImmediately, UnscheduleFiringTrigger or
// UnscheduleAllTriggers also tells the scheduler what to do next. ctx is
// cancelled when the job is interrupted, times out, or the scheduler stops
// before it finishes; context.Cause tells which.
type Job interface {
	Execute(ctx context.Context, jc *JobContext) error
}

// JobFunc adapts a function to Job.
type JobFunc func(ctx context.Context, jc *JobContext) error

// Execute calls f.
func (f JobFunc) Execute(ctx context.Context, jc *JobContext) error { return f(ctx, jc) }

// TypedJob adapts a function taking its merged data map decoded into T.
func TypedJob[T any](f func(ctx context.Context, jc *JobContext, data T) error) Job {
	return JobFunc(func(ctx context.Context, jc *JobContext) error {
		var data T
		if err := jc.MergedData.Decode(&data); err != nil {
			return err
		}
		return f(ctx, jc, data)
	})
}

// JobDetail describes a stored job: which registered job type runs, with
// what data, under which rules.
type JobDetail struct {
	// Key identifies the job. Its name is required; an empty group means
	// DefaultGroup.
	Key JobKey
	// Type is the name the job's code was registered under with
	// Scheduler.Register. Required.
	Type string
	// Description is free text for people.
	Description string
	// Durable keeps the job when no trigger references it any more.
	Durable bool
	// RequestsRecovery re-runs the job on a live node when the node running
	// it dies, with JobContext.Recovering set and the original scheduled fire
	// time.
	RequestsRecovery bool
	// DisallowConcurrentExecution runs at most one execution of this job at
	// a time across the whole cluster; triggers due meanwhile wait (and
	// misfire if they wait too long).
	DisallowConcurrentExecution bool
	// PersistJobDataAfterExecution stores the data map the job leaves in
	// JobContext.Job.Data after each execution.
	PersistJobDataAfterExecution bool
	// Timeout cancels an execution's context after this long; zero for no
	// limit.
	Timeout time.Duration
	// Data is the job's data map.
	Data JobData
	// Metadata is a JSON value the program that schedules the job keeps
	// with it, such as its own settings for the job. The scheduler stores
	// it and returns it from Job and Jobs, and a running job sees it in
	// JobContext.Job, but it is never part of JobContext.MergedData nor
	// changed by an execution. It counts against Config.MaxJobDataBytes
	// on its own. Nil for none.
	Metadata json.RawMessage
	// Version is the stored job's version, which every write of the job
	// increments. It is set on the details Scheduler.Job and Scheduler.Jobs
	// return and ignored when storing; pass it back as IfVersion to update
	// the job only if nobody changed it since it was read.
	Version int64
}

// JobContext is what a running job knows about its firing.
type JobContext struct {
	// ExecutionID identifies this execution in the store.
	ExecutionID string
	// FireTime is when the job actually fired.
	FireTime time.Time
	// ScheduledFireTime is when the trigger was due.
	ScheduledFireTime time.Time
	// PreviousFireTime is the trigger's fire time before this one; zero for
	// the first.
	PreviousFireTime time.Time
	// NextFireTime is the trigger's next fire time; zero when it will not
	// fire again.
	NextFireTime time.Time
	// RefireCount counts immediate re-executions requested with
	// RefireImmediately.
	RefireCount int
	// Recovering is set when the job re-runs because the node that first ran
	// it died.
	Recovering bool
	// MergedData is the job's data overlaid with the trigger's.
	MergedData JobData
	// Job is the job's detail. With PersistJobDataAfterExecution, changes to
	// Job.Data are stored when the execution ends.
	Job *JobDetail
	// Trigger is the firing trigger; nil when a recovered execution's
	// trigger was deleted meanwhile.
	Trigger *Trigger
	// Logger logs with the job's and execution's attributes.
	Logger *slog.Logger
	// Scheduler is the scheduler running the job.
	Scheduler *Scheduler
	// Shard is the item of a sharded firing this execution runs; nil for
	// a job that is not sharded. The scheduler never sets it: chime
	// server does, for the items of its sharded jobs.
	Shard *Shard

	// recordAfter is set by RecordEndAfter.
	recordAfter <-chan struct{}
}

// RecordEndAfter makes the scheduler record the end of this execution in
// its store only once done is closed, while the worker goes on to the next
// job. A job that records its run somewhere of its own without waiting for
// the write (a history written in batches, say) passes the write's
// completion, so that the store never shows the execution ended before
// that record exists: a node that dies in between leaves the execution to
// the cluster's recovery, as one that dies while the job runs. Until then
// the execution counts as running (Scheduler.Executions), and a job that
// disallows concurrent execution does not fire again. When Scheduler.Stop
// gives up waiting first, the end is not recorded and the execution is
// recovered. Call it before Execute returns; the last call counts.
func (jc *JobContext) RecordEndAfter(done <-chan struct{}) {
	jc.recordAfter = done
}

// Shard is one item of a sharded firing: its index, from 0, among Total
// items.
type Shard struct {
	Index, Total int
}

// JobError is an error from a job that also tells the scheduler what to do
// next, as Quartz's JobExecutionException does. Err may be nil: the job
// succeeded and only asks for the action. The scheduler acts on a JobError
// that the job returns as such, not on one wrapped in another error, as
// Quartz acts on a JobExecutionException only when the job throws it.
type JobError struct {
	Err                     error
	RefireImmediately       bool
	UnscheduleFiringTrigger bool
	UnscheduleAllTriggers   bool
}

// Error describes the error and the requested action.
func (e *JobError) Error() string {
	action := ""
	switch {
	case e.RefireImmediately:
		action = "refire immediately"
	case e.UnscheduleAllTriggers:
		action = "unschedule all triggers"
	case e.UnscheduleFiringTrigger:
		action = "unschedule firing trigger"
	}
	if e.Err == nil {
		return "chime: job asks to " + action
	}
	return e.Err.Error() + " (" + action + ")"
}

// Unwrap returns the job's error.
func (e *JobError) Unwrap() error { return e.Err }

// RefireImmediately returns an error asking to run the job again at once,
// with the same JobContext and RefireCount incremented.
func RefireImmediately(err error) error { return &JobError{Err: err, RefireImmediately: true} }

// UnscheduleFiringTrigger returns an error asking that the firing trigger
// never fire again. err may be nil.
func UnscheduleFiringTrigger(err error) error {
	return &JobError{Err: err, UnscheduleFiringTrigger: true}
}

// UnscheduleAllTriggers returns an error asking that no trigger of the job
// fire again. err may be nil.
func UnscheduleAllTriggers(err error) error {
	return &JobError{Err: err, UnscheduleAllTriggers: true}
}

// PanicError is the error recorded when a job panics.
type PanicError struct {
	Value any
	Stack []byte
}

// Error describes the panic.
func (e *PanicError) Error() string { return "chime: job panicked: " + formatValue(e.Value) }

// jobError returns the failure within err: nil when a JobError carries only
// an action.
func jobError(err error) error {
	if je, ok := err.(*JobError); ok && je.Err == nil { //nolint:errorlint // only a JobError returned as such counts (see JobError)
		return nil
	}
	return err
}
