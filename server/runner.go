package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/dispatch"
	"github.com/chime-scheduler/chime/server/history"
)

// errOverlapCancel is the context cause of an execution cancelled because
// a newer firing of its job, under the cancel overlap policy, replaces it.
var errOverlapCancel = errors.New("server: cancelled by a newer firing of the job (overlap: cancel)")

// killedError is the context cause of an execution a person killed
// through the API (see Server.KillExecution).
type killedError struct{ actor string }

func (e *killedError) Error() string { return "killed by " + e.actor }

// recordTimeout bounds each write of an execution's record, which uses a
// context that survives the job's cancellation.
const recordTimeout = 10 * time.Second

// maxLogLines bounds the log lines kept in memory per execution; the
// history keeps fewer.
const maxLogLines = 1000

// runner is the chime.Job the server registers under every job type it
// runs, built-in or Go. Each firing runs one attempt of a server job: it
// records the execution in the history, enforces the job's overlap policy
// and timeout, captures output and log lines, and then schedules a retry
// or raises an alert.
type runner struct {
	s   *Server
	typ string
}

// Execute runs one attempt.
func (r *runner) Execute(ctx context.Context, jc *chime.JobContext) error {
	return r.s.execute(ctx, r.typ, jc)
}

// attempt is one run of a job as the history records it.
type attempt struct {
	id, firstID string
	number      int
	job         chime.JobKey
	// triggerGroup and triggerName are the trigger whose fire time the run
	// is for; empty for a run by hand.
	triggerGroup, triggerName string
	scheduled                 time.Time
	manual, recovering        bool
	// params are the data the job runs with: its data overlaid with the
	// trigger's, without the server's keys.
	params map[string]any
	// triggerData is the firing trigger's own data, without the server's
	// keys, which a retry carries on.
	triggerData map[string]any
	// lostNode is the node a recovered run's earlier try was lost with,
	// and lost that try as the history recorded it.
	lostNode string
	lost     *history.Execution
	// released is true for a re-run of a try this node cancelled itself
	// when its lease lapsed (chime.ErrLeaseLost) and handed to recovery.
	released bool
	// succeeded is a recovered run's earlier try when the history has it
	// succeeded: its node was lost after it recorded the end, before the
	// scheduler did (see finishRecoveredSuccess).
	succeeded *history.Execution
	// started is when the run started.
	started time.Time
	// passing is true when the job goes with this run: it is not durable
	// and its trigger fires no more, so the job is deleted with the
	// trigger unless another trigger holds it (a one-shot job created
	// through the library). See metrics.attemptEnded.
	passing bool
	// executorID and executorInstance name the executor an executor job's
	// attempt was handed to.
	executorID, executorInstance string
	// workflow names the workflow task the attempt runs, if any.
	workflow *workflowFacts
	// cause is the parent's execution that ran this child job's, if any.
	cause string
	// shard places an item of a sharded firing; nil for other runs.
	shard *itemRun
	// log is the server's logger with the attempt's keys, its execution_id
	// the ID the API shows.
	log *slog.Logger
}

// execute runs one attempt of a job of type typ.
func (s *Server) execute(ctx context.Context, typ string, jc *chime.JobContext) error {
	s.metrics.fired(jc.ScheduledFireTime, jc.FireTime)
	a, err := s.newAttempt(ctx, jc)
	if err != nil {
		jc.Logger.Error("cannot record the execution", "error", err)
		return err
	}
	// The scheduler's logger names the scheduler's execution, which for a
	// retry, a run by hand or a recovery is not the one the history
	// records. The scheduler logs the job's failure with jc.Logger after
	// Execute returns, so that record names the attempt too.
	jc.Logger = a.log
	p, err := s.planOf(typ, jc)
	if a.succeeded != nil && !(p.sharded() && a.shard == nil) {
		s.finishRecoveredSuccess(ctx, a, p)
		return nil
	}
	if a.recovering {
		s.recordLost(ctx, a)
	}
	if a.workflow != nil && !s.startWorkflowTask(ctx, a) {
		return nil
	}

	if p.sharded() && a.shard == nil {
		return s.runParent(ctx, a, p, jc.Trigger == nil) // see shards.go
	}
	if a.shard != nil {
		a.shard.recovers = jc.Job.RequestsRecovery
		if !s.startItem(ctx, a) {
			return nil
		}
	}

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if a.shard != nil {
		a.shard.runCtx = runCtx
	}
	// Registered before the overlap marker is taken, so that another
	// execution on this node never mistakes the marker for a stale one.
	s.local.add(runCtx, a.id, cancel)
	defer s.local.remove(a.id)
	if p != nil && (p.overlap == api.OverlapSkip || p.overlap == api.OverlapCancel) {
		release, reason, ok := s.takeOverlap(runCtx, a, p.overlap)
		if !ok {
			s.recordSkipped(ctx, a, reason)
			return nil
		}
		defer release()
	}
	if p != nil && p.pool != nil { // see pools.go
		release, reason, ok := s.takePool(runCtx, jc, a, p.pool)
		if !ok {
			s.recordSkipped(ctx, a, reason)
			return nil
		}
		defer release()
	}

	if err == nil && p.executor != nil {
		return s.executeRemote(ctx, runCtx, cancel, p, jc, a)
	}
	s.recordStart(a)
	s.metrics.running.Inc()
	out := jobs.NewCapture(s.cfg.MaxOutputBytes)
	logs := newLogRecorder(a.log.Handler(), maxLogLines)
	endLive := s.streamLive(a.id, logs) // see livelogs.go
	runErr := err
	if runErr == nil {
		runErr = s.runJob(runCtx, typ, p, jc, a, out, logs)
	}
	s.metrics.running.Dec()
	outcome, msg := outcomeOf(runCtx, runErr, jc.Job.Timeout)
	s.recordEnd(ctx, jc, a, p, history.Finish{
		Outcome: outcome, FinishedTime: s.now(), Error: msg,
		Output: out.String(), OutputTruncated: out.Truncated(), Logs: logs.lines(),
	})
	endLive(ctx)
	return runErr
}

