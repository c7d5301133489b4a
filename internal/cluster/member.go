package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/clock"
	"github.com/chime-scheduler/chime/internal/outage"
	"github.com/chime-scheduler/chime/store"
)

// Store is what a member needs of the store.
type Store interface {
	store.NodeStore
	// Reconcile is store.Store's Reconcile.
	Reconcile(ctx context.Context, lease store.Lease) (*store.Reconciliation, error)
}

// Config configures a Member.
type Config struct {
	// Store keeps the nodes. Required.
	Store Store
	// NodeID names this node. Required.
	NodeID string
	// Clock is the node's local clock. Defaults to clock.Real.
	Clock clock.Clock
	// Logger receives the member's logs. Defaults to slog.Default().
	Logger *slog.Logger
	// CheckInInterval is how often the node renews its lease. Defaults to
	// 2s.
	CheckInInterval time.Duration
	// DeadAfter is how long a node may go without checking in before the
	// others declare it dead. Defaults to 3 × CheckInInterval.
	DeadAfter time.Duration
	// ReconcileInterval is how often the node asks the store to repair
	// states no live lease explains (store.Store's Reconcile). Defaults to
	// 1 minute.
	ReconcileInterval time.Duration
	// OffsetWarning is the clock offset above which a warning is logged:
	// when the offset goes above it, and again when it moves by more than
	// it since the last warning. Defaults to 1s.
	OffsetWarning time.Duration
	// Observer hears what the member did that the engine must act on.
	// Optional: nil hears nothing.
	Observer Observer
}

// Observer hears what the member did that the engine must act on; the
// chime package implements it by waking the engine or cancelling its jobs.
// Its methods are called on the member's goroutines and must return
// quickly.
type Observer interface {
	// NodesRecovered is called after dead nodes were recovered, so the
	// engine re-runs their executions at once.
	NodesRecovered(recovered []store.NodeRecovery)
	// Reconciled is called after a reconciliation repaired something, so
	// the engine re-runs recoverable executions and looks at released
	// triggers at once.
	Reconciled(r *store.Reconciliation)
	// LeaseLost is called once when the node must assume it was declared
	// dead, until it registered again.
	LeaseLost()
	// RegisteredAgain is called when the node registered again under a
	// new epoch after it lost its lease, before LeaseRestored. Registering
	// recovered the executions of the earlier epochs that no node had
	// recovered (see store.NodeStore.NodeRegister).
	RegisteredAgain()
	// LeaseRestored is called when the lease is valid again: the node
	// registered again, or renewed a lease that had lapsed.
	LeaseRestored()
}

// noObserver is the Observer of a Config without one.
type noObserver struct{}

func (noObserver) NodesRecovered([]store.NodeRecovery) {}
func (noObserver) Reconciled(*store.Reconciliation)    {}
func (noObserver) LeaseLost()                          {}
func (noObserver) RegisteredAgain()                    {}
func (noObserver) LeaseRestored()                      {}

// Member is one node's membership of the cluster.
type Member struct {
	cfg  Config
	log  *slog.Logger
	poke chan struct{} // capacity 1: the lease was refused; act at once

	mu        sync.Mutex
	lease     store.Lease
	lost      bool // the node must assume it was declared dead
	fenced    bool // the store refused the lease: it was declared dead
	offset    time.Duration
	renewedAt time.Time // local clock when the last renewal that succeeded was sent
	// Offset warnings: whether the offset is above the threshold, and the
	// offset last warned about.
	offsetHigh   bool
	offsetWarned time.Duration
	cancel       context.CancelFunc
	done         chan struct{}

	// Owned by the loop goroutine: failing check-ins and failing dead-node
	// recovery, each logged once when it starts and then now and then.
	down        outage.Tracker
	recoverDown outage.Tracker
}

// logEvery spaces the log lines of a failure that lasts.
const logEvery = 30 * time.Second

