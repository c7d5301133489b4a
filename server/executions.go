package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// historyErr translates the history's refusals into invalid_argument
// errors naming the API's field.
func historyErr(err error) error {
	var inv *history.InvalidError
	if !errors.As(err, &inv) {
		return err
	}
	name, _, _ := strings.Cut(inv.Field, "[")
	if field := apiField(name); field != "" || inv.Field == "" {
		return invalidf(field, "%s", inv.Reason)
	}
	return invalidf("", "%s %s", inv.Field, inv.Reason)
}

// apiField names the API's query parameter of a history's field, or ""
// when the API has none.
func apiField(historyField string) string {
	switch historyField {
	case "Query.Cursor", "AuditQuery.Cursor":
		return "cursor"
	case "Query.Limit", "AuditQuery.Limit":
		return "limit"
	case "Query.From":
		return "from"
	case "Query.To":
		return "to"
	case "Query.JobGroup", "Query.JobName":
		return "job"
	case "Query.NodeID":
		return "node"
	case "Query.Outcome":
		return "outcome"
	case "AuditQuery.Actor":
		return "actor"
	case "AuditQuery.Target":
		return "target"
	}
	return ""
}

// executionToAPI translates a recorded execution.
func executionToAPI(e *history.Execution) api.Execution {
	out := api.Execution{
		ID: e.ID, FirstID: e.FirstID, Attempt: e.Attempt,
		JobGroup: e.JobGroup, JobName: e.JobName, TriggerGroup: e.TriggerGroup, TriggerName: e.TriggerName,
		NodeID: e.NodeID, ScheduledTime: e.ScheduledTime,
		Outcome: string(e.Outcome), Error: e.Error, Output: e.Output, OutputTruncated: e.OutputTruncated,
		Recovering: e.Recovering, Manual: e.Manual, KilledBy: e.KilledBy,
		ExecutorID: e.ExecutorID, ExecutorInstance: e.ExecutorInstance, Cause: e.CauseID,
	}
	if len(e.Params) > 0 {
		out.Params = e.Params
	}
	if !e.StartedTime.IsZero() {
		out.StartedTime = new(e.StartedTime)
	}
	if !e.FinishedTime.IsZero() {
		out.FinishedTime = new(e.FinishedTime)
	}
	for _, l := range e.Logs {
		out.Logs = append(out.Logs, api.LogLine{Time: l.Time, Level: l.Level, Message: l.Message, Attrs: l.Attrs})
	}
	return out
}

// ListExecutions returns a page of the history, newest first. From and To
// bound when executions started.
func (s *Server) ListExecutions(ctx context.Context, q api.ExecutionQuery) (*api.ExecutionList, error) {
	hq := &history.Query{JobGroup: q.JobGroup, JobName: q.JobName, NodeID: q.NodeID, Cursor: q.Cursor, Limit: q.Limit}
	for i, o := range q.Outcomes {
		switch out := history.Outcome(o); out {
		case history.OutcomeRunning, history.OutcomeSucceeded, history.OutcomeFailed, history.OutcomeTimedOut,
			history.OutcomeCancelled, history.OutcomeSkipped, history.OutcomeNodeLost, history.OutcomeKilled,
			history.OutcomeNoExecutor, history.OutcomeExecutorLost:
			hq.Outcome = append(hq.Outcome, out)
		default:
			return nil, invalidf(fmt.Sprintf("outcome[%d]", i),
				"%q: want running, succeeded, failed, timed_out, cancelled, skipped, node_lost, killed, no_executor or executor_lost", o)
		}
	}
	if q.From != nil {
		hq.From = *q.From
	}
	if q.To != nil {
		hq.To = *q.To
	}
	page, err := s.history.List(ctx, hq)
	if err != nil {
		return nil, historyErr(err)
	}
	list := &api.ExecutionList{Executions: make([]api.Execution, 0, len(page.Executions)), Next: page.Next}
	for i := range page.Executions {
		list.Executions = append(list.Executions, executionToAPI(&page.Executions[i]))
	}
	return list, nil
}

// execution returns a recorded execution, or not_found.
func (s *Server) execution(ctx context.Context, id string) (*history.Execution, error) {
	if err := checkName("id", id); err != nil {
		return nil, err
	}
	s.writeHeldStart(ctx, id)
	e, err := s.history.Get(ctx, id)
	if errors.Is(err, history.ErrNotFound) {
		return nil, httpjson.Errorf(api.CodeNotFound, "", "execution %s not found", id)
	}
	return e, err
}

