package engine

import (
	"context"
	"errors"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// Retries after store failures: the wait starts at retryMin and doubles up
// to retryMax; while the store stays unreachable, a failure is logged at
// most every outageLogEvery.
const (
	retryMin       = 100 * time.Millisecond
	retryMax       = 5 * time.Second
	outageLogEvery = 30 * time.Second
)

// retryWait is how long the loop waits after a failed store call: until
// the retry instant during an outage, the idle wait otherwise (the lease
// was refused; the node replaces it and wakes the loop).
func (e *Engine) retryWait(now time.Time) time.Duration {
	if e.down.Failing() {
		return max(e.retryAt.Sub(now), 0)
	}
	return e.cfg.IdleWait
}

// sleep waits d on the engine's clock. It reports false when ctx ended
// first.
func (e *Engine) sleep(ctx context.Context, d time.Duration) bool {
	t := e.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

func (e *Engine) jitter(d time.Duration) time.Duration {
	if e.cfg.Jitter == nil {
		return d
	}
	return e.cfg.Jitter(d)
}

// storeError handles a failed store call of the loop made under lease. A
// refused lease is reported at once. Anything else is an outage: the loop backs off before
// its next call, and logs the first failure, then one failure every
// outageLogEvery while the outage lasts.
func (e *Engine) storeError(ctx context.Context, what string, lease store.Lease, err error) {
	if ctx.Err() != nil {
		return
	}
	if errors.Is(err, store.ErrFenced) {
		e.log.Error("store refused the node's lease", "operation", what, "epoch", lease.Epoch, "error", err)
		e.cfg.Membership.LeaseRefused(lease)
		return
	}
	now := e.cfg.Clock.Now()
	e.passFailed = true
	f := e.down.Fail(now)
	wait := e.jitter(f.Backoff)
	e.retryAt = now.Add(wait)
	if !f.Log {
		return
	}
	if f.First {
		e.log.Warn("store unreachable; retrying", "operation", what, "error", err, "retry_in", wait)
	} else {
		e.log.Warn("store still unreachable; retrying", "operation", what, "error", err, "attempts", f.Attempts, "outage", f.Duration, "retry_in", wait)
	}
	e.cfg.Observer.StoreFailed(what, err)
}

// storeAnswered records that a pass of the loop made its store calls
// without a failure, ending an outage if one was under way.
func (e *Engine) storeAnswered() {
	if r, ended := e.down.Succeed(e.cfg.Clock.Now()); ended {
		e.log.Info("store reachable again", "outage", r.Duration, "attempts", r.Attempts)
	}
}

// storeUnavailableError is a store failure met while computing a trigger's
// timing (loading its calendar), as opposed to a definition that cannot be
// decoded: the firing is retried rather than given up.
type storeUnavailableError struct {
	err error
}

func (e *storeUnavailableError) Error() string { return e.err.Error() }
func (e *storeUnavailableError) Unwrap() error { return e.err }