// New validates cfg and returns a Member.
func New(cfg Config) (*Member, error) {
	if cfg.Store == nil {
		return nil, errors.New("cluster: Config.Store is required")
	}
	if cfg.NodeID == "" {
		return nil, errors.New("cluster: Config.NodeID is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.CheckInInterval <= 0 {
		cfg.CheckInInterval = 2 * time.Second
	}
	if cfg.DeadAfter <= 0 {
		cfg.DeadAfter = 3 * cfg.CheckInInterval
	}
	if cfg.DeadAfter <= cfg.CheckInInterval {
		return nil, fmt.Errorf("cluster: Config.DeadAfter (%s) must exceed CheckInInterval (%s)", cfg.DeadAfter, cfg.CheckInInterval)
	}
	if cfg.ReconcileInterval <= 0 {
		cfg.ReconcileInterval = time.Minute
	}
	if cfg.OffsetWarning <= 0 {
		cfg.OffsetWarning = time.Second
	}
	if cfg.Observer == nil {
		cfg.Observer = noObserver{}
	}
	return &Member{
		cfg:         cfg,
		log:         cfg.Logger.With("node_id", cfg.NodeID),
		poke:        make(chan struct{}, 1),
		down:        outage.Tracker{Min: cfg.CheckInInterval, Max: cfg.CheckInInterval, LogEvery: logEvery},
		recoverDown: outage.Tracker{Min: cfg.CheckInInterval, Max: cfg.CheckInInterval, LogEvery: logEvery},
	}, nil
}

// Start registers the node and starts checking in.
func (m *Member) Start(ctx context.Context) error {
	if err := m.register(ctx); err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	m.mu.Lock()
	m.cancel = cancel
	m.done = make(chan struct{})
	done := m.done
	m.mu.Unlock()
	go m.loop(loopCtx, done)
	return nil
}

// Stop stops checking in and unregisters the node.
func (m *Member) Stop(ctx context.Context) error {
	m.mu.Lock()
	cancel, done := m.cancel, m.done
	m.cancel = nil
	m.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
	lease := m.Lease()
	if err := m.cfg.Store.NodeUnregister(ctx, lease); err != nil && !errors.Is(err, store.ErrFenced) {
		return fmt.Errorf("cluster: unregister node %s: %w", lease.NodeID, err)
	}
	return nil
}

// Lease returns the node's current lease.
func (m *Member) Lease() store.Lease {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease
}

// LeaseValid reports whether the lease is known to be valid: the node is
// registered, no store call refused the lease, and the last renewal that
// succeeded was sent less than DeadAfter ago by the local clock. The store
// stamped that renewal after it was sent, so no other node can have
// declared this one dead while LeaseValid holds (clocks ticking at the
// same rate being the one assumption).
func (m *Member) LeaseValid() bool {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.validLocked(now)
}

// LeaseHeld reports whether lease is the node's current lease and
// LeaseValid holds, both read at once. The engine asks it right before a
// job starts, with the lease the job was fired under: a job fired under a
// lease that lapsed since, or that the node replaced, must not start. The
// answer rests on the lease's expiry on the local monotonic clock, computed
// when the lease was last renewed, so it holds even when the check-in loop
// has not run since (the node was starved of CPU or stopped).
func (m *Member) LeaseHeld(lease store.Lease) bool {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	return lease == m.lease && m.validLocked(now)
}

// validLocked is LeaseValid at now; m.mu is held.
func (m *Member) validLocked(now time.Time) bool {
	return m.lease.Epoch != 0 && !m.lost && now.Before(m.expiresLocked())
}

// expiresLocked returns the instant, on the local clock, until which the
// lease is known to be valid: DeadAfter after the last renewal that
// succeeded was sent. The store stamped that renewal after it was sent, so
// no node can declare this one dead before then. m.mu is held.
func (m *Member) expiresLocked() time.Time {
	return m.renewedAt.Add(m.cfg.DeadAfter)
}

// LeaseRefused reports that the store refused a write under lease with
// store.ErrFenced. When lease is the current one, the node stops counting
// on it at once and registers again without waiting for its next check-in;
// a refusal of an earlier lease (a job that finished after the node
// registered again) changes nothing.
func (m *Member) LeaseRefused(lease store.Lease) {
	if lease != m.Lease() {
		return
	}
	m.log.Error("store refused the node's lease; cancelling its jobs and registering again", "epoch", lease.Epoch)
	m.markLost(true)
	select {
	case m.poke <- struct{}{}:
	default:
	}
}

// DeadAfter returns how long a node may go without checking in before it
// is declared dead: Config.DeadAfter, or its default.
func (m *Member) DeadAfter() time.Duration { return m.cfg.DeadAfter }

// Offset returns the estimated offset of the store's clock from the local
// clock: store time = local time + offset.
func (m *Member) Offset() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.offset
}

