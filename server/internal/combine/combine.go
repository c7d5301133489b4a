// Package combine commits concurrent requests in batches, as a
// database's group commit does.
package combine

import (
	"cmp"
	"context"
	"sync"
	"time"
)

// Bounds of a Combiner.
const (
	// Timeout bounds the commit of a batch, which serves several callers
	// and so outlives the context of the one that runs it.
	Timeout = 30 * time.Second
	// Parallel bounds the batches a Combiner commits at once, unless its
	// own Parallel says otherwise: a request that arrives while fewer
	// commit is committed at once, in a batch of its own; past that,
	// requests wait and are batched. On SQLite, which takes one writer
	// at a time, a combiner should commit one: parallel batches would
	// only wait for each other's lock.
	Parallel = 4
)

// Combiner commits requests in batches, like a database's group commit:
// while Parallel batches commit, the requests that arrive wait,
// and the next batch to start commits them together, so that a busy node
// pays one transaction (one commit, one WAL flush) for many requests
// instead of one each, and an idle one pays nothing for it. No goroutine
// of its own runs it: the caller that starts a batch commits it, then
// hands that turn to the first caller still waiting, whose request heads
// the next batch. A request so waits for at most one batch before its
// own. The zero Combiner commits up to Parallel batches at once.
type Combiner[T any] struct {
	// Parallel, when not zero, replaces the package's Parallel. Set it
	// before the first Do.
	Parallel int

	mu sync.Mutex
	// queue holds the requests waiting for a batch, while running (the
	// batches committing, or whose caller was given the turn) is at
	// Parallel.
	queue   []*combined[T]
	running int
}

// combined is one request waiting in a Combiner's queue.
type combined[T any] struct {
	req T
	// done receives true for the turn to start the next batch, which
	// the request heads, or false once the batch that held it ended.
	done chan bool
}

// Do returns once a batch of at most max requests that held req was
// committed by commit, which reports to each request (in req itself)
// what became of it. commit runs with a context that keeps ctx's values
// but not its cancellation, bounded by Timeout.
func (c *Combiner[T]) Do(ctx context.Context, req T, max int, commit func(context.Context, []T)) {
	c.mu.Lock()
	if c.running < cmp.Or(c.Parallel, Parallel) {
		c.running++
		c.mu.Unlock()
	} else {
		me := &combined[T]{req: req, done: make(chan bool, 1)}
		c.queue = append(c.queue, me)
		c.mu.Unlock()
		if !<-me.done {
			return
		}
	}
	c.mu.Lock()
	n := min(len(c.queue), max-1)
	others := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.mu.Unlock()
	batch := make([]T, 0, n+1)
	batch = append(batch, req)
	for _, p := range others {
		batch = append(batch, p.req)
	}

	rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
	commit(rec, batch)
	cancel()

	c.mu.Lock()
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		next.done <- true
	} else {
		c.running--
	}
	c.mu.Unlock()
	for _, p := range others {
		p.done <- false
	}
}
