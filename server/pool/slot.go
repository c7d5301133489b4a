package pool

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Ticket is a firing's place in a pool's queue.
type Ticket struct {
	// ID is the execution that waits for the slot and then holds it.
	ID string
	// Pool names the pool.
	Pool string
	// NodeID is the node that runs the execution.
	NodeID string
	// JobGroup and JobName are the execution's job.
	JobGroup, JobName string
	// Scheduled is the firing's scheduled time: the queue's order.
	Scheduled time.Time
}

// Enqueue puts t at its place in its pool's queue, waiting; ErrNotFound
// when the pool does not exist. Firings wait in the order of their
// scheduled times, then of their execution IDs. Enqueueing a ticket
// already queued or holding its slot changes nothing.
func (s *Service) Enqueue(ctx context.Context, t Ticket) error {
	res, err := s.db.ExecContext(ctx, s.q.slotInsert, t.ID, t.NodeID, t.JobGroup, t.JobName, nanos(t.Scheduled),
		int64(s.opts.Lease), s.sched, t.Pool)
	if s.st.IsUniqueViolation(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pool: queueing execution %s in pool %q: %w", t.ID, t.Pool, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("pool %q: %w", t.Pool, ErrNotFound)
	}
	return nil
}

// Grant gives the pool's free slots to the firings at the head of its
// queue, whichever nodes run them, and returns their IDs. In the same
// transaction, which holds the pool's row lock, it takes back the slots
// and places whose lease lapsed (their node stopped renewing them). The
// count and the grants use the database's clock and the pool's row, so
// the limit holds across nodes.
func (s *Service) Grant(ctx context.Context, pool string) ([]string, error) {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return nil, fmt.Errorf("pool: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var limit int
	err = tx.QueryRowContext(ctx, s.q.poolLock, s.sched, pool).Scan(&limit)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("pool %q: %w", pool, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("pool: locking pool %q: %w", pool, err)
	}
	var now int64
	if err := tx.QueryRowContext(ctx, s.q.now).Scan(&now); err != nil {
		return nil, fmt.Errorf("pool: reading the database clock: %w", err)
	}
	res, err := tx.ExecContext(ctx, s.q.slotsExpire, s.sched, pool, now)
	if err != nil {
		return nil, fmt.Errorf("pool: taking back the lapsed slots of pool %q: %w", pool, err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		s.log.Warn("took back the slots and places whose lease lapsed", "pool", pool, "slots", n)
	}
	var running int
	if err := tx.QueryRowContext(ctx, s.q.slotsRunning, s.sched, pool).Scan(&running); err != nil {
		return nil, fmt.Errorf("pool: counting the slots of pool %q: %w", pool, err)
	}
	free := limit - running
	if free <= 0 {
		return nil, nil // nothing to commit
	}
	ids, err := s.head(ctx, tx, pool, free)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, s.q.slotGrant, now, s.sched, id); err != nil {
			return nil, fmt.Errorf("pool: granting a slot of pool %q: %w", pool, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("pool: granting the slots of pool %q: %w", pool, err)
	}
	return ids, nil
}

// head returns the IDs of the first n firings waiting in pool's queue.
func (s *Service) head(ctx context.Context, tx *sql.Tx, pool string, n int) ([]string, error) {
	rows, err := tx.QueryContext(ctx, s.q.slotsHead, s.sched, pool, n)
	if err != nil {
		return nil, fmt.Errorf("pool: reading the queue of pool %q: %w", pool, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("pool: reading the queue of pool %q: %w", pool, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pool: reading the queue of pool %q: %w", pool, err)
	}
	return ids, nil
}

// Withdraw takes a waiting firing out of its queue. It reports whether
// the firing holds a slot instead (granted before it could leave), which
// the caller must then use or Release.
func (s *Service) Withdraw(ctx context.Context, id string) (granted bool, err error) {
	res, err := s.db.ExecContext(ctx, s.q.slotWithdraw, s.sched, id)
	if err != nil {
		return false, fmt.Errorf("pool: withdrawing execution %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return false, nil
	}
	var state string
	err = s.db.QueryRowContext(ctx, s.q.slotState, s.sched, id).Scan(&state)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("pool: reading the slot of execution %s: %w", id, err)
	}
	return state == stateRunning, nil
}

// Release frees the slot execution id holds in pool, or its place in
// the queue, and gives the slot to the head of the queue.
func (s *Service) Release(ctx context.Context, pool, id string) error {
	if _, err := s.db.ExecContext(ctx, s.q.slotRelease, s.sched, id); err != nil {
		return fmt.Errorf("pool: releasing the slot of execution %s: %w", id, err)
	}
	if _, err := s.Grant(ctx, pool); err != nil && !errors.Is(err, ErrNotFound) {
		// The waiters' own looks grant it soon enough.
		s.log.Warn("cannot hand a released slot on", "pool", pool, "error", err)
	}
	s.wake()
	return nil
}

// Behind reports whether a later firing of t's job waits in t's pool
// behind it.
func (s *Service) Behind(ctx context.Context, t Ticket) (bool, error) {
	var n int
	sched := nanos(t.Scheduled)
	if err := s.db.QueryRowContext(ctx, s.q.slotBehind, s.sched, t.Pool, t.JobGroup, t.JobName, sched, sched, t.ID).Scan(&n); err != nil {
		return false, fmt.Errorf("pool: reading the queue of pool %q: %w", t.Pool, err)
	}
	return n > 0, nil
}

// Renew extends the lease of every slot and place of node to Lease from
// the database's now.
func (s *Service) Renew(ctx context.Context, node string) error {
	if _, err := s.db.ExecContext(ctx, s.q.slotsRenew, int64(s.opts.Lease), s.sched, node); err != nil {
		return fmt.Errorf("pool: renewing the slots of node %s: %w", node, err)
	}
	return nil
}

// ForgetNode frees the slots and places of a lost node taken before
// before, returning how many. The next grant of each pool hands the
// slots on.
func (s *Service) ForgetNode(ctx context.Context, node string, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.q.slotsForgetNode, s.sched, node, nanos(before))
	if err != nil {
		return 0, fmt.Errorf("pool: freeing the slots of node %s: %w", node, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("pool: freeing the slots of node %s: %w", node, err)
	}
	s.wake()
	return n, nil
}

// Wait queues t (see Enqueue) and waits until it holds a slot, which
// the caller must Release when its execution ends. It returns ctx's
// error when ctx ends first, leaving t queued: the caller Withdraws it.
// It returns ErrNotFound when the pool does not exist, or stopped
// existing while t waited. A place taken back while the pool exists (its
// lease lapsed: the node could not renew it) is queued again, at the
// same rank, since the queue is ordered by scheduled time. Run must be
// running on t's node.
func (s *Service) Wait(ctx context.Context, t Ticket) error {
	for {
		err := s.wait(ctx, t)
		if !errors.Is(err, errPlaceLost) {
			return err
		}
		s.log.Warn("a firing's place in a pool's queue was taken back; queueing it again", "pool", t.Pool, "execution_id", t.ID)
	}
}

// wait makes one try of Wait.
func (s *Service) wait(ctx context.Context, t Ticket) error {
	if err := s.Enqueue(ctx, t); err != nil {
		return err
	}
	w := waiter{pool: t.Pool, granted: make(chan error, 1)}
	s.mu.Lock()
	s.waiters[t.ID] = w
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiters, t.ID)
		s.mu.Unlock()
	}()
	s.wake()
	select {
	case err := <-w.granted:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hold registers lost to be called, once, with ErrLeaseLost if this
// node's renewals of its slots fail for two thirds of their lease while
// execution id holds its slot: before the other nodes may take the slot
// back, so that the holder stops in time and the pool stays within its
// limit. The returned function ends the hold; call it before Release.
// Run must be running on the node.
func (s *Service) Hold(id string, lost func(error)) (stop func()) {
	s.mu.Lock()
	s.holds[id] = lost
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.holds, id)
		s.mu.Unlock()
	}
}

// wake nudges Run.
func (s *Service) wake() {
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// Run is node's loop, until ctx ends: every PollInterval while firings
// of the node wait, and at once when one starts waiting or a slot is
// released, it grants the free slots of their pools and tells the
// waiters that got one. Meanwhile a second goroutine, which Run waits
// for, renews the node's slots and places every third of Lease, so that
// a slow grant never lets them lapse, and tells the holders (Hold) when
// the renewals failed for two thirds of Lease.
func (s *Service) Run(ctx context.Context, node string) {
	var renewal sync.WaitGroup
	defer renewal.Wait()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	s.mu.Lock()
	s.renewed = time.Now()
	s.mu.Unlock()
	renewal.Go(func() { s.renew(ctx, node) })
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.nudge:
		}
		s.serve(ctx, node)
	}
}

// renew renews node's slots and places every third of Lease until ctx
// ends. Each try is bounded by two thirds of Lease, so that a database
// that does not answer is noticed in time (checkLease) while a slow one
// still gets its renewal through. First it frees the rows an earlier
// process of the same node ID left (it was killed, and restarted before
// their lease lapsed): its renewals would otherwise keep them for ever.
func (s *Service) renew(ctx context.Context, node string) {
	t := time.NewTicker(s.opts.Lease / 3)
	defer t.Stop()
	forgot := false
	for {
		if !forgot {
			n, err := s.ForgetNode(ctx, node, instant(s.born))
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.Warn("cannot free the pool slots of the node's earlier process", "error", err)
			case err == nil:
				forgot = true
				if n > 0 {
					s.log.Warn("freed the pool slots of the node's earlier process", "slots", n)
				}
			}
		}
		start := time.Now()
		rctx, cancel := context.WithTimeout(ctx, s.opts.Lease*2/3)
		err := s.Renew(rctx, node)
		cancel()
		switch {
		case err == nil:
			s.mu.Lock()
			s.renewed = start
			s.mu.Unlock()
		case ctx.Err() == nil:
			s.log.Warn("cannot renew the node's pool slots", "error", err)
			s.checkLease()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// checkLease tells every holder that its slot is lost when the last
// successful renewal started two thirds of Lease ago or more. The lease
// it set runs from the database's clock when the statement ran, which is
// after it started: the holders learn it a third of Lease before any
// other node may take their slots back.
func (s *Service) checkLease() {
	s.mu.Lock()
	if time.Since(s.renewed) < s.opts.Lease*2/3 {
		s.mu.Unlock()
		return
	}
	lost := make([]func(error), 0, len(s.holds))
	for id, f := range s.holds {
		lost = append(lost, f)
		delete(s.holds, id)
	}
	s.mu.Unlock()
	if len(lost) > 0 {
		s.log.Warn("the node could not renew its pool slots in time; stopping the executions that hold them", "executions", len(lost))
	}
	for _, f := range lost {
		f(ErrLeaseLost)
	}
}

// serve grants the free slots of the pools this node's firings wait
// for, and tells each waiter whose slot came or whose pool is gone.
func (s *Service) serve(ctx context.Context, node string) {
	s.mu.Lock()
	pools := make(map[string]bool)
	// Only the waiters queued before the read below: a later one's place
	// is not in it.
	seen := make(map[string]bool, len(s.waiters))
	for id, w := range s.waiters {
		pools[w.pool] = true
		seen[id] = true
	}
	s.mu.Unlock()
	if len(pools) == 0 {
		return
	}
	for pool := range pools {
		if _, err := s.Grant(ctx, pool); err != nil && !errors.Is(err, ErrNotFound) && ctx.Err() == nil {
			s.log.Warn("cannot grant the slots of a pool", "pool", pool, "error", err)
		}
	}
	states, err := s.slotsOf(ctx, node)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cannot read the node's pool slots", "error", err)
		}
		return
	}
	// A waiter without a row: its pool was deleted, or its place lapsed.
	s.mu.Lock()
	missing := make(map[string]bool)
	for id, w := range s.waiters {
		if _, ok := states[id]; seen[id] && !ok {
			missing[w.pool] = true
		}
	}
	s.mu.Unlock()
	for pool := range missing {
		_, err := s.Get(ctx, pool)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			if ctx.Err() == nil {
				s.log.Warn("cannot read a pool", "pool", pool, "error", err)
			}
			return // the next look tells them
		default:
			missing[pool] = false // it exists: the place lapsed
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, w := range s.waiters {
		if !seen[id] {
			continue
		}
		state, ok := states[id]
		switch {
		case !ok && missing[w.pool]:
			w.granted <- fmt.Errorf("pool %q: %w", w.pool, ErrNotFound)
		case !ok:
			w.granted <- errPlaceLost
		case state == stateRunning:
			w.granted <- nil
		default:
			continue
		}
		delete(s.waiters, id)
	}
}

// slotsOf returns the state of every slot and place of node, by ID.
func (s *Service) slotsOf(ctx context.Context, node string) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, s.q.slotsOfNode, s.sched, node)
	if err != nil {
		return nil, fmt.Errorf("pool: reading the slots of node %s: %w", node, err)
	}
	defer rows.Close()
	out := make(map[string]string)
	for rows.Next() {
		var id, state string
		if err := rows.Scan(&id, &state); err != nil {
			return nil, fmt.Errorf("pool: reading the slots of node %s: %w", node, err)
		}
		out[id] = state
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pool: reading the slots of node %s: %w", node, err)
	}
	return out, nil
}
