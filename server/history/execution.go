package history

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Outcome is the state of a recorded execution: running, or how it ended.
type Outcome string

// Outcomes.
const (
	// OutcomeRunning is an execution that started and has not finished.
	OutcomeRunning Outcome = "running"
	// OutcomeSucceeded is an execution whose job returned no error.
	OutcomeSucceeded Outcome = "succeeded"
	// OutcomeFailed is an execution whose job returned an error.
	OutcomeFailed Outcome = "failed"
	// OutcomeTimedOut is an execution stopped by its job's timeout.
	OutcomeTimedOut Outcome = "timed_out"
	// OutcomeCancelled is an execution interrupted by a person or a
	// shutdown.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeSkipped is an execution that did not run its job (a vetoed or
	// skipped firing recorded as an execution).
	OutcomeSkipped Outcome = "skipped"
	// OutcomeNodeLost is an execution whose node died while it ran (see
	// [History.MarkNodeLost]).
	OutcomeNodeLost Outcome = "node_lost"
	// OutcomeKilled is an execution a person killed while it ran (see
	// [History.RequestKill]); Execution.KilledBy names them.
	OutcomeKilled Outcome = "killed"
	// OutcomeNoExecutor is an execution of an executor job that found no
	// live executor to run it; its error names the group, handler and
	// labels.
	OutcomeNoExecutor Outcome = "no_executor"
	// OutcomeExecutorLost is an execution whose executor's lease lapsed
	// while it ran (it died, stopped or was cut off).
	OutcomeExecutorLost Outcome = "executor_lost"
)

// valid reports whether o is one of the outcomes above.
func (o Outcome) valid() bool {
	switch o {
	case OutcomeRunning, OutcomeSucceeded, OutcomeFailed, OutcomeTimedOut, OutcomeCancelled,
		OutcomeSkipped, OutcomeNodeLost, OutcomeKilled, OutcomeNoExecutor, OutcomeExecutorLost:
		return true
	}
	return false
}

// Execution is one recorded run of a job: one attempt of one firing.
type Execution struct {
	// ID identifies the execution, unique: the scheduler's execution ID
	// for a firing's first attempt, one the server chose (in the same
	// format) for the others.
	ID string
	// FirstID is the ID of the firing's first attempt; it equals ID for
	// the first attempt. Start fills it in when empty.
	FirstID string
	// Attempt counts the firing's attempts from 1. Start makes 0 a 1.
	Attempt int
	// JobGroup and JobName are the job's key; both are required.
	JobGroup, JobName string
	// TriggerGroup and TriggerName are the key of the trigger that fired.
	TriggerGroup, TriggerName string
	// NodeID is the node that ran it.
	NodeID string
	// ScheduledTime is the fire time the trigger was scheduled for (zero
	// for none); StartedTime when the job started (required);
	// FinishedTime when it ended (zero while running).
	ScheduledTime, StartedTime, FinishedTime time.Time
	// Outcome is running or how it ended.
	Outcome Outcome
	// Error is the error the job ended with, if any.
	Error string
	// Output is what the job printed or returned, at most
	// Options.MaxOutputBytes of it.
	Output string
	// OutputTruncated reports that Output was cut, here or by the job.
	OutputTruncated bool
	// Logs are the job's log lines, at most Options.MaxLogLines of them.
	Logs []LogLine
	// Recovering marks a re-run of an execution whose node died.
	Recovering bool
	// Manual marks a run started by a person ("trigger now").
	Manual bool
	// Params are the job data the execution ran with. Numbers come back
	// as json.Number, exactly as recorded.
	Params map[string]any
	// KilledBy is who asked to kill the execution while it ran (see
	// [History.RequestKill]), or empty. Start ignores it.
	KilledBy string
	// ExecutorID and ExecutorInstance name the executor that ran an
	// executor job's attempt; empty for runs on a node.
	ExecutorID, ExecutorInstance string
	// CauseID is the execution of the parent job whose end ran this one,
	// a child job's; empty otherwise.
	CauseID string
}

