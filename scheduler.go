package chime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chime-scheduler/chime/internal/cluster"
	"github.com/chime-scheduler/chime/internal/engine"
	"github.com/chime-scheduler/chime/store"
)

// Scheduler runs jobs on their triggers' schedules. Create one with New,
// register job types, add jobs and triggers, and Start it. All methods are
// safe for concurrent use.
type Scheduler struct {
	cfg    Config
	store  store.Store
	log    *slog.Logger
	member *cluster.Member
	engine *engine.Engine
	events *eventQueue
	// lastStoreTime is the last StoreTime returned, in Unix nanoseconds.
	lastStoreTime atomic.Int64

	mu                 sync.RWMutex
	jobTypes           map[string]Job
	jobListeners       []JobListener
	triggerListeners   []TriggerListener
	schedulerListeners []namedSchedulerListener
	started            bool
	standby            bool
	shutdown           bool
}

type namedSchedulerListener struct {
	name string
	fn   SchedulerListener
}

// New returns a scheduler in standby. Start starts firing.
func New(cfg Config) (*Scheduler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg.Store = measure(cfg.Store, cfg.Metrics)
	s := &Scheduler{
		cfg:      cfg,
		store:    cfg.Store,
		log:      cfg.Logger.With("node_id", cfg.NodeID),
		jobTypes: make(map[string]Job),
	}
	// The member and the engine know each other: the engine asks the
	// member for the lease, and the member's observer (clusterEvents) acts
	// on s.engine, which it reaches only once Start started the member.
	member, err := cluster.New(cluster.Config{
		Store:             cfg.Store,
		NodeID:            cfg.NodeID,
		Clock:             cfg.Clock,
		Logger:            cfg.Logger,
		CheckInInterval:   cfg.CheckInInterval,
		DeadAfter:         cfg.DeadAfter,
		ReconcileInterval: cfg.ReconcileInterval,
		OffsetWarning:     cfg.ClockOffsetWarning,
		Observer:          clusterEvents{s},
	})
	if err != nil {
		return nil, fmt.Errorf("chime: %w", err)
	}
	s.member = member
	eng, err := engine.New(engine.Config{
		Store:              cfg.Store,
		Clock:              member.Clock(),
		Logger:             s.log,
		Membership:         member,
		Runner:             runner{s},
		Observer:           engineEvents{s},
		Jitter:             equalJitter,
		Workers:            cfg.Workers,
		LookAhead:          cfg.LookAhead,
		IdleWait:           cfg.IdleWait,
		MisfireThreshold:   cfg.MisfireThreshold,
		ExecutionRetention: cfg.ExecutionRetention,
		ExcludeJobTypes:    cfg.ExcludeJobTypes,
	})
	if err != nil {
		return nil, fmt.Errorf("chime: %w", err)
	}
	s.engine = eng
	s.events = newEventQueue(s.log)
	return s, nil
}

// clusterEvents is the Scheduler as the cluster member's Observer: it
// makes the engine act on what the member did.
type clusterEvents struct{ s *Scheduler }

// NodesRecovered makes the engine re-run the recovered executions at once,
// and tells the scheduler listeners about each recovered node.
func (ev clusterEvents) NodesRecovered(recovered []store.NodeRecovery) {
	ev.s.engine.WakeRecovery()
	for i := range recovered {
		ev.s.emit(SchedulerEvent{Type: EventNodeRecovered, Recovered: nodeRecoveryOf(&recovered[i])})
	}
}

// Reconciled makes the engine act on what a reconciliation repaired:
// re-run the executions now recoverable, and claim the triggers now
// waiting.
func (ev clusterEvents) Reconciled(r *store.Reconciliation) {
	if len(r.Recoverable) > 0 {
		ev.s.engine.WakeRecovery()
		return
	}
	if len(r.ReleasedTriggers) > 0 || len(r.UnblockedTriggers) > 0 {
		ev.s.engine.Wake()
	}
}

// LeaseLost cancels the running jobs: another node may re-run them.
func (ev clusterEvents) LeaseLost() { ev.s.engine.CancelAll(engine.ErrLeaseLost) }

// RegisteredAgain tells the scheduler listeners that the node registered
// again under a new lease.
func (ev clusterEvents) RegisteredAgain() {
	ev.s.emit(SchedulerEvent{Type: EventNodeRegisteredAgain})
}

// LeaseRestored makes the engine look at once: registering again
// recovered the executions of the old lease, and jobs held while the lease
// lapsed start or are dropped.
func (ev clusterEvents) LeaseRestored() { ev.s.engine.WakeRecovery() }

// equalJitter spreads a retry wait d over [d/2, d], so that the nodes of a
// cluster do not all retry at once when the database comes back.
func equalJitter(d time.Duration) time.Duration {
	if d < 2 {
		return d
	}
	return d/2 + mrand.N(d/2+1)
}

