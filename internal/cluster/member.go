package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/clock"
	"github.com/chime-scheduler/chime/store"
)

// Store is what a member needs of the store.
type Store interface {
	store.NodeStore
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
	// OffsetWarning is the clock offset above which a warning is logged.
	// Defaults to 1s.
	OffsetWarning time.Duration
	// OnRecovered is called after dead nodes were recovered, so the engine
	// re-runs their executions at once. Optional.
	OnRecovered func([]store.NodeRecovery)
	// OnLeaseLost is called when the node must assume it was declared dead.
	// Optional.
	OnLeaseLost func()
}

// Member is one node's membership of the cluster.
type Member struct {
	cfg Config
	log *slog.Logger

	mu          sync.Mutex
	lease       store.Lease
	offset      time.Duration
	lastRenewed time.Time // local clock
	cancel      context.CancelFunc
	done        chan struct{}
}

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
	if cfg.OffsetWarning <= 0 {
		cfg.OffsetWarning = time.Second
	}
	return &Member{cfg: cfg, log: cfg.Logger.With("node_id", cfg.NodeID)}, nil
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
	lease := m.lease
	m.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
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

// Offset returns the estimated offset of the store's clock from the local
// clock: store time = local time + offset.
func (m *Member) Offset() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.offset
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
	m.mu.Unlock()
	m.renewed(sent, received, rec.LastCheckIn)
	m.log.Info("node registered", "epoch", rec.Epoch)
	return nil
}

// renewed records a successful lease renewal and the offset it measured.
func (m *Member) renewed(sent, received, storeTime time.Time) {
	mid := sent.Add(received.Sub(sent) / 2)
	offset := storeTime.Sub(mid)
	m.mu.Lock()
	m.offset = offset
	m.lastRenewed = received
	m.mu.Unlock()
	if offset > m.cfg.OffsetWarning || offset < -m.cfg.OffsetWarning {
		m.log.Warn("node clock differs from the store's clock; firing on corrected time", "clock_offset", offset)
	}
}

func (m *Member) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	timer := m.cfg.Clock.NewTimer(m.cfg.CheckInInterval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		}
		m.checkIn(ctx)
		timer.Reset(m.cfg.CheckInInterval)
	}
}

func (m *Member) checkIn(ctx context.Context) {
	lease := m.Lease()
	sent := m.cfg.Clock.Now()
	storeTime, err := m.cfg.Store.NodeCheckIn(ctx, lease)
	switch {
	case err == nil:
		m.renewed(sent, m.cfg.Clock.Now(), storeTime)
	case errors.Is(err, store.ErrFenced), errors.Is(err, store.ErrNodeNotFound):
		m.log.Error("node was declared dead by the cluster; cancelling its jobs and registering again", "epoch", lease.Epoch, "error", err)
		m.leaseLost(ctx)
		return
	default:
		if ctx.Err() != nil {
			return
		}
		m.mu.Lock()
		since := m.cfg.Clock.Now().Sub(m.lastRenewed)
		m.mu.Unlock()
		m.log.Warn("check-in failed", "error", err, "since_last_check_in", since)
		if since > m.cfg.DeadAfter {
			m.log.Error("lease not renewed in time; assuming this node was declared dead", "since_last_check_in", since)
			m.leaseLost(ctx)
		}
		return
	}
	recovered, err := m.cfg.Store.NodesRecover(ctx, &store.NodesRecoverParams{Lease: lease, DeadAfter: m.cfg.DeadAfter})
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("recovering dead nodes failed", "error", err)
		}
		return
	}
	for _, r := range recovered {
		m.log.Warn("recovered dead node", "dead_node_id", r.Node.ID, "dead_epoch", r.Node.Epoch, "released_triggers", r.ReleasedTriggers, "recoverable_executions", len(r.Recoverable), "failed_executions", len(r.Failed))
	}
	if len(recovered) > 0 && m.cfg.OnRecovered != nil {
		m.cfg.OnRecovered(recovered)
	}
}

func (m *Member) leaseLost(ctx context.Context) {
	if m.cfg.OnLeaseLost != nil {
		m.cfg.OnLeaseLost()
	}
	if err := m.register(ctx); err != nil && ctx.Err() == nil {
		m.log.Error("registering again failed; will retry at the next check-in", "error", err)
	}
}
