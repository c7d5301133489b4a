package engine

import (
	"container/heap"
	"context"
	"time"

	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// acquisition is the outcome of a TriggersAcquire call made by its own
// goroutine.
type acquisition struct {
	lease store.Lease
	limit int
	recs  []store.TriggerRecord
	err   error
}

// startAcquire claims due triggers: no more in all than the node has the
// capacity to fire now, so that a node whose workers are busy leaves due
// triggers to nodes that have room. The claim runs on its own goroutine,
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
		recs, err := e.cfg.Store.TriggersAcquire(actx, &store.TriggersAcquireParams{
			Lease:           lease,
			NoLaterThan:     noLaterThan,
			Limit:           limit,
			ExcludeJobTypes: e.cfg.ExcludeJobTypes,
		})
		e.acquired <- acquisition{lease: lease, limit: limit, recs: recs, err: err}
	}()
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
	now := e.cfg.Clock.Now()
	for _, rec := range a.recs {
		rec.ClaimedBy, rec.ClaimEpoch = a.lease.NodeID, a.lease.Epoch
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
	st.moreDue = len(a.recs) == a.limit
}
