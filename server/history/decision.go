package history

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// DecisionKind says what the scheduler decided about a firing.
type DecisionKind string

// Decision kinds. Others may be recorded: a kind is up to 32 bytes.
const (
	// DecisionFired: the trigger fired and the job ran (ExecutionID).
	DecisionFired DecisionKind = "fired"
	// DecisionMisfired: the fire time passed unfired (the scheduler was
	// down or busy) and the misfire instruction was applied (Reason).
	DecisionMisfired DecisionKind = "misfired"
	// DecisionSkipped: the fire time was skipped (a misfire instruction or
	// an exclusion calendar said so).
	DecisionSkipped DecisionKind = "skipped"
	// DecisionVetoed: a listener vetoed the firing.
	DecisionVetoed DecisionKind = "vetoed"
	// DecisionPaused: the trigger or its job was paused at the fire time.
	DecisionPaused DecisionKind = "paused"
	// DecisionBlocked: the job disallows concurrent runs and was running.
	DecisionBlocked DecisionKind = "blocked"
	// DecisionRetryScheduled: a failed execution will be tried again.
	DecisionRetryScheduled DecisionKind = "retry_scheduled"
	// DecisionRetriesExhausted: a failed execution will not be tried
	// again.
	DecisionRetriesExhausted DecisionKind = "retries_exhausted"
	// DecisionRecovered: the execution of a dead node is re-run.
	DecisionRecovered DecisionKind = "recovered"
)

// maxKind is the length limit of a decision kind.
const maxKind = 32

// Decision is one thing the scheduler decided about a job's firing: the
// answer to "why did job X not run at 02:00?".
type Decision struct {
	// ID identifies the decision; RecordDecision fills it in when empty.
	ID string
	// JobGroup and JobName are the job's key; both are required.
	JobGroup, JobName string
	// TriggerGroup and TriggerName are the trigger's key, if any.
	TriggerGroup, TriggerName string
	// ScheduledTime is the fire time the decision is about, if any.
	ScheduledTime time.Time
	// At is when the decision was made; required.
	At time.Time
	// Kind is what was decided; required.
	Kind DecisionKind
	// Reason explains it for a person.
	Reason string
	// NodeID is the node that decided.
	NodeID string
	// ExecutionID is the execution that followed, if any.
	ExecutionID string
}

// RecordDecision records d, filling in d.ID when it is empty. A second
// record with one ID fails with [ErrExists].
func (h *History) RecordDecision(ctx context.Context, d *Decision) error {
	if d == nil {
		return invalid("", "nil decision")
	}
	if err := checkDecision(d); err != nil {
		return err
	}
	id := d.ID
	if id == "" {
		id = newID()
	}
	sortTime := d.ScheduledTime
	if sortTime.IsZero() {
		sortTime = d.At
	}
	_, err := h.db.ExecContext(ctx, h.q.decisionInsert, h.sched,
		id, d.JobGroup, d.JobName, d.TriggerGroup, d.TriggerName, timeArg(d.ScheduledTime), d.At.UnixNano(),
		string(d.Kind), cleanText(d.Reason), d.NodeID, d.ExecutionID, sortTime.UnixNano())
	switch {
	case h.st.IsUniqueViolation(err):
		return fmt.Errorf("%w: decision %q", ErrExists, id)
	case err != nil:
		return dbErr("recording a decision about job "+d.JobGroup+"."+d.JobName, err)
	}
	d.ID = id
	return nil
}

func checkDecision(d *Decision) error {
	for _, f := range []struct {
		name, v  string
		required bool
	}{
		{"ID", d.ID, false}, {"JobGroup", d.JobGroup, true}, {"JobName", d.JobName, true},
		{"TriggerGroup", d.TriggerGroup, false}, {"TriggerName", d.TriggerName, false},
		{"NodeID", d.NodeID, false}, {"ExecutionID", d.ExecutionID, false},
	} {
		if err := checkKey("Decision."+f.name, f.v, f.required); err != nil {
			return err
		}
	}
	if d.Kind == "" || len(d.Kind) > maxKind {
		return invalid("Decision.Kind", "%q: want 1 to %d bytes", d.Kind, maxKind)
	}
	if err := checkTime("Decision.ScheduledTime", d.ScheduledTime, false); err != nil {
		return err
	}
	return checkTime("Decision.At", d.At, true)
}

// Decisions returns the decisions about the job group.name (every job of
// the group when name is empty, every job when both are) whose scheduled
// time, or decision time when they have none, is in [from, to), newest
// first; a zero from or to is no bound. limit is 1 to MaxLimit, 0 for
// DefaultLimit.
func (h *History) Decisions(ctx context.Context, group, name string, from, to time.Time, limit int) ([]Decision, error) {
	limit, err := checkLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	w := where{}
	w.add("sched_name = ?", h.sched)
	if err := w.job("", group, name); err != nil {
		return nil, err
	}
	if err := w.span("", "sort_time", from, to); err != nil {
		return nil, err
	}
	rows, err := h.db.QueryContext(ctx, h.st.SQL("SELECT "+decisionCols+" FROM {p}server_decisions"+w.String()+
		" ORDER BY sort_time DESC, id DESC LIMIT ?"), append(w.args, limit)...)
	if err != nil {
		return nil, dbErr("listing decisions", err)
	}
	defer rows.Close()
	var out []Decision
	for rows.Next() {
		var (
			d         Decision
			scheduled sql.NullInt64
			decided   int64
			kind      string
		)
		if err := rows.Scan(&d.ID, &d.JobGroup, &d.JobName, &d.TriggerGroup, &d.TriggerName, &scheduled, &decided,
			&kind, &d.Reason, &d.NodeID, &d.ExecutionID); err != nil {
			return nil, dbErr("listing decisions", err)
		}
		d.ScheduledTime = timeOf(scheduled)
		d.At = time.Unix(0, decided).UTC()
		d.Kind = DecisionKind(kind)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("listing decisions", err)
	}
	return out, nil
}
