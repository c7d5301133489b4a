package chime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"

	"github.com/chime-scheduler/chime/internal/engine"
)

// runner is the Scheduler as the engine's Runner: it runs the jobs the
// engine fires.
type runner struct{ s *Scheduler }

// Execute runs one firing; see Scheduler.execute.
func (r runner) Execute(ctx context.Context, f *engine.Firing) engine.Outcome {
	return r.s.execute(ctx, f)
}

// execute runs one firing, in the order its steps are written: build the
// job's context, let the trigger listeners veto the firing, tell the job
// listeners, check the lease one last time, run the job, tell the
// listeners how it went, and turn that into the engine's outcome.
func (s *Scheduler) execute(ctx context.Context, f *engine.Firing) engine.Outcome {
	job, registered, jobListeners, triggerListeners := s.firingSnapshot(f.Job.Type)
	jc, err := s.jobContext(f)
	if err != nil {
		s.log.Error("cannot build job context", "execution_id", f.Execution.ID, "error", err)
		return engine.Outcome{Err: err}
	}
	if !registered {
		err := fmt.Errorf("chime: job type %q of job %s is not registered on node %s", f.Job.Type, f.Job.Key, s.cfg.NodeID)
		jc.Logger.Error("job type not registered", "job_type", f.Job.Type)
		return engine.Outcome{Err: err}
	}
	listeners := newFiringListeners(jc, jobListeners, triggerListeners)
	if listeners.fired(ctx, jc) {
		listeners.vetoed(ctx, jc)
		return engine.Outcome{Vetoed: true}
	}
	listeners.toBeExecuted(ctx, jc)
	if !f.LeaseValid() {
		// The node's lease lapsed while the listeners ran: another node
		// may be running this execution by now. The engine holds it.
		return engine.Outcome{NotStarted: true}
	}
	jobErr := runJob(ctx, job, jc)
	listeners.executed(ctx, jc, jobErr)
	return s.outcome(jc, jobErr)
}

// firingSnapshot returns the job type's implementation, whether it is
// registered, and the listeners as registered when the firing begins.
func (s *Scheduler) firingSnapshot(jobType string) (Job, bool, []JobListener, []TriggerListener) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	job, registered := s.jobTypes[jobType]
	return job, registered, slices.Clone(s.jobListeners), slices.Clone(s.triggerListeners)
}

// jobContext builds the context of the job a firing runs.
func (s *Scheduler) jobContext(f *engine.Firing) (*JobContext, error) {
	detail, err := jobDetailOf(&f.Job)
	if err != nil {
		return nil, err
	}
	merged := detail.Data.Clone()
	jc := &JobContext{
		ExecutionID:       f.Execution.ID,
		FireTime:          f.Execution.FiredTime,
		ScheduledFireTime: f.Execution.ScheduledTime,
		PreviousFireTime:  f.PreviousFireTime,
		RefireCount:       f.RefireCount,
		Recovering:        f.Execution.Recovering,
		Job:               detail,
		Scheduler:         s,
	}
	attrs := make([]slog.Attr, 0, 4)
	attrs = append(attrs, slog.String("job_key", detail.Key.String()), slog.String("execution_id", f.Execution.ID),
		slog.Time("scheduled_fire_time", f.Execution.ScheduledTime))
	if f.Trigger != nil {
		info, err := triggerInfoWith(f.Trigger, f.Schedule)
		if err != nil {
			return nil, err
		}
		jc.Trigger = &info.Trigger
		jc.NextFireTime = info.NextFireTime
		merged = merged.merge(info.Data)
		attrs = append(attrs, slog.String("trigger_key", info.Key.String()))
	}
	if merged == nil {
		merged = JobData{}
	}
	jc.MergedData = merged
	// The handler gets the firing's keys when the job first logs.
	jc.Logger = slog.New(&deferredAttrs{next: s.log.Handler(), attrs: attrs})
	return jc, nil
}

// firingListeners are the listeners one firing tells, and the keys they
// are matched on, read before any of them ran.
type firingListeners struct {
	jobs       []JobListener
	triggers   []TriggerListener
	jobKey     JobKey
	triggerKey TriggerKey
}

func newFiringListeners(jc *JobContext, jobs []JobListener, triggers []TriggerListener) firingListeners {
	ls := firingListeners{jobs: jobs, triggers: triggers, jobKey: jc.Job.Key}
	if jc.Trigger != nil {
		ls.triggerKey = jc.Trigger.Key
	}
	return ls
}

