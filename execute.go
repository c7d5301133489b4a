package chime

import (
	"context"
	"errors"
	"fmt"
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

// execute runs one firing: listeners, veto, the job itself, and the outcome.
func (s *Scheduler) execute(ctx context.Context, f *engine.Firing) engine.Outcome {
	s.mu.RLock()
	job, registered := s.jobTypes[f.Job.Type]
	jobListeners := slices.Clone(s.jobListeners)
	triggerListeners := slices.Clone(s.triggerListeners)
	s.mu.RUnlock()

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
	jobKey := jc.Job.Key
	var triggerKey TriggerKey
	if jc.Trigger != nil {
		triggerKey = jc.Trigger.Key
	}

	vetoed := false
	for _, l := range triggerListeners {
		if jc.Trigger == nil || !l.Matcher.Match(triggerKey) {
			continue
		}
		if l.Fired != nil {
			s.callListener(jc, "trigger listener "+l.Name, func() { l.Fired(ctx, jc) })
		}
		if l.VetoExecution != nil && !vetoed {
			s.callListener(jc, "trigger listener "+l.Name, func() { vetoed = l.VetoExecution(ctx, jc) })
		}
	}
	if vetoed {
		for _, l := range jobListeners {
			if l.ExecutionVetoed != nil && l.Matcher.Match(jobKey) {
				s.callListener(jc, "job listener "+l.Name, func() { l.ExecutionVetoed(ctx, jc) })
			}
		}
		return engine.Outcome{Vetoed: true}
	}
	for _, l := range jobListeners {
		if l.ToBeExecuted != nil && l.Matcher.Match(jobKey) {
			s.callListener(jc, "job listener "+l.Name, func() { l.ToBeExecuted(ctx, jc) })
		}
	}

	if !f.LeaseValid() {
		// The node's lease lapsed while the listeners ran: another node
		// may be running this execution by now. The engine holds it.
		return engine.Outcome{NotStarted: true}
	}
	runCtx := ctx
	if jc.Job.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, jc.Job.Timeout, ErrTimeout)
		defer cancel()
	}
	jobErr := runJob(runCtx, job, jc)
	if jobErr != nil {
		var pe *PanicError
		if errors.As(jobErr, &pe) {
			jc.Logger.Error("job panicked", "panic", formatValue(pe.Value), "stack", string(pe.Stack))
		} else if failure := jobError(jobErr); failure != nil {
			jc.Logger.Warn("job failed", "error", failure)
		}
	}

	for _, l := range jobListeners {
		if l.WasExecuted != nil && l.Matcher.Match(jobKey) {
			s.callListener(jc, "job listener "+l.Name, func() { l.WasExecuted(ctx, jc, jobErr) })
		}
	}
	for _, l := range triggerListeners {
		if l.Completed != nil && jc.Trigger != nil && l.Matcher.Match(triggerKey) {
			s.callListener(jc, "trigger listener "+l.Name, func() { l.Completed(ctx, jc, jobErr) })
		}
	}

	out := engine.Outcome{Err: jobError(jobErr)}
	if je, ok := jobErr.(*JobError); ok {
		out.RefireImmediately = je.RefireImmediately
		out.UnscheduleFiringTrigger = je.UnscheduleFiringTrigger
		out.UnscheduleAllTriggers = je.UnscheduleAllTriggers
	}
	if jc.Job.PersistJobDataAfterExecution {
		data, err := s.encodeData("JobContext.Job.Data", jc.Job.Data)
		if err != nil {
			// The stored data stays as it was; the execution fails so the
			// loss of the job's output is visible.
			jc.Logger.Error("cannot persist the job data the job left; keeping the stored data", "error", err)
			out.Err = errors.Join(out.Err, err)
		} else {
			out.JobData = data
			if out.JobData == nil {
				out.JobData = []byte("{}")
			}
		}
	}
	return out
}

// runJob runs the job and turns a panic into a PanicError.
func runJob(ctx context.Context, job Job, jc *JobContext) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return job.Execute(ctx, jc)
}

// callListener runs a listener callback and logs a panic instead of
// crashing the worker.
func (s *Scheduler) callListener(jc *JobContext, name string, call func()) {
	defer func() {
		if r := recover(); r != nil {
			jc.Logger.Error("listener panicked", "listener", name, "panic", formatValue(r))
		}
	}()
	call()
}

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
	attrs := []any{"job_key", detail.Key.String(), "execution_id", f.Execution.ID, "scheduled_fire_time", f.Execution.ScheduledTime}
	if f.Trigger != nil {
		info, err := triggerInfoWith(f.Trigger, f.Schedule)
		if err != nil {
			return nil, err
		}
		jc.Trigger = &info.Trigger
		jc.NextFireTime = info.NextFireTime
		merged = merged.merge(info.Data)
		attrs = append(attrs, "trigger_key", info.Key.String())
	}
	if merged == nil {
		merged = JobData{}
	}
	jc.MergedData = merged
	jc.Logger = s.log.With(attrs...)
	return jc, nil
}

func formatValue(v any) string { return fmt.Sprint(v) }
