package chime

import (
	"context"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/internal/execid"
	"github.com/chime-scheduler/chime/store"
)

// ExecutionState is the state of an execution as the store records it.
type ExecutionState string

// Execution states.
const (
	// ExecutionExecuting: a node runs the job.
	ExecutionExecuting ExecutionState = ExecutionState(store.ExecutionExecuting)
	// ExecutionRecoverable: the node running the job was lost and the job
	// requests recovery; a live node will claim and re-run it.
	ExecutionRecoverable ExecutionState = ExecutionState(store.ExecutionRecoverable)
	// ExecutionSucceeded: the job finished without error.
	ExecutionSucceeded ExecutionState = ExecutionState(store.ExecutionSucceeded)
	// ExecutionFailed: the job returned an error or panicked, or its node
	// was lost while it ran and it does not request recovery (see
	// Execution.LostWithNode).
	ExecutionFailed ExecutionState = ExecutionState(store.ExecutionFailed)
	// ExecutionVetoed: a listener vetoed the execution.
	ExecutionVetoed ExecutionState = ExecutionState(store.ExecutionVetoed)
)

// Done reports whether the execution has finished.
func (s ExecutionState) Done() bool {
	return store.ExecutionState(s).Done()
}

// Execution is one firing of a trigger, for one scheduled fire time, as
// the store records it. Every node of a cluster sees the same executions:
// those running and those finished within Config.ExecutionRetention.
type Execution struct {
	ID                string
	JobKey            JobKey
	TriggerKey        TriggerKey
	ScheduledFireTime time.Time // the fire time the trigger was due at
	FireTime          time.Time // when the node fired it
	FinishedTime      time.Time // zero while it runs
	// NodeID is the node that fired or re-runs it; "" while it waits,
	// RECOVERABLE, for a node to re-run it.
	NodeID           string
	State            ExecutionState
	Recovering       bool // a re-run after the node that first ran it was lost
	RequestsRecovery bool
	// Error is why a FAILED execution failed.
	Error string
	// LostWithNode reports a FAILED execution whose node was declared
	// dead, or left the cluster, while it ran, and whose job does not
	// request recovery: the job may not have run, or not to its end, and
	// no node re-runs it.
	LostWithNode bool
}

// ExecutionFilter selects executions for Executions; zero fields do not
// filter.
type ExecutionFilter struct {
	JobKey     *JobKey     // executions of one job
	TriggerKey *TriggerKey // executions fired by one trigger
	NodeID     string      // executions of one node
	Running    bool        // only EXECUTING and RECOVERABLE executions
	// Limit bounds how many are returned, the newest scheduled first.
	Limit int
}

// Executions returns the executions the store records, the newest
// scheduled first. It reads the store, so it sees the executions of every
// node of the cluster, dead ones included, and works before Start too.
func (s *Scheduler) Executions(ctx context.Context, filter *ExecutionFilter) ([]Execution, error) {
	p := &store.ExecutionListParams{}
	if filter != nil {
		if filter.Limit < 0 {
			return nil, &ValidationError{Field: "ExecutionFilter.Limit", Reason: "must not be negative"}
		}
		p.NodeID, p.Running, p.Limit = filter.NodeID, filter.Running, filter.Limit
		if filter.JobKey != nil {
			k := filter.JobKey.store()
			p.JobKey = &k
		}
		if filter.TriggerKey != nil {
			k := filter.TriggerKey.store()
			p.TriggerKey = &k
		}
	}
	recs, err := s.store.ExecutionList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("chime: list executions: %w", err)
	}
	out := make([]Execution, 0, len(recs))
	for i := range recs {
		out = append(out, executionOf(&recs[i]))
	}
	return out, nil
}

func executionOf(rec *store.ExecutionRecord) Execution {
	return Execution{
		ID:                rec.ID,
		JobKey:            jobKeyOf(rec.JobKey),
		TriggerKey:        triggerKeyOf(rec.TriggerKey),
		ScheduledFireTime: rec.ScheduledTime,
		FireTime:          rec.FiredTime,
		FinishedTime:      rec.FinishedTime,
		NodeID:            rec.NodeID,
		State:             ExecutionState(rec.State),
		Recovering:        rec.Recovering,
		RequestsRecovery:  rec.RequestsRecovery,
		Error:             rec.Error,
		LostWithNode: rec.State == store.ExecutionFailed &&
			(rec.Error == store.ErrorNodeLost || rec.Error == store.ErrorNodeStopped),
	}
}

// NewExecutionID returns a new execution ID in the format the scheduler
// gives the executions it fires: 32 lower-case hex digits, the first 12
// the Unix time in milliseconds and the rest random. A layer that starts
// runs of its own (a retry, a run by hand) names them so, and its IDs sit
// with the scheduler's in the same indexes. IDs made one after the other
// mostly sort one after the other, which keeps a database's index on them
// inserting at its right edge; nothing may rely on that order.
func NewExecutionID() string { return execid.New(time.Now()) }
