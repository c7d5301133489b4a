package engine

import (
	"container/heap"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// acquisition is the outcome of a TriggersAcquireFire call made by its
// own goroutine: the triggers claimed, and the firings of those that were
// due already.
type acquisition struct {
	lease    store.Lease
	limit    int
	recs     []store.TriggerRecord
	fired    []toFire
	firings  []store.TriggerFiring
	outcomes []store.TriggerFireOutcome
	// proposed are the firings the store was asked to make, for a call
	// that failed: it may have made them all the same (see settleUnsettled).
	proposed map[store.Key]proposal
	err      error
}

// proposal is a firing the engine asked the store to make as it claimed
// the trigger.
type proposal struct {
	f      toFire
	firing store.TriggerFiring
}

// startAcquire claims due triggers: no more in all than the node has the
// capacity to fire now, so that a node whose workers are busy leaves due
// triggers to nodes that have room. Those already due are fired in the
// same store call (store.Batcher's TriggersAcquireFire; see dueNow). The
// claim runs on its own goroutine,
// so that the loop goes on firing what is due meanwhile; absorb takes its
// outcome. One runs at a time; the loop waits for it before it ends, and
// it uses a context the loop's end does not cancel, so that the claims it
// makes are known and handed back.
func (e *Engine) startAcquire(ctx context.Context, now time.Time, st *loopState, pending *triggerHeap) {
	if st.acquiring {
		st.lookAgain = true
		return
	}
	limit := min(e.capacity(), e.cfg.BatchSize) - pending.Len()
	st.lookOnSlot = limit <= 0 && pending.Len() < e.cfg.BatchSize
	if limit <= 0 {
		return
	}
	noLaterThan := now.Add(e.cfg.LookAhead)
	e.coverDue(noLaterThan)
	lease := e.cfg.Membership.Lease()
	st.acquiring = true
	actx := context.WithoutCancel(ctx)
	go func() {
		proposed := make(map[store.Key]proposal)
		res, err := e.cfg.Store.TriggersAcquireFire(actx, &store.TriggersAcquireFireParams{
			TriggersAcquireParams: store.TriggersAcquireParams{
				Lease:           lease,
				NoLaterThan:     noLaterThan,
				Limit:           limit,
				ExcludeJobTypes: e.cfg.ExcludeJobTypes,
			},
			Fire: func(rec store.TriggerRecord) (store.TriggerFiring, bool) {
				return e.dueNow(lease, rec, proposed)
			},
		})
		a := acquisition{lease: lease, limit: limit, err: err}
		if err != nil {
			a.proposed = proposed
		} else {
			a.recs, a.firings, a.outcomes = res.Claimed, res.Firings, res.Outcomes
			a.fired = make([]toFire, len(res.Firings))
			for i := range res.Firings {
				a.fired[i] = proposed[res.Firings[i].Trigger.Key].f
			}
		}
		e.acquired <- a
	}()
}

// dueNow decides, for a trigger the store just claimed, whether the store
// fires it in the same step: when it is due by the node's clock, did not
// misfire (or fires every missed time), has no calendar (loading one would
// call the store, which holds its locks meanwhile), a worker can take it,
// and the lease is valid. Its firing is what fire would send; it is kept
// in proposed. Any other trigger stays claimed and takes the loop's path.
func (e *Engine) dueNow(lease store.Lease, rec store.TriggerRecord, proposed map[store.Key]proposal) (store.TriggerFiring, bool) {
	now := e.cfg.Clock.Now()
	late := rec.NextFireTime.Before(now.Add(-e.cfg.MisfireThreshold))
	switch {
	case rec.NextFireTime.After(now), rec.CalendarName != "",
		late && schedule.MisfireInstruction(rec.MisfireInstruction) != schedule.MisfireIgnore,
		len(proposed) >= e.capacity(), !e.cfg.Membership.LeaseHeld(lease):
		return store.TriggerFiring{}, false
	}
	advanced, sched, err := e.advance(context.Background(), rec)
	if err != nil {
		return store.TriggerFiring{}, false // the loop reports it
	}
	f := toFire{rec: rec, advanced: advanced, sched: sched}
	firing := firingsOf([]toFire{f}, lease, now)[0]
	proposed[rec.Key] = proposal{f: f, firing: firing}
	return firing, true
}

// absorb takes the outcome of an acquisition: the claimed triggers join
// pending, those that misfired get their misfire instruction, and a
// failure is handled as any store failure of the loop.
func (e *Engine) absorb(ctx context.Context, a acquisition, st *loopState, pending *triggerHeap) {
	st.acquiring = false
	if st.lookAgain {
		st.lookAgain = false
		st.lookNow = true
	}
	if a.err != nil {
		e.storeError(ctx, "acquire triggers", a.lease, a.err)
		if !errors.Is(a.err, store.ErrFenced) {
			for k, p := range a.proposed {
				e.unsettled[k] = p
			}
			e.claimsUnknown = true
		}
		return
	}
	if e.down.Failing() && !e.passFailed {
		e.storeAnswered()
	}
	if a.lease.Epoch != st.epoch {
		// Claimed under a lease the node replaced since: the store handed
		// them back when the node registered again.
		return
	}
	for i := range a.recs {
		a.recs[i].ClaimedBy, a.recs[i].ClaimEpoch = a.lease.NodeID, a.lease.Epoch
	}
	e.takeClaims(ctx, st, pending, a.recs)
	for i := range a.firings {
		e.settle(ctx, st, pending, a.lease, &a.fired[i], &a.firings[i], a.outcomes[i])
	}
	st.moreDue = len(a.recs)+len(a.firings) == a.limit
}

// takeClaims adds triggers the node claimed to pending; those that
// misfired get their misfire instruction instead.
func (e *Engine) takeClaims(ctx context.Context, st *loopState, pending *triggerHeap, recs []store.TriggerRecord) {
	now := e.cfg.Clock.Now()
	for _, rec := range recs {
		if rec.NextFireTime.Before(now.Add(-e.cfg.MisfireThreshold)) {
			// Misfired triggers go back with new timing, often due now: look
			// again at once rather than after the idle wait.
			st.lookNow = true
			if schedule.MisfireInstruction(rec.MisfireInstruction) != schedule.MisfireIgnore {
				e.misfire(ctx, now, rec)
				continue
			}
			// Fire every missed time, one after the other, as Quartz does:
			// the trigger is due, so the loop fires it at once.
		}
		if rec.RearmDelay > 0 && rec.CalendarName != "" && e.rearmExcluded(ctx, rec) {
			continue
		}
		heap.Push(pending, rec)
	}
}

// adoptLostClaims takes the triggers that a claim which failed without an
// answer made all the same: the store committed it and the answer was
// lost, as when the database goes down in the middle of the commit. They
// are ACQUIRED under the node's lease, so no other node claims them and
// the store's Reconcile, which returns only claims no live lease holds,
// leaves them: unless this node takes them, they never fire again. The
// loop claims nothing new before it knows them. It reports false when the
// store failed.
func (e *Engine) adoptLostClaims(ctx context.Context, st *loopState, pending *triggerHeap) bool {
	if !e.claimsUnknown || st.acquiring {
		return true
	}
	lease := e.cfg.Membership.Lease()
	recs, err := e.cfg.Store.TriggerList(ctx, &store.TriggerListParams{ClaimedUnder: &lease})
	if err != nil {
		e.storeError(ctx, "list claimed triggers", lease, err)
		return false
	}
	e.claimsUnknown = false
	held := make(map[store.Key]bool, pending.Len())
	for _, rec := range *pending {
		held[rec.Key] = true
	}
	lost := slices.DeleteFunc(recs, func(rec store.TriggerRecord) bool { return held[rec.Key] })
	if len(lost) == 0 {
		return true
	}
	e.log.Info("the store claimed triggers although its answer was lost; taking them", "triggers", len(lost), "epoch", lease.Epoch)
	e.takeClaims(ctx, st, pending, lost)
	return true
}

// settleUnsettled settles the firings of a TriggersAcquireFire call that
// failed without an answer: the store may have made them all the same.
// Each one the store made (its execution, with the ID the engine gave it,
// is EXECUTING under the node's lease) has its job run now; the others
// were not made, and their triggers are WAITING for any node to claim.
// The loop claims nothing before they are settled, so that it cannot fire
// one of them again meanwhile. It reports false when the store failed.
func (e *Engine) settleUnsettled(ctx context.Context) bool {
	lease := e.cfg.Membership.Lease()
	for key, p := range e.unsettled {
		if p.firing.Execution.Epoch != lease.Epoch {
			// The node registered again since: the store recovered the
			// executions of the old lease.
			delete(e.unsettled, key)
			continue
		}
		execs, err := e.cfg.Store.ExecutionList(ctx, &store.ExecutionListParams{TriggerKey: &key, NodeID: lease.NodeID, Running: true})
		if err != nil {
			e.storeError(ctx, "list executions", lease, err)
			return false
		}
		i := slices.IndexFunc(execs, func(x store.ExecutionRecord) bool {
			return x.ID == p.firing.Execution.ID && x.State == store.ExecutionExecuting && x.Epoch == lease.Epoch
		})
		if i < 0 {
			delete(e.unsettled, key)
			continue
		}
		job, err := e.cfg.Store.JobGet(ctx, p.f.rec.JobKey)
		if errors.Is(err, store.ErrJobNotFound) {
			e.log.Error("fired trigger's job was deleted before it could run", "trigger_key", key.String(), "execution_id", execs[i].ID)
			delete(e.unsettled, key)
			continue
		}
		if err != nil {
			e.storeError(ctx, "read job", lease, err)
			return false
		}
		delete(e.unsettled, key)
		e.log.Info("the store fired the trigger although its answer was lost; running the job", "trigger_key", key.String(), "execution_id", execs[i].ID, "scheduled_fire_time", execs[i].ScheduledTime)
		f := p.f
		e.dispatch(&Firing{Execution: execs[i], Job: *job, Trigger: &f.advanced, PreviousFireTime: f.rec.PreviousFireTime, Schedule: f.sched})
	}
	return true
}
