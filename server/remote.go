package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/server/dispatch"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/server/httpapi"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/livelog"
)

// cancelGrace is how long a killed, timed-out or stopped executor run
// may take to confirm that it stopped before the node records it without
// the executor's answer (and refuses that answer from then on).
const cancelGrace = 10 * time.Second

// executorLostError is the error of an attempt whose executor's lease
// lapsed while it ran.
type executorLostError struct {
	id, instance, group string
}

func (e *executorLostError) Error() string {
	return fmt.Sprintf("executor %s (%s) of group %q lost its lease while running the execution", e.id, e.instance, e.group)
}

// executeRemote runs an executor job's firing: the attempt a, after the
// overlap policy let it run, is handed to an executor (see package
// dispatch) and the node waits for its end, which it records as execute
// does a local run's. An executor lost mid-run loses the attempt: for a
// job that requests recovery, the run is handed to another live executor
// of the group as the next attempt, marked recovering, under a new
// fencing token; otherwise the attempt is recorded executor_lost. A kill,
// a timeout or the node's stop asks the executor to cancel the run.
// runCtx and cancel are the run's context and its cancel function, which
// the kill path (s.local) holds under each attempt's ID.
func (s *Server) executeRemote(ctx, runCtx context.Context, cancel context.CancelCauseFunc, p *plan, jc *chime.JobContext, a *attempt) error {
	h := dispatch.Handover{
		RunID: a.id, ExecutionID: a.id, Attempt: a.number, Target: *p.executor,
		JobGroup: a.job.Group, JobName: a.job.Name, ScheduledTime: a.scheduled, Params: a.params,
		Recovering: a.recovering, Timeout: jc.Job.Timeout, NodeID: s.NodeID(),
	}
	if a.shard != nil {
		h.ShardIndex, h.ShardTotal, h.Pin = a.shard.Index, a.shard.Total, a.shard.Executor
	}
	// handedOver: the run has a row to forget at its end; reported: its
	// executor's result ended it, so that the row may be deleted later,
	// with others (see dispatch.Service.Release).
	handedOver, reported := false, false
	defer func() {
		if reported {
			s.dispatch.Release(h.RunID)
		} else if handedOver {
			rec, done := recordCtx(ctx)
			defer done()
			if err := s.dispatch.Close(rec, h.RunID); err != nil {
				a.log.Warn("cannot close the executor run", "error", err)
			}
		}
	}()
	for {
		updates, stop := s.dispatch.Await(h.RunID)
		var (
			asg *dispatch.Assignment
			err error
		)
		if handedOver {
			asg, err = s.dispatch.Rehandover(runCtx, h)
		} else {
			asg, err = s.dispatch.Handover(runCtx, h)
		}
		if err == nil {
			handedOver = true
			a.executorID, a.executorInstance = asg.ExecutorID, asg.Instance
		}
		s.recordStart(a)
		var res *dispatch.Result
		runErr := err
		if err == nil {
			s.metrics.running.Inc()
			res, runErr = s.awaitRemote(runCtx, updates, asg, a, p.executor.Group)
			s.metrics.running.Dec()
		}
		stop()
		var lost *executorLostError
		if errors.As(runErr, &lost) && jc.Job.RequestsRecovery && runCtx.Err() == nil {
			a = s.recoverRemote(ctx, runCtx, cancel, a, runErr)
			h.ExecutionID, h.Attempt, h.Recovering = a.id, a.number, true
			continue
		}
		outcome, msg := outcomeOf(runCtx, runErr, jc.Job.Timeout)
		f := history.Finish{Outcome: outcome, FinishedTime: s.now(), Error: msg}
		if res != nil {
			reported = true
			out := jobs.NewCapture(s.cfg.MaxOutputBytes)
			_, _ = out.Write([]byte(res.Output))
			f.Output, f.OutputTruncated = out.String(), out.Truncated()
			f.Logs = historyLines(res.Logs)
		}
		s.recordEnd(ctx, jc, a, p, f)
		// A result's logs hold every line the executor sent live (line
		// n is line Seq n, see api.ExecutorLogs): a result without
		// any has none to delete, which spares most runs a statement.
		if res == nil || len(res.Logs) > 0 {
			s.endRemoteLive(ctx, a)
		}
		return runErr
	}
}

