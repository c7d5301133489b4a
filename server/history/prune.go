package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// defaultPruneBatch bounds the rows one DELETE removes, so that pruning a
// large history never holds many locks or one long transaction.
const defaultPruneBatch = 500

// Prune deletes old history and returns how many executions and decisions
// it deleted. The rule:
//
//   - An execution is deleted when it started before olderThan AND it is
//     not one of the keepPerJob newest executions of its job. So every job
//     keeps at least its last keepPerJob runs however old (a monthly job
//     keeps its history and LastSuccess), and nothing younger than
//     olderThan is deleted however many runs there are. keepPerJob 0 lets
//     age alone decide. Running executions are never deleted (they count
//     among the newest).
//   - A decision is deleted when its time (scheduled time, or decision
//     time when it has none) is before olderThan.
//   - The audit log is not pruned.
//
// Rows go in batches of 500, each its own statement, so Prune can run
// while the server works, and on several servers at once.
func (h *History) Prune(ctx context.Context, olderThan time.Time, keepPerJob int) (int, error) {
	if err := checkTime("olderThan", olderThan, true); err != nil {
		return 0, err
	}
	if keepPerJob < 0 {
		return 0, invalid("keepPerJob %d is negative", keepPerJob)
	}
	cut := olderThan.UnixNano()
	jobs, err := h.pruneJobs(ctx, cut)
	if err != nil {
		return 0, dbErr("pruning executions", err)
	}
	deleted := 0
	for _, j := range jobs {
		n, err := h.pruneJob(ctx, j, cut, keepPerJob)
		deleted += n
		if err != nil {
			return deleted, dbErr("pruning the executions of job "+j.group+"."+j.name, err)
		}
	}
	n, err := h.deleteBatches(ctx, "server_decisions", h.q.pruneDecisions, cut, h.sched)
	deleted += n
	if err != nil {
		return deleted, dbErr("pruning decisions", err)
	}
	return deleted, nil
}

type jobKey struct{ group, name string }

