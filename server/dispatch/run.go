package dispatch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/combine"
)

// Handover is one run to hand to an executor.
type Handover struct {
	// RunID identifies the run across its hand-overs: the execution ID of
	// its first attempt.
	RunID string
	// ExecutionID and Attempt are the attempt's in the history.
	ExecutionID string
	Attempt     int
	Target      api.ExecutorTarget
	JobGroup    string
	JobName     string
	// ScheduledTime is the fire time the run is for.
	ScheduledTime time.Time
	Params        map[string]any
	Recovering    bool
	// Timeout is the job's timeout, told to the executor; zero for none.
	Timeout time.Duration
	// NodeID is the node that hands the run over and waits for its end.
	NodeID string
	// ShardIndex and ShardTotal place an item of a sharded firing among
	// its items (ShardTotal 0 for a run that is not an item), told to the
	// executor.
	ShardIndex, ShardTotal int
	// Pin is the executor a sharding_broadcast item goes to; when it is
	// not live, another live executor of the group takes the item.
	Pin string
}

// Assignment is a run handed over: the executor it is leased to and the
// lease's token.
type Assignment struct {
	RunID      string
	Token      int64
	ExecutorID string
	Instance   string
}

// Handover picks an executor for h by its target's routing among the
// group's live executors that advertise the handler and carry the labels,
// and leases the run to it with token 1. No such executor: a
// *NoExecutorError, and nothing is written. Round robin hand-overs made
// while others commit are made together (see commitHandovers).
func (s *Service) Handover(ctx context.Context, h Handover) (*Assignment, error) {
	if err := CheckTarget("executor", &h.Target); err != nil {
		return nil, err
	}
	params, err := encodeJSON(h.Params)
	if err != nil {
		return nil, err
	}
	if h.Target.Routing == "" || h.Target.Routing == api.RoutingRoundRobin {
		ho := &handover{h: h, params: params}
		s.handovers.Do(ctx, ho, maxHandoverBatch, s.commitHandovers)
		if ho.err != nil {
			return nil, ho.err
		}
		s.wakePolls(ho.asg.ExecutorID, h.RunID)
		s.sawHandover()
		return ho.asg, nil
	}
	asg, err := s.handoverOne(ctx, h, params)
	if err == nil {
		s.sawHandover()
	}
	return asg, err
}

// sawHandover notes a run handed over, and at the first makes sure that
// PostgreSQL has statistics of the executors' table (see
// [sqlstore.Store.AnalyzeOnce]): until then it plans Watch's join of a
// node's runs with their executors as a read of every executor per run
// (2,163 buffers for 323 runs in E1). The runs' table is analyzed once
// too, by the first batch of results (see recordReports); after that it
// is left to autovacuum: it is a queue, and the statements that read one
// run, or an executor's, do not depend on its statistics (see executorIs
// and takeAll).
func (s *Service) sawHandover() {
	s.analyzeExecutors.Do(func() { s.st.AnalyzeOnce("dispatch_executors") })
}

