package chime

import (
	"context"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// Metrics receives measurements of the store calls with which the
// scheduler claims and fires triggers, for a monitoring system such as
// Prometheus. Its methods are called by the firing loop after each call
// that succeeded, so they must return quickly, and they must be safe for
// concurrent use.
type Metrics interface {
	// TriggersAcquired reports a claim of due triggers: how many it
	// claimed, and how long the store took.
	TriggersAcquired(claimed int, took time.Duration)
	// TriggersFired reports a store call that fired a batch of triggers,
	// which fire in one transaction when they are due together (claimed
	// earlier, or claimed in the same call when they were due already):
	// how many firings it carried, and how long the store took.
	TriggersFired(firings int, took time.Duration)
}

// measuredStore is a store.Store that reports its TriggersAcquire,
// TriggersFire and TriggersAcquireFire calls to a Metrics. Every other method is the embedded
// store's.
type measuredStore struct {
	store.Store
	metrics Metrics
}

// measuredWatchingStore is a measuredStore over a store that can push
// wake-ups: it keeps the store.TriggerWatcher the engine looks for.
type measuredWatchingStore struct {
	measuredStore
	watcher store.TriggerWatcher
}

// measure returns st reporting to m, or st itself when m is nil.
func measure(st store.Store, m Metrics) store.Store {
	if m == nil {
		return st
	}
	measured := measuredStore{Store: st, metrics: m}
	if w, ok := st.(store.TriggerWatcher); ok {
		return &measuredWatchingStore{measuredStore: measured, watcher: w}
	}
	return &measured
}

// TriggersAcquire claims due triggers and reports the claim.
func (s *measuredStore) TriggersAcquire(ctx context.Context, p *store.TriggersAcquireParams) ([]store.TriggerRecord, error) {
	start := time.Now()
	out, err := s.Store.TriggersAcquire(ctx, p)
	if err == nil {
		s.metrics.TriggersAcquired(len(out), time.Since(start))
	}
	return out, err
}

// TriggersFire fires a batch of triggers and reports the batch.
func (s *measuredStore) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	start := time.Now()
	out, err := s.Store.TriggersFire(ctx, p)
	if err == nil {
		s.metrics.TriggersFired(len(p.Firings), time.Since(start))
	}
	return out, err
}

// TriggersAcquireFire claims due triggers, fires those due already, and
// reports the claim and, when it fired any, the fired batch.
func (s *measuredStore) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	start := time.Now()
	res, err := s.Store.TriggersAcquireFire(ctx, p)
	if err == nil {
		took := time.Since(start)
		s.metrics.TriggersAcquired(len(res.Claimed)+len(res.Firings), took)
		if len(res.Firings) > 0 {
			s.metrics.TriggersFired(len(res.Firings), took)
		}
	}
	return res, err
}

// WatchTriggers is the watching store's.
func (s *measuredWatchingStore) WatchTriggers(ctx context.Context) (<-chan time.Time, error) {
	return s.watcher.WatchTriggers(ctx)
}
