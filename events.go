package chime

import (
	"context"
	"log/slog"
	"sync"
)

// eventQueue delivers events to listeners on its own goroutine, so that a
// slow listener never holds up the caller. The queue is unbounded: events are
// rare compared with firings, and dropping one would hide what happened.
type eventQueue struct {
	log *slog.Logger

	mu      sync.Mutex
	pending []func(ctx context.Context)
	closed  bool
	signal  chan struct{} // capacity 1
	done    chan struct{}
}

func newEventQueue(log *slog.Logger) *eventQueue {
	q := &eventQueue{log: log, signal: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// post queues a delivery. After close it does nothing.
func (q *eventQueue) post(deliver func(ctx context.Context)) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.pending = append(q.pending, deliver)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// close delivers what is queued, then stops the goroutine.
func (q *eventQueue) close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		<-q.done
		return
	}
	q.closed = true
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
	<-q.done
}

func (q *eventQueue) run() {
	defer close(q.done)
	ctx := context.Background()
	for range q.signal {
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		closed := q.closed
		q.mu.Unlock()
		for _, deliver := range batch {
			q.safely(ctx, deliver)
		}
		if closed {
			q.mu.Lock()
			rest := q.pending
			q.pending = nil
			q.mu.Unlock()
			for _, deliver := range rest {
				q.safely(ctx, deliver)
			}
			return
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
