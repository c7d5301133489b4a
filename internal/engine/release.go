package engine

import (
	"container/heap"
	"context"
	"errors"

	"github.com/chime-scheduler/chime/store"
)

// release hands a claim back to the store, with new timing when not nil.
// It reports whether the store took it. When the store failed, the claim
// is queued and handed back at the next look.
func (e *Engine) release(ctx context.Context, key store.Key, timing *store.TriggerRecord) bool {
	lease := e.cfg.Membership.Lease()
	err := e.cfg.Store.TriggerRelease(ctx, &store.TriggerReleaseParams{Lease: lease, Key: key, Timing: timing})
	switch {
	case err == nil:
		return true
	case errors.Is(err, store.ErrNotClaimed):
		return false
	case errors.Is(err, store.ErrFenced):
		// The claim went with the lease: the store returned it already.
		e.storeError(ctx, "release trigger", lease, err)
		return false
	}
	e.storeError(ctx, "release trigger", lease, err)
	e.mu.Lock()
	e.unreleased[key] = timing
	e.mu.Unlock()
	return false
}

// retryReleases hands back the claims whose release failed earlier. It
// reports false when the store failed again.
func (e *Engine) retryReleases(ctx context.Context) bool {
	e.mu.Lock()
	queued := e.unreleased
	e.unreleased = make(map[store.Key]*store.TriggerRecord)
	e.mu.Unlock()
	ok := true
	for key, timing := range queued {
		if !ok {
			e.mu.Lock()
			e.unreleased[key] = timing
			e.mu.Unlock()
			continue
		}
		e.release(ctx, key, timing)
		ok = !e.passFailed
	}
	return ok
}

// releaseAll hands back every acquired trigger that was not fired, in one
// store call, so that a node holding a full batch of claims stops at once.
// When the store failed, the claims are queued as release does: the next
// look hands them back if the engine starts again, and otherwise the
// node's unregistering or its recovery does.
func (e *Engine) releaseAll(pending *triggerHeap) {
	ctx := context.Background()
	var keys []store.Key
	for pending.Len() > 0 {
		rec := heap.Pop(pending).(store.TriggerRecord)
		if e.unheard[rec.Key] {
			if adopted, ok := e.adoptUnheard(ctx, rec); ok {
				delete(e.unheard, rec.Key)
				if adopted {
					continue
				}
			}
		}
		keys = append(keys, rec.Key)
	}
	if len(keys) == 0 {
		return
	}
	lease := e.cfg.Membership.Lease()
	_, err := e.cfg.Store.TriggersRelease(ctx, &store.TriggersReleaseParams{Lease: lease, Keys: keys})
	if err == nil {
		return
	}
	e.storeError(ctx, "release triggers", lease, err)
	if errors.Is(err, store.ErrFenced) {
		return // the claims went with the lease
	}
	e.mu.Lock()
	for _, k := range keys {
		e.unreleased[k] = nil
	}
	e.mu.Unlock()
}