// OffsetKnown reports whether Offset is a measurement: the node registered
// once at least.
func (m *Member) OffsetKnown() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease.Epoch != 0
}

// Clock returns the local clock corrected by the measured offset.
func (m *Member) Clock() clock.Clock {
	return clock.Offset{Base: m.cfg.Clock, Offset: m.Offset}
}

func (m *Member) register(ctx context.Context) error {
	sent := m.cfg.Clock.Now()
	rec, err := m.cfg.Store.NodeRegister(ctx, m.cfg.NodeID)
	if err != nil {
		return fmt.Errorf("cluster: register node %s: %w", m.cfg.NodeID, err)
	}
	received := m.cfg.Clock.Now()
	m.mu.Lock()
	m.lease = store.Lease{NodeID: rec.ID, Epoch: rec.Epoch}
	m.lost, m.fenced = false, false
	m.mu.Unlock()
	m.renewed(sent, received, rec.LastCheckIn)
	m.log.Info("node registered", "epoch", rec.Epoch)
	return nil
}

// renewed records a successful lease renewal sent at sent and answered at
// received, and the offset it measured.
func (m *Member) renewed(sent, received, storeTime time.Time) {
	mid := sent.Add(received.Sub(sent) / 2)
	offset := storeTime.Sub(mid)
	m.mu.Lock()
	m.offset = offset
	m.renewedAt = sent
	high := offset.Abs() > m.cfg.OffsetWarning
	var warn, cleared bool
	previous := m.offsetWarned
	switch {
	case high && (!m.offsetHigh || (offset-m.offsetWarned).Abs() > m.cfg.OffsetWarning):
		warn = true
		m.offsetWarned = offset
	case !high && m.offsetHigh:
		cleared = true
	}
	wasHigh := m.offsetHigh
	m.offsetHigh = high
	m.mu.Unlock()
	switch {
	case warn && wasHigh:
		m.log.Warn("node clock offset from the store's clock changed; firing on corrected time", "clock_offset", offset, "previous_clock_offset", previous, "threshold", m.cfg.OffsetWarning)
	case warn:
		m.log.Warn("node clock differs from the store's clock; firing on corrected time", "clock_offset", offset, "threshold", m.cfg.OffsetWarning)
	case cleared:
		m.log.Info("node clock agrees with the store's clock again", "clock_offset", offset, "threshold", m.cfg.OffsetWarning)
	}
}

// markLost records that the node must assume it was declared dead, and
// tells Observer.LeaseLost the first time. fenced reports that the store refused
// the lease, so that it is known dead rather than only lapsed.
func (m *Member) markLost(fenced bool) {
	m.mu.Lock()
	already := m.lost
	m.lost = true
	m.fenced = m.fenced || fenced
	m.mu.Unlock()
	if !already {
		m.cfg.Observer.LeaseLost()
	}
}

func (m *Member) isLost() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lost
}

func (m *Member) isFenced() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fenced
}

