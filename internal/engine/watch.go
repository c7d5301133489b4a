package engine

import (
	"context"
	"errors"
	"time"

	"github.com/chime-scheduler/chime/internal/outage"
	"github.com/chime-scheduler/chime/store"
)

// Reopening a trigger watch the store ended while the engine runs: the
// wait starts at watchRetryMin and doubles up to watchRetryMax. A watch
// that lasted watchRetryMax or more counts as having worked, so the next
// failure starts over from the shortest wait.
const (
	watchRetryMin = time.Second
	watchRetryMax = time.Minute
)

// watch runs beside the loop when the store can push trigger changes
// (store.TriggerWatcher). It tells the loop about triggers that other nodes
// made due sooner than the loop would look at them on its own. It returns
// when ctx ends, or at once when the store cannot watch after all.
func (e *Engine) watch(ctx context.Context, w store.TriggerWatcher) {
	down := outage.Tracker{Min: watchRetryMin, Max: watchRetryMax, LogEvery: outageLogEvery}
	for {
		ch, err := w.WatchTriggers(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errors.ErrUnsupported) {
			e.log.Debug("store cannot push trigger changes; polling only", "error", err)
			return
		}
		if err == nil {
			opened := e.cfg.Clock.Now()
			e.log.Debug("watching triggers")
			e.receiveDue(ctx, ch)
			if ctx.Err() != nil {
				return
			}
			now := e.cfg.Clock.Now()
			if now.Sub(opened) >= watchRetryMax {
				down.Succeed(now)
			}
			err = errors.New("the store ended the trigger watch")
		}
		f := down.Fail(e.cfg.Clock.Now())
		if f.Log {
			e.log.Warn("watching triggers failed; polling until the watch is back", "error", err, "attempts", f.Attempts, "retry_in", f.Backoff)
		}
		if !e.sleep(ctx, e.jitter(f.Backoff)) {
			return
		}
	}
}

// receiveDue passes every delivered fire time to noteDue until the channel
// closes or ctx ends.
func (e *Engine) receiveDue(ctx context.Context, ch <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case at, ok := <-ch:
			if !ok {
				return
			}
			e.noteDue(at)
		}
	}
}

// noteDue takes a fire time reported by the watcher. A trigger due within
// the look-ahead window wakes the loop, which claims it at once; a later
// one is remembered, and the loop looks at the store when it enters the
// window, unless it looks earlier anyway.
func (e *Engine) noteDue(at time.Time) {
	if at.IsZero() {
		return
	}
	if !at.After(e.cfg.Clock.Now().Add(e.cfg.LookAhead)) {
		e.Wake()
		return
	}
	e.mu.Lock()
	earlier := e.due.IsZero() || at.Before(e.due)
	if earlier {
		e.due = at
	}
	e.mu.Unlock()
	if earlier {
		select {
		case e.replan <- struct{}{}:
		default:
		}
	}
}

// dueHint returns the earliest fire time the watcher reported and no
// acquisition covered yet; zero for none.
func (e *Engine) dueHint() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.due
}

// dueHinted reports whether a reported fire time entered the look-ahead
// window and the node has the capacity to fire it.
func (e *Engine) dueHinted(now time.Time) bool {
	due := e.dueHint()
	return !due.IsZero() && !due.After(now.Add(e.cfg.LookAhead)) && e.capacity() > 0
}

// coverDue forgets the reported fire time when an acquisition up to
// noLaterThan covers it.
func (e *Engine) coverDue(noLaterThan time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.due.After(noLaterThan) {
		e.due = time.Time{}
	}
}