// planOf compiles the server's settings of jc's job, of type typ, for
// this node. The error says why the job cannot run here: its run records
// it as failed.
func (s *Server) planOf(typ string, jc *chime.JobContext) (*plan, error) {
	st, err := settingsOf(jc.Job)
	if err != nil {
		return nil, err
	}
	p, perr := compilePlan(typ, st, s.cfg.EnableShellJobs, s.isGoType(typ))
	if perr != nil {
		return nil, fmt.Errorf("the job's settings are not valid on this node: %w", perr)
	}
	return p, nil
}

// finishRecoveredSuccess ends a recovered run whose earlier try had
// succeeded: the node running it recorded the end in the history and was
// lost before the scheduler recorded it, so the cluster recovered the
// firing. The job does not run again. What follows a success (the end of
// a sharded item or of a workflow task, the runs of child jobs), which the
// lost node may not have reached, is done for that try; each step is
// idempotent, so that one the lost node did changes nothing.
func (s *Server) finishRecoveredSuccess(ctx context.Context, a *attempt, p *plan) {
	prev := *a
	prev.id, prev.number, prev.log = a.succeeded.ID, a.succeeded.Attempt, a.log.With("execution_id", a.succeeded.ID, "attempt", a.succeeded.Attempt)
	rec, done := recordCtx(ctx)
	defer done()
	s.decide(rec, a, history.DecisionSkipped, fmt.Sprintf("not re-run on node %s: attempt %d succeeded on node %s, which was lost after it recorded the end, before the scheduler did",
		s.NodeID(), a.succeeded.Attempt, a.succeeded.NodeID), a.succeeded.ID)
	f := history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: a.succeeded.FinishedTime}
	if prev.shard != nil {
		s.endItem(rec, &prev, true, "")
	}
	s.runChildren(rec, &prev, p, f)
	s.endWorkflowTask(rec, &prev, p, f)
}

// recordStart records a's execution as running. It queues the record and
// returns: a run is not held back for its history (see historyWriter).
// Its end, when it comes before the start was written, is written with it.
func (s *Server) recordStart(a *attempt) {
	a.started = s.now()
	s.recorder.start(a, a.execution(s.NodeID()))
}

// execution is a's execution as the history records its start.
func (a *attempt) execution(node string) *history.Execution {
	return &history.Execution{
		ID: a.id, FirstID: a.firstID, Attempt: a.number,
		JobGroup: a.job.Group, JobName: a.job.Name, TriggerGroup: a.triggerGroup, TriggerName: a.triggerName,
		NodeID: node, ScheduledTime: a.scheduled, StartedTime: a.started,
		Recovering: a.recovering, Manual: a.manual, Params: a.params,
		ExecutorID: a.executorID, ExecutorInstance: a.executorInstance, CauseID: a.cause,
	}
}