// LogLine is one log line of an execution.
type LogLine struct {
	Time    time.Time      `json:"time"`
	Level   string         `json:"level"`
	Message string         `json:"msg"`
	Attrs   map[string]any `json:"attrs,omitempty"`
}

// Finish is how an execution ended; see [History.Finish].
type Finish struct {
	// Outcome is how it ended: any outcome but running.
	Outcome Outcome
	// FinishedTime is when it ended; required.
	FinishedTime time.Time
	// Error is the error the job ended with, if any.
	Error string
	// Output is what the job printed or returned; longer than
	// Options.MaxOutputBytes, it is cut.
	Output string
	// OutputTruncated reports that the job already cut Output.
	OutputTruncated bool
	// Logs are the job's log lines; more than Options.MaxLogLines are cut.
	Logs []LogLine
}

// Start records an execution as running. e.ID must be new: a second Start
// of one ID fails with [ErrExists]. e.Outcome must be empty or running;
// FinishedTime, Error, Output and Logs are ignored (Finish records them).
// e is not modified.
func (h *History) Start(ctx context.Context, e *Execution) error {
	return h.insert(ctx, e, OutcomeRunning, time.Time{}, "")
}

// insert records e with the outcome, finished at finished (zero while
// running) with errText, in one statement, after Start's checks.
func (h *History) insert(ctx context.Context, e *Execution, outcome Outcome, finished time.Time, errText string) error {
	x, params, err := prepareStart(e)
	if err != nil {
		return err
	}
	_, err = h.db.ExecContext(ctx, h.q.executionInsert, h.sched,
		x.ID, x.FirstID, x.Attempt, x.JobGroup, x.JobName, x.TriggerGroup, x.TriggerName, x.NodeID,
		timeArg(x.ScheduledTime), x.StartedTime.UnixNano(), timeArg(finished), string(outcome), cleanText(errText),
		false, x.Recovering, x.Manual, params, x.ExecutorID, x.ExecutorInstance, x.CauseID)
	switch {
	case h.st.IsUniqueViolation(err):
		return fmt.Errorf("%w: execution %q", ErrExists, x.ID)
	case err != nil:
		return dbErr("recording execution "+x.ID, err)
	}
	return nil
}

// prepareStart returns a copy of e with Start's defaults applied, and its
// params in their stored form, after Start's checks.
func prepareStart(e *Execution) (Execution, any, error) {
	if e == nil {
		return Execution{}, nil, invalid("", "nil execution")
	}
	x := *e
	if x.FirstID == "" {
		x.FirstID = x.ID
	}
	if x.Attempt == 0 {
		x.Attempt = 1
	}
	if err := checkStart(&x); err != nil {
		return x, nil, err
	}
	params, err := encodeJSON("Params", x.Params)
	if err != nil {
		return x, nil, err
	}
	return x, params, nil
}

// checkStart validates an execution for Start, defaults applied.
func checkStart(e *Execution) error {
	for _, f := range []struct {
		name, v  string
		required bool
	}{
		{"ID", e.ID, true}, {"FirstID", e.FirstID, true}, {"JobGroup", e.JobGroup, true}, {"JobName", e.JobName, true},
		{"TriggerGroup", e.TriggerGroup, false}, {"TriggerName", e.TriggerName, false}, {"NodeID", e.NodeID, false},
	} {
		if err := checkKey(f.name, f.v, f.required); err != nil {
			return err
		}
	}
	switch {
	case e.Attempt < 0:
		return invalid("Attempt", "%d is negative", e.Attempt)
	case e.Attempt == 1 && e.FirstID != e.ID:
		return invalid("FirstID", "%q of attempt 1: want the execution's own ID %q", e.FirstID, e.ID)
	case e.Attempt > 1 && e.FirstID == e.ID:
		return invalid("FirstID", "of attempt %d is the execution's own ID: want the first attempt's", e.Attempt)
	case e.Outcome != "" && e.Outcome != OutcomeRunning:
		return invalid("Outcome", "%q: Start records a running execution; Finish records how it ended", e.Outcome)
	}
	if err := checkTime("ScheduledTime", e.ScheduledTime, false); err != nil {
		return err
	}
	return checkTime("StartedTime", e.StartedTime, true)
}