// handoverOne is Handover of one run, in transactions of its own.
func (s *Service) handoverOne(ctx context.Context, h Handover, params any) (*Assignment, error) {
	e, err := s.assign(ctx, h, func(tx *sql.Tx, e *Executor, now time.Time) error {
		if _, err := tx.ExecContext(ctx, s.q.runInsert, s.sched, h.RunID, h.ExecutionID, h.Attempt, h.Target.Group,
			h.Target.Handler, h.JobGroup, h.JobName, nanos(h.ScheduledTime), params, h.Recovering, int64(h.Timeout),
			e.ID, h.NodeID, h.ShardIndex, h.ShardTotal, false, nanos(now)); err != nil {
			return fmt.Errorf("dispatch: inserting run %s: %w", h.RunID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.wakePolls(e.ID, h.RunID)
	s.announce(ctx, e.ID, h.RunID)
	return &Assignment{RunID: h.RunID, Token: 1, ExecutorID: e.ID, Instance: e.Instance}, nil
}

// Rehandover hands a lost run over again, as attempt h.Attempt recorded
// as h.ExecutionID, to a live executor of the group (its lost one is not
// live), with the next token. No live executor: a *NoExecutorError, and
// the run stays lost.
func (s *Service) Rehandover(ctx context.Context, h Handover) (*Assignment, error) {
	var token int64
	e, err := s.assign(ctx, h, func(tx *sql.Tx, e *Executor, now time.Time) error {
		res, err := tx.ExecContext(ctx, s.q.runRehandover, e.ID, h.ExecutionID, h.Attempt, h.Recovering, false, nanos(now), s.sched, h.RunID)
		if err != nil {
			return fmt.Errorf("dispatch: handing run %s over again: %w", h.RunID, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("dispatch: run %s is not lost: %w", h.RunID, ErrStale)
		}
		if err := tx.QueryRowContext(ctx, s.q.runToken, s.sched, h.RunID).Scan(&token); err != nil {
			return fmt.Errorf("dispatch: reading run %s: %w", h.RunID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.wakePolls(e.ID, h.RunID)
	s.announce(ctx, e.ID, h.RunID)
	return &Assignment{RunID: h.RunID, Token: token, ExecutorID: e.ID, Instance: e.Instance}, nil
}

// assign picks the executor of h by its routing, and records the pick
// and whatever write writes in one transaction. How much it serializes
// depends on what the routing reads:
//
//   - lru, lfu and busy_over read what the hand-overs before them
//     recorded (last use, use count, runs in progress): the whole
//     transaction holds the lock of the group's row, so that each sees
//     the one before it;
//   - round_robin reads only this node's turn (see nextTurn), in
//     memory: nothing is locked;
//   - first, last, random, consistent_hash and failover read only the
//     executors: nothing is locked.
func (s *Service) assign(ctx context.Context, h Handover, write func(tx *sql.Tx, e *Executor, now time.Time) error) (*Executor, error) {
	group := h.Target.Group
	in := pickInput{
		routing: h.Target.Routing, key: hashKey(h.Target, h.JobGroup, h.JobName, h.Params),
		heartbeat: s.HeartbeatInterval(),
	}
	var (
		tx   *sql.Tx
		c    candidate
		byID map[string]*Executor
		err  error
	)
	switch h.Target.Routing {
	case "", api.RoutingRoundRobin:
		if in.now, err = s.now(ctx, s.db); err != nil {
			return nil, err
		}
		var cands []candidate
		if cands, byID, err = s.candidates(ctx, s.db, in.now, h); err != nil {
			return nil, err
		}
		c = s.nextTurn(group, cands, in.now)
		tx, err = s.st.BeginTx(ctx)
	case api.RoutingLRU, api.RoutingLFU, api.RoutingBusyOver:
		tx, err = s.lockGroup(ctx, group)
	default:
		tx, err = s.st.BeginTx(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("dispatch: hand-over to group %q: %w", group, err)
	}
	defer func() { _ = tx.Rollback() }()
	if byID == nil {
		if in.now, err = s.now(ctx, tx); err != nil {
			return nil, err
		}
		var cands []candidate
		if cands, byID, err = s.candidates(ctx, tx, in.now, h); err != nil {
			return nil, err
		}
		// A sharding_broadcast item goes to the executor it is pinned
		// to while that one is live, else where the routing sends it.
		var pinned bool
		if c, pinned = pinnedOf(cands, h.Pin); !pinned {
			c = pick(cands, in)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q.executorUse, nanos(in.now), 1, s.sched, c.id); err != nil {
		return nil, fmt.Errorf("dispatch: recording the use of executor %s: %w", c.id, err)
	}
	e := byID[c.id]
	if err := write(tx, e, in.now); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("dispatch: committing a hand-over to group %q: %w", group, err)
	}
	return e, nil
}

// nextTurn picks the next executor of group's round robin among cands:
// the first by ID after the one this node picked last for the group, or
// a random one at the group's first turn on this node. Each node keeps
// its own turn, in memory: every node spreads its runs evenly over the
// group, so the cluster does, and no hand-over waits for another node's.
// A turn shared by the nodes, a row of the group locked and updated at
// every batch of hand-overs, made the nodes' batches wait for each
// other (the statement with the most time in E1 with two nodes) for
// an order no executor can tell.
func (s *Service) nextTurn(group string, cands []candidate, now time.Time) candidate {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.turns[group]
	in := pickInput{routing: api.RoutingRoundRobin, rrLast: last, now: now}
	if !ok {
		in.routing = api.RoutingRandom
	}
	c := pick(cands, in)
	s.turns[group] = c.id
	return c
}

// lockGroup begins a transaction and locks the group's row in it. The
// group's first hand-over creates the row.
func (s *Service) lockGroup(ctx context.Context, group string) (*sql.Tx, error) {
	tx, err := s.tryLockGroup(ctx, group)
	if errors.Is(err, sql.ErrNoRows) {
		// Outside the transaction: on PostgreSQL, a unique violation
		// (another node created the row first) would abort it.
		if _, err := s.db.ExecContext(ctx, s.q.groupInsert, s.sched, group); err != nil && !s.st.IsUniqueViolation(err) {
			return nil, fmt.Errorf("creating the group's row: %w", err)
		}
		tx, err = s.tryLockGroup(ctx, group)
	}
	return tx, err
}

// tryLockGroup is lockGroup without creating the row: sql.ErrNoRows when
// there is none, and then no transaction.
func (s *Service) tryLockGroup(ctx context.Context, group string) (*sql.Tx, error) {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return nil, err
	}
	var locked int
	if err := tx.QueryRowContext(ctx, s.q.groupLock, s.sched, group).Scan(&locked); err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return tx, nil
}

// candidates reads, with q, the group's live executors that advertise the
// handler and carry the labels, in registration order, with the runs in
// progress for busy_over; none is a *NoExecutorError.
func (s *Service) candidates(ctx context.Context, q querier, now time.Time, h Handover) ([]candidate, map[string]*Executor, error) {
	t := h.Target
	live, err := s.liveExecutors(ctx, q, now, t.Group)
	if err != nil {
		return nil, nil, err
	}
	cands, byID, err := fit(live, t)
	if err != nil {
		return nil, nil, err
	}
	if t.Routing == api.RoutingBusyOver {
		running, err := s.runningCounts(ctx, q, s.q.runningGroup, s.sched, t.Group)
		if err != nil {
			return nil, nil, err
		}
		for i := range cands {
			cands[i].running = running[cands[i].id]
		}
	}
	return cands, byID, nil
}

// liveExecutors reads, with q, the live executors of group in
// registration order.
func (s *Service) liveExecutors(ctx context.Context, q querier, now time.Time, group string) ([]*Executor, error) {
	rows, err := q.QueryContext(ctx, s.q.executorsLive, s.sched, group, nanos(now))
	if err != nil {
		return nil, fmt.Errorf("dispatch: reading the executors of group %q: %w", group, err)
	}
	return collectExecutors(rows, group, nil)
}

// liveExecutorsAt reads the live executors of group in registration
// order, and the clock it compared their leases with (the zero time when
// there is none), in one query.
func (s *Service) liveExecutorsAt(ctx context.Context, group string) ([]*Executor, time.Time, error) {
	clock := s.clockArg()
	rows, err := s.db.QueryContext(ctx, s.q.executorsLiveAt, clock, s.sched, group, clock)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("dispatch: reading the executors of group %q: %w", group, err)
	}
	var now int64
	live, err := collectExecutors(rows, group, &now)
	if err != nil || len(live) == 0 {
		return nil, time.Time{}, err
	}
	return live, instant(now), nil
}

// collectExecutors reads the executors of group that rows holds, each
// followed by a clock when clock is not nil, and closes rows.
func collectExecutors(rows *sql.Rows, group string, clock *int64) ([]*Executor, error) {
	defer rows.Close()
	var row scanner = rows
	if clock != nil {
		row = withClock{rows, clock}
	}
	var live []*Executor
	for rows.Next() {
		e, err := scanExecutor(row)
		if err != nil {
			return nil, fmt.Errorf("dispatch: reading the executors of group %q: %w", group, err)
		}
		live = append(live, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dispatch: reading the executors of group %q: %w", group, err)
	}
	return live, nil
}

// withClock scans a row of executor columns followed by a clock.
type withClock struct {
	r   scanner
	now *int64
}

func (w withClock) Scan(dest ...any) error { return w.r.Scan(append(dest, w.now)...) }

// Take returns the runs assigned to an executor (at most max; none when
// max is 0), now running, and the cancel requests it was not told yet. While there is
// neither, it waits up to wait: it reads the database every PollInterval,
// and at once when it learns that the executor was handed a run or asked
// to cancel one. An executor whose lease lapsed gets ErrLeaseLost.
//
// A transaction runs only when a read that locks nothing finds something
// to take (or the lease lapsed), or when the executor was handed
// something since its last Take began: an executor asks again as soon
// as it has its runs, mostly before its next run is there. The runs this
// node knows were handed to it (its own hand-overs, and the others'
// that it hears of on PostgreSQL, see announce) are taken by their keys
// (see takeHanded), without reading the executor's runs, as long as they
// were read within two PollIntervals. While this node hears the others,
// it knows of every run and cancel request, and reads the executor's
// runs only every listenedFresh PollIntervals.
func (s *Service) Take(ctx context.Context, executor string, max int, wait time.Duration) (*api.ExecutorWork, error) {
	wait = min(max0(wait), MaxWait)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(s.opts.PollInterval)
	defer tick.Stop()
	for {
		// The executor's runs are read at least every two PollIntervals;
		// while this node hears the others, every listenedFresh.
		listening := s.listening.Load()
		fresh := 2 * s.opts.PollInterval
		if listening {
			fresh = listenedFresh * s.opts.PollInterval
		}
		woken, runs, other, stale := s.pollChan(executor, max, fresh)
		if len(runs) > 0 {
			work, err := s.takeHandedBatched(ctx, executor, runs)
			if err != nil || len(work.Runs) > 0 {
				return work, err
			}
			other = true // taken already, or the lease lapsed: the read tells
		}
		if other || ((!listening || stale) && s.pending(ctx, executor, max)) {
			work, err := s.take(ctx, executor, max)
			if err == nil {
				s.toldAt(executor)
			}
			if err != nil || len(work.Runs) > 0 || len(work.Cancel) > 0 {
				return work, err
			}
		}
		select {
		case <-ctx.Done():
			return emptyWork(), nil
		case <-deadline.C:
			// The lease is checked once more, so that a lapsed one is
			// told rather than an empty answer.
			return s.takeOnce(ctx, executor, max)
		case <-woken:
		case <-tick.C:
		}
	}
}

// emptyWork is an answer with no run and no cancel request.
func emptyWork() *api.ExecutorWork {
	return &api.ExecutorWork{Runs: []api.ExecutorRun{}, Cancel: []api.ExecutorRunRef{}}
}

// pending reports whether an executor has runs to take (when limit > 0),
// cancel requests not told, or a lease that lapsed, with a read that
// locks nothing. An error (an unknown executor's too) reports true, so
// that the transaction tells it.
func (s *Service) pending(ctx context.Context, executor string, limit int) bool {
	var (
		holds bool
		n     int
	)
	if err := s.db.QueryRowContext(ctx, s.q.pending, s.clockArg(), limit, false, s.sched, executor).Scan(&holds, &n); err != nil {
		return true
	}
	if n == 0 {
		s.toldAt(executor) // no cancel request untold
	}
	return n > 0 || !holds
}

// take is one transaction of Take: on PostgreSQL one statement, which
// does it all while the lease holds; takeOnce otherwise, which also
// tells a lapsed lease.
func (s *Service) take(ctx context.Context, executor string, limit int) (*api.ExecutorWork, error) {
	if !s.st.WritableCTEs() || limit <= 0 {
		return s.takeOnce(ctx, executor, limit)
	}
	work, live, err := s.takeAll(ctx, executor, limit)
	if err != nil || live {
		return work, err
	}
	return s.takeOnce(ctx, executor, limit)
}

// takeAll runs the takeAll statement (see queries), on PostgreSQL, and
// reports whether it found the executor's lease holding.
func (s *Service) takeAll(ctx context.Context, executor string, limit int) (*api.ExecutorWork, bool, error) {
	rows, err := s.db.QueryContext(ctx, s.q.takeAll, s.clockArg(), s.sched, executor,
		s.sched, executor, limit, s.sched, executor,
		s.sched, executor)
	if err != nil {
		return nil, false, fmt.Errorf("dispatch: taking the runs of executor %s: %w", executor, err)
	}
	defer rows.Close()
	work := emptyWork()
	live := false
	for rows.Next() {
		var kind string
		r, err := scanRun(prefixed{rows, &kind})
		if err != nil {
			return nil, false, fmt.Errorf("dispatch: taking the runs of executor %s: %w", executor, err)
		}
		switch kind {
		case "live":
			live = true
		case "cancel":
			work.Cancel = append(work.Cancel, api.ExecutorRunRef{ID: r.ID, Token: r.Token})
		default:
			work.Runs = append(work.Runs, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("dispatch: taking the runs of executor %s: %w", executor, err)
	}
	sortByScheduled(work.Runs)
	return work, live, nil
}

// prefixed is a row whose first column precedes those its caller scans,
// and goes to first.
type prefixed struct {
	r     scanner
	first any
}

func (p prefixed) Scan(dest ...any) error { return p.r.Scan(append([]any{p.first}, dest...)...) }

func max0(d time.Duration) time.Duration { return max(d, 0) }

// leasedTx begins a transaction, reads the time and the executor in it,
// and returns them while its lease holds: ErrNotFound for an unknown
// executor, ErrLeaseLost for a lapsed lease. The caller rolls tx back.
func (s *Service) leasedTx(ctx context.Context, executor string) (*sql.Tx, time.Time, error) {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("dispatch: %w", err)
	}
	now, err := s.now(ctx, tx)
	if err != nil {
		return tx, now, err
	}
	e, err := scanExecutor(tx.QueryRowContext(ctx, s.q.executorGet, s.sched, executor))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return tx, now, fmt.Errorf("%w: %q", ErrNotFound, executor)
	case err != nil:
		return tx, now, fmt.Errorf("dispatch: reading executor %s: %w", executor, err)
	case !e.LeaseUntil.After(now):
		return tx, now, ErrLeaseLost
	}
	return tx, now, nil
}

// takeOnce is one read of Take.
func (s *Service) takeOnce(ctx context.Context, executor string, limit int) (*api.ExecutorWork, error) {
	tx, now, err := s.leasedTx(ctx, executor)
	if tx != nil {
		defer func() { _ = tx.Rollback() }()
	}
	if err != nil {
		return nil, err
	}
	work := emptyWork()
	if err := s.takeRuns(ctx, tx, now, executor, limit, work); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, s.q.cancelsUntold, s.sched, executor, false)
	if err != nil {
		return nil, fmt.Errorf("dispatch: taking the runs of executor %s: %w", executor, err)
	}
	if err != nil {
		return nil, fmt.Errorf("dispatch: reading the cancel requests of executor %s: %w", executor, err)
	}
	for rows.Next() {
		var ref api.ExecutorRunRef
		if err := rows.Scan(&ref.ID, &ref.Token); err != nil {
			rows.Close()
			return nil, fmt.Errorf("dispatch: reading the cancel requests of executor %s: %w", executor, err)
		}
		work.Cancel = append(work.Cancel, ref)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dispatch: reading the cancel requests of executor %s: %w", executor, err)
	}
	for _, ref := range work.Cancel {
		if _, err := tx.ExecContext(ctx, s.q.cancelTold, true, s.sched, ref.ID, ref.Token); err != nil {
			return nil, fmt.Errorf("dispatch: marking the cancel of run %s told: %w", ref.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("dispatch: committing the runs of executor %s: %w", executor, err)
	}
	return work, nil
}

// takeRuns takes up to limit assigned runs of executor into work, in tx.
func (s *Service) takeRuns(ctx context.Context, tx *sql.Tx, now time.Time, executor string, limit int, work *api.ExecutorWork) error {
	if limit <= 0 {
		return nil
	}
	return s.startRuns(ctx, tx, now, executor, s.q.runTake, []any{s.sched, executor, limit}, work)
}

// startRuns reads the assigned runs of executor that query finds with
// args, locking them, into work, and starts them, in tx.
func (s *Service) startRuns(ctx context.Context, tx *sql.Tx, now time.Time, executor, query string, args []any, work *api.ExecutorWork) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("dispatch: taking the runs of executor %s: %w", executor, err)
	}
	first := len(work.Runs)
	if err := appendRuns(rows, executor, work); err != nil {
		return err
	}
	taken := work.Runs[first:]
	if len(taken) == 0 {
		return nil
	}
	// One statement starts them all: the rows are locked (or, on
	// SQLite, the database is) since they were read as assigned.
	startArgs := make([]any, 0, 3+len(taken))
	startArgs = append(startArgs, nanos(now), s.sched, executor)
	for _, r := range taken {
		startArgs = append(startArgs, r.ID)
	}
	start := s.st.SQL(s.q.runsStart + " AND id IN (" + strings.Repeat(", ?", len(taken))[2:] + ")")
	if _, err := tx.ExecContext(ctx, start, startArgs...); err != nil {
		return fmt.Errorf("dispatch: starting the runs of executor %s: %w", executor, err)
	}
	return nil
}

// takeHanded takes the runs of ids (runs this node handed the executor)
// that are still assigned to it, while its lease holds, and starts them:
// the runs are found by their keys, so that the take reads none of the
// executor's other rows, nor the dead ones its index still points at
// until the next vacuum. It tells no cancel request (the caller reads
// them every two PollIntervals), and an answer without runs means only
// that none was taken: already taken, or a lapsed lease, which the
// caller's read then tells.
func (s *Service) takeHanded(ctx context.Context, executor string, ids []string) (*api.ExecutorWork, error) {
	in := " AND id IN (" + strings.Repeat(", ?", len(ids))[2:] + ")"
	work := emptyWork()
	if s.st.WritableCTEs() {
		args := make([]any, 0, 6+len(ids))
		args = append(args, s.clockArg(), s.sched, executor)
		for _, id := range ids {
			args = append(args, id)
		}
		args = append(args, s.sched, executor, s.clockArg())
		rows, err := s.db.QueryContext(ctx, s.st.SQL(s.q.handedStart+in+s.q.handedStartTail), args...)
		if err != nil {
			return nil, fmt.Errorf("dispatch: taking the runs of executor %s: %w", executor, err)
		}
		if err := appendRuns(rows, executor, work); err != nil {
			return nil, err
		}
		sortByScheduled(work.Runs)
		return work, nil
	}
	tx, now, err := s.leasedTx(ctx, executor)
	if tx != nil {
		defer func() { _ = tx.Rollback() }()
	}
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrLeaseLost):
		return work, nil // the caller's read tells which
	case err != nil:
		return nil, err
	}
	args := make([]any, 0, 2+len(ids))
	args = append(args, s.sched, executor)
	for _, id := range ids {
		args = append(args, id)
	}
	if err := s.startRuns(ctx, tx, now, executor, s.st.SQL(s.q.handedSelect+in+" {update}"), args, work); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("dispatch: committing the runs of executor %s: %w", executor, err)
	}
	return work, nil
}

// appendRuns appends the runs rows holds to work, and closes rows.
func appendRuns(rows *sql.Rows, executor string, work *api.ExecutorWork) error {
	defer rows.Close()
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return fmt.Errorf("dispatch: taking the runs of executor %s: %w", executor, err)
		}
		work.Runs = append(work.Runs, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dispatch: taking the runs of executor %s: %w", executor, err)
	}
	return nil
}

// sortByScheduled puts runs in the order of their scheduled times, which
// RETURNING does not keep.
func sortByScheduled(runs []api.ExecutorRun) {
	slices.SortStableFunc(runs, func(a, b api.ExecutorRun) int { return a.ScheduledTime.Compare(b.ScheduledTime) })
}

func scanRun(r scanner) (api.ExecutorRun, error) {
	var (
		run                 api.ExecutorRun
		grp, executor, node string
		scheduled, timeout  int64
		params              sql.NullString
		state               string
	)
	if err := r.Scan(&run.ID, &run.ExecutionID, &run.Attempt, &grp, &run.Handler, &run.JobGroup, &run.JobName,
		&scheduled, &params, &run.Recovering, &timeout, &executor, &run.Token, &node, &state, &run.ShardIndex, &run.ShardTotal); err != nil {
		return run, err
	}
	run.ScheduledTime = instant(scheduled)
	if timeout > 0 {
		run.Timeout = time.Duration(timeout).String()
	}
	if err := decodeJSON(params, &run.Params); err != nil {
		return run, err
	}
	return run, nil
}

// Result is how a run ended, as its executor reported it.
type Result struct {
	// Outcome is succeeded, failed or cancelled.
	Outcome string
	Error   string
	Output  string
	Logs    []api.LogLine
}

// Limits of a result.
const (
	maxLogLines   = 1000
	maxOutputSize = 1 << 20
)

// CheckResult refuses a malformed result, naming the field.
func CheckResult(r api.ExecutorResult) error {
	switch r.Outcome {
	case "succeeded", "failed", "cancelled":
	case "":
		return invalid("outcome", "is required: succeeded, failed or cancelled")
	default:
		return invalid("outcome", "%q: want succeeded, failed or cancelled", r.Outcome)
	}
	if r.Token < 1 {
		return invalid("token", "%d: want the run's token, from 1", r.Token)
	}
	if len(r.Logs) > maxLogLines {
		return invalid("logs", "has %d lines; at most %d are allowed", len(r.Logs), maxLogLines)
	}
	if len(r.Output) > maxOutputSize {
		return invalid("output", "is %d bytes long; at most %d are allowed", len(r.Output), maxOutputSize)
	}
	return nil
}

// Fence returns the execution ID of run runID if it is leased to
// executor under token and has not ended; otherwise ErrStale. The live
// log lines an executor sends are appended under that execution only
// when it holds.
func (s *Service) Fence(ctx context.Context, executor, runID string, token int64) (string, error) {
	var execID string
	err := s.db.QueryRowContext(ctx, s.q.runFence, s.sched, runID, executor, token).Scan(&execID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("%w: run %s, token %d", ErrStale, runID, token)
	case err != nil:
		return "", fmt.Errorf("dispatch: reading run %s: %w", runID, err)
	}
	return execID, nil
}

// RequestCancel asks the executor of a run to stop it: its next poll or
// heartbeat tells it. A run that ended, or was handed over again, is
// left alone.
func (s *Service) RequestCancel(ctx context.Context, a *Assignment) error {
	if _, err := s.db.ExecContext(ctx, s.q.runCancel, false, s.sched, a.RunID, a.Token); err != nil {
		return fmt.Errorf("dispatch: asking to cancel run %s: %w", a.RunID, err)
	}
	s.wakePolls(a.ExecutorID)
	s.announce(ctx, a.ExecutorID)
	return nil
}

// Close forgets a run whose end the node recorded: whatever its executor
// sends about it from now on is refused.
func (s *Service) Close(ctx context.Context, runID string) error {
	if _, err := s.db.ExecContext(ctx, s.q.runDelete, s.sched, runID); err != nil {
		return fmt.Errorf("dispatch: closing run %s: %w", runID, err)
	}
	s.deleted.Add(1)
	return nil
}

// ForgetNode forgets the runs a lost node handed over before before
// (the bound spares those of a later incarnation of the node): nobody
// waits for their ends any more, and the cluster recovers their firings
// as any of the node's. Their executors learn from their next heartbeat
// that the runs are no longer theirs and cancel them, and their results
// are refused. It returns how many runs it forgot.
func (s *Service) ForgetNode(ctx context.Context, node string, before time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, s.q.runsForgetNode, s.sched, node, nanos(before))
	if err != nil {
		return 0, fmt.Errorf("dispatch: forgetting the runs of node %s: %w", node, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("dispatch: forgetting the runs of node %s: %w", node, err)
	}
	return int(n), nil
}

// PruneExecutors deletes the executors whose lease lapsed before before
// and that hold no run, and returns how many. An executor comes back by
// registering again, as its SDK does when a heartbeat finds it unknown.
func (s *Service) PruneExecutors(ctx context.Context, before time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, s.q.executorsPrune, s.sched, nanos(before))
	if err != nil {
		return 0, fmt.Errorf("dispatch: pruning executors: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("dispatch: pruning executors: %w", err)
	}
	return int(n), nil
}

// Update tells a waiting runner how its run ended: with a result, or
// lost with its executor.
type Update struct {
	State      State // StateDone or StateLost
	Result     Result
	ExecutorID string
	Instance   string
	Token      int64
}

// Await registers the caller as the waiter of a run handed over by this
// node, until stop. The channel receives the run's end, possibly more
// than once, and possibly that of an earlier hand-over of the run read
// before it was handed over again: the waiter keeps the update whose
// Token is its hand-over's.
func (s *Service) Await(runID string) (updates <-chan Update, stop func()) {
	ch := make(chan Update, 1)
	s.mu.Lock()
	s.waiters[runID] = ch
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.waiters[runID] == ch {
			delete(s.waiters, runID)
		}
	}
}

// takeState is what this node knows of an executor's work between its
// Takes.
type takeState struct {
	// woken is closed when this node hands the executor something.
	woken chan struct{}
	// runs are the runs this node handed it since its Take last looked,
	// at most maxHandedRuns; other is set when it handed more, or asked
	// it to cancel a run: its Take then reads its runs.
	runs  []string
	other bool
	// told is when a Take last read its cancel requests.
	told time.Time
}

// wake wakes the Take waiting on ts, if any; mu is held.
func (ts *takeState) wake() {
	close(ts.woken)
	ts.woken = make(chan struct{})
}

// maxHandedRuns bounds the runs a takeState keeps: an executor that polls
// another node takes its runs there, and this node's list of them is
// never emptied but by the next hand-over past the bound.
const maxHandedRuns = 256

// state returns the executor's takeState, made when it has none; mu is
// held. Past maxGroupsKept executors, it forgets them all at once (a
// waiting Take keeps its channel, and reads the database by its ticks).
func (s *Service) state(executor string) *takeState {
	ts, ok := s.takes[executor]
	if !ok {
		if len(s.takes) >= maxGroupsKept {
			clear(s.takes)
		}
		ts = &takeState{woken: make(chan struct{})}
		s.takes[executor] = ts
	}
	return ts
}

// pollChan returns the channel closed when this node hands a run to the
// executor or asks it to cancel one, and what it handed since the last
// call (during a Take's wait or between two Takes): the runs to take by
// their keys, at most limit, when the executor's cancel requests were
// read within fresh (the others stay for the next call); other when the
// Take must read the executor's runs; stale when they were last read
// longer than fresh ago.
func (s *Service) pollChan(executor string, limit int, fresh time.Duration) (woken <-chan struct{}, runs []string, other, stale bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.state(executor)
	other, ts.other = ts.other, false
	stale = time.Since(ts.told) > fresh
	if limit > 0 && len(ts.runs) > 0 {
		if other || stale {
			ts.runs, other = nil, true
		} else {
			n := min(limit, len(ts.runs))
			runs = slices.Clone(ts.runs[:n])
			ts.runs = slices.Delete(ts.runs, 0, n)
		}
	}
	return ts.woken, runs, other, stale
}

// toldAt notes that a Take read the executor's cancel requests now.
func (s *Service) toldAt(executor string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state(executor).told = time.Now()
}

// wakePolls wakes the Take waiting for the executor's work, if any, and
// notes what was handed it: runs, or something else when there is none
// (a cancel request), so that its next Take takes at once.
func (s *Service) wakePolls(executor string, runs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.state(executor)
	ts.wake()
	if len(runs) == 0 || len(ts.runs)+len(runs) > maxHandedRuns {
		ts.runs, ts.other = nil, true
		return
	}
	ts.runs = append(ts.runs, runs...)
}

// vacuumRunsAfter is how many runs a node deletes before it has the
// runs' table vacuumed (see vacuumRuns).
const vacuumRunsAfter = 2000

// vacuumRuns has the runs' table vacuumed, on PostgreSQL, once this node
// deleted vacuumRunsAfter runs since it last did, on a goroutine of
// vacuums (one at a time) so that Watch's passes go on meanwhile. The
// runs' table is a queue that autovacuum visits at most once a minute;
// before that, in E1 with two nodes, it held 1,500 runs in 10,000 pages
// and 89,000 dead rows after a minute, every take and Watch walking them,
// and the cluster fell from 1,950 to 1,400 runs/s within the minute. With
// a vacuum every few seconds it kept 370 pages (see
// docs/performance.md).
func (s *Service) vacuumRuns(ctx context.Context, vacuums *sync.WaitGroup) {
	if s.deleted.Load() < s.vacuumAfter || !s.vacuuming.CompareAndSwap(false, true) {
		return
	}
	s.deleted.Store(0)
	vacuums.Go(func() {
		defer s.vacuuming.Store(false)
		start := time.Now()
		if err := s.st.Vacuum(ctx, "dispatch_runs"); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("cannot vacuum the runs' table; autovacuum will", "error", err)
			}
			return
		}
		s.log.Debug("vacuumed the runs' table", "took", time.Since(start))
	})
}

// Watch delivers the ends of the runs node handed over to their waiters
// until ctx ends: every PollInterval while any waits, and at once after a
// result reported to another node's run, it reads the node's runs that
// ended or whose executor's lease lapsed in one query; a done run's
// result goes to its waiter, and a run whose executor's lease lapsed is
// marked lost (fenced on its token) and its waiter told. (A result
// reported to this node for a run it awaits is delivered by Report.)
// Each pass, and the last when ctx ends, first deletes the runs released
// since the one before (see Release), and has the runs' table vacuumed
// now and then (see vacuumRuns). On PostgreSQL it also hears, meanwhile,
// what the other nodes hand the executors whose Takes wait here (see
// announce).
func (s *Service) Watch(ctx context.Context, node string) {
	tick := time.NewTicker(s.opts.PollInterval)
	defer tick.Stop()
	var background sync.WaitGroup
	defer background.Wait()
	s.listen(ctx, &background)
	for {
		select {
		case <-ctx.Done():
			rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), combine.Timeout)
			defer cancel()
			if err := s.deleteReleased(rec); err != nil {
				s.log.Warn("cannot delete the runs that ended", "error", err)
			}
			if err := s.recordUses(rec); err != nil {
				s.log.Warn("cannot record the uses of executors", "error", err)
			}
			return
		case <-tick.C:
		case <-s.nudge:
		}
		if err := s.deleteReleased(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("cannot delete the runs that ended", "error", err)
		}
		s.vacuumRuns(ctx, &background)
		if err := s.recordUses(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("cannot record the uses of executors", "error", err)
		}
		if !s.anyWaiter() {
			continue
		}
		if err := s.watchOnce(ctx, node); err != nil && ctx.Err() == nil {
			s.log.Warn("cannot read the runs handed to executors", "error", err)
		}
	}
}

