package engine

import (
	"context"
	"errors"
)

// dispatch queues a fired job for a worker, and starts a worker unless
// Config.Workers run already. Jobs start in the order they were
// dispatched.
func (e *Engine) dispatch(f *Firing) {
	jobCtx, cancel := context.WithCancelCause(e.jobsCtx)
	r := &runningJob{run: Running{Firing: *f, Started: e.cfg.Clock.Now()}, ctx: jobCtx, cancel: cancel}
	r.run.Firing.membership = e.cfg.Membership
	e.mu.Lock()
	e.busy++
	e.running[f.Execution.ID] = r
	e.queue = append(e.queue, r)
	start := e.moreWorkersLocked(1)
	e.mu.Unlock()
	e.startWorkers(start)
}

// moreWorkersLocked counts n more workers as started, fewer when
// Config.Workers would be exceeded, and returns how many to start. e.mu is
// held.
func (e *Engine) moreWorkersLocked(n int) int {
	n = min(n, e.cfg.Workers-e.workers)
	n = max(n, 0)
	e.workers += n
	return n
}

// startWorkers starts n workers counted by moreWorkersLocked.
func (e *Engine) startWorkers(n int) {
	for range n {
		e.jobsWG.Go(e.work)
	}
}

// work is a worker: it runs queued jobs, in order, until the queue is
// empty.
func (e *Engine) work() {
	for {
		e.mu.Lock()
		if len(e.queue) == 0 {
			e.workers--
			e.mu.Unlock()
			return
		}
		r := e.queue[0]
		e.queue[0] = nil
		e.queue = e.queue[1:]
		e.mu.Unlock()
		e.run(r)
	}
}

// run runs a job, then queues its outcome to be recorded. It is the last
// step before the job starts, so it checks there that the lease the job was
// fired under is still valid, and holds the job otherwise.
func (e *Engine) run(r *runningJob) {
	f := &r.run.Firing
	if lease := f.lease(); !e.cfg.Membership.LeaseHeld(lease) {
		e.hold(r, lease)
		return
	}
	began := e.cfg.Clock.Now()
	var out Outcome
	for {
		out = e.cfg.Runner.Execute(r.ctx, f)
		if out.NotStarted || !out.RefireImmediately || r.ctx.Err() != nil {
			break
		}
		f.RefireCount++
	}
	if out.NotStarted {
		// The lease lapsed while Execute prepared the job (its listeners
		// ran long, or the node was starved).
		e.hold(r, f.lease())
		return
	}
	e.took(e.cfg.Clock.Now().Sub(began))
	release := cancelledForLease(r, out)
	e.mu.Lock()
	delete(e.running, f.Execution.ID)
	e.mu.Unlock()
	r.cancel(nil)
	// The worker is free before the outcome is recorded: recording waits
	// for the store, and outcomes are recorded in batches.
	e.jobFinished()
	if out.RecordAfter != nil {
		e.completeAfter(f, out, release)
		return
	}
	e.complete(f, out, release)
}

// cancelledForLease reports whether a job that requests recovery failed
// after the node cancelled it for a lapsed lease (ErrLeaseLost): it did not
// run to its end, so its execution is handed back to recovery rather than
// recorded failed (see handOff). A job that finished all the same, or that
// does not request recovery, is recorded as it ended.
func cancelledForLease(r *runningJob, out Outcome) bool {
	return out.Err != nil && !out.Vetoed && r.run.Firing.Execution.RequestsRecovery &&
		errors.Is(context.Cause(r.ctx), ErrLeaseLost)
}
