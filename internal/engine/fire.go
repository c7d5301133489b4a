package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chime-scheduler/chime/internal/execid"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// fireDue fires the acquired triggers whose instant came, as many as the
// node has the capacity to run, in one store call. It first settles earlier
// firings whose answer was lost, and applies the misfire instruction
// instead of firing to triggers a store outage or a lapsed lease held past
// the threshold. Due triggers beyond the capacity wait for a worker, and
// are handed back to the cluster when none frees up within starvedRelease.
// It reports false when the store failed: the triggers stay claimed and
// are tried again later.
func (e *Engine) fireDue(ctx context.Context, now time.Time, st *loopState, pending *triggerHeap) bool {
	var due []store.TriggerRecord
	for pending.Len() > 0 && !(*pending)[0].NextFireTime.After(now) {
		due = append(due, heap.Pop(pending).(store.TriggerRecord))
	}
	ready := make([]store.TriggerRecord, 0, len(due))
	for i, rec := range due {
		if e.unheard[rec.Key] {
			adopted, ok := e.adoptUnheard(ctx, rec)
			if !ok {
				pushAll(pending, ready)
				pushAll(pending, due[i:])
				return false
			}
			delete(e.unheard, rec.Key)
			if adopted {
				continue
			}
		}
		late := rec.NextFireTime.Before(now.Add(-e.cfg.MisfireThreshold))
		if late && schedule.MisfireInstruction(rec.MisfireInstruction) != schedule.MisfireIgnore {
			// Its misfire instruction applies, and it comes back through an
			// acquisition if it still fires.
			e.misfire(ctx, now, rec)
			st.lookNow = true
			continue
		}
		ready = append(ready, rec)
	}
	n := min(len(ready), e.capacity())
	switch {
	case n == len(ready):
		st.starved = time.Time{}
	case st.starved.IsZero():
		st.starved = now
		pushAll(pending, ready[n:])
	case now.Sub(st.starved) >= starvedRelease:
		// The workers are taken by jobs that run long: another node may
		// have free ones.
		e.log.Debug("no worker freed up for due triggers; handing them back", "triggers", len(ready)-n)
		for _, rec := range ready[n:] {
			e.release(ctx, rec.Key, nil)
		}
		st.starved = time.Time{}
		st.lookOnSlot = true
	default:
		pushAll(pending, ready[n:])
	}
	if n == 0 {
		return true
	}
	return e.fire(ctx, now, st, pending, ready[:n])
}

// adoptUnheard settles a trigger whose firing failed without an answer.
// When the store did fire it (the execution of that instant is EXECUTING
// under this node's lease), the job runs now; otherwise the trigger is
// fired as usual. It reports whether it settled the trigger, and false in
// ok when the store failed.
func (e *Engine) adoptUnheard(ctx context.Context, rec store.TriggerRecord) (adopted, ok bool) {
	lease := e.cfg.Membership.Lease()
	execs, err := e.cfg.Store.ExecutionList(ctx, &store.ExecutionListParams{TriggerKey: &rec.Key, NodeID: lease.NodeID, Running: true})
	if err != nil {
		e.storeError(ctx, "list executions", lease, err)
		return false, false
	}
	i := slices.IndexFunc(execs, func(x store.ExecutionRecord) bool {
		return x.State == store.ExecutionExecuting && x.Epoch == lease.Epoch && x.ScheduledTime.Equal(rec.NextFireTime)
	})
	if i < 0 {
		return false, true
	}
	exec := execs[i]
	job, err := e.cfg.Store.JobGet(ctx, rec.JobKey)
	if errors.Is(err, store.ErrJobNotFound) {
		// Deleted since; nothing to run. Recovery takes the execution when
		// this node goes.
		e.log.Error("fired trigger's job was deleted before it could run", "trigger_key", rec.Key.String(), "execution_id", exec.ID)
		return true, true
	}
	if err != nil {
		e.storeError(ctx, "read job", lease, err)
		return false, false
	}
	f := &Firing{Execution: exec, Job: *job, PreviousFireTime: rec.PreviousFireTime}
	if advanced, sched, err := e.advance(ctx, rec); err == nil {
		f.Trigger, f.Schedule = &advanced, sched
	} else if errors.As(err, new(*storeUnavailableError)) {
		return false, false
	}
	e.log.Info("the store fired the trigger although its answer was lost; running the job", "trigger_key", rec.Key.String(), "execution_id", exec.ID, "scheduled_fire_time", exec.ScheduledTime)
	e.dispatch(f)
	return true, true
}

// toFire is a due trigger on its way to the store.
type toFire struct {
	rec      store.TriggerRecord // as acquired
	advanced store.TriggerRecord // after this firing
	sched    schedule.Schedule
}

// fire fires due triggers in one store call and runs the jobs of those the
// store fired. It reports false when the store could not be reached: the
// triggers whose firing it could not settle go back to pending and are
// tried again later.
func (e *Engine) fire(ctx context.Context, now time.Time, st *loopState, pending *triggerHeap, recs []store.TriggerRecord) bool {
	batch, ok := e.advanceAll(ctx, pending, recs)
	if !ok {
		return false
	}
	if len(batch) == 0 {
		return true
	}
	lease := e.cfg.Membership.Lease()
	if !e.cfg.Membership.LeaseHeld(lease) {
		// The lease lapsed since the pass began (the node was starved, or
		// computing the timings waited on the store): fire nothing. The
		// claims are fired once the lease is renewed, or dropped when the
		// node registers again.
		pushFirst(pending, batch)
		return true
	}
	firings := firingsOf(batch, lease, now)
	outcomes, err := e.cfg.Store.TriggersFire(ctx, &store.TriggersFireParams{Lease: lease, Firings: firings})
	if err != nil {
		e.storeError(ctx, "fire triggers", lease, err)
		if errors.Is(err, store.ErrFenced) {
			return true // the claims went with the lease
		}
		// The store may have fired them all the same; the next attempt
		// looks first.
		for _, f := range batch {
			e.unheard[f.rec.Key] = true
		}
		pushFirst(pending, batch)
		return false
	}
	ok = true
	for i := range batch {
		if !e.settle(ctx, st, pending, lease, &batch[i], &firings[i], outcomes[i]) {
			ok = false
		}
	}
	return ok
}