// pruneJobs lists the jobs with executions that started before cut. The
// rows are read to the end before anything is deleted: an SQLite pool may
// have a single connection.
func (h *History) pruneJobs(ctx context.Context, cut int64) ([]jobKey, error) {
	rows, err := h.db.QueryContext(ctx, h.q.pruneJobs, cut, h.sched)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []jobKey
	for rows.Next() {
		var j jobKey
		if err := rows.Scan(&j.group, &j.name); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// pruneJob deletes one job's executions under Prune's rule.
func (h *History) pruneJob(ctx context.Context, j jobKey, cut int64, keep int) (int, error) {
	if keep == 0 {
		return h.deleteBatches(ctx, "server_executions", h.q.pruneSelect, j.group, j.name, h.sched, cut)
	}
	// The keep-th newest execution: everything before it is beyond the
	// newest keep.
	var (
		lastTime int64
		lastID   string
	)
	err := h.db.QueryRowContext(ctx, h.q.pruneCutoff, j.group, j.name, h.sched, keep-1).Scan(&lastTime, &lastID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil // keep or fewer executions
	}
	if err != nil {
		return 0, err
	}
	return h.deleteBatches(ctx, "server_executions", h.q.pruneSelectAfter,
		j.group, j.name, h.sched, cut, lastTime, lastTime, lastID)
}

// deleteBatches deletes from table, batch by batch, the rows whose IDs
// selectIDs returns; selectIDs takes args and then the batch size.
func (h *History) deleteBatches(ctx context.Context, table, selectIDs string, args ...any) (int, error) {
	deleted := 0
	selArgs := append(slices.Clip(args), h.pruneBatch)
	for {
		ids, err := h.selectIDs(ctx, selectIDs, selArgs...)
		if err != nil || len(ids) == 0 {
			return deleted, err
		}
		marks := strings.Repeat(", ?", len(ids))[2:]
		del := h.st.SQL("DELETE FROM {p}" + table + " WHERE sched_name = ? AND id IN (" + marks + ")")
		res, err := h.db.ExecContext(ctx, del, append([]any{h.sched}, ids...)...)
		if err != nil {
			return deleted, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return deleted, err
		}
		deleted += int(n)
		if len(ids) < h.pruneBatch {
			return deleted, nil
		}
	}
}

// selectIDs reads a column of IDs.
func (h *History) selectIDs(ctx context.Context, stmt string, args ...any) ([]any, error) {
	rows, err := h.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []any
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// PrunerOptions configure a Pruner. A nil *PrunerOptions means the
// defaults.
type PrunerOptions struct {
	// MaxAge is how long history is kept: each run prunes what is older
	// than MaxAge before the database's clock. Defaults to 30 days.
	MaxAge time.Duration
	// KeepPerJob is how many of each job's newest executions are kept
	// however old (see [History.Prune]). Defaults to 100; -1 keeps no
	// minimum, so that age alone decides.
	KeepPerJob int
	// Interval is the time between runs. Defaults to 1 hour.
	Interval time.Duration
}

// Defaults of PrunerOptions.
const (
	DefaultMaxAge        = 30 * 24 * time.Hour
	DefaultKeepPerJob    = 100
	DefaultPruneInterval = time.Hour
)

func (o *PrunerOptions) withDefaults() (PrunerOptions, error) {
	var c PrunerOptions
	if o != nil {
		c = *o
	}
	switch {
	case c.MaxAge < 0:
		return c, invalid("PrunerOptions.MaxAge %s is negative", c.MaxAge)
	case c.MaxAge == 0:
		c.MaxAge = DefaultMaxAge
	}
	switch {
	case c.KeepPerJob < -1:
		return c, invalid("PrunerOptions.KeepPerJob %d: want -1 (no minimum), 0 (the default) or more", c.KeepPerJob)
	case c.KeepPerJob == -1:
		c.KeepPerJob = 0
	case c.KeepPerJob == 0:
		c.KeepPerJob = DefaultKeepPerJob
	}
	switch {
	case c.Interval < 0:
		return c, invalid("PrunerOptions.Interval %s is negative", c.Interval)
	case c.Interval == 0:
		c.Interval = DefaultPruneInterval
	}
	return c, nil
}

// Pruner runs [History.Prune] when started and then every interval, in
// one goroutine it owns, until stopped. A failed run is logged and tried
// again at the next interval. Several servers sharing one database may
// each run one: they delete the same rows, which is harmless.
type Pruner struct {
	h    *History
	opts PrunerOptions

	mu     sync.Mutex
	cancel context.CancelFunc // nil when not running
	done   chan struct{}
}

// NewPruner returns a stopped pruner of h.
func NewPruner(h *History, opts *PrunerOptions) (*Pruner, error) {
	if h == nil {
		return nil, invalid("nil history")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Pruner{h: h, opts: o}, nil
}

// Start starts the pruner's goroutine, which runs a first prune at once.
// Starting a running pruner is an error.
func (p *Pruner) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel != nil {
		return errors.New("history: pruner already started")
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go p.loop(ctx, p.done)
	return nil
}

// Stop cancels a run in progress and waits for the goroutine to end, or
// for ctx to be done. Stopping a stopped pruner does nothing. It may be
// started again.
func (p *Pruner) Stop(ctx context.Context) error {
	p.mu.Lock()
	cancel, done := p.cancel, p.done
	p.cancel, p.done = nil, nil
	p.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("history: stopping the pruner: %w", ctx.Err())
	}
}

func (p *Pruner) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(p.opts.Interval)
	defer t.Stop()
	for {
		p.run(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// run prunes once, logging the outcome.
func (p *Pruner) run(ctx context.Context) {
	log := p.h.opts.Logger
	now, err := p.h.now(ctx)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("pruning history: reading the database clock", "error", err)
		}
		return
	}
	cut := now.Add(-p.opts.MaxAge)
	n, err := p.h.Prune(ctx, cut, p.opts.KeepPerJob)
	switch {
	case err != nil && ctx.Err() == nil:
		log.Warn("pruning history", "older_than", cut, "keep_per_job", p.opts.KeepPerJob, "deleted", n, "error", err)
	case err == nil && n > 0:
		log.Info("pruned history", "older_than", cut, "keep_per_job", p.opts.KeepPerJob, "deleted", n)
	}
}
