package engine

import (
	"context"
	"errors"

	"github.com/chime-scheduler/chime/internal/outage"
	"github.com/chime-scheduler/chime/store"
)

// finished is the outcome of a finished job, to record.
type finished struct {
	firing *Firing
	lease  store.Lease // the lease the execution runs under
	c      store.ExecutionCompletion
	// release hands the execution back to recovery instead of recording
	// c (store.ExecutionsRelease): the node cancelled the job for a
	// lapsed lease, and the job requests recovery.
	release bool
}

// maxRecordBatch bounds the outcomes recorded by one store call.
const maxRecordBatch = 1024

// complete records the end of an execution, or with release hands it back
// to recovery unfinished. The outcome joins a queue,
// which one goroutine records, a batch at a time, until it is empty; it is
// started when an outcome finds none at work. So outcomes that finish
// together are recorded together, and workers never wait for the store.
// Recording uses a context that survives Stop, and retries while the store
// is unreachable until Stop gives up waiting; Stop waits for it as for the
// jobs.
func (e *Engine) complete(f *Firing, out Outcome, release bool) {
	item := finished{
		firing:  f,
		lease:   f.lease(),
		release: release,
		c: store.ExecutionCompletion{
			ID:           f.Execution.ID,
			State:        store.ExecutionSucceeded,
			FinishedTime: e.cfg.Clock.Now(),
			Instruction:  instruction(f, out),
			JobData:      out.JobData,
			// A fixed-delay trigger is re-armed from this end.
			Rearm: f.Trigger != nil && f.Trigger.RearmDelay > 0,
		},
	}
	switch {
	case release:
		item.c.Instruction = store.InstructionNoop
	case out.Vetoed:
		item.c.State = store.ExecutionVetoed
	case out.Err != nil:
		item.c.State = store.ExecutionFailed
		item.c.Error = out.Err.Error()
	}
	e.outcomesMu.Lock()
	e.outcomes = append(e.outcomes, item)
	start := !e.recording
	e.recording = true
	e.outcomesMu.Unlock()
	if start {
		e.jobsWG.Go(e.recordAll)
	}
}

// completeAfter completes f once out.RecordAfter is closed, on a
// goroutine of its own that Stop waits for as for the jobs, so that the
// worker is free meanwhile. When Stop gives up waiting first, the outcome
// is not recorded: the execution stays in the store, where the cluster
// recovers it as that of a node that died while the job ran.
func (e *Engine) completeAfter(f *Firing, out Outcome, release bool) {
	select {
	case <-out.RecordAfter:
		e.complete(f, out, release)
		return
	default:
	}
	e.jobsWG.Go(func() {
		select {
		case <-out.RecordAfter:
			e.complete(f, out, release)
		case <-e.jobsCtx.Done():
			e.log.Error("scheduler stopped before the job's own record of its run was done; the cluster will recover the execution",
				"execution_id", f.Execution.ID, "job_key", f.Execution.JobKey.String())
		}
	})
}

// recordAll records the queued outcomes until none is left.
func (e *Engine) recordAll() {
	for {
		e.outcomesMu.Lock()
		n := min(len(e.outcomes), maxRecordBatch)
		if n == 0 {
			e.recording = false
			e.outcomesMu.Unlock()
			return
		}
		batch := e.outcomes[:n:n]
		e.outcomes = e.outcomes[n:]
		e.outcomesMu.Unlock()
		e.record(batch)
	}
}

// record records a batch of outcomes, in one store call per lease and
// kind (ends, hand-offs).
func (e *Engine) record(batch []finished) {
	for len(batch) > 0 {
		n := 1
		for n < len(batch) && batch[n].lease == batch[0].lease && batch[n].release == batch[0].release {
			n++
		}
		group := batch[:n]
		batch = batch[n:]
		if group[0].release {
			e.recordWithRetry(group, func(ctx context.Context) ([]error, error) {
				return e.handOff(ctx, group)
			})
			continue
		}
		e.recordWithRetry(group, func(ctx context.Context) ([]error, error) {
			p := &store.ExecutionsCompleteParams{Lease: group[0].lease, Completions: make([]store.ExecutionCompletion, len(group))}
			for i, it := range group {
				p.Completions[i] = it.c
			}
			return e.cfg.Store.ExecutionsComplete(ctx, p)
		})
	}
}