// RecordLost records, in one step, an execution that its node fired and
// lost before it could record it: it is node_lost from the start,
// finished at lostAt with reason as its error. e is checked as Start
// checks it; a second record of one ID fails with [ErrExists]. e is not
// modified.
func (h *History) RecordLost(ctx context.Context, e *Execution, lostAt time.Time, reason string) error {
	if err := checkTime("lostAt", lostAt, true); err != nil {
		return err
	}
	if e != nil {
		x := *e
		x.Outcome = "" // it is node_lost, whatever e says
		e = &x
	}
	return h.insert(ctx, e, OutcomeNodeLost, lostAt, reason)
}

// Finish records how the running execution id ended. Output longer than
// Options.MaxOutputBytes keeps its first and last parts around a line
// saying how many bytes were left out, and is flagged OutputTruncated;
// more than Options.MaxLogLines log lines keep the first and last ones
// around a line saying how many were left out. Invalid UTF-8 and NUL bytes
// in Error and Output become U+FFFD. An execution marked node_lost takes
// the outcome: its node was presumed dead while it could not reach the
// database, and knows better how it ended. An execution that already
// finished gives [ErrNotRunning] and an unknown one [ErrNotFound]; neither
// changes anything.
func (h *History) Finish(ctx context.Context, id string, f Finish) error {
	if err := checkKey("id", id, true); err != nil {
		return err
	}
	end, err := h.prepareFinish(&f)
	if err != nil {
		return err
	}
	res, err := h.db.ExecContext(ctx, h.q.executionFinish, end.args(h.sched, id)...)
	if err != nil {
		return dbErr("recording the end of execution "+id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return dbErr("recording the end of execution "+id, err)
	}
	if n > 0 {
		return nil
	}
	return h.whyUnchanged(ctx, id)
}

// finishRow is a Finish checked and in its stored form.
type finishRow struct {
	outcome   Outcome
	finished  int64
	errText   string
	output    string
	truncated bool
	logs      any
}

// prepareFinish checks f and returns its stored form: output and logs
// cut to the history's bounds, text made storable.
func (h *History) prepareFinish(f *Finish) (finishRow, error) {
	switch {
	case !f.Outcome.valid():
		return finishRow{}, invalid("Finish.Outcome", "%q is not an outcome", f.Outcome)
	case f.Outcome == OutcomeRunning:
		return finishRow{}, invalid("Finish.Outcome", "is running: want how the execution ended")
	}
	if err := checkTime("Finish.FinishedTime", f.FinishedTime, true); err != nil {
		return finishRow{}, err
	}
	output, cut := truncateOutput(cleanText(f.Output), h.opts.MaxOutputBytes)
	logs, err := encodeJSON("Finish.Logs", truncateLogs(f.Logs, h.opts.MaxLogLines))
	if err != nil {
		return finishRow{}, err
	}
	return finishRow{
		outcome: f.Outcome, finished: f.FinishedTime.UnixNano(), errText: cleanText(f.Error),
		output: output, truncated: cut || f.OutputTruncated, logs: logs,
	}, nil
}

// args are the parameters of the executionFinish statement for
// execution id.
func (r *finishRow) args(sched, id string) []any {
	return []any{string(r.outcome), r.finished, r.errText, r.output, r.truncated, r.logs, sched, id}
}

// whyUnchanged says why an update of the running execution id changed
// no row: ErrNotFound when there is no such execution, ErrNotRunning
// when it is no longer running.
func (h *History) whyUnchanged(ctx context.Context, id string) error {
	return h.whyUnchangedOn(ctx, h.db, id)
}

// rowQuerier is a *sql.DB or *sql.Tx.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// whyUnchangedOn is whyUnchanged on db, a transaction or the pool.
func (h *History) whyUnchangedOn(ctx context.Context, db rowQuerier, id string) error {
	var count int
	if err := db.QueryRowContext(ctx, h.q.executionExists, h.sched, id).Scan(&count); err != nil {
		return dbErr("reading execution "+id, err)
	}
	if count == 0 {
		return fmt.Errorf("%w: execution %q", ErrNotFound, id)
	}
	return fmt.Errorf("%w: execution %q", ErrNotRunning, id)
}

// RequestKill asks for the running execution id to be killed by actor:
// it records actor as the execution's KilledBy, which the node running it
// reads with [History.Kills], and reports true. The first request names
// the killer; a later one, while the execution still runs, changes
// nothing and reports false. An execution that already ended gives
// [ErrNotRunning] and an unknown one [ErrNotFound]; neither changes
// anything.
func (h *History) RequestKill(ctx context.Context, id, actor string) (bool, error) {
	if err := checkKey("id", id, true); err != nil {
		return false, err
	}
	if err := checkKey("actor", actor, true); err != nil {
		return false, err
	}
	res, err := h.db.ExecContext(ctx, h.q.executionKill, actor, h.sched, id)
	if err != nil {
		return false, dbErr("requesting the kill of execution "+id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, dbErr("requesting the kill of execution "+id, err)
	}
	if n > 0 {
		return true, nil
	}
	e, err := h.Get(ctx, id)
	switch {
	case err != nil:
		return false, err
	case e.Outcome == OutcomeRunning:
		return false, nil // killed already, by the first to ask
	}
	return false, fmt.Errorf("%w: execution %q", ErrNotRunning, id)
}

// Kills returns the executions running on node whose kill was requested,
// each with who requested it, by execution ID.
func (h *History) Kills(ctx context.Context, node string) (map[string]string, error) {
	rows, err := h.db.QueryContext(ctx, h.q.executionKills, node, h.sched)
	if err != nil {
		return nil, dbErr("reading kill requests", err)
	}
	defer rows.Close()
	out := make(map[string]string)
	for rows.Next() {
		var id, actor string
		if err := rows.Scan(&id, &actor); err != nil {
			return nil, dbErr("reading kill requests", err)
		}
		out[id] = actor
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("reading kill requests", err)
	}
	return out, nil
}

// Get returns the execution id, with its output and logs, or
// [ErrNotFound].
func (h *History) Get(ctx context.Context, id string) (*Execution, error) {
	if err := checkKey("id", id, true); err != nil {
		return nil, err
	}
	e, err := scanExecution(h.db.QueryRowContext(ctx, h.q.executionGet, h.sched, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("%w: execution %q", ErrNotFound, id)
	case err != nil:
		return nil, dbErr("reading execution "+id, err)
	}
	return e, nil
}

// Attempts returns every attempt of the firing whose first attempt is
// firstID, first attempt first, each with its output and logs; or
// [ErrNotFound] when none is recorded.
func (h *History) Attempts(ctx context.Context, firstID string) ([]Execution, error) {
	if err := checkKey("firstID", firstID, true); err != nil {
		return nil, err
	}
	out, err := h.queryExecutions(ctx, h.q.executionAttempts, firstID, h.sched)
	if err != nil {
		return nil, dbErr("reading the attempts of execution "+firstID, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: attempts of execution %q", ErrNotFound, firstID)
	}
	return out, nil
}

// MarkNodeLost records that the node nodeID died at the given time: each
// of its running executions becomes node_lost, finished at that time with
// the error "node <nodeID> lost". It returns how many there were.
func (h *History) MarkNodeLost(ctx context.Context, nodeID string, at time.Time) (int, error) {
	if err := checkKey("nodeID", nodeID, true); err != nil {
		return 0, err
	}
	if err := checkTime("at", at, true); err != nil {
		return 0, err
	}
	res, err := h.db.ExecContext(ctx, h.q.executionNodeLost, at.UnixNano(), "node "+nodeID+" lost", nodeID, h.sched)
	if err != nil {
		return 0, dbErr("marking the executions of node "+nodeID+" lost", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbErr("marking the executions of node "+nodeID+" lost", err)
	}
	return int(n), nil
}

// MarkLost records that the running execution id was lost with its node
// at the given time: it becomes node_lost with the reason as its error.
// An execution that is not running gives [ErrNotRunning] and an unknown
// one [ErrNotFound]; neither changes anything, so that of several nodes
// marking one execution, one succeeds.
func (h *History) MarkLost(ctx context.Context, id string, at time.Time, reason string) error {
	if err := checkKey("id", id, true); err != nil {
		return err
	}
	if err := checkTime("at", at, true); err != nil {
		return err
	}
	res, err := h.db.ExecContext(ctx, h.q.executionLost, at.UnixNano(), cleanText(reason), h.sched, id)
	if err != nil {
		return dbErr("marking execution "+id+" lost", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return dbErr("marking execution "+id+" lost", err)
	} else if n > 0 {
		return nil
	}
	return h.whyUnchanged(ctx, id)
}

// Query selects executions for [History.List]. Zero fields select
// everything.
type Query struct {
	// JobGroup and JobName select one job's executions, or with JobName
	// empty a group's.
	JobGroup, JobName string
	// Outcome selects executions with any of these outcomes.
	Outcome []Outcome
	// NodeID selects the executions of one node.
	NodeID string
	// From and To select executions by StartedTime: From inclusive, To
	// exclusive; a zero time is no bound.
	From, To time.Time
	// Cursor continues a list: a previous Page's Next.
	Cursor string
	// Limit is the page size, 1 to MaxLimit. Defaults to DefaultLimit.
	Limit int
}

// Page is one page of a list of executions.
type Page struct {
	// Executions are newest first (by StartedTime, then ID). They leave
	// out Output and Logs, to keep lists light: Get returns them.
	Executions []Execution
	// Next continues the list after the last execution of this page;
	// empty on the last page.
	Next string
}

// List returns a page of the executions q selects, newest first by
// StartedTime, then ID. The cursor is a position in that order, so pages
// neither repeat nor skip executions when newer ones are recorded between
// calls.
func (h *History) List(ctx context.Context, q *Query) (*Page, error) {
	if q == nil {
		q = &Query{}
	}
	limit, err := checkLimit("Query.Limit", q.Limit)
	if err != nil {
		return nil, err
	}
	w := where{}
	w.add("sched_name = ?", h.sched)
	if err := w.job("Query", q.JobGroup, q.JobName); err != nil {
		return nil, err
	}
	if len(q.Outcome) > 0 {
		marks := make([]string, len(q.Outcome))
		for i, o := range q.Outcome {
			if !o.valid() {
				return nil, invalid(fmt.Sprintf("Query.Outcome[%d]", i), "%q is not an outcome", o)
			}
			marks[i] = "?"
			w.args = append(w.args, string(o))
		}
		w.conds = append(w.conds, "outcome IN ("+strings.Join(marks, ", ")+")")
	}
	if q.NodeID != "" {
		if err := checkKey("Query.NodeID", q.NodeID, false); err != nil {
			return nil, err
		}
		w.add("node_id = ?", q.NodeID)
	}
	if err := w.span("Query", "started_time", q.From, q.To); err != nil {
		return nil, err
	}
	if err := w.after("Query.Cursor", "started_time", q.Cursor); err != nil {
		return nil, err
	}
	stmt := h.st.SQL("SELECT " + executionLight + " FROM {p}server_executions" + w.String() +
		" ORDER BY started_time DESC, id DESC LIMIT ?")
	out, err := h.queryExecutions(ctx, stmt, append(w.args, limit+1)...)
	if err != nil {
		return nil, dbErr("listing executions", err)
	}
	p := &Page{Executions: out}
	if len(out) > limit {
		p.Executions = out[:limit]
		last := out[limit-1]
		p.Next = encodeCursor(last.StartedTime, last.ID)
	}
	return p, nil
}

// RunningByNode counts the executions running now, by the ID of the node
// that runs them; nodes running nothing are absent.
func (h *History) RunningByNode(ctx context.Context) (map[string]int, error) {
	rows, err := h.db.QueryContext(ctx, h.st.SQL(`SELECT node_id, COUNT(*) FROM {p}server_executions
		WHERE outcome = 'running' AND sched_name = ? GROUP BY node_id`), h.sched)
	if err != nil {
		return nil, dbErr("counting running executions by node", err)
	}
	defer rows.Close()
	out := make(map[string]int)
	for rows.Next() {
		var node string
		var n int
		if err := rows.Scan(&node, &n); err != nil {
			return nil, dbErr("counting running executions by node", err)
		}
		out[node] = n
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("counting running executions by node", err)
	}
	return out, nil
}

// LastSuccess returns when the job's latest successful execution
// finished, or the zero time if none is recorded.
func (h *History) LastSuccess(ctx context.Context, group, name string) (time.Time, error) {
	if err := checkKey("group", group, true); err != nil {
		return time.Time{}, err
	}
	if err := checkKey("name", name, true); err != nil {
		return time.Time{}, err
	}
	var t sql.NullInt64
	if err := h.db.QueryRowContext(ctx, h.q.lastSuccess, group, name, h.sched).Scan(&t); err != nil {
		return time.Time{}, dbErr("reading the last success of job "+group+"."+name, err)
	}
	return timeOf(t), nil
}

// Stats are figures about the executions of a job (or group, or all jobs)
// that started since a time.
type Stats struct {
	// Since is the start of the period.
	Since time.Time
	// Total counts the executions that started since then, and Counts
	// them by outcome; outcomes with none are absent.
	Total  int
	Counts map[Outcome]int
	// P50 and P95 are the median and 95th percentile of the durations
	// (FinishedTime - StartedTime) of the newest StatsSample executions
	// that ran to an end (succeeded, failed, timed out or cancelled);
	// zero when there are none. Sampled is how many that is.
	P50, P95 time.Duration
	Sampled  int
}

// StatsSample bounds the executions whose durations Stats reads.
const StatsSample = 1000

// Stats returns figures about the executions of the job group.name that
// started at or after since: of every job of the group when name is
// empty, of every job when both are.
func (h *History) Stats(ctx context.Context, group, name string, since time.Time) (*Stats, error) {
	w := where{}
	w.add("sched_name = ?", h.sched)
	if err := w.job("", group, name); err != nil {
		return nil, err
	}
	if err := w.span("", "started_time", since, time.Time{}); err != nil {
		return nil, err
	}
	st := &Stats{Since: since, Counts: make(map[Outcome]int)}
	rows, err := h.db.QueryContext(ctx, h.st.SQL("SELECT outcome, COUNT(*) FROM {p}server_executions"+w.String()+
		" GROUP BY outcome"), w.args...)
	if err != nil {
		return nil, dbErr("counting executions", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o string
		var n int
		if err := rows.Scan(&o, &n); err != nil {
			return nil, dbErr("counting executions", err)
		}
		st.Counts[Outcome(o)] = n
		st.Total += n
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("counting executions", err)
	}
	rows.Close()

	w.add("outcome IN (?, ?, ?, ?)", string(OutcomeSucceeded), string(OutcomeFailed), string(OutcomeTimedOut), string(OutcomeCancelled))
	rows, err = h.db.QueryContext(ctx, h.st.SQL("SELECT finished_time - started_time FROM {p}server_executions"+w.String()+
		" ORDER BY started_time DESC LIMIT ?"), append(w.args, StatsSample)...)
	if err != nil {
		return nil, dbErr("reading execution durations", err)
	}
	defer rows.Close()
	var ds []time.Duration
	for rows.Next() {
		var d sql.NullInt64
		if err := rows.Scan(&d); err != nil {
			return nil, dbErr("reading execution durations", err)
		}
		if d.Valid {
			ds = append(ds, time.Duration(d.Int64))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("reading execution durations", err)
	}
	st.Sampled = len(ds)
	st.P50, st.P95 = percentile(ds, 50), percentile(ds, 95)
	return st, nil
}

// queryExecutions runs a query for executions and scans them.
func (h *History) queryExecutions(ctx context.Context, stmt string, args ...any) ([]Execution, error) {
	rows, err := h.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Execution
	for rows.Next() {
		e, err := scanExecution(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, rows.Err()
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanExecution reads the columns of executionCols or executionLight.
func scanExecution(s scanner) (*Execution, error) {
	var (
		e                          Execution
		scheduled, finished        sql.NullInt64
		started                    int64
		outcome                    string
		logs, params               sql.NullString
		truncated, recovering, man bool
	)
	err := s.Scan(&e.ID, &e.FirstID, &e.Attempt, &e.JobGroup, &e.JobName, &e.TriggerGroup, &e.TriggerName, &e.NodeID,
		&scheduled, &started, &finished, &outcome, &e.Error, &e.Output, &logs, &truncated, &recovering, &man, &params,
		&e.KilledBy, &e.ExecutorID, &e.ExecutorInstance, &e.CauseID)
	if err != nil {
		return nil, err
	}
	e.ScheduledTime = timeOf(scheduled)
	e.StartedTime = time.Unix(0, started).UTC()
	e.FinishedTime = timeOf(finished)
	e.Outcome = Outcome(outcome)
	e.OutputTruncated, e.Recovering, e.Manual = truncated, recovering, man
	if err := decodeJSON(logs, &e.Logs); err != nil {
		return nil, fmt.Errorf("execution %s: logs: %w", e.ID, err)
	}
	if err := decodeJSON(params, &e.Params); err != nil {
		return nil, fmt.Errorf("execution %s: params: %w", e.ID, err)
	}
	return &e, nil
}

// encodeJSON returns the stored form of v: JSON text, or NULL for a nil or
// empty value.
func encodeJSON[T any](field string, v T) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, invalid(field, "cannot be encoded: %v", err)
	}
	switch string(b) {
	case "null", "{}", "[]":
		return nil, nil
	}
	return string(b), nil
}

// decodeJSON reads a stored JSON value into v; NULL leaves v alone.
// Numbers become json.Number.
func decodeJSON(s sql.NullString, v any) error {
	if !s.Valid || s.String == "" {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader([]byte(s.String)))
	d.UseNumber()
	return d.Decode(v)
}

// cleanText makes text storable on every dialect: valid UTF-8 without NUL
// bytes (PostgreSQL text refuses both).
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// minOutputBytes leaves room for the omission line and some output.
const minOutputBytes = 64

// truncateOutput cuts s to at most limit bytes, keeping its first and last
// parts around a line saying how many bytes were left out, on UTF-8
// boundaries. It reports whether it cut.
func truncateOutput(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	marker := func(n int) string { return fmt.Sprintf("\n... %d bytes omitted ...\n", n) }
	budget := limit - len(marker(len(s))) // the longest marker there can be
	head := budget / 2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (budget - budget/2)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + marker(tail-head) + s[tail:], true
}

// minLogLines leaves room for the omission line and a line either side.
const minLogLines = 3

// truncateLogs keeps at most limit lines: the first and last ones around a
// line saying how many were left out.
func truncateLogs(lines []LogLine, limit int) []LogLine {
	if len(lines) <= limit {
		return lines
	}
	head := (limit - 1) / 2
	tail := limit - 1 - head
	omitted := len(lines) - head - tail
	out := make([]LogLine, 0, limit)
	out = append(out, lines[:head]...)
	out = append(out, LogLine{
		Time:    lines[head].Time,
		Level:   "WARN",
		Message: fmt.Sprintf("... %d log lines omitted ...", omitted),
	})
	return append(out, lines[len(lines)-tail:]...)
}

// percentile returns the p-th percentile of ds by the nearest-rank method,
// or 0 for none. It sorts ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := (p*len(ds) + 99) / 100 // ceil(p/100 * n)
	return ds[max(rank, 1)-1]
}
