package server

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/server/history"
)

// maxHistoryBatch bounds the records of one history transaction.
const maxHistoryBatch = 256

// maxHistoryBacklog is the queued records beyond which the writer is
// backlogged: attempts wait for their end to be recorded. Starts held
// back (see historyStartDelay) do not count.
const maxHistoryBacklog = 4 * maxHistoryBatch

// historyStartDelay is how long the start of an execution waits in the
// queue for its end: an execution that ends within it is written once,
// in its final state, instead of an INSERT and an UPDATE (whose new row
// version and index entries cost the database more than the insert). The
// history shows a running execution up to this much later; a kill of one
// this node runs writes its start at once (see flushStart).
const historyStartDelay = 250 * time.Millisecond

// errWriterStopped is the error of a record given to a history writer
// that no longer runs.
var errWriterStopped = errors.New("server: the history writer is stopped")

// batchRecorder writes records of the history in one transaction; see
// history.History.RecordBatch.
type batchRecorder interface {
	RecordBatch(ctx context.Context, recs []history.Record) ([]error, error)
}

// historyWriter records the starts and ends of this node's executions in
// the history, many per transaction (group commit): while one batch
// commits, the records that arrive meanwhile gather into the next, so a
// busy node pays one commit for many executions and an idle one waits for
// no timer.
//
// A start is queued and the run goes on without waiting for it; it is
// held back for historyStartDelay first. An end that arrives while its
// execution's start is still queued or held back joins it, and the
// execution is written once, in its final state: most runs cost the
// history one row written once. Who records an end
// gets a channel that tells when the database took it (see submit):
// what follows a failed run, its retry or its alert, waits for it (see
// Server.recordEnd). A record is tried until the database takes it or
// refuses it for good, however long the database is down, as
// writeQueue.persist does for a lone write, and counts as one of the
// write queue's pending writes meanwhile, so that the server's stop
// drains it and abandons it only after Config.ShutdownTimeout. A batch
// that fails is written again one record per transaction, so that a
// record the database refuses fails alone.
//
// The server owns it: run starts its loop, stop ends it.
type historyWriter struct {
	h      batchRecorder
	log    *slog.Logger
	writes *writeQueue
	// maxBatch is maxHistoryBatch, which tests lower.
	maxBatch int
	// startDelay is historyStartDelay, which tests change.
	startDelay time.Duration
	// written hears of each transaction that committed, with its
	// records; nil for none.
	written func(records int)

	mu sync.Mutex
	// queue holds the records not yet written, oldest first.
	queue []*histEntry
	// held are the starts held back until their due time, oldest first
	// (with the same delay, the first due first); an entry whose due
	// time was cleared moved to queue and is skipped here.
	held []*histEntry
	// starts are the entries of queue and held that start an execution,
	// by its ID: where the execution's end joins it.
	starts  map[string]*histEntry
	stopped bool
	// wake has room for one signal: records are queued.
	wake chan struct{}
	// cancel ends the loop, which closes done when it returns.
	cancel context.CancelFunc
	done   chan struct{}
}

// histEntry is a record queued for the history, with who waits for it.
type histEntry struct {
	rec history.Record
	log *slog.Logger
	// waiters are told the record's outcome: nil once written, or the
	// error that no retry cures.
	waiters []func(error)
	// holds counts the write queue's pending writes the entry stands for.
	holds int
	// alone marks an entry of a batch that failed: it is written in a
	// transaction of its own.
	alone bool
	// due, when not zero, holds a start back until then, for its end
	// to join it (see historyStartDelay): the entry is in held, not in
	// queue.
	due time.Time
}

// newHistoryWriter returns a writer to h, whose records count among the
// pending writes of writes, and which tells written of each transaction
// that committed (nil for none).
func newHistoryWriter(h batchRecorder, log *slog.Logger, writes *writeQueue, written func(records int)) *historyWriter {
	return &historyWriter{
		h: h, log: log, writes: writes, maxBatch: maxHistoryBatch, startDelay: historyStartDelay, written: written,
		starts: make(map[string]*histEntry),
		wake:   make(chan struct{}, 1),
	}
}

// run starts the writer's loop.
func (w *historyWriter) run() {
	ctx, cancel := context.WithCancel(context.Background())
	w.mu.Lock()
	w.cancel, w.done = cancel, make(chan struct{})
	w.mu.Unlock()
	go func() {
		defer close(w.done)
		w.loop(ctx)
	}()
}

// stop ends the writer: the records still queued (the write queue was
// drained, or abandoned) get errWriterStopped, and so do later ones. It
// may be called more than once, and without run.
func (w *historyWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	cancel, done := w.cancel, w.done
	w.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	w.abandonQueued()
}