// advanceAll computes the timing of each trigger after this firing. A
// trigger whose timing cannot be computed is handed back. It reports
// false, with every trigger back in pending, when the store could not be
// reached.
func (e *Engine) advanceAll(ctx context.Context, pending *triggerHeap, recs []store.TriggerRecord) ([]toFire, bool) {
	batch := make([]toFire, 0, len(recs))
	for i, rec := range recs {
		advanced, sched, err := e.advance(ctx, rec)
		if errors.As(err, new(*storeUnavailableError)) {
			pushFirst(pending, batch)
			pushAll(pending, recs[i:])
			return nil, false
		}
		if err != nil {
			e.log.Error("cannot compute trigger timing", "trigger_key", rec.Key.String(), "error", err)
			e.release(ctx, rec.Key, nil)
			continue
		}
		batch = append(batch, toFire{rec: rec, advanced: advanced, sched: sched})
	}
	return batch, true
}

// firingsOf is what the store records for the firings of batch under
// lease at now.
func firingsOf(batch []toFire, lease store.Lease, now time.Time) []store.TriggerFiring {
	firings := make([]store.TriggerFiring, len(batch))
	for i, f := range batch {
		firings[i] = store.TriggerFiring{
			Trigger: f.advanced,
			Execution: store.ExecutionRecord{
				ID:            execid.New(now),
				TriggerKey:    f.rec.Key,
				JobKey:        f.rec.JobKey,
				ScheduledTime: f.rec.NextFireTime,
				FiredTime:     now,
				NodeID:        lease.NodeID,
				Epoch:         lease.Epoch,
				State:         store.ExecutionExecuting,
			},
		}
	}
	return firings
}

// settle acts on the store's outcome of one firing: the job of a fired
// trigger runs, a refused firing runs nothing. It reports false when the
// outcome is unknown (a store failure for this firing): the trigger goes
// back to pending, to be looked up first on the next attempt.
func (e *Engine) settle(ctx context.Context, st *loopState, pending *triggerHeap, lease store.Lease, f *toFire, firing *store.TriggerFiring, out store.TriggerFireOutcome) bool {
	switch err := out.Err; {
	case err == nil:
	case errors.Is(err, store.ErrNotClaimed):
		e.log.Debug("trigger changed before it fired", "trigger_key", f.rec.Key.String())
		return true
	case errors.Is(err, store.ErrAlreadyFired):
		e.log.Warn("trigger already fired for this time; skipping it", "trigger_key", f.rec.Key.String(), "fire_time", f.rec.NextFireTime)
		e.release(ctx, f.rec.Key, &f.advanced)
		return true
	case errors.Is(err, store.ErrFenced):
		e.storeError(ctx, "fire trigger", lease, err)
		return true
	default:
		// The store may have fired it all the same; the next attempt
		// looks first.
		e.storeError(ctx, "fire trigger", lease, err)
		e.unheard[f.rec.Key] = true
		heap.Push(pending, f.rec)
		return false
	}
	if next := f.advanced.NextFireTime; !next.IsZero() && next.Before(st.lastLook.Add(e.cfg.IdleWait)) {
		// It is due again before the next idle look would claim it:
		// look sooner. (Otherwise that look claims it in time, and a
		// steady stream of firings does not make a claim each.)
		st.lookNow = true
	}
	if out.Result.Blocked {
		return true
	}
	exec := firing.Execution
	exec.RequestsRecovery = out.Result.Job.RequestsRecovery
	exec.Priority = f.rec.Priority
	e.dispatch(&Firing{Execution: exec, Job: out.Result.Job, Trigger: &f.advanced, PreviousFireTime: f.rec.PreviousFireTime, Schedule: f.sched})
	return true
}

// advance computes the timing a trigger has after firing at its next fire
// time: the record TriggerFire stores, and the decoded schedule.
func (e *Engine) advance(ctx context.Context, rec store.TriggerRecord) (store.TriggerRecord, schedule.Schedule, error) {
	tr, cal, err := e.timing(ctx, &rec)
	if err != nil {
		return rec, nil, err
	}
	original := tr.Schedule
	tr.Triggered(cal)
	advanced := rec
	if err := storeTiming(&advanced, tr, original); err != nil {
		return rec, nil, fmt.Errorf("store advanced timing of trigger %s: %w", rec.Key, err)
	}
	return advanced, tr.Schedule, nil
}

// pushFirst puts the triggers of a batch back among the pending ones, as
// they were acquired.
func pushFirst(pending *triggerHeap, batch []toFire) {
	for _, f := range batch {
		heap.Push(pending, f.rec)
	}
}

// pushAll puts triggers back among the pending ones.
func pushAll(pending *triggerHeap, recs []store.TriggerRecord) {
	for _, rec := range recs {
		heap.Push(pending, rec)
	}
}