// recordEnd records how a's execution ended, then schedules its retry or
// raises its alert. The end is retried until the database takes it (see
// historyWriter and writeQueue), so that an outage neither loses a retry
// nor leaves the execution running, and an execution another node
// recorded as node_lost meanwhile (this node's lease lapsed during an
// outage) takes the outcome it really had.
//
// An attempt that did not succeed waits until the database took its end:
// its retry or alert follows a recorded end, and so does the recovery of
// a run cancelled for a lapsed lease, which reads the history. An attempt
// that succeeded has nothing left to decide (but for a workflow task's):
// the worker goes back to work while the writer records the end with
// others, and the scheduler records the execution's end only after the
// history took it (chime.JobContext.RecordEndAfter). So a node that dies
// before then leaves the execution running in the scheduler's store, and
// the cluster recovers it as one that died while the job ran: the run is
// re-run or recorded node_lost, never ended in the scheduler with no
// record in the history. Only while the writer lags behind
// (historyWriter.backlogged) does the worker wait too, which bounds what
// the writer holds.
func (s *Server) recordEnd(ctx context.Context, jc *chime.JobContext, a *attempt, p *plan, f history.Finish) {
	// After the retry, if any, was scheduled; see workflows.go and
	// children.go.
	defer s.endWorkflowTask(ctx, a, p, f)
	defer s.runChildren(ctx, a, p, f)
	s.metrics.attemptEnded(a, f.Outcome, f.FinishedTime)
	end := history.Record{ID: a.id, End: &f}
	// A workflow task's success decides what runs next (endWorkflowTask):
	// its end is in the history before the instance records it, so that a
	// node that dies in between leaves no task succeeded in its instance
	// with its execution lost in the history.
	if f.Outcome == history.OutcomeSucceeded && a.shard == nil && a.workflow == nil && !s.recorder.backlogged() {
		jc.RecordEndAfter(s.recorder.settle(a, end))
		s.afterSuccess(ctx, a, p)
		return
	}
	done := s.recorder.submit(a, end)
	if a.shard != nil {
		s.afterItem(ctx, a, p, f, done) // see shards.go
		return
	}
	if err := <-done; err != nil {
		return
	}
	s.afterAttempt(ctx, a, p, f.Outcome, f.Error)
}

// retryLeft reports whether attempt number of a job with plan p may be
// followed by a retry; a nil plan (settings this node cannot read) has none.
func (p *plan) retryLeft(number int) bool {
	return p != nil && number < p.retry.maxAttempts
}

// decides reports whether an attempt that ended with outcome leads to a
// decision: a retry, or an alert when none is left (see afterAttempt).
func decides(outcome history.Outcome) bool {
	switch outcome {
	case history.OutcomeFailed, history.OutcomeTimedOut, history.OutcomeNoExecutor, history.OutcomeExecutorLost:
		return true
	}
	return false
}

// recordCtx returns a context for recording an execution: it keeps ctx's
// values but survives its cancellation, so that a job cancelled by a
// timeout or a shutdown is still recorded, and it is bounded.
func recordCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
}

// newAttempt works out which attempt of which firing jc is.
func (s *Server) newAttempt(ctx context.Context, jc *chime.JobContext) (*attempt, error) {
	a := &attempt{
		id:         jc.ExecutionID,
		job:        jc.Job.Key,
		number:     1,
		scheduled:  jc.ScheduledFireTime,
		recovering: jc.Recovering,
		params:     map[string]any(jc.MergedData.Clone()),
		passing:    jc.Trigger != nil && !jc.Job.Durable && jc.NextFireTime.IsZero(),
	}
	if jc.Trigger != nil {
		a.triggerGroup, a.triggerName = jc.Trigger.Key.Group, jc.Trigger.Key.Name
		a.triggerData = map[string]any(jc.Trigger.Data.Clone())
		facts, err := factsOf(jc.Trigger)
		if err != nil {
			return nil, err
		}
		a.apply(facts)
	}
	if a.firstID == "" {
		a.firstID = a.id
	}
	if !jc.Recovering && jc.RefireCount == 0 {
		a.log = s.attemptLogger(a)
		return a, nil
	}
	// A re-run of a firing already tried (its node was lost, or the job
	// asked to be refired) is a further attempt of that firing.
	if jc.Recovering {
		first, err := s.history.Get(ctx, a.id)
		switch {
		case err == nil && first.Outcome == history.OutcomeSucceeded:
			a.succeeded = first
			a.log = s.attemptLogger(a)
			return a, nil
		case err == nil:
			if first.NodeID != s.NodeID() {
				a.lostNode, a.lost = first.NodeID, first
			} else {
				a.released = true
			}
		case errors.Is(err, history.ErrNotFound):
			// Its node died between firing it and recording it: the
			// history gets the lost try, so that the re-run is its next
			// attempt and the loss is told.
			lost := *a
			lost.log = s.attemptLogger(&lost)
			s.recordLostRun(ctx, &lost, "node lost after it fired the execution, before it recorded it; re-run on node "+s.NodeID())
		}
	}
	a.id = newID()
	prior, err := s.history.Attempts(ctx, a.firstID)
	switch {
	case errors.Is(err, history.ErrNotFound):
		// Nothing of the firing was recorded: this is its first attempt.
		a.firstID, a.number = a.id, 1
	case err != nil:
		return nil, err
	default:
		for _, e := range prior {
			a.number = max(a.number, e.Attempt+1)
		}
	}
	a.log = s.attemptLogger(a)
	return a, nil
}