// endRemoteLive deletes the live log lines the executor of attempt a
// sent, once the history holds the attempt's end with its lines.
func (s *Server) endRemoteLive(ctx context.Context, a *attempt) {
	rec, done := recordCtx(ctx)
	defer done()
	if err := s.live.Delete(rec, a.id); err != nil {
		a.log.Warn("cannot delete the live log lines of an ended execution; the pruner will", "error", err)
	}
}

// recoverRemote records attempt a, whose executor was lost, as
// executor_lost and the decision to re-run it, and returns the next
// attempt, registered for kills under its own ID until the run ends.
func (s *Server) recoverRemote(ctx, runCtx context.Context, cancel context.CancelCauseFunc, a *attempt, lost error) *attempt {
	f := history.Finish{Outcome: history.OutcomeExecutorLost, FinishedTime: s.now(), Error: lost.Error()}
	s.metrics.attemptEnded(a, f.Outcome, f.FinishedTime)
	// Recorded before the re-run starts, as recordEnd records a failure.
	_ = s.recorder.record(a, history.Record{ID: a.id, End: &f})
	next := *a
	next.id, next.number, next.recovering = newID(), a.number+1, true
	next.executorID, next.executorInstance = "", ""
	next.log = s.attemptLogger(&next)
	s.decide(ctx, &next, history.DecisionRecovered, fmt.Sprintf("attempt %d is re-run by another executor because %v", a.number, lost), next.id)
	// execute removes the first attempt's ID when the run ends; this
	// one goes when the run's context ends, which is then too.
	s.local.add(runCtx, next.id, cancel)
	context.AfterFunc(runCtx, func() { s.local.remove(next.id) })
	return &next
}

// awaitRemote waits for the end of run asg of attempt a: the executor's
// result, or the loss of its lease (an *executorLostError). When runCtx
// ends first (a kill, the timeout, the node's stop) it asks the executor
// to cancel the run and waits cancelGrace for its answer.
func (s *Server) awaitRemote(runCtx context.Context, updates <-chan dispatch.Update, asg *dispatch.Assignment, a *attempt, group string) (*dispatch.Result, error) {
	// Updates of an earlier hand-over of the run carry its older token.
	for waiting := true; waiting; {
		select {
		case u := <-updates:
			if u.Token == asg.Token {
				return resultOf(u, group)
			}
		case <-runCtx.Done():
			waiting = false
		}
	}
	rec, done := recordCtx(runCtx)
	defer done()
	if err := s.dispatch.RequestCancel(rec, asg); err != nil {
		a.log.Warn("cannot ask the executor to cancel the run", "executor_id", asg.ExecutorID, "error", err)
	}
	t := time.NewTimer(cancelGrace)
	defer t.Stop()
	for {
		select {
		case u := <-updates:
			if u.Token != asg.Token {
				continue
			}
			res, err := resultOf(u, group)
			if err == nil && res.Outcome != "succeeded" {
				err = errors.New(res.Error)
			}
			return res, err
		case <-t.C:
			return nil, fmt.Errorf("executor %s did not confirm within %s that it stopped the run", asg.ExecutorID, cancelGrace)
		}
	}
}

// resultOf turns the end of an executor run into the attempt's result
// and error.
func resultOf(u dispatch.Update, group string) (*dispatch.Result, error) {
	if u.State == dispatch.StateLost {
		return nil, &executorLostError{id: u.ExecutorID, instance: u.Instance, group: group}
	}
	res := u.Result
	switch res.Outcome {
	case "succeeded":
		return &res, nil
	case "cancelled":
		return &res, fmt.Errorf("the executor cancelled the run: %s", res.Error)
	}
	if res.Error == "" {
		return &res, errors.New("the handler failed")
	}
	return &res, errors.New(res.Error)
}

// historyLines converts an executor's log lines for the history.
func historyLines(lines []api.LogLine) []history.LogLine {
	out := make([]history.LogLine, len(lines))
	for i, l := range lines {
		out[i] = history.LogLine{Time: l.Time, Level: l.Level, Message: l.Message, Attrs: l.Attrs}
	}
	return out
}

// dispatchErr turns an error of package dispatch into the API's.
func dispatchErr(err error) error {
	var fe *dispatch.FieldError
	switch {
	case errors.As(err, &fe):
		return invalidf(fe.Field, "%s", fe.Message)
	case errors.Is(err, dispatch.ErrNotFound):
		return httpjson.Errorf(api.CodeNotFound, "id", "%v", err)
	case errors.Is(err, dispatch.ErrLeaseLost):
		return httpjson.Errorf(api.CodeConflict, "", "the executor's lease lapsed and its runs were taken from it: cancel them and register again")
	case errors.Is(err, dispatch.ErrStale):
		return httpjson.Errorf(api.CodeConflict, "token", "%v: it was handed to another executor, or it ended", err)
	}
	return err
}

