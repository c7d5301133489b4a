package engine

import (
	"container/heap"
	"context"
	"time"

	"github.com/chime-scheduler/chime/clock"
)

// loopState is what the loop remembers between passes.
type loopState struct {
	lookNow          bool
	lastLook         time.Time
	lastRecoveryScan time.Time
	lastPrune        time.Time
	epoch            int64 // lease epoch of the claims in pending
	// moreDue: the last acquisition was cut short by its limit, so more
	// triggers may be due.
	moreDue bool
	// lookOnSlot: a look skipped claiming because no worker was free; the
	// loop looks again when one frees up.
	lookOnSlot bool
	// starved is when the loop first held due triggers it had no worker
	// for; zero while it fires all that is due.
	starved time.Time
	// acquiring: an acquisition runs (see startAcquire); lookAgain: a look
	// came while it ran, and the loop looks again once it ended.
	acquiring, lookAgain bool
}

// starvedRelease is how long due triggers wait for a worker of this node
// before they are handed back to the cluster, where a node with free
// workers can claim them.
const starvedRelease = time.Second

func (e *Engine) loop(ctx context.Context) {
	var pending triggerHeap
	st := loopState{lookNow: true, epoch: e.cfg.Membership.Lease().Epoch}
	defer func() {
		if st.acquiring {
			// Its claims are handed back with the others.
			e.absorb(context.Background(), <-e.acquired, &st, &pending)
		}
		e.releaseAll(&pending)
	}()

	timer := e.cfg.Clock.NewTimer(time.Hour)
	defer timer.Stop()
	e.recoverNow.Store(true)
	for ctx.Err() == nil {
		select {
		case a := <-e.acquired:
			e.absorb(ctx, a, &st, &pending)
		default:
		}
		wait := e.pass(ctx, &st, &pending)
		if wait <= 0 {
			continue
		}
		timer.Stop()
		drain(timer)
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		case <-e.wake:
			st.lookNow = true
		case <-e.slotFree:
			if st.lookOnSlot {
				st.lookNow = true
			}
		case <-e.replan:
		case a := <-e.acquired:
			e.absorb(ctx, a, &st, &pending)
		}
	}
}

// pass does what is due now: it looks at the store when there is a reason
// to, and fires the acquired triggers whose instant came. It returns how
// long the loop may sleep.
func (e *Engine) pass(ctx context.Context, st *loopState, pending *triggerHeap) time.Duration {
	now := e.cfg.Clock.Now()
	e.passFailed = false
	if e.down.Failing() {
		if now.Before(e.retryAt) {
			return e.retryAt.Sub(now)
		}
		st.lookNow = true
	}
	lease := e.cfg.Membership.Lease()
	if !e.cfg.Membership.LeaseHeld(lease) {
		// Nothing is claimed or fired under a lease that may have expired;
		// the node wakes the loop once it renewed or replaced it.
		st.lookNow = true
		return e.cfg.IdleWait
	}
	if lease.Epoch != st.epoch {
		e.dropStaleClaims(pending, lease.Epoch)
		st.epoch = lease.Epoch
	}
	e.settleHeld(lease)
	if e.reasonToLook(now, st, pending) {
		st.lookNow = true
	}
	if st.lookNow {
		st.lookNow = false
		st.lastLook = now
		again, ok := e.look(ctx, now, st, pending)
		if !ok {
			return e.retryWait(now)
		}
		st.lookNow = again
		now = e.cfg.Clock.Now()
	}
	if pending.Len() > 0 && !(*pending)[0].NextFireTime.After(now) {
		if !e.fireDue(ctx, now, st, pending) {
			return e.retryWait(now)
		}
		now = e.cfg.Clock.Now()
	}
	if e.passFailed {
		return e.retryWait(now)
	}
	// A whole pass went through: an outage, if any, is over. (Judging by
	// whole passes rather than single calls keeps a store that answers
	// some calls and fails others from flapping between the two; an
	// acquisition in flight is part of the pass.)
	if !st.acquiring {
		e.storeAnswered()
	}
	if st.lookNow {
		return 0
	}
	return e.idleWait(now, st, pending)
}

// reasonToLook reports whether the pass has a reason to look at the store
// besides one it was given: the idle wait elapsed, another node made a
// trigger due within the look-ahead window, or the last claim was cut
// short and an eighth of the batch is free again.
func (e *Engine) reasonToLook(now time.Time, st *loopState, pending *triggerHeap) bool {
	room := e.cfg.BatchSize - pending.Len()
	return now.Sub(st.lastLook) >= e.cfg.IdleWait || e.dueHinted(now) ||
		(st.moreDue && room >= max(e.cfg.BatchSize/8, 1))
}

// idleWait is how long the loop sleeps after a pass that went through:
// until the next idle look, the earliest claimed instant (or the hand-back
// of due triggers that wait for a worker), or the moment a fire time
// another node made due enters the look-ahead window, whichever comes
// first.
func (e *Engine) idleWait(now time.Time, st *loopState, pending *triggerHeap) time.Duration {
	wait := e.cfg.IdleWait - now.Sub(st.lastLook)
	if pending.Len() > 0 {
		next := (*pending)[0].NextFireTime
		if !st.starved.IsZero() && !next.After(now) {
			// Due, but waiting for a worker: a freed one wakes the loop,
			// and the wait ends in a hand-back.
			next = st.starved.Add(starvedRelease)
		}
		wait = min(wait, next.Sub(now))
	}
	if due := e.dueHint(); !due.IsZero() && e.freeWorkers() > 0 {
		wait = min(wait, due.Add(-e.cfg.LookAhead).Sub(now))
	}
	return max(wait, 0)
}

// dropStaleClaims forgets the acquired triggers claimed under an epoch other
// than the current one: the node registered again since, and the store
// returned those claims to the pool when it did.
func (e *Engine) dropStaleClaims(pending *triggerHeap, epoch int64) {
	kept := (*pending)[:0]
	for _, rec := range *pending {
		if rec.ClaimEpoch == epoch {
			kept = append(kept, rec)
			continue
		}
		e.log.Debug("dropping a claim of an earlier lease", "trigger_key", rec.Key.String(), "claim_epoch", rec.ClaimEpoch)
		delete(e.unheard, rec.Key)
	}
	*pending = kept
	heap.Init(pending)
}

// look asks the store for work: it hands back claims it could not release
// earlier, claims executions of lost nodes and due triggers, and prunes old
// executions. It reports whether to look again at once, and false in ok
// when the store failed.
func (e *Engine) look(ctx context.Context, now time.Time, st *loopState, pending *triggerHeap) (again, ok bool) {
	if !e.retryReleases(ctx) || !e.settleUnsettled(ctx) || !e.adoptLostClaims(ctx, st, pending) {
		return false, false
	}
	if now.Sub(st.lastRecoveryScan) >= recoveryScan {
		e.recoverNow.Store(true)
	}
	if e.recoverNow.Swap(false) {
		sawAll, err := e.acquireRecoverable(ctx)
		if err != nil {
			e.recoverNow.Store(true)
			return false, false
		}
		st.lastRecoveryScan = now
		if !sawAll {
			e.recoverNow.Store(true) // slots ran out: more may wait
		}
	}
	e.startAcquire(ctx, now, st, pending)
	if now.Sub(st.lastPrune) >= pruneInterval {
		st.lastPrune = now
		e.prune(ctx, now)
	}
	return false, true
}

// drain empties a stopped timer's channel so Reset starts clean.
func drain(t clock.Timer) {
	select {
	case <-t.C():
	default:
	}
}