// apply sets the identity of a run the server asked for from its facts:
// its execution ID, the firing it is an attempt of, and whether a person
// asked for it. Nil facts (a trigger's own firing) change nothing.
func (a *attempt) apply(facts *runFacts) {
	if facts == nil {
		return
	}
	if facts.ID != "" {
		a.id = facts.ID
	}
	a.firstID = facts.FirstID
	a.number = max(facts.Attempt, 1)
	if !facts.ScheduledTime.IsZero() {
		a.scheduled = facts.ScheduledTime
	}
	a.triggerGroup, a.triggerName = facts.TriggerGroup, facts.TriggerName
	a.manual = facts.Manual
	a.workflow = facts.Workflow
	a.cause = facts.Cause
	if facts.Shard != nil {
		a.shard = &itemRun{shardFacts: *facts.Shard}
	}
}

// attemptLogger returns the logger of a's records: the server's, with the
// job's key, the execution's ID as the API shows it, the attempt number,
// the scheduled time and the trigger the run is for. The server's handler
// gets those keys when the attempt first logs (see deferredAttrs).
func (s *Server) attemptLogger(a *attempt) *slog.Logger {
	attrs := make([]slog.Attr, 0, 5)
	attrs = append(attrs, slog.String("job_key", a.job.String()), slog.String("execution_id", a.id),
		slog.Int("attempt", a.number), slog.Time("scheduled_fire_time", a.scheduled))
	if a.triggerGroup != "" || a.triggerName != "" {
		attrs = append(attrs, slog.String("trigger_key", chime.NewTriggerKey(a.triggerGroup, a.triggerName).String()))
	}
	return slog.New(&deferredAttrs{next: s.log.Handler(), attrs: attrs})
}

// recordLost records that a recovered run's earlier try was lost with
// its node, if the node watch has not already, and the decision to re-run.
func (s *Server) recordLost(ctx context.Context, a *attempt) {
	rec, done := recordCtx(ctx)
	defer done()
	if a.lost != nil {
		s.markLost(rec, a.lost, "node "+a.lostNode+" lost")
	}
	reason := "re-run on node " + s.NodeID() + " because the node running it was lost"
	switch {
	case a.lostNode != "":
		reason = fmt.Sprintf("re-run on node %s because node %s, which was running it, was lost", s.NodeID(), a.lostNode)
	case a.released:
		reason = "re-run on node " + s.NodeID() + ", which cancelled its earlier try when its lease lapsed (the database was out of reach for longer than DeadAfter)"
	}
	s.decide(rec, a, history.DecisionRecovered, reason, a.id)
}

// runJob runs the job of type typ once. The values of the secrets its
// templates read are masked in out and in the error it returns.
func (s *Server) runJob(ctx context.Context, typ string, p *plan, jc *chime.JobContext, a *attempt, out *jobs.Capture, logs *logRecorder) (err error) {
	logger := slog.New(logs)
	secrets := s.newSecretUse(ctx)
	defer func() { err = secrets.redact(out, err) }()
	vars := jobs.Vars{
		JobGroup: a.job.Group, JobName: a.job.Name,
		TriggerGroup: a.triggerGroup, TriggerName: a.triggerName,
		ExecutionID: a.id, NodeID: s.NodeID(),
		ScheduledTime: a.scheduled, FireTime: jc.FireTime,
		Attempt: a.number, Params: a.params, Secrets: secrets.lookup,
	}
	if a.shard != nil {
		vars.ShardIndex, vars.ShardTotal = a.shard.Index, a.shard.Total
	}
	switch typ {
	case typeHTTP:
		res, err := s.http.Run(ctx, *p.http, vars, out)
		if res != nil {
			logger.Info("http response", "status", res.Status, "duration", res.Duration, "bytes", res.BytesRead)
		}
		return err
	case typeShell:
		_, err := s.shell.Run(ctx, *p.shell, vars, out)
		return err
	}
	job := s.goType(typ)
	if job == nil {
		return fmt.Errorf("job type %q is not registered on node %s", typ, s.NodeID())
	}
	detail := *jc.Job
	// The server's settings are its own business, as they were when they
	// were kept in the job's data.
	detail.Metadata = nil
	goCtx := *jc
	goCtx.ExecutionID = a.id
	goCtx.Job = &detail
	goCtx.MergedData = chime.JobData(maps.Clone(a.params))
	goCtx.Logger = logger
	if a.shard != nil {
		goCtx.Shard = &chime.Shard{Index: a.shard.Index, Total: a.shard.Total}
	}
	return runGoJob(ctx, job, &goCtx)
}

