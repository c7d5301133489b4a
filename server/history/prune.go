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

// PruneParams say what [History.Prune] deletes. Unlike [PrunerOptions],
// zero values mean "none", not a default.
type PruneParams struct {
	// OlderThan is the age limit: executions that started before it may
	// be deleted, and decisions timed before it are. Required.
	OlderThan time.Time
	// KeepPerJob is the floor: how many of each job's newest executions
	// are kept however old. 0 keeps no minimum.
	KeepPerJob int
	// MaxPerJob is the cap: how many of each job's newest executions are
	// kept at most, however young. 0 sets no cap. When set, it must not
	// be less than KeepPerJob.
	MaxPerJob int
}

// validate refuses params Prune cannot use, naming the field.
func (p *PruneParams) validate() error {
	if p == nil {
		return invalid("", "nil PruneParams")
	}
	if err := checkTime("PruneParams.OlderThan", p.OlderThan, true); err != nil {
		return err
	}
	switch {
	case p.KeepPerJob < 0:
		return invalid("PruneParams.KeepPerJob", "%d is negative", p.KeepPerJob)
	case p.MaxPerJob < 0:
		return invalid("PruneParams.MaxPerJob", "%d is negative", p.MaxPerJob)
	case p.MaxPerJob > 0 && p.KeepPerJob > p.MaxPerJob:
		return invalid("PruneParams.KeepPerJob", "%d is more than PruneParams.MaxPerJob %d", p.KeepPerJob, p.MaxPerJob)
	}
	return nil
}