// loop checks in every CheckInInterval and reconciles at start and every
// ReconcileInterval, while the lease is valid and the store answers.
func (m *Member) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	now := m.cfg.Clock.Now()
	nextCheckIn := now.Add(m.cfg.CheckInInterval)
	nextReconcile := now
	timer := m.cfg.Clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		canReconcile := m.LeaseValid() && !m.down.Failing()
		if canReconcile && !m.cfg.Clock.Now().Before(nextReconcile) {
			m.reconcile(ctx)
			nextReconcile = m.cfg.Clock.Now().Add(m.cfg.ReconcileInterval)
		}
		wake := nextCheckIn
		if canReconcile && nextReconcile.Before(wake) {
			wake = nextReconcile
		}
		timer.Stop()
		select {
		case <-timer.C():
		default:
		}
		timer.Reset(wake.Sub(m.cfg.Clock.Now()))
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		case <-m.poke:
			nextCheckIn = m.cfg.Clock.Now()
		}
		if m.cfg.Clock.Now().Before(nextCheckIn) {
			continue
		}
		if m.checkIn(ctx) {
			nextReconcile = m.cfg.Clock.Now() // registered again: repair at once
		}
		nextCheckIn = m.cfg.Clock.Now().Add(m.cfg.CheckInInterval)
	}
}

// checkIn renews the lease, or registers again when the store refused it,
// then recovers dead nodes. It reports whether the node registered again.
// A lease that only lapsed by the local clock is renewed rather than
// replaced: if the store accepts the renewal, no node declared this one
// dead, and the executions fired under the lease and not started yet can
// still run (see the package documentation, Lease validity).
func (m *Member) checkIn(ctx context.Context) (registered bool) {
	if m.isFenced() {
		return m.registerAgain(ctx)
	}
	lease := m.Lease()
	sent := m.cfg.Clock.Now()
	callCtx, cancel := context.WithTimeout(ctx, m.checkInTimeout(sent))
	storeTime, err := m.cfg.Store.NodeCheckIn(callCtx, lease)
	cancel()
	received := m.cfg.Clock.Now()
	switch {
	case err == nil:
		m.mu.Lock()
		// The lease had lapsed when the answer came, whether the loop
		// noticed (lost) or not: the node was starved, or the store slow
		// to answer or unreachable for a while.
		wasLost := m.lost
		lapsed := wasLost || !received.Before(m.expiresLocked())
		m.lost = false
		m.mu.Unlock()
		m.renewed(sent, received, storeTime)
		m.storeAnswered(received)
		if wasLost {
			m.log.Info("lease renewed after it lapsed: no node had declared this one dead", "epoch", lease.Epoch)
		}
		if lapsed {
			m.cfg.Observer.LeaseRestored()
		}
	case errors.Is(err, store.ErrFenced), errors.Is(err, store.ErrNodeNotFound):
		m.storeAnswered(received)
		m.log.Error("node was declared dead by the cluster; cancelling its jobs and registering again", "epoch", lease.Epoch, "error", err)
		m.markLost(true)
		return m.registerAgain(ctx)
	default:
		if ctx.Err() != nil {
			return false
		}
		m.mu.Lock()
		since := received.Sub(m.renewedAt)
		m.mu.Unlock()
		m.storeFailed(received, "check in", err, since)
		if since >= m.cfg.DeadAfter && !m.isLost() {
			m.log.Error("lease not renewed in time; assuming this node was declared dead", "since_last_check_in", since, "dead_after", m.cfg.DeadAfter)
			m.markLost(false)
		}
		return false
	}
	m.recoverDead(ctx, lease)
	return false
}

// checkInTimeout bounds a store call of the check-in loop made at now. A
// store that neither answers nor fails, as behind a silent network
// partition, must not keep the node from noticing that its lease lapsed: the
// call may last until the lease would end, and at least one CheckInInterval
// so that a slow store still gets a fair chance.
func (m *Member) checkInTimeout(now time.Time) time.Duration {
	m.mu.Lock()
	left := m.expiresLocked().Sub(now)
	m.mu.Unlock()
	return max(left, m.cfg.CheckInInterval)
}

// registerAgain registers the node under a new epoch after it lost its
// lease. It reports whether it succeeded.
func (m *Member) registerAgain(ctx context.Context) bool {
	if err := m.register(ctx); err != nil {
		if ctx.Err() == nil {
			m.mu.Lock()
			since := m.cfg.Clock.Now().Sub(m.renewedAt)
			m.mu.Unlock()
			m.storeFailed(m.cfg.Clock.Now(), "register", err, since)
		}
		return false
	}
	m.storeAnswered(m.cfg.Clock.Now())
	m.cfg.Observer.RegisteredAgain()
	m.cfg.Observer.LeaseRestored()
	return true
}