// runGoJob runs a Go job type, turning a panic into an error so that the
// execution is still recorded.
func runGoJob(ctx context.Context, job chime.Job, jc *chime.JobContext) (err error) {
	defer func() {
		if r := recover(); r != nil {
			stack := debug.Stack()
			jc.Logger.Error("job panicked", "panic", fmt.Sprint(r), "stack", string(stack))
			err = &chime.PanicError{Value: r, Stack: stack}
		}
	}()
	return job.Execute(ctx, jc)
}

// outcomeOf classifies how an attempt ended, and the error to record.
func outcomeOf(ctx context.Context, err error, timeout time.Duration) (history.Outcome, string) {
	if err == nil {
		return history.OutcomeSucceeded, ""
	}
	var noExec *dispatch.NoExecutorError
	var lost *executorLostError
	switch {
	case errors.As(err, &noExec):
		return history.OutcomeNoExecutor, err.Error()
	case errors.As(err, &lost):
		return history.OutcomeExecutorLost, err.Error()
	}
	if ctx.Err() != nil {
		var killed *killedError
		switch cause := context.Cause(ctx); {
		case errors.As(cause, &killed):
			return history.OutcomeKilled, fmt.Sprintf("%v: %v", cause, err)
		case errors.Is(cause, chime.ErrTimeout):
			return history.OutcomeTimedOut, fmt.Sprintf("timed out after %s: %v", timeout, err)
		case errors.Is(cause, errOverlapCancel):
			return history.OutcomeCancelled, cause.Error()
		case errors.Is(cause, chime.ErrStopped), errors.Is(cause, chime.ErrInterrupted), errors.Is(cause, chime.ErrLeaseLost):
			return history.OutcomeCancelled, fmt.Sprintf("%v: %v", cause, err)
		}
	}
	return history.OutcomeFailed, err.Error()
}

// afterAttempt schedules a retry of a failed attempt, or, when none is
// left, records that and raises the alert its job's conditions allow; it
// raises the recovery alert of a success that ends an alerted failure.
func (s *Server) afterAttempt(ctx context.Context, a *attempt, p *plan, outcome history.Outcome, msg string) {
	if outcome == history.OutcomeSucceeded {
		s.afterSuccess(ctx, a, p)
		return
	}
	if !decides(outcome) {
		return
	}
	if p.retryLeft(a.number) {
		delay := p.retry.backoff(a.number)
		id, next := retryID(a.id), s.now().Add(delay)
		err := s.writes.persist(ctx, a.log, "the retry of the execution", func(ctx context.Context) error {
			return s.scheduleRetry(ctx, a, id, a.number+1, next)
		})
		if err == nil {
			s.metrics.retries.Inc()
			s.decideOnce(ctx, a, history.DecisionRetryScheduled, fmt.Sprintf("attempt %d of %d %s: %s; attempt %d runs at %s (after %s)",
				a.number, p.retry.maxAttempts, outcome, msg, a.number+1, next.Format(time.RFC3339Nano), delay.Round(time.Millisecond)), a.id)
			return
		}
	}
	if p != nil && p.retry.maxAttempts > 1 {
		s.decideOnce(ctx, a, history.DecisionRetriesExhausted, fmt.Sprintf("attempt %d of %d %s: %s; no retry is left",
			a.number, p.retry.maxAttempts, outcome, msg), a.id)
	}
	kind := alert.KindFailure
	if outcome == history.OutcomeTimedOut {
		kind = alert.KindTimeout
	}
	ev := alert.Event{
		Kind: kind, JobGroup: a.job.Group, JobName: a.job.Name, ExecutionID: a.id, Attempt: a.number,
		ScheduledTime: a.scheduled, NodeID: s.NodeID(), Error: msg,
	}
	if s.failureAlertDue(ctx, a, p, &ev) {
		s.alerts.notify(ctx, p, ev)
	}
}