// checkGroup refuses a caller of role executor whose token does not
// serve group. Calls not made through the API are trusted.
func checkGroup(ctx context.Context, group string) error {
	user, ok := httpapi.Caller(ctx)
	if !ok || user.Role != api.RoleExecutor {
		return nil
	}
	if !slices.Contains(user.Groups, group) {
		return httpjson.Errorf(api.CodePermissionDenied, "group", "the token serves groups %q, not %q", user.Groups, group)
	}
	return nil
}

// checkExecutor checks that the executor id exists and that the caller
// may act for it: its token serves the executor's group.
func (s *Server) checkExecutor(ctx context.Context, id string) error {
	group, err := s.dispatch.GroupOf(ctx, id)
	if err != nil {
		return dispatchErr(err)
	}
	return checkGroup(ctx, group)
}

// RegisterExecutor registers an executor of a group the caller's token
// serves.
func (s *Server) RegisterExecutor(ctx context.Context, r api.ExecutorRegister) (*api.ExecutorRegistration, error) {
	if err := dispatch.CheckName("group", r.Group); err != nil {
		return nil, dispatchErr(err)
	}
	if err := checkGroup(ctx, r.Group); err != nil {
		return nil, err
	}
	e, err := s.dispatch.Register(ctx, r)
	if err != nil {
		return nil, dispatchErr(err)
	}
	s.log.Info("executor registered", "executor_id", e.ID, "group", e.Group, "instance", e.Instance, "handlers", e.Handlers)
	return &api.ExecutorRegistration{ID: e.ID, Lease: s.dispatch.Lease().String(), HeartbeatInterval: s.dispatch.HeartbeatInterval().String()}, nil
}

// ExecutorHeartbeat extends an executor's lease and names the runs it
// must cancel.
func (s *Server) ExecutorHeartbeat(ctx context.Context, id string, hb api.ExecutorHeartbeat) (*api.ExecutorHeartbeatReply, error) {
	if err := s.checkExecutor(ctx, id); err != nil {
		return nil, err
	}
	cancel, err := s.dispatch.Heartbeat(ctx, id, hb.Running)
	if err != nil {
		return nil, dispatchErr(err)
	}
	return &api.ExecutorHeartbeatReply{Cancel: cancel}, nil
}

// PollExecutor hands an executor its runs and cancel requests, waiting
// up to the poll's wait while there is none.
func (s *Server) PollExecutor(ctx context.Context, id string, p api.ExecutorPoll) (*api.ExecutorWork, error) {
	wait, perr := parseDuration("wait", p.Wait)
	if perr != nil {
		return nil, perr
	}
	if wait > dispatch.MaxWait {
		return nil, invalidf("wait", "%s: at most %s", wait, dispatch.MaxWait)
	}
	limit := p.Max
	switch {
	case limit == 0:
		limit = 10
	case limit < 0 || limit > 100:
		return nil, invalidf("max", "%d: want 1 to 100", limit)
	}
	if p.NoRuns {
		limit = 0
	}
	if err := checkPollResults(p.Results); err != nil {
		return nil, err
	}
	if err := s.checkExecutor(ctx, id); err != nil {
		return nil, err
	}
	refused, err := s.recordPollResults(ctx, id, p.Results)
	if err != nil {
		return nil, err
	}
	work, err := s.dispatch.Take(ctx, id, limit, wait)
	if err != nil {
		if len(p.Results) > 0 && !errors.Is(err, dispatch.ErrLeaseLost) && ctx.Err() == nil {
			// The results are recorded: the executor must not send them
			// again, so it is told so with no run, and polls again.
			s.log.Warn("cannot take an executor's runs after recording its results", "executor_id", id, "error", err)
			return &api.ExecutorWork{Runs: []api.ExecutorRun{}, Cancel: []api.ExecutorRunRef{}, Refused: refused}, nil
		}
		return nil, dispatchErr(err)
	}
	work.Refused = refused
	return work, nil
}

