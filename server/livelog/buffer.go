package livelog

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// BufferOptions configure a Buffer. A nil *BufferOptions means the
// defaults.
type BufferOptions struct {
	// Interval is how often the buffer appends the lines its executions
	// logged since the last time. Defaults to 300ms.
	Interval time.Duration
	// Logger receives a warning when a batch cannot be appended. Defaults
	// to slog.Default().
	Logger *slog.Logger
}

// DefaultInterval is BufferOptions.Interval's default.
const DefaultInterval = 300 * time.Millisecond

// flushTimeout bounds one append of a batch.
const flushTimeout = 10 * time.Second

// Buffer collects the lines of the executions running on one node and
// appends them to a Log in batches: every Interval, one INSERT for all of
// them (more only past 250 lines). A line waits in memory at most
// Interval, plus the time the database takes; a batch the database
// refuses stays for the next tick, within the per-execution bound of
// Options.MaxLines. An execution that logs nothing costs no statement.
//
// Register an execution with Begin before its first line and end it with
// End once its history holds its lines; lines of an execution not begun,
// or ended, are dropped. Start the batching goroutine with Start and stop
// it with Stop. Its methods are safe for concurrent use.
type Buffer struct {
	log      *Log
	interval time.Duration
	logger   *slog.Logger

	// flushMu is held while a batch is written, so that End deletes an
	// execution's rows only after any batch carrying its lines is in.
	flushMu sync.Mutex

	mu   sync.Mutex
	runs map[string]*pending

	stop, done chan struct{}
	startOnce  sync.Once
	stopOnce   sync.Once
}

// pending are the lines of one execution not yet appended.
type pending struct {
	lines []Line
	// stored reports that a batch carried lines of the execution, so that
	// End has rows to delete.
	stored bool
}

// NewBuffer returns a buffer appending to l.
func NewBuffer(l *Log, opts *BufferOptions) *Buffer {
	var o BufferOptions
	if opts != nil {
		o = *opts
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Buffer{
		log: l, interval: o.Interval, logger: o.Logger,
		runs: make(map[string]*pending),
		stop: make(chan struct{}), done: make(chan struct{}),
	}
}

// Begin registers the execution execID, whose lines Add then takes.
func (b *Buffer) Begin(execID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.runs[execID]; !ok {
		b.runs[execID] = &pending{}
	}
}

// Add queues a line of the execution execID for the next batch. It never
// blocks on the database. A line of an execution not begun (or ended),
// or numbered above the Log's MaxLines, is dropped.
func (b *Buffer) Add(execID string, line Line) {
	if line.Seq > int64(b.log.opts.MaxLines) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.runs[execID]; ok {
		r.lines = append(r.lines, line)
	}
}

// End ends the execution execID once its history holds its lines: its
// pending lines are dropped and the rows it has are deleted, after any
// batch that carries some of them is in. An execution none of whose lines
// were appended costs no statement.
func (b *Buffer) End(ctx context.Context, execID string) error {
	if del := b.Ended(execID); del != nil {
		return del(ctx)
	}
	return nil
}

// Ended is End in two steps, for a caller whose context for the deletion
// costs something to make: it ends the execution execID and returns nil
// when none of its lines were appended (nothing is left to delete), or
// else the function that deletes its rows, as End does.
func (b *Buffer) Ended(execID string) func(context.Context) error {
	b.mu.Lock()
	r, ok := b.runs[execID]
	delete(b.runs, execID)
	b.mu.Unlock()
	if !ok || !r.stored {
		return nil
	}
	return func(ctx context.Context) error {
		b.flushMu.Lock()
		defer b.flushMu.Unlock()
		return b.log.Delete(ctx, execID)
	}
}

// Flush appends every pending line now, in one batch. A batch the database
// refuses is kept for the next Flush.
func (b *Buffer) Flush(ctx context.Context) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	var rows []row
	taken := make(map[string][]Line)
	b.mu.Lock()
	for id, r := range b.runs {
		if len(r.lines) == 0 {
			continue
		}
		for _, ln := range r.lines {
			rw, keep, err := b.log.prepare(id, ln, "line")
			if err != nil || !keep {
				continue // the recorder makes well-formed lines; a bad one is dropped
			}
			rows = append(rows, rw)
		}
		taken[id] = r.lines
		r.lines = nil
		r.stored = true
	}
	b.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	err := b.log.insert(ctx, rows)
	if err == nil {
		return nil
	}
	// Kept for the next batch, before the lines logged since, for the
	// executions still running; appending is idempotent, so lines a
	// failed batch did store are only written again.
	b.mu.Lock()
	for id, lines := range taken {
		if r, ok := b.runs[id]; ok {
			r.lines = append(lines, r.lines...)
		}
	}
	b.mu.Unlock()
	return err
}

// Start starts the goroutine that appends the pending lines every
// Interval, until Stop. A second Start does nothing.
func (b *Buffer) Start() {
	b.startOnce.Do(func() { go b.loop() })
}

// Stop stops the goroutine Start started and appends the lines still
// pending, waiting at most until ctx ends. It may be called more than
// once, and without Start.
func (b *Buffer) Stop(ctx context.Context) error {
	b.stopOnce.Do(func() { close(b.stop) })
	b.startOnce.Do(func() { close(b.done) }) // never started: nothing to wait for
	select {
	case <-b.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	fctx, cancel := context.WithTimeout(ctx, flushTimeout)
	defer cancel()
	return b.Flush(fctx)
}

// logEvery spaces the warnings while the database refuses batches.
const logEvery = 30 * time.Second

func (b *Buffer) loop() {
	defer close(b.done)
	t := time.NewTicker(b.interval)
	defer t.Stop()
	var failingSince, lastLog time.Time
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		err := b.Flush(ctx)
		cancel()
		switch {
		case err == nil && !failingSince.IsZero():
			b.logger.Info("appending live log lines again", "outage", time.Since(failingSince).Round(time.Millisecond))
			failingSince = time.Time{}
		case err != nil && !errors.Is(err, context.Canceled):
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(lastLog) >= logEvery {
				b.logger.Warn("cannot append the live log lines of running executions; retrying", "error", err)
				lastLog = time.Now()
			}
		}
	}
}
