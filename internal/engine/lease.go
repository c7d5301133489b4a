package engine

import (
	"context"
	"errors"

	"github.com/chime-scheduler/chime/store"
)

// lease returns the lease the execution was fired, or claimed for a re-run,
// under.
func (f *Firing) lease() store.Lease {
	return store.Lease{NodeID: f.Execution.NodeID, Epoch: f.Execution.Epoch}
}

// hold keeps a fired job whose start the lease refused: the lease it was
// fired under lapsed, or the node registered again since. Its execution is
// EXECUTING in the store under that lease, but the job must not start:
// another node may already have declared this one dead and be re-running
// the execution, or running the next firing of a non-concurrent job.
// settleHeld starts it once the same lease is valid again (a renewal the
// store accepted proves that no node declared this one dead meanwhile), and
// drops it when the lease changed: the store recovered the execution when
// the node registered again, as NodesRecover does for a dead node.
func (e *Engine) hold(r *runningJob, lease store.Lease) {
	e.mu.Lock()
	e.held = append(e.held, r)
	e.mu.Unlock()
	x := r.run.Firing.Execution
	e.log.Warn("lease not known to be valid when the job was to start; holding the job until the lease is renewed",
		"execution_id", x.ID, "job_key", x.JobKey.String(), "scheduled_fire_time", x.ScheduledTime, "epoch", lease.Epoch)
	// The loop settles held jobs at its next pass; when the node already
	// registered again, that drops this one at once.
	e.Wake()
}

// settleHeld starts the held jobs fired under lease, which the loop has
// just found valid, and drops the others, fired under an earlier lease.
func (e *Engine) settleHeld(lease store.Lease) {
	e.mu.Lock()
	if len(e.held) == 0 {
		e.mu.Unlock()
		return
	}
	var resumed, dropped []*runningJob
	for _, r := range e.held {
		if r.run.Firing.lease() != lease {
			dropped = append(dropped, r)
			continue
		}
		if errors.Is(context.Cause(r.ctx), ErrLeaseLost) {
			// Cancelled when the node assumed its lease lost, before the
			// job started; the store has renewed the lease since, so the
			// job starts with a context of its own.
			r.ctx, r.cancel = context.WithCancelCause(e.jobsCtx)
		}
		resumed = append(resumed, r)
	}
	e.held = nil
	// Held jobs were fired before those queued since: they go first.
	e.queue = append(resumed, e.queue...)
	start := e.moreWorkersLocked(len(resumed))
	e.mu.Unlock()
	for _, r := range resumed {
		x := r.run.Firing.Execution
		e.log.Info("lease renewed; starting the held job", "execution_id", x.ID, "job_key", x.JobKey.String(), "scheduled_fire_time", x.ScheduledTime)
	}
	e.startWorkers(start)
	if len(dropped) > 0 {
		// Registering again made their executions recoverable: this pass
		// may re-run them.
		e.recoverNow.Store(true)
	}
	e.drop(dropped, "the node registered again under a new lease")
}

// dropHeld drops every held job, for example when the engine stops.
func (e *Engine) dropHeld(reason string) {
	e.mu.Lock()
	held := e.held
	e.held = nil
	e.mu.Unlock()
	e.drop(held, reason)
}

// drop forgets held jobs that will never start on this node. Their
// executions belong to a lease the store fences or is about to: it records
// them as recovering or failed as it does a dead node's.
func (e *Engine) drop(jobs []*runningJob, reason string) {
	if len(jobs) == 0 {
		return
	}
	e.mu.Lock()
	for _, r := range jobs {
		delete(e.running, r.run.Firing.Execution.ID)
		e.busy--
	}
	e.mu.Unlock()
	for _, r := range jobs {
		r.cancel(nil)
		x := r.run.Firing.Execution
		e.log.Warn("held job not started; the cluster recovers its execution", "reason", reason,
			"execution_id", x.ID, "job_key", x.JobKey.String(), "scheduled_fire_time", x.ScheduledTime, "epoch", x.Epoch)
	}
	select {
	case e.slotFree <- struct{}{}:
	default:
	}
}