// start queues the record of a's execution as running, and returns. The
// record waits for the execution's end up to the writer's start delay.
func (w *historyWriter) start(a *attempt, e *history.Execution) {
	var due time.Time
	if w.startDelay > 0 {
		due = time.Now().Add(w.startDelay)
	}
	w.enqueue(&histEntry{rec: history.Record{Start: e}, log: a.log, holds: 1, due: due})
}

// flushStart has the start of execution id, when it is held back, written
// with the next batch, and returns a channel closed once the database took
// it or refused it; nil when no start of id is held.
func (w *historyWriter) flushStart(id string) <-chan struct{} {
	w.mu.Lock()
	e := w.starts[id]
	if e == nil || e.due.IsZero() {
		w.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	e.waiters = append(e.waiters, func(error) { close(ch) })
	w.release(e)
	w.mu.Unlock()
	w.signal()
	return ch
}

// record queues rec and waits until the database took it (nil) or
// refused it for good, or the server stopped waiting for it (the error).
// An end whose execution has already finished (an earlier try committed,
// its answer lost) counts as taken.
func (w *historyWriter) record(a *attempt, rec history.Record) error {
	return <-w.submit(a, rec)
}

// submit queues rec and returns the channel that gets what record
// returns.
func (w *historyWriter) submit(a *attempt, rec history.Record) <-chan error {
	ch := make(chan error, 1)
	w.enqueue(&histEntry{rec: rec, log: a.log, waiters: []func(error){func(err error) { ch <- err }}, holds: 1})
	return ch
}

// settle queues rec and returns a channel closed once the database took
// it or refused it for good, or the server stopped waiting for it: what
// chime.JobContext.RecordEndAfter waits for.
func (w *historyWriter) settle(a *attempt, rec history.Record) <-chan struct{} {
	ch := make(chan struct{})
	w.enqueue(&histEntry{rec: rec, log: a.log, waiters: []func(error){func(error) { close(ch) }}, holds: 1})
	return ch
}

// backlogged reports whether more than maxHistoryBacklog records wait to
// be written: the database does not keep up, and who records an end
// should wait for it, so that the queue stays bounded.
func (w *historyWriter) backlogged() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue) > maxHistoryBacklog
}

// enqueue adds e to the queue and wakes the loop.
func (w *historyWriter) enqueue(e *histEntry) {
	w.writes.hold()
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		w.resolve(e, errWriterStopped)
		return
	}
	switch st := w.starts[e.rec.ID]; {
	case e.rec.Start == nil && st != nil:
		// The end joins its start, which is no longer held back.
		st.join(e)
		delete(w.starts, e.rec.ID)
		w.release(st)
	case !e.due.IsZero():
		w.held = append(w.held, e)
		w.starts[e.rec.Start.ID] = e
	default:
		w.queue = append(w.queue, e)
		if e.rec.Start != nil && e.rec.End == nil {
			w.starts[e.rec.Start.ID] = e
		}
	}
	w.mu.Unlock()
	w.signal()
}

// join makes st, a start, carry end, its execution's end, and those who
// wait for it.
func (st *histEntry) join(end *histEntry) {
	st.rec.End = end.rec.End
	st.waiters = append(st.waiters, end.waiters...)
	st.holds += end.holds
	st.log = end.log
}

// release moves e, when it is held back, to the queue. w.mu is held.
func (w *historyWriter) release(e *histEntry) {
	if !e.due.IsZero() {
		e.due = time.Time{}
		w.queue = append(w.queue, e)
	}
}

// signal wakes the loop.
func (w *historyWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// resolve tells e's waiters err and ends the pending writes it held.
func (w *historyWriter) resolve(e *histEntry, err error) {
	for _, tell := range e.waiters {
		tell(err)
	}
	for range e.holds {
		w.writes.done()
	}
}

// loop writes the queued records until ctx ends. While a write fails it
// backs off as writeQueue.persist does, and logs as it does; once the
// server stopped waiting for the writes (see writeQueue.drain), it gives
// up each record it is given.
func (w *historyWriter) loop(ctx context.Context) {
	var (
		wait           = persistRetryMin
		failures       int
		since, lastLog time.Time
		// retry is set while the writer backs off after a failure.
		retry     <-chan time.Time
		abandoned = w.writes.abandoned.Done()
		// due fires when the first start held back is due.
		due = time.NewTimer(time.Hour)
	)
	due.Stop()
	defer due.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-abandoned:
			abandoned = nil
		case <-retry:
			retry = nil
		case <-due.C:
		case <-w.wake:
		}
		if w.writes.abandoned.Err() != nil {
			w.abandonQueued()
			continue
		}
		if retry != nil {
			continue // backing off: new records wait for the retry
		}
		for ctx.Err() == nil {
			batch, next := w.take(time.Now())
			if len(batch) == 0 {
				if !next.IsZero() {
					due.Reset(time.Until(next))
				}
				break
			}
			err := w.write(ctx, batch)
			if err == nil {
				if failures > 0 {
					w.log.Info("recorded executions after database failures", "attempts", failures+1,
						"outage", time.Since(since).Round(time.Millisecond))
				}
				failures, wait = 0, persistRetryMin
				continue
			}
			failures++
			now := time.Now()
			if failures == 1 {
				since = now
			}
			if failures == 1 || now.Sub(lastLog) >= persistLogEvery {
				lastLog = now
				w.log.Warn("cannot record executions; retrying until the database answers", "records", len(batch),
					"attempts", failures, "outage", now.Sub(since).Round(time.Millisecond), "error", err)
			}
			retry = time.After(wait/2 + rand.N(wait/2+1))
			wait = min(2*wait, persistRetryMax)
			break
		}
	}
}