// failureAlertDue reports whether the final failure of a raises an
// alert under its job's conditions. With after_failures N above 1, the
// history must hold N consecutive failed firings of the job, and of the
// nodes that see N or more in one streak only the first to mark the job
// failing alerts. With recovered set, the alert marks the job failing,
// so that its next success sends the recovery alert. When the history or
// the mark cannot be read or written, it alerts: a needless alert beats
// a lost one.
func (s *Server) failureAlertDue(ctx context.Context, a *attempt, p *plan, ev *alert.Event) bool {
	if p == nil || p.alertsOff || (p.afterFailures <= 1 && !p.recovered) {
		return true
	}
	if p.afterFailures > 1 {
		n, err := s.consecutiveFailures(ctx, a.job.Group, a.job.Name, p.afterFailures)
		if err != nil {
			a.log.Warn("cannot count the job's consecutive failures; alerting", "error", err)
			return true
		}
		if n < p.afterFailures {
			a.log.Debug("failure alert held back", "consecutive_failures", n, "after_failures", p.afterFailures)
			return false
		}
		ev.Detail = fmt.Sprintf("%d consecutive failed runs (the job alerts after %d).", n, p.afterFailures)
	}
	first, err := s.alertState.markFailing(ctx, a.job.Group, a.job.Name, s.now())
	if err != nil {
		a.log.Warn("cannot mark the job failing; alerting", "error", err)
		return true
	}
	// Without after_failures every failure alerts, as always; with it,
	// only the first of the streak to reach N.
	return first || p.afterFailures <= 1
}