// recordWithRetry records outcomes of one lease with call, which returns
// an error per outcome or one for the whole call. A whole-call failure
// other than a refused lease or a closed store is retried with a backoff,
// logged when it starts and every outageLogEvery while it lasts.
func (e *Engine) recordWithRetry(items []finished, call func(context.Context) ([]error, error)) {
	ctx := context.WithoutCancel(e.jobsCtx)
	first := items[0].firing.Execution
	down := outage.Tracker{Min: retryMin, Max: retryMax, LogEvery: outageLogEvery}
	for {
		errs, err := call(ctx)
		if err == nil {
			if r, ended := down.Succeed(e.cfg.Clock.Now()); ended {
				e.log.Info("recorded execution outcome after store failures", "execution_id", first.ID, "executions", len(items), "attempts", r.Attempts, "outage", r.Duration)
			}
			for i, it := range items {
				if errs[i] != nil {
					e.log.Error("cannot record execution outcome", "execution_id", it.c.ID, "job_key", it.firing.Execution.JobKey.String(), "error", errs[i])
					continue
				}
				e.recorded(it)
			}
			return
		}
		if errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrClosed) {
			for _, it := range items {
				e.log.Error("cannot record execution outcome", "execution_id", it.c.ID, "job_key", it.firing.Execution.JobKey.String(), "error", err)
			}
			if errors.Is(err, store.ErrFenced) {
				e.cfg.Membership.LeaseRefused(items[0].lease)
			}
			return
		}
		fail := down.Fail(e.cfg.Clock.Now())
		if fail.Log {
			e.log.Warn("recording execution outcome failed; retrying", "execution_id", first.ID, "job_key", first.JobKey.String(), "executions", len(items), "attempts", fail.Attempts, "outage", fail.Duration, "error", err)
		}
		if !e.sleep(e.jobsCtx, e.jitter(fail.Backoff)) {
			for _, it := range items {
				e.log.Error("scheduler stopped before the execution outcome could be recorded; the cluster will recover the execution", "execution_id", it.c.ID, "job_key", it.firing.Execution.JobKey.String(), "error", err)
			}
			return
		}
	}
}

// handOff hands executions of one lease whose jobs the node cancelled for
// a lapsed lease back to recovery (store.ExecutionsRelease). The store
// takes them only under the same lease, unchanged since they were fired:
// then no node declared this one dead while it could not reach the store,
// and none re-ran them, so the one node that claims them next re-runs them,
// with Recovering set. When another node did declare this one dead, it
// recovered them already, and the store refuses the lease (ErrFenced):
// nothing runs twice.
func (e *Engine) handOff(ctx context.Context, group []finished) ([]error, error) {
	p := &store.ExecutionsReleaseParams{Lease: group[0].lease, IDs: make([]string, len(group))}
	for i, it := range group {
		p.IDs[i] = it.c.ID
	}
	return e.cfg.Store.ExecutionsRelease(ctx, p)
}

// recorded acts on a recorded outcome: a hand-off wakes the loop to re-run
// the execution, a deleted trigger is reported, and a non-concurrent job
// that finished may have unblocked triggers that are due.
func (e *Engine) recorded(it finished) {
	f := it.firing
	if it.release {
		e.log.Warn("job cancelled when the node's lease lapsed; handed its execution to recovery",
			"execution_id", it.c.ID, "job_key", f.Execution.JobKey.String(), "scheduled_fire_time", f.Execution.ScheduledTime)
		e.WakeRecovery()
		return
	}
	if it.c.Instruction == store.InstructionDeleteTrigger && f.Trigger != nil {
		e.cfg.Observer.TriggerFinalized(f.Trigger.Key)
	}
	if f.Job.DisallowConcurrent {
		e.Wake()
	}
}

// instruction maps an outcome to what the store does with the trigger, as
// Quartz's Trigger.executionComplete does.
func instruction(f *Firing, out Outcome) store.Instruction {
	switch {
	case f.Trigger == nil:
		return store.InstructionNoop
	case out.UnscheduleAllTriggers:
		return store.InstructionSetAllJobTriggersComplete
	case out.UnscheduleFiringTrigger:
		return store.InstructionSetTriggerComplete
	case f.Trigger.NextFireTime.IsZero() && f.Trigger.RearmDelay == 0:
		// A fixed-delay trigger has no next fire time until the store
		// re-arms it from this run's end.
		return store.InstructionDeleteTrigger
	default:
		return store.InstructionNoop
	}
}
