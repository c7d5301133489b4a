package server

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// Bounds of the waits between two tries of a write that must not be lost.
const (
	persistRetryMin = 250 * time.Millisecond
	persistRetryMax = 5 * time.Second
	// persistLogEvery spaces the warnings while the database stays down.
	persistLogEvery = 30 * time.Second
)

// writeQueue runs the writes that follow a job's run (its retry, the
// decisions about it) and counts those the history writer holds (its
// start and end; see historyWriter): each is tried until the
// database takes it, however long it is down, so that an outage loses
// nothing and leaves nothing "running". The server abandons the writes
// still failing only when it stops, after Config.ShutdownTimeout.
type writeQueue struct {
	// abandoned is cancelled when the server stops waiting for the
	// writes.
	abandoned context.Context
	abandon   context.CancelFunc

	mu      sync.Mutex
	pending int
	idle    chan struct{} // closed when pending drops to 0; nil when nobody waits
}

func newWriteQueue() *writeQueue {
	ctx, cancel := context.WithCancel(context.Background())
	return &writeQueue{abandoned: ctx, abandon: cancel}
}

// permanentError marks a write's error that no retry can cure: the write
// is invalid, or what it applies to is gone.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// permanent marks err as one that trying again cannot cure.
func permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// persist runs write, a step of recording what happened after a run,
// until it succeeds or fails permanently. Each try gets a context that
// keeps ctx's values but not its cancellation, bounded by recordTimeout.
// Failures are logged when they start and every persistLogEvery while
// they last; the success that ends them is logged with how long they
// lasted. It returns write's last error when it gave up: the error was
// permanent, or the server stopped waiting.
func (q *writeQueue) persist(ctx context.Context, log *slog.Logger, what string, write func(context.Context) error) error {
	q.hold()
	defer q.done()
	var (
		tries   int
		since   time.Time
		lastLog time.Time
		wait    = persistRetryMin
	)
	for {
		rec, done := recordCtx(ctx)
		err := write(rec)
		done()
		if err == nil {
			if tries > 0 {
				log.Info("recorded after database failures", "write", what, "attempts", tries+1, "outage", time.Since(since).Round(time.Millisecond))
			}
			return nil
		}
		if perm := (*permanentError)(nil); errors.As(err, &perm) {
			log.Error("cannot record: "+what, "error", perm.err)
			return perm.err
		}
		tries++
		now := time.Now()
		if tries == 1 {
			since = now
		}
		if tries == 1 || now.Sub(lastLog) >= persistLogEvery {
			lastLog = now
			log.Warn("cannot record; retrying until the database answers", "write", what, "attempts", tries,
				"outage", now.Sub(since).Round(time.Millisecond), "error", err)
		}
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-q.abandoned.Done():
			t.Stop()
			log.Error("the server stopped before it could record: "+what, "attempts", tries, "error", err)
			return err
		case <-t.C:
		}
		wait = min(2*wait, persistRetryMax)
	}
}

// hold counts one pending write, which done ends.
func (q *writeQueue) hold() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending++
}

// done ends one pending write.
func (q *writeQueue) done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending--
	if q.pending == 0 && q.idle != nil {
		close(q.idle)
		q.idle = nil
	}
}

// whenIdle returns a channel closed once no write is pending.
func (q *writeQueue) whenIdle() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch := make(chan struct{})
	if q.pending == 0 {
		close(ch)
		return ch
	}
	if q.idle == nil {
		q.idle = ch
	}
	return q.idle
}

// drain waits for the pending writes, at most timeout, then abandons
// those still failing. It reports whether every write finished.
func (q *writeQueue) drain(timeout time.Duration) bool {
	done := q.whenIdle()
	t := time.NewTimer(timeout)
	defer t.Stop()
	ok := true
	select {
	case <-done:
	case <-t.C:
		ok = false
	}
	q.abandon()
	if !ok {
		<-q.whenIdle()
	}
	return ok
}
