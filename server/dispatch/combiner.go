package dispatch

import (
	"context"
	"sync"
	"time"
)

// combineTimeout bounds the commit of a batch, which serves several
// callers and so outlives the context of the one that runs it.
const combineTimeout = 30 * time.Second

// combiner commits requests in batches: the requests that arrive while a
// batch commits are committed together by the next one, so that a busy
// node pays one transaction (one commit, one WAL flush) for many requests
// instead of one each. No goroutine of its own runs it: the caller whose
// request arrives when no batch is committing commits the batch, then
// hands that turn to the first caller still queued, whose request the
// next batch holds. A request so waits for at most the batch before it
// and its own. The zero combiner is ready to use.
type combiner[T any] struct {
	mu    sync.Mutex
	queue []*combined[T]
	// busy is set while a caller commits a batch or was given the turn.
	busy bool
}

// combined is one request in a combiner's queue.
type combined[T any] struct {
	req T
	// done receives the turn to commit the next batch (true) or the
	// end of the request's batch (false); it has room for one of each,
	// in that order.
	done chan bool
}

// do queues req and returns once a batch of at most max requests that
// held it was committed by commit, which reports to each request (in
// req itself) what became of it. commit runs with a context that keeps
// ctx's values but not its cancellation, bounded by combineTimeout.
func (c *combiner[T]) do(ctx context.Context, req T, max int, commit func(context.Context, []T)) {
	me := &combined[T]{req: req, done: make(chan bool, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, me)
	lead := !c.busy
	c.busy = true
	c.mu.Unlock()
	if !lead && !<-me.done {
		return
	}
	// This caller's request is first in the queue: the batch holds it.
	c.mu.Lock()
	n := min(len(c.queue), max)
	batch := make([]T, n)
	for i, p := range c.queue[:n] {
		batch[i] = p.req
	}
	ended := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.mu.Unlock()

	rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), combineTimeout)
	commit(rec, batch)
	cancel()

	c.mu.Lock()
	if len(c.queue) > 0 {
		c.queue[0].done <- true
	} else {
		c.busy = false
	}
	c.mu.Unlock()
	for _, p := range ended {
		if p != me {
			p.done <- false
		}
	}
}