func (s *Service) anyWaiter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiters) > 0
}

// watchOnce is one pass of Watch.
func (s *Service) watchOnce(ctx context.Context, node string) error {
	now, err := s.now(ctx, s.db)
	if err != nil {
		return err
	}
	rows, err := s.db.QueryContext(ctx, s.q.watch, s.sched, node, nanos(now))
	if err != nil {
		return fmt.Errorf("dispatch: reading the runs of node %s: %w", node, err)
	}
	type seen struct {
		id    string
		token int64
		state State
		u     Update
		lease sql.NullInt64
	}
	var all []seen
	for rows.Next() {
		var (
			r        seen
			logs     sql.NullString
			instance sql.NullString
		)
		if err := rows.Scan(&r.id, &r.token, &r.state, &r.u.Result.Outcome, &r.u.Result.Error, &r.u.Result.Output, &logs,
			&r.u.ExecutorID, &instance, &r.lease); err != nil {
			rows.Close()
			return fmt.Errorf("dispatch: reading the runs of node %s: %w", node, err)
		}
		r.u.Instance, r.u.Token = instance.String, r.token
		if err := decodeJSON(logs, &r.u.Result.Logs); err != nil {
			r.u.Result.Logs = []api.LogLine{{Time: now, Level: "WARN", Message: "the executor's log lines could not be read: " + err.Error()}}
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dispatch: reading the runs of node %s: %w", node, err)
	}
	for _, r := range all {
		switch r.state {
		case StateDone, StateLost:
		default:
			if r.lease.Valid && instant(r.lease.Int64).After(now) {
				continue // still leased
			}
			res, err := s.db.ExecContext(ctx, s.q.runLose, nanos(now), s.sched, r.id, r.token)
			if err != nil {
				return fmt.Errorf("dispatch: marking run %s lost: %w", r.id, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				continue // it ended meanwhile: the next pass delivers it
			}
			r.state = StateLost
		}
		r.u.State = r.state
		s.deliver(r.id, r.u)
	}
	return nil
}

// deliver hands u to the run's waiter, if any and if it has room: an
// update it has not taken yet is delivered again by the next pass, the
// run's row being there until the waiter closes it. It reports whether
// the run has a waiter on this node.
func (s *Service) deliver(runID string, u Update) bool {
	s.mu.Lock()
	ch, ok := s.waiters[runID]
	s.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case ch <- u:
	default:
	}
	return true
}