// consecutiveFailures counts the job's most recent firings that failed
// (failed, timed out or lost with their node), newest first, up to a
// success and at most limit: the attempts of one firing count once.
// Executions still running, and those skipped, cancelled or killed, are
// passed over.
func (s *Server) consecutiveFailures(ctx context.Context, group, name string, limit int) (int, error) {
	firings := make(map[string]bool)
	q := &history.Query{JobGroup: group, JobName: name, Limit: 100}
	for range 20 { // 2000 executions at most: a streak that long is long enough
		page, err := s.history.List(ctx, q)
		if err != nil {
			return 0, err
		}
		for _, e := range page.Executions {
			switch e.Outcome {
			case history.OutcomeSucceeded:
				return len(firings), nil
			case history.OutcomeFailed, history.OutcomeTimedOut, history.OutcomeNodeLost:
				firings[e.FirstID] = true
				if len(firings) >= limit {
					return len(firings), nil
				}
			}
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	return len(firings), nil
}

// afterSuccess clears the failing mark of a job with after_failures or
// recovered set; with recovered, the node that clears it sends the
// recovery alert.
func (s *Server) afterSuccess(ctx context.Context, a *attempt, p *plan) {
	if p == nil || (p.afterFailures <= 1 && !p.recovered) {
		return
	}
	cleared, err := s.alertState.clearFailing(ctx, a.job.Group, a.job.Name)
	if err != nil {
		a.log.Warn("cannot clear the job's failing mark", "error", err)
		return
	}
	if !cleared || !p.recovered {
		return
	}
	s.alerts.notify(ctx, p, alert.Event{
		Kind: alert.KindRecovered, JobGroup: a.job.Group, JobName: a.job.Name, ExecutionID: a.id, Attempt: a.number,
		ScheduledTime: a.scheduled, NodeID: s.NodeID(), Detail: "The job succeeded after an alert about its failure.",
	})
}

// scheduleRetry schedules attempt number of a's firing, whose execution
// ID is id, to run at at, as a one-shot trigger named by id: a try whose
// answer was lost after it committed finds the trigger there. A job
// deleted meanwhile has nothing left to retry.
func (s *Server) scheduleRetry(ctx context.Context, a *attempt, id string, number int, at time.Time) error {
	facts := runFacts{
		ID: id, FirstID: a.firstID, Attempt: number, ScheduledTime: a.scheduled,
		TriggerGroup: a.triggerGroup, TriggerName: a.triggerName, Manual: a.manual, Workflow: a.workflow, Cause: a.cause,
	}
	if a.shard != nil {
		facts.Shard = &a.shard.shardFacts
	}
	meta, err := factsMeta(facts)
	if err != nil {
		return permanent(err)
	}
	t := chime.Trigger{
		Key:       chime.NewTriggerKey(retryGroup, id),
		JobKey:    a.job,
		Schedule:  &schedule.Simple{},
		StartTime: at,
		Origin:    chime.OriginRetry,
		Metadata:  meta,
	}
	if len(a.triggerData) > 0 {
		t.Data = chime.JobData(maps.Clone(a.triggerData))
	}
	return s.scheduleOneShot(ctx, t)
}

// retryID is the execution ID of the retry of the failed attempt
// failedID, and the name of its trigger: one ID on every node, so that a
// retry scheduled twice (a try whose answer was lost, or a node that
// schedules it for a node that died) is scheduled once.
func retryID(failedID string) string { return derivedID("retry", failedID) }

// scheduleOneShot schedules a one-shot trigger the server named for the
// run it stands for: one that exists already was scheduled by an earlier
// try, and a job deleted meanwhile has nothing left to run (permanent).
func (s *Server) scheduleOneShot(ctx context.Context, t chime.Trigger) error {
	_, err := s.sched.Schedule(ctx, t)
	var invalid *chime.ValidationError
	switch {
	case errors.Is(err, chime.ErrTriggerExists):
		return nil
	case errors.Is(err, chime.ErrJobNotFound), errors.As(err, &invalid):
		return permanent(err)
	}
	return err
}

// backoff returns the wait before the attempt after attempt number n
// (from 1): the delay, doubled for each earlier retry when exponential,
// spread by the jitter and capped at the maximum delay.
func (r retryPolicy) backoff(n int) time.Duration {
	d := r.delay
	if r.exponential {
		for i := 1; i < n && d < r.maxDelay; i++ {
			d *= 2
		}
	}
	if r.jitter > 0 {
		d += time.Duration(float64(d) * r.jitter * (2*rand.Float64() - 1))
	}
	return min(max(d, 0), r.maxDelay)
}

// decide records a decision about a's firing, retrying until the
// database takes it (see writeQueue).
func (s *Server) decide(ctx context.Context, a *attempt, kind history.DecisionKind, reason, executionID string) {
	// Named here, so that a try whose answer was lost after it committed
	// is found on the next.
	s.recordDecision(ctx, a, newID(), kind, reason, executionID)
}

// decideOnce records a decision of kind about the execution executionID
// that is made once for it: one made already, by this node or another,
// is left as it is.
func (s *Server) decideOnce(ctx context.Context, a *attempt, kind history.DecisionKind, reason, executionID string) {
	s.recordDecision(ctx, a, derivedID("decision", string(kind), executionID), kind, reason, executionID)
}

// recordDecision records the decision id; one recorded already is left
// as it is.
func (s *Server) recordDecision(ctx context.Context, a *attempt, id string, kind history.DecisionKind, reason, executionID string) {
	d := &history.Decision{
		ID:       id,
		JobGroup: a.job.Group, JobName: a.job.Name, TriggerGroup: a.triggerGroup, TriggerName: a.triggerName,
		ScheduledTime: a.scheduled, At: s.now(), Kind: kind, Reason: reason, NodeID: s.NodeID(), ExecutionID: executionID,
	}
	log := s.log.With("job_key", a.job.String(), "kind", string(kind))
	_ = s.writes.persist(ctx, log, "a decision", func(ctx context.Context) error {
		err := s.history.RecordDecision(ctx, d)
		switch {
		case errors.Is(err, history.ErrExists):
			return nil
		case errors.Is(err, history.ErrInvalid):
			return permanent(err)
		}
		return err
	})
}

// recordSkipped records a firing the overlap policy skipped: a skipped
// execution and the decision.
func (s *Server) recordSkipped(ctx context.Context, a *attempt, reason string) {
	a.started = s.now()
	s.metrics.attemptEnded(a, history.OutcomeSkipped, a.started)
	err := s.recorder.record(a, history.Record{
		Start: a.execution(s.NodeID()),
		End:   &history.Finish{Outcome: history.OutcomeSkipped, FinishedTime: a.started, Error: reason},
	})
	if err == nil {
		s.decide(ctx, a, history.DecisionSkipped, reason, a.id)
	}
}

// takeOverlap takes the job's cluster-wide running marker for a. Under
// the skip policy a held marker skips the firing; under cancel, the
// holder is asked to cancel and the firing waits for it to end. A marker
// whose holder is gone (its node is dead, or it is no longer running on
// this node) is taken over. It returns the function that releases the
// marker, or ok false with the reason for skipping.
func (s *Server) takeOverlap(ctx context.Context, a *attempt, policy api.Overlap) (release func(), reason string, ok bool) {
	const poll = 100 * time.Millisecond
	g, n := a.job.Group, a.job.Name
	asked := ""
	for {
		won, holder, err := s.state.claimMarker(ctx, g, n, a.id, s.NodeID(), s.now())
		switch {
		case err != nil && ctx.Err() == nil:
			// Better to run than to lose the firing to a database
			// hiccup; the history shows the overlap if there was one.
			s.log.Warn("cannot enforce the overlap policy; running anyway", "job_key", a.job.String(), "error", err)
			return func() {}, "", true
		case err != nil:
			return nil, fmt.Sprintf("the execution ended (%v) while waiting for the running one to stop", context.Cause(ctx)), false
		case won:
			return func() {
				rec, done := recordCtx(ctx)
				defer done()
				if err := s.state.releaseMarker(rec, g, n, a.id); err != nil {
					s.log.Error("cannot release the overlap marker", "job_key", a.job.String(), "error", err)
				}
			}, "", true
		case holder == nil:
			continue // released between our insert and our read
		}
		if s.staleMarker(ctx, holder) {
			s.log.Warn("taking over the overlap marker of a lost execution", "job_key", a.job.String(),
				"held_by", holder.ExecutionID, "holder_node", holder.NodeID)
			if err := s.state.releaseMarker(ctx, g, n, holder.ExecutionID); err != nil {
				s.log.Warn("cannot release a lost overlap marker", "job_key", a.job.String(), "error", err)
			}
			continue
		}
		if policy == api.OverlapSkip {
			return nil, fmt.Sprintf("execution %s of the job was still running on node %s (overlap: skip)", holder.ExecutionID, holder.NodeID), false
		}
		if asked != holder.ExecutionID {
			if err := s.state.requestCancel(ctx, g, n, holder.ExecutionID); err != nil {
				s.log.Warn("cannot ask to cancel the running execution", "job_key", a.job.String(), "error", err)
			}
			s.decide(ctx, a, "cancel_requested", fmt.Sprintf("execution %s on node %s was asked to stop so that this firing runs (overlap: cancel)",
				holder.ExecutionID, holder.NodeID), holder.ExecutionID)
			asked = holder.ExecutionID
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Sprintf("execution %s on node %s did not stop before this firing's deadline (overlap: cancel): %v",
				holder.ExecutionID, holder.NodeID, context.Cause(ctx)), false
		case <-t.C:
		}
	}
}

// staleMarker reports whether a marker's execution is gone: it was on
// this node and no longer runs, or its node is dead or has left.
func (s *Server) staleMarker(ctx context.Context, m *marker) bool {
	if m.NodeID == s.NodeID() {
		return !s.local.has(m.ExecutionID)
	}
	view, err := s.sched.Cluster(ctx)
	if err != nil {
		return false
	}
	n, ok := view.Node(m.NodeID)
	return !ok || n.Dead
}

// watchCancels cancels the executions of this node that another node's
// firing asked to stop (overlap: cancel) or that a person killed through
// any node's API (see Server.KillExecution), until ctx ends. It polls
// only while executions run here, every 200ms, so a kill takes effect
// within a second.
func (s *Server) watchCancels(ctx context.Context) {
	const poll = 200 * time.Millisecond
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.local.any() {
			continue
		}
		ids, err := s.state.cancelRequested(ctx, s.NodeID())
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("cannot read cancel requests", "error", err)
			}
			continue
		}
		for _, id := range ids {
			if s.local.cancel(id, errOverlapCancel) {
				s.log.Info("cancelling an execution for a newer firing (overlap: cancel)", "execution_id", id)
			}
		}
		kills, err := s.history.Kills(ctx, s.NodeID())
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("cannot read kill requests", "error", err)
			}
			continue
		}
		for id, actor := range kills {
			if s.local.cancel(id, &killedError{actor: actor}) {
				s.log.Info("killing an execution", "execution_id", id, "killed_by", actor)
			}
		}
	}
}

// localRuns are the executions running on this node, by ID, with each
// one's context and the function that cancels it.
type localRuns struct {
	mu   sync.Mutex
	runs map[string]localRun
}

type localRun struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newLocalRuns() *localRuns {
	return &localRuns{runs: make(map[string]localRun)}
}

func (l *localRuns) add(ctx context.Context, id string, cancel context.CancelCauseFunc) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs[id] = localRun{ctx: ctx, cancel: cancel}
}

func (l *localRuns) remove(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.runs, id)
}

func (l *localRuns) has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.runs[id]
	return ok
}

func (l *localRuns) any() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.runs) > 0
}

// cancel cancels execution id with cause, reporting whether it runs here
// and was not cancelled already.
func (l *localRuns) cancel(id string, cause error) bool {
	l.mu.Lock()
	run, ok := l.runs[id]
	l.mu.Unlock()
	if !ok || run.ctx.Err() != nil {
		return false
	}
	run.cancel(cause)
	return true
}