// fired tells the matching trigger listeners that the trigger fired, and
// asks them for a veto until one vetoes. It reports whether one did.
func (ls firingListeners) fired(ctx context.Context, jc *JobContext) (vetoed bool) {
	if jc.Trigger == nil {
		return false
	}
	for _, l := range ls.triggers {
		if !l.Matcher.Match(ls.triggerKey) {
			continue
		}
		if l.Fired != nil {
			callListener(jc, "trigger listener "+l.Name, func() { l.Fired(ctx, jc) })
		}
		if l.VetoExecution != nil && !vetoed {
			callListener(jc, "trigger listener "+l.Name, func() { vetoed = l.VetoExecution(ctx, jc) })
		}
	}
	return vetoed
}

// vetoed tells the matching job listeners that the execution was vetoed.
func (ls firingListeners) vetoed(ctx context.Context, jc *JobContext) {
	for _, l := range ls.jobs {
		if l.ExecutionVetoed != nil && l.Matcher.Match(ls.jobKey) {
			callListener(jc, "job listener "+l.Name, func() { l.ExecutionVetoed(ctx, jc) })
		}
	}
}

// toBeExecuted tells the matching job listeners that the job is about to
// run.
func (ls firingListeners) toBeExecuted(ctx context.Context, jc *JobContext) {
	for _, l := range ls.jobs {
		if l.ToBeExecuted != nil && l.Matcher.Match(ls.jobKey) {
			callListener(jc, "job listener "+l.Name, func() { l.ToBeExecuted(ctx, jc) })
		}
	}
}

// executed tells the matching job listeners, then the matching trigger
// listeners, that the job ran and what it returned.
func (ls firingListeners) executed(ctx context.Context, jc *JobContext, jobErr error) {
	for _, l := range ls.jobs {
		if l.WasExecuted != nil && l.Matcher.Match(ls.jobKey) {
			callListener(jc, "job listener "+l.Name, func() { l.WasExecuted(ctx, jc, jobErr) })
		}
	}
	for _, l := range ls.triggers {
		if l.Completed != nil && jc.Trigger != nil && l.Matcher.Match(ls.triggerKey) {
			callListener(jc, "trigger listener "+l.Name, func() { l.Completed(ctx, jc, jobErr) })
		}
	}
}

// callListener runs a listener callback and logs a panic instead of
// crashing the worker.
func callListener(jc *JobContext, name string, call func()) {
	defer func() {
		if r := recover(); r != nil {
			jc.Logger.Error("listener panicked", "listener", name, "panic", formatValue(r))
		}
	}()
	call()
}

// runJob runs the job, within its Timeout when it has one, logs how it
// failed, and returns its error.
func runJob(ctx context.Context, job Job, jc *JobContext) error {
	if jc.Job.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, jc.Job.Timeout, ErrTimeout)
		defer cancel()
	}
	err := callJob(ctx, job, jc)
	var pe *PanicError
	if errors.As(err, &pe) {
		jc.Logger.Error("job panicked", "panic", formatValue(pe.Value), "stack", string(pe.Stack))
	} else if failure := jobError(err); failure != nil {
		jc.Logger.Warn("job failed", "error", failure)
	}
	return err
}

// callJob calls the job and turns a panic into a PanicError.
func callJob(ctx context.Context, job Job, jc *JobContext) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return job.Execute(ctx, jc)
}

// outcome turns what the job returned, and the data it left when its job
// persists data, into the engine's outcome.
func (s *Scheduler) outcome(jc *JobContext, jobErr error) engine.Outcome {
	out := engine.Outcome{Err: jobError(jobErr), RecordAfter: jc.recordAfter}
	if je, ok := jobErr.(*JobError); ok { //nolint:errorlint // only a JobError returned as such counts (see JobError)
		out.RefireImmediately = je.RefireImmediately
		out.UnscheduleFiringTrigger = je.UnscheduleFiringTrigger
		out.UnscheduleAllTriggers = je.UnscheduleAllTriggers
	}
	if jc.Job.PersistJobDataAfterExecution {
		s.persistJobData(jc, &out)
	}
	return out
}

// persistJobData puts the job data the job left in out, to be stored.
func (s *Scheduler) persistJobData(jc *JobContext, out *engine.Outcome) {
	data, err := s.encodeData("JobContext.Job.Data", jc.Job.Data)
	if err != nil {
		// The stored data stays as it was; the execution fails so the
		// loss of the job's output is visible.
		jc.Logger.Error("cannot persist the job data the job left; keeping the stored data", "error", err)
		out.Err = errors.Join(out.Err, err)
		return
	}
	out.JobData = data
	if out.JobData == nil {
		out.JobData = []byte("{}")
	}
}

func formatValue(v any) string { return fmt.Sprint(v) }