// heldStartWait bounds how long a request waits for the start of an
// execution that the history writer held back to be written: while the
// database is down the writer retries it for as long as it takes.
const heldStartWait = 2 * time.Second

// writeHeldStart writes the start of execution id, which runs on this node,
// when the history writer holds it back (see historyStartDelay), waiting
// at most heldStartWait for it; an execution not held back costs nothing.
func (s *Server) writeHeldStart(ctx context.Context, id string) {
	written := s.recorder.flushStart(id)
	if written == nil {
		return
	}
	wait := time.NewTimer(heldStartWait)
	defer wait.Stop()
	select {
	case <-written:
	case <-ctx.Done():
	case <-wait.C:
	}
}

// GetExecution returns one execution with its output and log lines.
func (s *Server) GetExecution(ctx context.Context, id string) (*api.Execution, error) {
	e, err := s.execution(ctx, id)
	if err != nil {
		return nil, err
	}
	out := executionToAPI(e)
	return &out, nil
}

// Attempts returns every attempt of the firing an execution belongs to,
// first attempt first.
func (s *Server) Attempts(ctx context.Context, id string) ([]api.Execution, error) {
	e, err := s.execution(ctx, id)
	if err != nil {
		return nil, err
	}
	all, err := s.history.Attempts(ctx, e.FirstID)
	if err != nil {
		return nil, err
	}
	out := make([]api.Execution, 0, len(all))
	for i := range all {
		out = append(out, executionToAPI(&all[i]))
	}
	return out, nil
}

// RetryExecution runs a finished execution's job again, now, as the next
// attempt of the same firing, with the parameters it ran with.
func (s *Server) RetryExecution(ctx context.Context, actor, id string) (*api.Accepted, error) {
	e, err := s.execution(ctx, id)
	if err != nil {
		return nil, err
	}
	if e.Outcome == history.OutcomeRunning {
		return nil, httpjson.Errorf(api.CodeConflict, "", "execution %s is still running", id)
	}
	key := chime.NewJobKey(e.JobGroup, e.JobName)
	if _, err := s.sched.Job(ctx, key); err != nil {
		return nil, schedulerErr(key, err)
	}
	all, err := s.history.Attempts(ctx, e.FirstID)
	if err != nil {
		return nil, err
	}
	next := 1
	for _, x := range all {
		next = max(next, x.Attempt+1)
	}
	a := &attempt{
		firstID: e.FirstID, job: key, triggerGroup: e.TriggerGroup, triggerName: e.TriggerName,
		scheduled: e.ScheduledTime, manual: true, triggerData: e.Params,
	}
	retryID := newID()
	if err := s.scheduleRetry(ctx, a, retryID, next, s.now()); err != nil {
		return nil, schedulerErr(key, err)
	}
	s.audit(ctx, actor, auditExecutionRetry, "executions/"+id, map[string]any{"execution_id": retryID, "attempt": next})
	return &api.Accepted{ExecutionIDs: []string{retryID}, Count: 1}, nil
}

// KillExecution asks for the running execution id to be killed, on
// whichever node runs it: the request is recorded on the execution in the
// database, the node running it reads it within a second and cancels the
// job's context, and the execution ends killed, by actor. Killing is not
// a failure: it schedules no retry and raises no alert. It returns the
// execution as it stands, still running. An execution that ended is a
// conflict; an unknown one is not found. A second kill of a running
// execution succeeds, keeps the first killer, and is not audited again.
func (s *Server) KillExecution(ctx context.Context, actor, id string) (*api.Execution, error) {
	if err := checkName("id", id); err != nil {
		return nil, err
	}
	s.writeHeldStart(ctx, id)
	first, err := s.history.RequestKill(ctx, id, actor)
	switch {
	case errors.Is(err, history.ErrNotFound):
		return nil, httpjson.Errorf(api.CodeNotFound, "", "execution %s not found", id)
	case errors.Is(err, history.ErrNotRunning):
		e, gerr := s.execution(ctx, id)
		if gerr != nil {
			return nil, gerr
		}
		return nil, httpjson.Errorf(api.CodeConflict, "", "execution %s is not running: it ended %s", id, e.Outcome)
	case err != nil:
		return nil, historyErr(err)
	}
	e, err := s.execution(ctx, id)
	if err != nil {
		return nil, err
	}
	if first {
		s.audit(ctx, actor, auditExecutionKill, "executions/"+id, map[string]any{
			"node_id": e.NodeID, "job": e.JobGroup + "/" + e.JobName,
		})
	}
	out := executionToAPI(e)
	return &out, nil
}