// abandonQueued gives up the queued records: the server stopped waiting
// for them.
func (w *historyWriter) abandonQueued() {
	w.mu.Lock()
	queue := w.queue
	for _, e := range w.held {
		if !e.due.IsZero() {
			queue = append(queue, e)
		}
	}
	w.queue, w.held, w.starts = nil, nil, make(map[string]*histEntry)
	w.mu.Unlock()
	for _, e := range queue {
		e.log.Error("the server stopped before it could record: "+what(e.rec), "error", errWriterStopped)
		w.resolve(e, errWriterStopped)
	}
}

// take removes the next batch from the queue: the first entry when it is
// to be written alone, else up to maxBatch entries not to be. Before, the
// starts held back and due at now join the queue. It also returns when the
// first start still held back is due, the zero time for none.
func (w *historyWriter) take(now time.Time) ([]*histEntry, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var next time.Time
	i := 0
	for ; i < len(w.held); i++ {
		e := w.held[i]
		if e.due.IsZero() {
			continue // released
		}
		if now.Before(e.due) {
			next = e.due
			break
		}
		w.release(e)
	}
	clear(w.held[:i])
	w.held = w.held[i:]
	if len(w.queue) == 0 {
		return nil, next
	}
	n := 1
	if !w.queue[0].alone {
		for n < len(w.queue) && n < w.maxBatch && !w.queue[n].alone {
			n++
		}
	}
	batch := make([]*histEntry, n)
	copy(batch, w.queue)
	w.queue = w.queue[n:]
	for _, e := range batch {
		if e.rec.Start != nil && w.starts[e.rec.Start.ID] == e {
			delete(w.starts, e.rec.Start.ID)
		}
	}
	return batch, next
}

// write writes batch in one transaction and resolves its entries. When
// the transaction fails, the entries go back to the queue, each to be
// written alone: at its head when the batch had several (so that a
// record the database refuses fails alone), at its end when the entry
// was alone already (so that the others are tried before it again).
func (w *historyWriter) write(ctx context.Context, batch []*histEntry) error {
	recs := make([]history.Record, len(batch))
	for i, e := range batch {
		recs[i] = e.rec
	}
	rec, done := context.WithTimeout(ctx, recordTimeout)
	errs, err := w.h.RecordBatch(rec, recs)
	done()
	if err != nil {
		w.requeue(batch)
		return err
	}
	if w.written != nil {
		w.written(len(batch))
	}
	for i, e := range batch {
		switch err := errs[i]; {
		case err == nil, errors.Is(err, history.ErrNotRunning):
			w.resolve(e, nil)
		default:
			// Invalid, or the end of an execution the history does not
			// hold: no retry cures it.
			e.log.Error("cannot record: "+what(e.rec), "error", err)
			w.resolve(e, err)
		}
	}
	return nil
}

// requeue puts back the entries of a batch that failed, each to be
// written alone (see write).
func (w *historyWriter) requeue(batch []*histEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range batch {
		e.alone = true
		if e.rec.Start != nil && e.rec.End == nil {
			w.starts[e.rec.Start.ID] = e
		}
	}
	// An end queued while its start was being written joins it.
	kept := w.queue[:0]
	for _, e := range w.queue {
		if st := w.starts[e.rec.ID]; e.rec.Start == nil && st != nil {
			st.join(e)
			delete(w.starts, e.rec.ID)
			continue
		}
		kept = append(kept, e)
	}
	clear(w.queue[len(kept):])
	w.queue = kept
	if len(batch) == 1 {
		w.queue = append(w.queue, batch[0])
		return
	}
	w.queue = append(batch[:len(batch):len(batch)], w.queue...)
}

// what names a record in the log.
func what(r history.Record) string {
	switch {
	case r.Start != nil && r.End != nil:
		return "the execution"
	case r.Start != nil:
		return "the start of the execution"
	}
	return "the end of the execution"
}