// storeFailed logs a failed check-in or registration: the first of an
// outage, then one every logEvery while it lasts.
func (m *Member) storeFailed(now time.Time, what string, err error, since time.Duration) {
	f := m.down.Fail(now)
	switch {
	case f.First:
		m.log.Warn("check-ins failing: store unreachable", "operation", what, "error", err, "since_last_check_in", since)
	case f.Log:
		m.log.Warn("check-ins still failing: store unreachable", "operation", what, "error", err, "attempts", f.Attempts, "outage", f.Duration, "since_last_check_in", since)
	}
}

// storeAnswered ends an outage of check-ins, if one was under way.
func (m *Member) storeAnswered(now time.Time) {
	if r, ended := m.down.Succeed(now); ended {
		m.log.Info("check-ins succeed again", "outage", r.Duration, "attempts", r.Attempts)
	}
}

// recoverDead asks the store to recover the nodes not seen for DeadAfter.
func (m *Member) recoverDead(ctx context.Context, lease store.Lease) {
	callCtx, cancel := context.WithTimeout(ctx, m.checkInTimeout(m.cfg.Clock.Now()))
	recovered, err := m.cfg.Store.NodesRecover(callCtx, &store.NodesRecoverParams{Lease: lease, DeadAfter: m.cfg.DeadAfter})
	cancel()
	now := m.cfg.Clock.Now()
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		if f := m.recoverDown.Fail(now); f.Log {
			m.log.Warn("recovering dead nodes failed", "error", err, "attempts", f.Attempts, "since_first_failure", f.Duration)
		}
		return
	}
	if r, ended := m.recoverDown.Succeed(now); ended {
		m.log.Info("recovering dead nodes works again", "attempts", r.Attempts, "outage", r.Duration)
	}
	for _, r := range recovered {
		m.log.Warn("recovered dead node", "dead_node_id", r.Node.ID, "dead_epoch", r.Node.Epoch, "released_triggers", r.ReleasedTriggers, "recoverable_executions", len(r.Recoverable), "failed_executions", len(r.Failed))
	}
	if len(recovered) > 0 {
		m.cfg.Observer.NodesRecovered(recovered)
	}
}

// reconcile asks the store to repair what no live lease explains, and logs
// every repair.
func (m *Member) reconcile(ctx context.Context) {
	lease := m.Lease()
	callCtx, cancel := context.WithTimeout(ctx, m.checkInTimeout(m.cfg.Clock.Now()))
	rep, err := m.cfg.Store.Reconcile(callCtx, lease)
	cancel()
	if err != nil {
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, store.ErrFenced):
			m.LeaseRefused(lease)
		default:
			m.log.Warn("reconciling the store failed; trying again later", "error", err, "retry_in", m.cfg.ReconcileInterval)
		}
		return
	}
	if rep.Empty() {
		m.log.Debug("reconciled the store: nothing to repair")
		return
	}
	const msg = "reconciliation repaired the store"
	for _, k := range rep.ReleasedTriggers {
		m.log.Warn(msg, "repair", "released_trigger", "trigger_key", k.String(), "reason", "acquired under no live lease")
	}
	for _, k := range rep.UnblockedTriggers {
		m.log.Warn(msg, "repair", "unblocked_trigger", "trigger_key", k.String(), "reason", "blocked by no running execution")
	}
	for _, e := range rep.Recoverable {
		m.log.Warn(msg, "repair", "recoverable_execution", "execution_id", e.ID, "job_key", e.JobKey.String(), "trigger_key", e.TriggerKey.String(), "scheduled_fire_time", e.ScheduledTime, "reason", "executing under no live lease; the job requests recovery")
	}
	for _, e := range rep.Failed {
		m.log.Warn(msg, "repair", "failed_execution", "execution_id", e.ID, "job_key", e.JobKey.String(), "trigger_key", e.TriggerKey.String(), "scheduled_fire_time", e.ScheduledTime, "reason", "executing under no live lease")
	}
	m.cfg.Observer.Reconciled(rep)
}