// Prune deletes old history and returns how many executions and decisions
// it deleted. The rule, for the executions of one job ranked newest first
// by start time (then ID), running ones included in the ranking:
//
//   - the KeepPerJob newest are kept, however old (the floor: a monthly
//     job keeps its last runs and its LastSuccess);
//   - those beyond the MaxPerJob newest are deleted, however young (the
//     cap: a job firing every second keeps MaxPerJob rows, not
//     OlderThan's worth);
//   - the others are deleted when they started before OlderThan;
//   - running executions are never deleted, wherever they rank.
//
// So a job keeps at least min(its runs, KeepPerJob) executions and at most
// MaxPerJob finished ones. A decision is deleted when its time (scheduled
// time, or decision time when it has none) is before OlderThan. The audit
// log is not pruned.
//
// Rows go in batches of 500, each its own statement, so Prune can run
// while the server works, and on several servers at once. With a cap,
// finding the jobs over it reads the job index of the whole table.
func (h *History) Prune(ctx context.Context, p *PruneParams) (int, error) {
	if err := p.validate(); err != nil {
		return 0, err
	}
	cut := p.OlderThan.UnixNano()
	jobs, err := h.pruneJobs(ctx, cut, p.MaxPerJob)
	if err != nil {
		return 0, dbErr("pruning executions", err)
	}
	deleted := 0
	for _, j := range jobs {
		n, err := h.pruneJob(ctx, j, cut, p)
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

// pruneJobs lists the jobs that may have executions to prune: those with
// executions that started before cut and, with a cap (maxPerJob > 0),
// those with more than maxPerJob executions. The rows are read to the end
// before anything is deleted: an SQLite pool may have a single connection.
func (h *History) pruneJobs(ctx context.Context, cut int64, maxPerJob int) ([]jobKey, error) {
	stmt, args := h.q.pruneJobs, []any{cut, h.sched}
	if maxPerJob > 0 {
		stmt, args = h.q.pruneJobsCapped, []any{h.sched, cut, maxPerJob}
	}
	rows, err := h.db.QueryContext(ctx, stmt, args...)
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

// pruneJob deletes one job's executions under Prune's rule: first those
// beyond the cap, then the old ones beyond the floor. Deleting beyond the
// cap leaves the floor's rows alone (KeepPerJob ≤ MaxPerJob), so the
// second pass finds the same floor.
func (h *History) pruneJob(ctx context.Context, j jobKey, cut int64, p *PruneParams) (int, error) {
	deleted := 0
	if p.MaxPerJob > 0 {
		pos, ok, err := h.rankPosition(ctx, j, p.MaxPerJob)
		if err != nil {
			return 0, err
		}
		if ok { // else MaxPerJob or fewer executions: none beyond the cap
			n, err := h.deleteBatches(ctx, "server_executions", h.q.pruneSelectBefore,
				j.group, j.name, h.sched, pos.time, pos.time, pos.id)
			deleted += n
			if err != nil {
				return deleted, err
			}
		}
	}
	if p.KeepPerJob == 0 {
		n, err := h.deleteBatches(ctx, "server_executions", h.q.pruneSelectOld, j.group, j.name, h.sched, cut)
		return deleted + n, err
	}
	pos, ok, err := h.rankPosition(ctx, j, p.KeepPerJob)
	if err != nil || !ok {
		return deleted, err // !ok: KeepPerJob or fewer executions, all kept
	}
	n, err := h.deleteBatches(ctx, "server_executions", h.q.pruneSelectOldBefore,
		j.group, j.name, h.sched, cut, pos.time, pos.time, pos.id)
	return deleted + n, err
}

// position is a place in a job's executions ordered by start time and ID.
type position struct {
	time int64
	id   string
}

// rankPosition returns the position of job j's rank-th newest execution
// (rank ≥ 1): the executions strictly before it are beyond its newest
// rank. ok is false when the job has fewer than rank executions.
func (h *History) rankPosition(ctx context.Context, j jobKey, rank int) (position, bool, error) {
	var pos position
	err := h.db.QueryRowContext(ctx, h.q.pruneRank, j.group, j.name, h.sched, rank-1).Scan(&pos.time, &pos.id)
	if errors.Is(err, sql.ErrNoRows) {
		return pos, false, nil
	}
	return pos, err == nil, err
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
// defaults. Each run calls [History.Prune], whose doc states the rule.
type PrunerOptions struct {
	// MaxAge is how long history is kept: each run prunes what is older
	// than MaxAge before the database's clock. Defaults to 30 days.
	MaxAge time.Duration
	// KeepPerJob is how many of each job's newest executions are kept
	// however old. Defaults to 100, or to MaxPerJob when that is less; -1
	// keeps no minimum, so that age and the cap alone decide. It must not
	// be more than MaxPerJob.
	KeepPerJob int
	// MaxPerJob is how many of each job's newest executions are kept at
	// most, however young. Defaults to 10000; -1 sets no cap, so that a
	// frequent job keeps everything younger than MaxAge.
	MaxPerJob int
	// Interval is the time between runs. Defaults to 1 hour.
	Interval time.Duration
}

// Defaults of PrunerOptions.
const (
	DefaultMaxAge        = 30 * 24 * time.Hour
	DefaultKeepPerJob    = 100
	DefaultMaxPerJob     = 10000
	DefaultPruneInterval = time.Hour
)

func (o *PrunerOptions) withDefaults() (PrunerOptions, error) {
	var c PrunerOptions
	if o != nil {
		c = *o
	}
	switch {
	case c.MaxAge < 0:
		return c, invalid("PrunerOptions.MaxAge", "%s is negative", c.MaxAge)
	case c.MaxAge == 0:
		c.MaxAge = DefaultMaxAge
	}
	switch {
	case c.MaxPerJob < -1:
		return c, invalid("PrunerOptions.MaxPerJob", "%d: want -1 (no cap), 0 (the default) or more", c.MaxPerJob)
	case c.MaxPerJob == -1:
		c.MaxPerJob = 0
	case c.MaxPerJob == 0:
		c.MaxPerJob = DefaultMaxPerJob
	}
	switch {
	case c.KeepPerJob < -1:
		return c, invalid("PrunerOptions.KeepPerJob", "%d: want -1 (no minimum), 0 (the default) or more", c.KeepPerJob)
	case c.KeepPerJob == -1:
		c.KeepPerJob = 0
	case c.KeepPerJob == 0:
		c.KeepPerJob = DefaultKeepPerJob
		if c.MaxPerJob > 0 {
			c.KeepPerJob = min(c.KeepPerJob, c.MaxPerJob)
		}
	case c.MaxPerJob > 0 && c.KeepPerJob > c.MaxPerJob:
		return c, invalid("PrunerOptions.KeepPerJob", "%d is more than PrunerOptions.MaxPerJob %d", c.KeepPerJob, c.MaxPerJob)
	}
	switch {
	case c.Interval < 0:
		return c, invalid("PrunerOptions.Interval", "%s is negative", c.Interval)
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
		return nil, invalid("", "nil history")
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
	params := &PruneParams{OlderThan: now.Add(-p.opts.MaxAge), KeepPerJob: p.opts.KeepPerJob, MaxPerJob: p.opts.MaxPerJob}
	n, err := p.h.Prune(ctx, params)
	attrs := []any{"older_than", params.OlderThan, "keep_per_job", params.KeepPerJob, "max_per_job", params.MaxPerJob, "deleted", n}
	switch {
	case err != nil && ctx.Err() == nil:
		log.Warn("pruning history", append(attrs, "error", err)...)
	case err == nil && n > 0:
		log.Info("pruned history", attrs...)
	}
}