// checkPollResults refuses results that one of them would make a result
// request refuse as malformed, naming it.
func checkPollResults(results []api.ExecutorRunResult) error {
	if len(results) > api.MaxPollResults {
		return invalidf("results", "has %d results; at most %d are allowed per poll", len(results), api.MaxPollResults)
	}
	for i, r := range results {
		if r.Run == "" {
			return invalidf(fmt.Sprintf("results[%d].run", i), "is required: the run's ID")
		}
		if err := dispatch.CheckResult(r.Result); err != nil {
			var fe *dispatch.FieldError
			if errors.As(err, &fe) {
				return invalidf(fmt.Sprintf("results[%d].result.%s", i, fe.Field), "%s", fe.Message)
			}
			return err
		}
	}
	return nil
}

// recordPollResults records a poll's results, all at once so that
// dispatch.Service.Report batches them into one statement, and returns those
// their runs' leases refused. Any other failure is the poll's: the
// executor sends the results again, and those recorded already are then
// refused.
func (s *Server) recordPollResults(ctx context.Context, id string, results []api.ExecutorRunResult) ([]api.ExecutorRefusedResult, error) {
	if len(results) == 0 {
		return nil, nil
	}
	errs := make([]error, len(results))
	var wg sync.WaitGroup
	for i, r := range results {
		wg.Go(func() { errs[i] = s.dispatch.Report(ctx, id, r.Run, r.Result) })
	}
	wg.Wait()
	var refused []api.ExecutorRefusedResult
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, dispatch.ErrStale), errors.Is(err, dispatch.ErrNotFound):
			refused = append(refused, api.ExecutorRefusedResult{Run: results[i].Run, Reason: err.Error()})
		default:
			return nil, dispatchErr(err)
		}
	}
	return refused, nil
}

// ReportExecutorResult records how a run ended, from the executor it is
// leased to under its current token; anything else is a conflict and
// changes nothing.
func (s *Server) ReportExecutorResult(ctx context.Context, id, run string, r api.ExecutorResult) error {
	if err := dispatch.CheckResult(r); err != nil {
		return dispatchErr(err)
	}
	if err := s.checkExecutor(ctx, id); err != nil {
		return err
	}
	return dispatchErr(s.dispatch.Report(ctx, id, run, r))
}

// maxExecutorLogLines bounds the lines of one ExecutorLogs request.
const maxExecutorLogLines = 1000

// AppendExecutorLogs appends the log lines a run's executor sends while
// it runs to its execution's live log, where the execution's log stream
// reads them. Only the executor the run is leased to, under its current
// token, while it has not ended, may: anything else is a conflict and
// appends nothing.
func (s *Server) AppendExecutorLogs(ctx context.Context, id, run string, l api.ExecutorLogs) error {
	if l.Token < 1 {
		return invalidf("token", "%d: want the run's token, from 1", l.Token)
	}
	if len(l.Lines) > maxExecutorLogLines {
		return invalidf("lines", "has %d lines; at most %d are allowed per request", len(l.Lines), maxExecutorLogLines)
	}
	lines := make([]livelog.Line, len(l.Lines))
	for i, ln := range l.Lines {
		if ln.Seq < 1 {
			return invalidf(fmt.Sprintf("lines[%d].seq", i), "%d: want the line's number in the run, from 1", ln.Seq)
		}
		lines[i] = livelog.Line{Seq: ln.Seq, Time: ln.Time, Level: ln.Level, Message: ln.Message, Attrs: ln.Attrs}
	}
	if err := s.checkExecutor(ctx, id); err != nil {
		return err
	}
	execID, err := s.dispatch.Fence(ctx, id, run, l.Token)
	if err != nil {
		return dispatchErr(err)
	}
	if len(lines) == 0 {
		return nil
	}
	if err := s.live.Append(ctx, execID, lines); err != nil {
		if errors.Is(err, livelog.ErrInvalid) {
			return invalidf("lines", "%v", err)
		}
		return err
	}
	return nil
}

// ListExecutors lists the registered executors.
func (s *Server) ListExecutors(ctx context.Context) ([]api.Executor, error) {
	all, err := s.dispatch.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Executor, len(all))
	for i, e := range all {
		out[i] = api.Executor{
			ID: e.ID, Group: e.Group, Instance: e.Instance, Version: e.Version, Labels: e.Labels, Handlers: e.Handlers,
			Registered: e.Registered, LastHeartbeat: e.LastHeartbeat, LeaseUntil: e.LeaseUntil, Live: e.Live,
			Running: e.Running, UseCount: e.UseCount,
		}
		if !e.LastUsed.IsZero() {
			out[i].LastUsed = new(e.LastUsed)
		}
	}
	return out, nil
}