// NodeID returns this node's ID in the cluster.
func (s *Scheduler) NodeID() string { return s.cfg.NodeID }

// ClockOffset returns the estimated offset of the store's clock from this
// node's clock. The scheduler fires on the store's time.
func (s *Scheduler) ClockOffset() time.Duration { return s.member.Offset() }

// now returns the store's time: the node's clock corrected by the measured
// offset once the node has joined the cluster, and the store's own clock
// before, when no offset has been measured yet.
func (s *Scheduler) now(ctx context.Context) (time.Time, error) {
	if s.member.OffsetKnown() {
		return s.cfg.Clock.Now().Add(s.member.Offset()), nil
	}
	now, err := s.store.Now(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("chime: read the store's clock: %w", err)
	}
	return now, nil
}

// Register makes a job type available under a stable name. Stored jobs name
// their type, so the name must not change between releases. Registering a
// name twice fails.
func (s *Scheduler) Register(typeName string, job Job) error {
	if typeName == "" {
		return &ValidationError{Field: "typeName", Reason: "must not be empty"}
	}
	if job == nil {
		return &ValidationError{Field: "job", Reason: "must not be nil"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobTypes[typeName]; ok {
		return &ValidationError{Field: "typeName", Reason: fmt.Sprintf("job type %q is already registered", typeName)}
	}
	s.jobTypes[typeName] = job
	return nil
}

// Start joins the cluster and starts firing triggers, or resumes after
// Standby.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return ErrStopped
	}
	first := !s.started
	s.started, s.standby = true, false
	s.mu.Unlock()
	s.emit(SchedulerEvent{Type: EventSchedulerStarting})
	if first {
		if err := s.member.Start(ctx); err != nil {
			s.mu.Lock()
			s.started = false
			s.mu.Unlock()
			return fmt.Errorf("chime: start: %w", err)
		}
	}
	s.engine.Start()
	s.log.Info("scheduler started", "workers", s.cfg.Workers)
	s.emit(SchedulerEvent{Type: EventSchedulerStarted})
	return nil
}

// Standby stops firing triggers until Start is called again. Running jobs
// go on, and the node stays in the cluster.
func (s *Scheduler) Standby() {
	s.mu.Lock()
	if !s.started || s.standby || s.shutdown {
		s.mu.Unlock()
		return
	}
	s.standby = true
	s.mu.Unlock()
	s.engine.Standby()
	s.log.Info("scheduler in standby")
	s.emit(SchedulerEvent{Type: EventSchedulerInStandbyMode})
}

// Stop stops firing triggers, waits for running jobs until ctx is done,
// then cancels the jobs still running (their context's cause is
// ErrStopped) and leaves the cluster. A stopped scheduler cannot start
// again. It returns ctx.Err() when jobs were cancelled.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return nil
	}
	s.shutdown = true
	started := s.started
	s.mu.Unlock()
	s.emit(SchedulerEvent{Type: EventSchedulerShuttingDown})
	// Order: stop claiming first so no new job starts, then let running jobs
	// finish (their outcomes are recorded under the lease), and only then
	// leave the cluster, which would fence those records.
	waitErr := s.engine.Stop(ctx)
	var leaveErr error
	if started {
		leaveErr = s.member.Stop(context.WithoutCancel(ctx))
	}
	s.log.Info("scheduler stopped")
	s.emit(SchedulerEvent{Type: EventSchedulerShutdown})
	s.events.close()
	return errors.Join(waitErr, leaveErr)
}

// IsStarted reports whether Start was called and neither Standby nor Stop
// since.
func (s *Scheduler) IsStarted() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.started && !s.standby && !s.shutdown
}

// Clear deletes every job, trigger and calendar and resumes every paused
// group. Running executions finish.
func (s *Scheduler) Clear(ctx context.Context) error {
	jobs, err := s.store.JobList(ctx, &store.JobListParams{})
	if err != nil {
		return fmt.Errorf("chime: clear: %w", err)
	}
	for _, j := range jobs {
		if _, err := s.store.JobDelete(ctx, j.Key); err != nil {
			return fmt.Errorf("chime: clear job %s: %w", j.Key, err)
		}
	}
	cals, err := s.store.CalendarList(ctx)
	if err != nil {
		return fmt.Errorf("chime: clear: %w", err)
	}
	for _, c := range cals {
		if _, err := s.store.CalendarDelete(ctx, c.Name); err != nil {
			return fmt.Errorf("chime: clear calendar %q: %w", c.Name, err)
		}
	}
	if _, err := s.store.TriggersResume(ctx, &store.TriggerSelector{All: true}); err != nil {
		return fmt.Errorf("chime: clear: %w", err)
	}
	s.emit(SchedulerEvent{Type: EventSchedulingDataCleared})
	return nil
}
