package chime

import (
	"context"
	"log/slog"
	"sync"
)

// eventQueue delivers events to listeners in the order they were posted, off
// the caller's goroutine, so that a slow listener never holds up the caller.
// The queue is unbounded: events are rare compared with firings, and
// dropping one would hide what happened.
//
// The queue owns at most one goroutine, which runs only while events are
// waiting: post starts it when the queue was idle, and it ends once the
// queue is empty. A scheduler that is never started or sits idle therefore
// holds no goroutine, and close waits for the one that may be running.
type eventQueue struct {
	log *slog.Logger

	mu       sync.Mutex
	pending  []func(ctx context.Context)
	draining bool // a drain goroutine is running
	closed   bool
	wg       sync.WaitGroup // the drain goroutine
}

func newEventQueue(log *slog.Logger) *eventQueue {
	return &eventQueue{log: log}
}

// post queues a delivery. After close it does nothing.
func (q *eventQueue) post(deliver func(ctx context.Context)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.pending = append(q.pending, deliver)
	if !q.draining {
		q.draining = true
		q.wg.Add(1)
		go q.drain()
	}
}

// close stops taking events and waits until those already queued are
// delivered. It may be called more than once.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	// No post adds to wg once closed is set, so Wait cannot race an Add.
	q.wg.Wait()
}

// drain delivers queued events until the queue is empty, then ends.
func (q *eventQueue) drain() {
	defer q.wg.Done()
	ctx := context.Background()
	for {
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		if len(batch) == 0 {
			q.draining = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		for _, deliver := range batch {
			q.safely(ctx, deliver)
		}
	}
}

func (q *eventQueue) safely(ctx context.Context, deliver func(ctx context.Context)) {
	defer func() {
		if r := recover(); r != nil {
			q.log.Error("listener panicked", "panic", formatValue(r))
		}
	}()
	deliver(ctx)
}
