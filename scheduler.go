package chime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/clock"
	"github.com/chime-scheduler/chime/internal/cluster"
	"github.com/chime-scheduler/chime/internal/engine"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// Defaults of Config's zero fields.
const (
	DefaultWorkers          = 10
	DefaultMisfireThreshold = time.Minute
	DefaultCheckInInterval  = 2 * time.Second
	// DefaultDeadAfterCheckIns is DeadAfter's default, in check-in
	// intervals.
	DefaultDeadAfterCheckIns = 3
)

// Config configures a Scheduler. The zero value is usable: an in-memory
// store, ten workers and Quartz's defaults.
type Config struct {
	// Store keeps jobs, triggers and executions. Schedulers sharing one
	// database store form a cluster. Defaults to a new in-memory store.
	Store store.Store
	// NodeID names this node in the cluster; it must be unique among live
	// nodes. Defaults to the host name and a random suffix.
	NodeID string
	// Workers bounds the jobs this node runs at once. Defaults to 10.
	Workers int
	// MisfireThreshold is how late a trigger may fire before its misfire
	// instruction applies. Defaults to 60s.
	MisfireThreshold time.Duration
	// LookAhead is how long before their instant triggers are claimed.
	// Defaults to 2s.
	LookAhead time.Duration
	// IdleWait is the longest the firing loop goes without looking at the
	// store, which is how it notices changes made by other nodes. Defaults
	// to 1s.
	IdleWait time.Duration
	// CheckInInterval is how often the node renews its cluster lease.
	// Defaults to 2s.
	CheckInInterval time.Duration
	// DeadAfter is how long a node may miss check-ins before the others
	// recover its work. A node that could not renew its lease for that long
	// stops claiming triggers, starts none of the jobs it fired, cancels its
	// running jobs (their context's cause is ErrLeaseLost), and renews its
	// lease if no node declared it dead meanwhile, or joins again under a
	// new lease. A killed node's work is recovered within DeadAfter +
	// CheckInInterval of its death. Defaults to 3 × CheckInInterval.
	DeadAfter time.Duration
	// ReconcileInterval is how often the node asks the store to repair
	// states no live node explains: triggers claimed or executions running
	// under a lease that is gone, triggers blocked by no running execution.
	// A healthy cluster never needs a repair; each one is logged at Warn.
	// Defaults to 1 minute.
	ReconcileInterval time.Duration
	// ClockOffsetWarning is how far the node's clock may be from the
	// store's before a warning is logged. The node fires on the store's
	// time whatever the offset; the warning is for operators. It is logged
	// when the offset goes above the threshold and again when it moves by
	// more than the threshold. Defaults to 1s.
	ClockOffsetWarning time.Duration
	// ExecutionRetention is how long finished executions stay in the store.
	// Their unique (trigger, scheduled fire time) key guards against a second
	// firing of an instant for that long. Defaults to 24h.
	ExecutionRetention time.Duration
	// MaxJobDataBytes bounds the JSON encoding of a job's or a trigger's
	// data map; larger maps are refused with a ValidationError. Defaults to
	// 1 MiB.
	MaxJobDataBytes int
	// ExcludeJobTypes names the job types this node does not run, in a
	// cluster whose nodes do not all run the same types: the node claims
	// neither the firings nor the recoverable executions of jobs of these
	// types, which wait, WAITING, for a node that runs them (and misfire
	// if none does). The node may still register them, so that it can
	// store and manage such jobs. The store filters the claims, so
	// exactly-once firing is unchanged. A type a node neither registers
	// nor excludes is claimed like any other, and its firings fail with
	// "job type is not registered". Defaults to none: the node claims
	// every due trigger, at no cost for the filter.
	ExcludeJobTypes []string
	// Clock is the node's clock; tests substitute their own. Defaults to the
	// system clock.
	Clock clock.Clock
	// Logger receives the scheduler's logs. Defaults to slog.Default().
	Logger *slog.Logger
}

// Errors returned by the scheduler. Store errors keep their identity, so
// callers test them with errors.Is.
var (
	// ErrJobNotFound: no job has the key.
	ErrJobNotFound = store.ErrJobNotFound
	// ErrJobExists: a job with the key exists and replace was not asked.
	ErrJobExists = store.ErrJobExists
	// ErrTriggerNotFound: no trigger has the key.
	ErrTriggerNotFound = store.ErrTriggerNotFound
	// ErrTriggerExists: a trigger with the key exists and replace was not
	// asked.
	ErrTriggerExists = store.ErrTriggerExists
	// ErrCalendarNotFound: no calendar has the name.
	ErrCalendarNotFound = store.ErrCalendarNotFound
	// ErrCalendarExists: a calendar with the name exists and replace was not
	// asked.
	ErrCalendarExists = store.ErrCalendarExists
	// ErrCalendarInUse: a trigger still uses the calendar.
	ErrCalendarInUse = store.ErrCalendarInUse
	// ErrVersionMismatch: a write conditional on a job's version (IfVersion)
	// found another version stored.
	ErrVersionMismatch = store.ErrVersionMismatch
	// ErrWillNeverFire: the trigger's schedule yields no fire time.
	ErrWillNeverFire = errors.New("chime: trigger will never fire")
	// ErrShutdown is ErrStopped, under its older name.
	//
	// Deprecated: use ErrStopped.
	ErrShutdown = ErrStopped
	// ErrInterrupted is the context cause of an interrupted job.
	ErrInterrupted = engine.ErrInterrupted
	// ErrStopped is the context cause of a job cancelled because the
	// scheduler stopped before it finished, and what Start returns on a
	// scheduler that was stopped.
	ErrStopped = engine.ErrStopped
	// ErrLeaseLost is the context cause of a job cancelled because its node
	// lost its cluster lease.
	ErrLeaseLost = engine.ErrLeaseLost
	// ErrTimeout is the context cause of a job that ran past its Timeout.
	ErrTimeout = errors.New("chime: job timed out")
)

// ValidationError reports an invalid argument; Field names it.
type ValidationError struct {
	Field  string
	Reason string
	Err    error
}

// Error returns "chime: <field>: <reason>".
func (e *ValidationError) Error() string {
	msg := "chime: " + e.Field + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *ValidationError) Unwrap() error { return e.Err }

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
	if cfg.Store == nil {
		cfg.Store = memstore.New(nil)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.NodeID == "" {
		cfg.NodeID = defaultNodeID()
	}
	if err := checkText("Config.NodeID", cfg.NodeID, MaxKeyLength); err != nil {
		return nil, err
	}
	if cfg.Workers < 0 {
		return nil, &ValidationError{Field: "Config.Workers", Reason: "must not be negative"}
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.MisfireThreshold < 0 {
		return nil, &ValidationError{Field: "Config.MisfireThreshold", Reason: "must not be negative"}
	}
	if cfg.MisfireThreshold == 0 {
		cfg.MisfireThreshold = DefaultMisfireThreshold
	}
	if cfg.CheckInInterval == 0 {
		cfg.CheckInInterval = DefaultCheckInInterval
	}
	if cfg.DeadAfter == 0 {
		cfg.DeadAfter = DefaultDeadAfterCheckIns * cfg.CheckInInterval
	}
	if cfg.ReconcileInterval < 0 {
		return nil, &ValidationError{Field: "Config.ReconcileInterval", Reason: "must be positive"}
	}
	if cfg.ReconcileInterval == 0 {
		cfg.ReconcileInterval = time.Minute
	}
	if cfg.ClockOffsetWarning < 0 {
		return nil, &ValidationError{Field: "Config.ClockOffsetWarning", Reason: "must be positive"}
	}
	if cfg.ClockOffsetWarning == 0 {
		cfg.ClockOffsetWarning = time.Second
	}
	if cfg.MaxJobDataBytes < 0 {
		return nil, &ValidationError{Field: "Config.MaxJobDataBytes", Reason: "must not be negative"}
	}
	if cfg.MaxJobDataBytes == 0 {
		cfg.MaxJobDataBytes = 1 << 20
	}
	for i, typ := range cfg.ExcludeJobTypes {
		if typ == "" {
			return nil, &ValidationError{Field: fmt.Sprintf("Config.ExcludeJobTypes[%d]", i), Reason: "must not be empty"}
		}
	}
	cfg.ExcludeJobTypes = slices.Clone(cfg.ExcludeJobTypes)
	s := &Scheduler{
		cfg:      cfg,
		store:    cfg.Store,
		log:      cfg.Logger.With("node_id", cfg.NodeID),
		jobTypes: make(map[string]Job),
	}
	member, err := cluster.New(cluster.Config{
		Store:             cfg.Store,
		NodeID:            cfg.NodeID,
		Clock:             cfg.Clock,
		Logger:            cfg.Logger,
		CheckInInterval:   cfg.CheckInInterval,
		DeadAfter:         cfg.DeadAfter,
		ReconcileInterval: cfg.ReconcileInterval,
		OffsetWarning:     cfg.ClockOffsetWarning,
		OnRecovered:       func([]store.NodeRecovery) { s.engine.WakeRecovery() },
		OnReconciled:      s.reconciled,
		OnLeaseLost:       func() { s.engine.CancelAll(engine.ErrLeaseLost) },
		// Registering again recovered the executions of the old lease, and
		// jobs held while the lease lapsed start or are dropped: look at once.
		OnLeaseRestored: func() { s.engine.WakeRecovery() },
	})
	if err != nil {
		return nil, fmt.Errorf("chime: %w", err)
	}
	s.member = member
	eng, err := engine.New(engine.Config{
		Store:              cfg.Store,
		Clock:              member.Clock(),
		Logger:             s.log,
		Lease:              member.Lease,
		LeaseValid:         member.LeaseHeld,
		OnFenced:           member.LeaseRefused,
		Jitter:             equalJitter,
		Execute:            s.execute,
		Workers:            cfg.Workers,
		LookAhead:          cfg.LookAhead,
		IdleWait:           cfg.IdleWait,
		MisfireThreshold:   cfg.MisfireThreshold,
		ExecutionRetention: cfg.ExecutionRetention,
		ExcludeJobTypes:    cfg.ExcludeJobTypes,
		OnMisfire:          s.misfired,
		OnTriggerFinalized: func(k store.Key) { s.emit(SchedulerEvent{Type: EventTriggerFinalized, TriggerKey: triggerKeyOf(k)}) },
		OnError: func(op string, err error) {
			s.emit(SchedulerEvent{Type: EventSchedulerError, Err: fmt.Errorf("chime: %s: %w", op, err)})
		},
	})
	if err != nil {
		return nil, fmt.Errorf("chime: %w", err)
	}
	s.engine = eng
	s.events = newEventQueue(s.log)
	return s, nil
}

// reconciled makes the engine act on what a reconciliation repaired:
// re-run the executions now recoverable, and claim the triggers now
// waiting.
func (s *Scheduler) reconciled(r *store.Reconciliation) {
	if len(r.Recoverable) > 0 {
		s.engine.WakeRecovery()
		return
	}
	if len(r.ReleasedTriggers) > 0 || len(r.UnblockedTriggers) > 0 {
		s.engine.Wake()
	}
}

// equalJitter spreads a retry wait d over [d/2, d], so that the nodes of a
// cluster do not all retry at once when the database comes back.
func equalJitter(d time.Duration) time.Duration {
	if d < 2 {
		return d
	}
	return d/2 + mrand.N(d/2+1)
}

func defaultNodeID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "node"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
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

// AddJobOptions are options of AddJob.
type AddJobOptions struct {
	// Replace overwrites a job with the same key, keeping its triggers.
	Replace bool
	// IfVersion, when not zero, overwrites the job only if its stored
	// Version is this one: ErrVersionMismatch when it changed since it was
	// read, ErrJobNotFound when it is gone. It implies Replace.
	IfVersion int64
}

// AddJob stores a job without scheduling it. The job must be durable, since
// a non-durable job without triggers would be deleted at once.
func (s *Scheduler) AddJob(ctx context.Context, job JobDetail, opts *AddJobOptions) error {
	if !job.Durable {
		return &ValidationError{Field: "JobDetail.Durable", Reason: "a job added without a trigger must be durable"}
	}
	rec, err := s.jobRecord(job)
	if err != nil {
		return err
	}
	p := &store.JobUpsertParams{Job: rec}
	if opts != nil {
		p.Replace, p.IfVersion = opts.Replace, opts.IfVersion
	}
	if err := s.store.JobUpsert(ctx, p); err != nil {
		return fmt.Errorf("chime: add job %s: %w", rec.Key, err)
	}
	s.emit(SchedulerEvent{Type: EventJobAdded, JobKey: jobKeyOf(rec.Key)})
	return nil
}

// ScheduleJobOptions are options of ScheduleJob.
type ScheduleJobOptions struct {
	// Replace overwrites a job or triggers with the same keys.
	Replace bool
	// IfVersion, when not zero, stores the job only if its stored Version
	// is this one (ErrVersionMismatch otherwise, ErrJobNotFound when it is
	// gone), checked in the same atomic step as the rest of the write. It
	// implies Replace.
	IfVersion int64
	// Unschedule lists triggers of the job to delete in the same step,
	// before the new triggers are stored (so a key may be in both). Keys
	// that name no trigger of this job are ignored. Deleting the last
	// trigger of a job that is not durable deletes the job, as Unschedule
	// does.
	Unschedule []TriggerKey
	// Pause pauses or resumes every trigger of the job in the same step,
	// the new ones included, as PauseJob and ResumeJob do. Defaults to
	// KeepPauseState.
	Pause PauseChange
}

// PauseChange is what ScheduleJob does to the paused state of the job's
// triggers.
type PauseChange string

// Pause changes of ScheduleJobOptions.
const (
	// KeepPauseState leaves the job's triggers as they are; a new trigger
	// starts paused only when a paused group covers it.
	KeepPauseState PauseChange = ""
	// PauseTriggers pauses every trigger of the job, as PauseJob does.
	PauseTriggers PauseChange = "pause"
	// ResumeTriggers resumes every trigger of the job, as ResumeJob does.
	ResumeTriggers PauseChange = "resume"
)

// ScheduleJob stores a job together with its triggers, whose JobKey may be
// left empty, in one atomic step: the job, the triggers, the deletions of
// opts.Unschedule and the pause or resume of opts.Pause are all stored, or,
// on any error, none of them. Without opts.Replace an existing job fails
// with ErrJobExists and an existing trigger with ErrTriggerExists.
// Listeners hear of the write once it is stored: EventJobAdded, then
// EventJobUnscheduled for each deleted trigger, EventJobScheduled for each
// stored one, and EventJobPaused or EventJobResumed.
func (s *Scheduler) ScheduleJob(ctx context.Context, job JobDetail, triggers []Trigger, opts *ScheduleJobOptions) error {
	if len(triggers) == 0 && !job.Durable {
		return &ValidationError{Field: "triggers", Reason: "a non-durable job needs at least one trigger"}
	}
	var o ScheduleJobOptions
	if opts != nil {
		o = *opts
	}
	rec, err := s.jobRecord(job)
	if err != nil {
		return err
	}
	p := &store.JobWriteParams{
		Job:       rec,
		Replace:   o.Replace,
		IfVersion: o.IfVersion,
		Triggers:  make([]store.TriggerRecord, 0, len(triggers)),
	}
	seen := make(map[store.Key]int, len(triggers))
	for i, t := range triggers {
		if t.JobKey == (JobKey{}) {
			t.JobKey = job.Key
		}
		if t.JobKey.normalized() != job.Key.normalized() {
			return &ValidationError{Field: fmt.Sprintf("triggers[%d].JobKey", i), Reason: fmt.Sprintf("%s is not the job's key %s", t.JobKey.normalized(), job.Key.normalized())}
		}
		trec, err := s.triggerRecord(ctx, t)
		if err != nil {
			return err
		}
		if first, dup := seen[trec.Key]; dup {
			return &ValidationError{Field: fmt.Sprintf("triggers[%d].Key", i), Reason: fmt.Sprintf("%s is also the key of triggers[%d]", trec.Key, first)}
		}
		seen[trec.Key] = i
		p.Triggers = append(p.Triggers, trec)
	}
	for i, k := range o.Unschedule {
		if err := checkKey(fmt.Sprintf("ScheduleJobOptions.Unschedule[%d]", i), k.store()); err != nil {
			return err
		}
		p.DeleteTriggers = append(p.DeleteTriggers, k.store())
	}
	switch o.Pause {
	case KeepPauseState:
	case PauseTriggers:
		p.Pause = store.PauseTriggers
	case ResumeTriggers:
		p.Pause = store.ResumeTriggers
	default:
		return &ValidationError{Field: "ScheduleJobOptions.Pause", Reason: fmt.Sprintf("%q: want %q, %q or %q", o.Pause, KeepPauseState, PauseTriggers, ResumeTriggers)}
	}
	res, err := s.store.JobWrite(ctx, p)
	if err != nil {
		return fmt.Errorf("chime: schedule job %s: %w", rec.Key, err)
	}
	jk := jobKeyOf(rec.Key)
	s.emit(SchedulerEvent{Type: EventJobAdded, JobKey: jk})
	for _, k := range res.Deleted {
		s.emit(SchedulerEvent{Type: EventJobUnscheduled, TriggerKey: triggerKeyOf(k)})
	}
	for _, trec := range p.Triggers {
		s.emit(SchedulerEvent{Type: EventJobScheduled, JobKey: jk, TriggerKey: triggerKeyOf(trec.Key)})
	}
	switch o.Pause {
	case PauseTriggers:
		s.emit(SchedulerEvent{Type: EventJobPaused, JobKey: jk})
	case ResumeTriggers:
		s.emit(SchedulerEvent{Type: EventJobResumed, JobKey: jk})
	}
	s.engine.Wake()
	return nil
}

// Schedule adds a trigger for a stored job and returns its first fire time.
func (s *Scheduler) Schedule(ctx context.Context, t Trigger) (time.Time, error) {
	rec, err := s.triggerRecord(ctx, t)
	if err != nil {
		return time.Time{}, err
	}
	if err := s.store.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: rec}); err != nil {
		return time.Time{}, fmt.Errorf("chime: schedule trigger %s: %w", rec.Key, err)
	}
	s.emit(SchedulerEvent{Type: EventJobScheduled, JobKey: jobKeyOf(rec.JobKey), TriggerKey: triggerKeyOf(rec.Key)})
	s.engine.Wake()
	return rec.NextFireTime, nil
}

// Unschedule deletes a trigger, and its job when the job is not durable and
// has no other trigger. It reports whether the trigger existed.
func (s *Scheduler) Unschedule(ctx context.Context, key TriggerKey) (bool, error) {
	ok, err := s.store.TriggerDelete(ctx, key.store())
	if err != nil {
		return false, fmt.Errorf("chime: unschedule %s: %w", key.normalized(), err)
	}
	if ok {
		s.emit(SchedulerEvent{Type: EventJobUnscheduled, TriggerKey: key.normalized()})
	}
	return ok, nil
}

// Reschedule replaces the trigger with key by t (for the same job, which t
// may leave empty) and returns t's first fire time.
func (s *Scheduler) Reschedule(ctx context.Context, key TriggerKey, t Trigger) (time.Time, error) {
	old, err := s.store.TriggerGet(ctx, key.store())
	if err != nil {
		return time.Time{}, fmt.Errorf("chime: reschedule %s: %w", key.normalized(), err)
	}
	if t.JobKey == (JobKey{}) {
		t.JobKey = jobKeyOf(old.JobKey)
	}
	if t.Key == (TriggerKey{}) {
		t.Key = key
	}
	rec, err := s.triggerRecord(ctx, t)
	if err != nil {
		return time.Time{}, err
	}
	if rec.Key != old.Key {
		if err := s.store.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: rec}); err != nil {
			return time.Time{}, fmt.Errorf("chime: reschedule %s: %w", key.normalized(), err)
		}
		if _, err := s.store.TriggerDelete(ctx, old.Key); err != nil {
			return time.Time{}, fmt.Errorf("chime: reschedule %s: %w", key.normalized(), err)
		}
	} else if err := s.store.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: rec, Replace: true}); err != nil {
		return time.Time{}, fmt.Errorf("chime: reschedule %s: %w", key.normalized(), err)
	}
	s.emit(SchedulerEvent{Type: EventJobUnscheduled, TriggerKey: key.normalized()})
	s.emit(SchedulerEvent{Type: EventJobScheduled, JobKey: jobKeyOf(rec.JobKey), TriggerKey: triggerKeyOf(rec.Key)})
	s.engine.Wake()
	return rec.NextFireTime, nil
}

// DeleteJob deletes a job and its triggers. It reports whether the job
// existed. Running executions finish.
func (s *Scheduler) DeleteJob(ctx context.Context, key JobKey) (bool, error) {
	ok, err := s.store.JobDelete(ctx, key.store())
	if err != nil {
		return false, fmt.Errorf("chime: delete job %s: %w", key.normalized(), err)
	}
	if ok {
		s.emit(SchedulerEvent{Type: EventJobDeleted, JobKey: key.normalized()})
	}
	return ok, nil
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

// ManualTriggerGroup is the group of the one-shot triggers TriggerJob
// creates. It is only a name: their Origin, OriginManual, is what tells
// them from the triggers of schedules.
const ManualTriggerGroup = "MANUAL_TRIGGER"

// TriggerJob fires a stored job now, once, with data overriding the job's
// data map. It returns the key of the one-shot trigger it created, whose
// Origin is OriginManual.
func (s *Scheduler) TriggerJob(ctx context.Context, key JobKey, data JobData) (TriggerKey, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	t := Trigger{
		Key:      NewTriggerKey(ManualTriggerGroup, "MT_"+hex.EncodeToString(b[:])),
		JobKey:   key,
		Schedule: &schedule.Simple{RepeatCount: 0},
		Data:     data,
		Priority: 0,
		Origin:   OriginManual,
	}
	if _, err := s.Schedule(ctx, t); err != nil {
		return TriggerKey{}, err
	}
	return t.Key, nil
}

func (s *Scheduler) jobRecord(job JobDetail) (store.JobRecord, error) {
	key := job.Key.normalized()
	if key.Name == "" {
		return store.JobRecord{}, &ValidationError{Field: "JobDetail.Key.Name", Reason: "must not be empty"}
	}
	if job.Type == "" {
		return store.JobRecord{}, &ValidationError{Field: "JobDetail.Type", Reason: "must name a registered job type"}
	}
	if job.Timeout < 0 {
		return store.JobRecord{}, &ValidationError{Field: "JobDetail.Timeout", Reason: "must not be negative"}
	}
	if err := checkKey("JobDetail.Key", key.store()); err != nil {
		return store.JobRecord{}, err
	}
	if err := checkText("JobDetail.Type", job.Type, MaxKeyLength); err != nil {
		return store.JobRecord{}, err
	}
	if err := checkText("JobDetail.Description", job.Description, 0); err != nil {
		return store.JobRecord{}, err
	}
	data, err := s.encodeData("JobDetail.Data", job.Data)
	if err != nil {
		return store.JobRecord{}, err
	}
	meta, err := s.encodeMetadata("JobDetail.Metadata", job.Metadata)
	if err != nil {
		return store.JobRecord{}, err
	}
	return store.JobRecord{
		Key:                key.store(),
		Type:               job.Type,
		Description:        job.Description,
		Durable:            job.Durable,
		RequestsRecovery:   job.RequestsRecovery,
		DisallowConcurrent: job.DisallowConcurrentExecution,
		PersistData:        job.PersistJobDataAfterExecution,
		Timeout:            job.Timeout,
		Data:               data,
		Meta:               meta,
	}, nil
}

// encodeMetadata checks metadata for the store, refusing what is not JSON
// or too large; field names it in the error.
func (s *Scheduler) encodeMetadata(field string, m json.RawMessage) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	if !json.Valid(m) {
		return nil, &ValidationError{Field: field, Reason: "is not valid JSON"}
	}
	if len(m) > s.cfg.MaxJobDataBytes {
		return nil, &ValidationError{Field: field, Reason: fmt.Sprintf("is %d bytes long, more than the limit of %d (Config.MaxJobDataBytes)", len(m), s.cfg.MaxJobDataBytes)}
	}
	return bytes.Clone(m), nil
}

// encodeData encodes a data map for the store, refusing what is not JSON or
// too large; field names the map in the error.
func (s *Scheduler) encodeData(field string, d JobData) ([]byte, error) {
	data, err := encodeJobData(d)
	if err != nil {
		return nil, &ValidationError{Field: field, Reason: "invalid", Err: err}
	}
	if len(data) > s.cfg.MaxJobDataBytes {
		return nil, &ValidationError{Field: field, Reason: fmt.Sprintf("encodes to %d bytes, more than the limit of %d (Config.MaxJobDataBytes)", len(data), s.cfg.MaxJobDataBytes)}
	}
	return data, nil
}

// triggerRecord validates t and computes its first fire time.
func (s *Scheduler) triggerRecord(ctx context.Context, t Trigger) (store.TriggerRecord, error) {
	key := t.Key.normalized()
	if key.Name == "" {
		return store.TriggerRecord{}, &ValidationError{Field: "Trigger.Key.Name", Reason: "must not be empty"}
	}
	jobKey := t.JobKey.normalized()
	if jobKey.Name == "" {
		return store.TriggerRecord{}, &ValidationError{Field: "Trigger.JobKey.Name", Reason: "must not be empty"}
	}
	if t.Schedule == nil {
		return store.TriggerRecord{}, &ValidationError{Field: "Trigger.Schedule", Reason: "must not be nil"}
	}
	if t.Priority < MinPriority || t.Priority > MaxPriority {
		return store.TriggerRecord{}, &ValidationError{Field: "Trigger.Priority",
			Reason: fmt.Sprintf("%d is out of range %d to %d", t.Priority, MinPriority, MaxPriority)}
	}
	for _, err := range []error{
		checkKey("Trigger.Key", key.store()),
		checkKey("Trigger.JobKey", jobKey.store()),
		checkText("Trigger.Description", t.Description, 0),
		checkText("Trigger.CalendarName", t.CalendarName, MaxKeyLength),
		checkInstant("Trigger.StartTime", t.StartTime),
		checkInstant("Trigger.EndTime", t.EndTime),
	} {
		if err != nil {
			return store.TriggerRecord{}, err
		}
	}
	start := t.StartTime
	if start.IsZero() {
		now, err := s.now(ctx)
		if err != nil {
			return store.TriggerRecord{}, err
		}
		start = now
	}
	if !t.EndTime.IsZero() && t.EndTime.Before(start) {
		return store.TriggerRecord{}, &ValidationError{Field: "Trigger.EndTime", Reason: "is before StartTime"}
	}
	data, err := s.encodeData("Trigger.Data", t.Data)
	if err != nil {
		return store.TriggerRecord{}, err
	}
	origin, err := t.Origin.validate()
	if err != nil {
		return store.TriggerRecord{}, err
	}
	meta, err := s.encodeMetadata("Trigger.Metadata", t.Metadata)
	if err != nil {
		return store.TriggerRecord{}, err
	}
	tr := &schedule.Trigger{
		Schedule:           t.Schedule,
		StartTime:          start,
		EndTime:            t.EndTime,
		MisfireInstruction: t.MisfireInstruction,
	}
	if err := tr.Validate(); err != nil {
		return store.TriggerRecord{}, &ValidationError{Field: "Trigger", Reason: "invalid", Err: err}
	}
	var cal schedule.Calendar
	if t.CalendarName != "" {
		c, err := s.loadCalendar(ctx, t.CalendarName)
		if err != nil {
			return store.TriggerRecord{}, &ValidationError{Field: "Trigger.CalendarName", Reason: fmt.Sprintf("calendar %q", t.CalendarName), Err: err}
		}
		cal = c
	}
	first := tr.ComputeFirstFireTime(cal)
	if first.IsZero() {
		return store.TriggerRecord{}, fmt.Errorf("chime: trigger %s: %w", key, ErrWillNeverFire)
	}
	if err := checkInstant("Trigger.Schedule", first); err != nil {
		// Schedules fire before the year 2200, but the first fire time of
		// a start at EarliestTime, cut to the millisecond, comes before it.
		return store.TriggerRecord{}, err
	}
	rec := store.TriggerRecord{
		Key:          key.store(),
		JobKey:       jobKey.store(),
		Description:  t.Description,
		Priority:     t.Priority,
		CalendarName: t.CalendarName,
		Data:         data,
		Origin:       string(origin),
		Meta:         meta,
	}
	if err := engine.SetTiming(&rec, tr); err != nil {
		return store.TriggerRecord{}, &ValidationError{Field: "Trigger.Schedule", Reason: "cannot be stored", Err: err}
	}
	return rec, nil
}

func (s *Scheduler) loadCalendar(ctx context.Context, name string) (calendar.Calendar, error) {
	rec, err := s.store.CalendarGet(ctx, name)
	if err != nil {
		return nil, err
	}
	return calendar.Unmarshal(rec.Data)
}

// AddCalendarOptions are options of AddCalendar.
type AddCalendarOptions struct {
	// Replace overwrites a calendar with the same name.
	Replace bool
	// UpdateTriggers recomputes the next fire time of the triggers using
	// the calendar, when replacing it.
	UpdateTriggers bool
}

// AddCalendar stores an exclusion calendar that triggers can name.
func (s *Scheduler) AddCalendar(ctx context.Context, name string, cal calendar.Calendar, opts *AddCalendarOptions) error {
	if name == "" {
		return &ValidationError{Field: "name", Reason: "must not be empty"}
	}
	if err := checkText("name", name, MaxKeyLength); err != nil {
		return err
	}
	if cal == nil {
		return &ValidationError{Field: "cal", Reason: "must not be nil"}
	}
	data, err := calendar.Marshal(cal)
	if err != nil {
		return &ValidationError{Field: "cal", Reason: "cannot be stored", Err: err}
	}
	replace := opts != nil && opts.Replace
	if err := s.store.CalendarUpsert(ctx, &store.CalendarUpsertParams{Calendar: store.CalendarRecord{Name: name, Data: data}, Replace: replace}); err != nil {
		return fmt.Errorf("chime: add calendar %q: %w", name, err)
	}
	if replace && opts.UpdateTriggers {
		if err := s.updateCalendarTriggers(ctx, name, cal); err != nil {
			return err
		}
	}
	return nil
}

// updateCalendarTriggers recomputes the next fire time of every waiting or
// paused trigger using the named calendar.
func (s *Scheduler) updateCalendarTriggers(ctx context.Context, name string, cal calendar.Calendar) error {
	recs, err := s.store.TriggerList(ctx, &store.TriggerListParams{})
	if err != nil {
		return fmt.Errorf("chime: update triggers of calendar %q: %w", name, err)
	}
	now, err := s.now(ctx)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.CalendarName != name || rec.State == store.StateComplete {
			continue
		}
		tr, err := engine.TriggerTiming(&rec)
		if err != nil {
			return fmt.Errorf("chime: update trigger %s: %w", rec.Key, err)
		}
		after := now
		if rec.PreviousFireTime.After(after) {
			after = rec.PreviousFireTime
		}
		tr.NextFireTime = tr.NextIncludedAfter(after, cal)
		if err := engine.SetTiming(&rec, tr); err != nil {
			return fmt.Errorf("chime: update trigger %s: %w", rec.Key, err)
		}
		if err := s.store.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: rec, Replace: true}); err != nil {
			return fmt.Errorf("chime: update trigger %s: %w", rec.Key, err)
		}
	}
	s.engine.Wake()
	return nil
}

// DeleteCalendar deletes a calendar no trigger uses. It reports whether it
// existed.
func (s *Scheduler) DeleteCalendar(ctx context.Context, name string) (bool, error) {
	ok, err := s.store.CalendarDelete(ctx, name)
	if err != nil {
		return false, fmt.Errorf("chime: delete calendar %q: %w", name, err)
	}
	return ok, nil
}

// Calendar returns a stored calendar.
func (s *Scheduler) Calendar(ctx context.Context, name string) (calendar.Calendar, error) {
	cal, err := s.loadCalendar(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("chime: calendar %q: %w", name, err)
	}
	return cal, nil
}

// CalendarNames returns the names of the stored calendars.
func (s *Scheduler) CalendarNames(ctx context.Context) ([]string, error) {
	recs, err := s.store.CalendarList(ctx)
	if err != nil {
		return nil, fmt.Errorf("chime: list calendars: %w", err)
	}
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = r.Name
	}
	return names, nil
}

// PauseTrigger pauses one trigger.
func (s *Scheduler) PauseTrigger(ctx context.Context, key TriggerKey) error {
	k := key.store()
	return s.pause(ctx, &store.TriggerSelector{Trigger: &k}, SchedulerEvent{Type: EventTriggerPaused, TriggerKey: key.normalized()})
}

// ResumeTrigger resumes one trigger. If it missed fire times while paused,
// its misfire instruction applies.
func (s *Scheduler) ResumeTrigger(ctx context.Context, key TriggerKey) error {
	k := key.store()
	return s.resume(ctx, &store.TriggerSelector{Trigger: &k}, SchedulerEvent{Type: EventTriggerResumed, TriggerKey: key.normalized()})
}

// PauseJob pauses every trigger of a job.
func (s *Scheduler) PauseJob(ctx context.Context, key JobKey) error {
	k := key.store()
	return s.pause(ctx, &store.TriggerSelector{Job: &k}, SchedulerEvent{Type: EventJobPaused, JobKey: key.normalized()})
}

// ResumeJob resumes every trigger of a job.
func (s *Scheduler) ResumeJob(ctx context.Context, key JobKey) error {
	k := key.store()
	return s.resume(ctx, &store.TriggerSelector{Job: &k}, SchedulerEvent{Type: EventJobResumed, JobKey: key.normalized()})
}

// PauseTriggerGroup pauses every trigger of a group, including triggers
// added to the group later, until ResumeTriggerGroup.
func (s *Scheduler) PauseTriggerGroup(ctx context.Context, group string) error {
	group = groupOrDefault(group)
	return s.pause(ctx, &store.TriggerSelector{Group: group}, SchedulerEvent{Type: EventTriggersPaused, Group: group})
}

// ResumeTriggerGroup resumes a trigger group.
func (s *Scheduler) ResumeTriggerGroup(ctx context.Context, group string) error {
	group = groupOrDefault(group)
	return s.resume(ctx, &store.TriggerSelector{Group: group}, SchedulerEvent{Type: EventTriggersResumed, Group: group})
}

// PauseJobGroup pauses every trigger of the jobs of a group, including jobs
// added to the group later, until ResumeJobGroup.
func (s *Scheduler) PauseJobGroup(ctx context.Context, group string) error {
	group = groupOrDefault(group)
	return s.pause(ctx, &store.TriggerSelector{JobGroup: group}, SchedulerEvent{Type: EventJobsPaused, Group: group})
}

// ResumeJobGroup resumes a job group.
func (s *Scheduler) ResumeJobGroup(ctx context.Context, group string) error {
	group = groupOrDefault(group)
	return s.resume(ctx, &store.TriggerSelector{JobGroup: group}, SchedulerEvent{Type: EventJobsResumed, Group: group})
}

// PauseAll pauses every trigger, including triggers added later, until
// ResumeAll.
func (s *Scheduler) PauseAll(ctx context.Context) error {
	return s.pause(ctx, &store.TriggerSelector{All: true}, SchedulerEvent{Type: EventTriggersPaused})
}

// ResumeAll resumes every trigger and group.
func (s *Scheduler) ResumeAll(ctx context.Context) error {
	return s.resume(ctx, &store.TriggerSelector{All: true}, SchedulerEvent{Type: EventTriggersResumed})
}

func (s *Scheduler) pause(ctx context.Context, sel *store.TriggerSelector, ev SchedulerEvent) error {
	if _, err := s.store.TriggersPause(ctx, sel); err != nil {
		return fmt.Errorf("chime: pause: %w", err)
	}
	s.emit(ev)
	return nil
}

func (s *Scheduler) resume(ctx context.Context, sel *store.TriggerSelector, ev SchedulerEvent) error {
	if _, err := s.store.TriggersResume(ctx, sel); err != nil {
		return fmt.Errorf("chime: resume: %w", err)
	}
	s.emit(ev)
	s.engine.Wake()
	return nil
}

// PausedTriggerGroups returns the trigger groups recorded as paused.
func (s *Scheduler) PausedTriggerGroups(ctx context.Context) ([]string, error) {
	pg, err := s.store.PausedGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("chime: paused groups: %w", err)
	}
	return pg.TriggerGroups, nil
}

// Job returns a stored job.
func (s *Scheduler) Job(ctx context.Context, key JobKey) (*JobDetail, error) {
	rec, err := s.store.JobGet(ctx, key.store())
	if err != nil {
		return nil, fmt.Errorf("chime: job %s: %w", key.normalized(), err)
	}
	return jobDetailOf(rec)
}

// Jobs returns the jobs of a group, or of every group when group is "".
func (s *Scheduler) Jobs(ctx context.Context, group string) ([]JobDetail, error) {
	recs, err := s.store.JobList(ctx, &store.JobListParams{Group: group})
	if err != nil {
		return nil, fmt.Errorf("chime: list jobs: %w", err)
	}
	out := make([]JobDetail, 0, len(recs))
	for i := range recs {
		d, err := jobDetailOf(&recs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, nil
}

// Trigger returns a stored trigger with its state and timing.
func (s *Scheduler) Trigger(ctx context.Context, key TriggerKey) (*TriggerInfo, error) {
	rec, err := s.store.TriggerGet(ctx, key.store())
	if err != nil {
		return nil, fmt.Errorf("chime: trigger %s: %w", key.normalized(), err)
	}
	return triggerInfoOf(rec)
}

// UpcomingFireTimes returns the next n fire times of a stored trigger from
// its current state, skipping instants its calendar excludes. Fewer than n
// means the trigger completes.
func (s *Scheduler) UpcomingFireTimes(ctx context.Context, key TriggerKey, n int) ([]time.Time, error) {
	rec, err := s.store.TriggerGet(ctx, key.store())
	if err != nil {
		return nil, fmt.Errorf("chime: trigger %s: %w", key.normalized(), err)
	}
	tr, err := engine.TriggerTiming(rec)
	if err != nil {
		return nil, fmt.Errorf("chime: trigger %s: %w", key.normalized(), err)
	}
	var cal schedule.Calendar
	if rec.CalendarName != "" {
		c, err := s.loadCalendar(ctx, rec.CalendarName)
		if err != nil {
			return nil, fmt.Errorf("chime: trigger %s: calendar %q: %w", key.normalized(), rec.CalendarName, err)
		}
		cal = c
	}
	return tr.Upcoming(cal, n), nil
}

// TriggerFilter selects triggers for Triggers; zero fields do not filter.
type TriggerFilter struct {
	Group  string  // trigger group
	JobKey *JobKey // triggers of one job
}

// Triggers returns stored triggers with their state and timing.
func (s *Scheduler) Triggers(ctx context.Context, filter *TriggerFilter) ([]TriggerInfo, error) {
	p := &store.TriggerListParams{}
	if filter != nil {
		p.Group = filter.Group
		if filter.JobKey != nil {
			k := filter.JobKey.store()
			p.JobKey = &k
		}
	}
	recs, err := s.store.TriggerList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("chime: list triggers: %w", err)
	}
	out := make([]TriggerInfo, 0, len(recs))
	for i := range recs {
		info, err := triggerInfoOf(&recs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *info)
	}
	return out, nil
}

// ExecutingJob is a job running on this node.
type ExecutingJob struct {
	ExecutionID       string
	JobKey            JobKey
	TriggerKey        TriggerKey
	ScheduledFireTime time.Time
	FireTime          time.Time
	Recovering        bool
	RefireCount       int
}

// ExecutingJobs returns the jobs running on this node, oldest first.
func (s *Scheduler) ExecutingJobs() []ExecutingJob {
	running := s.engine.Running()
	out := make([]ExecutingJob, 0, len(running))
	for _, r := range running {
		out = append(out, ExecutingJob{
			ExecutionID:       r.Firing.Execution.ID,
			JobKey:            jobKeyOf(r.Firing.Execution.JobKey),
			TriggerKey:        triggerKeyOf(r.Firing.Execution.TriggerKey),
			ScheduledFireTime: r.Firing.Execution.ScheduledTime,
			FireTime:          r.Started,
			Recovering:        r.Firing.Execution.Recovering,
			RefireCount:       r.Firing.RefireCount,
		})
	}
	slices.SortFunc(out, func(a, b ExecutingJob) int { return a.FireTime.Compare(b.FireTime) })
	return out
}

// Interrupt cancels the context of one execution running on this node
// (context.Cause is ErrInterrupted). It reports whether it was running here.
func (s *Scheduler) Interrupt(executionID string) bool { return s.engine.Interrupt(executionID) }

// InterruptJob cancels every execution of a job running on this node and
// returns how many it cancelled.
func (s *Scheduler) InterruptJob(key JobKey) int {
	n := 0
	for _, r := range s.ExecutingJobs() {
		if r.JobKey == key.normalized() && s.engine.Interrupt(r.ExecutionID) {
			n++
		}
	}
	return n
}

func jobDetailOf(rec *store.JobRecord) (*JobDetail, error) {
	data, err := decodeJobData(rec.Data)
	if err != nil {
		return nil, fmt.Errorf("chime: job %s: %w", rec.Key, err)
	}
	return &JobDetail{
		Key:                          jobKeyOf(rec.Key),
		Type:                         rec.Type,
		Description:                  rec.Description,
		Durable:                      rec.Durable,
		RequestsRecovery:             rec.RequestsRecovery,
		DisallowConcurrentExecution:  rec.DisallowConcurrent,
		PersistJobDataAfterExecution: rec.PersistData,
		Timeout:                      rec.Timeout,
		Data:                         data,
		Metadata:                     json.RawMessage(bytes.Clone(rec.Meta)),
		Version:                      rec.Version,
	}, nil
}

func triggerInfoOf(rec *store.TriggerRecord) (*TriggerInfo, error) {
	tr, err := engine.TriggerTiming(rec)
	if err != nil {
		return nil, fmt.Errorf("chime: trigger %s: %w", rec.Key, err)
	}
	return triggerInfoWith(rec, tr.Schedule)
}

// triggerInfoWith is triggerInfoOf for a record whose schedule is decoded
// already.
func triggerInfoWith(rec *store.TriggerRecord, sched schedule.Schedule) (*TriggerInfo, error) {
	data, err := decodeJobData(rec.Data)
	if err != nil {
		return nil, fmt.Errorf("chime: trigger %s: %w", rec.Key, err)
	}
	return &TriggerInfo{
		Trigger: Trigger{
			Key:                triggerKeyOf(rec.Key),
			JobKey:             jobKeyOf(rec.JobKey),
			Description:        rec.Description,
			Priority:           rec.Priority,
			Schedule:           sched,
			StartTime:          rec.StartTime,
			EndTime:            rec.EndTime,
			CalendarName:       rec.CalendarName,
			MisfireInstruction: schedule.MisfireInstruction(rec.MisfireInstruction),
			Data:               data,
			Origin:             originOf(rec.Origin),
			Metadata:           json.RawMessage(bytes.Clone(rec.Meta)),
		},
		State:            triggerStateOf(rec.State),
		NextFireTime:     rec.NextFireTime,
		PreviousFireTime: rec.PreviousFireTime,
		TimesTriggered:   rec.TimesTriggered,
	}, nil
}

// AddJobListener adds a job listener; one with the same name is replaced.
func (s *Scheduler) AddJobListener(l JobListener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobListeners = slices.DeleteFunc(s.jobListeners, func(x JobListener) bool { return x.Name == l.Name })
	s.jobListeners = append(s.jobListeners, l)
}

// RemoveJobListener removes the job listener with the name and reports
// whether there was one.
func (s *Scheduler) RemoveJobListener(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.jobListeners)
	s.jobListeners = slices.DeleteFunc(s.jobListeners, func(x JobListener) bool { return x.Name == name })
	return len(s.jobListeners) < n
}

// AddTriggerListener adds a trigger listener; one with the same name is
// replaced.
func (s *Scheduler) AddTriggerListener(l TriggerListener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.triggerListeners = slices.DeleteFunc(s.triggerListeners, func(x TriggerListener) bool { return x.Name == l.Name })
	s.triggerListeners = append(s.triggerListeners, l)
}

// RemoveTriggerListener removes the trigger listener with the name and
// reports whether there was one.
func (s *Scheduler) RemoveTriggerListener(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.triggerListeners)
	s.triggerListeners = slices.DeleteFunc(s.triggerListeners, func(x TriggerListener) bool { return x.Name == name })
	return len(s.triggerListeners) < n
}

// AddSchedulerListener adds a scheduler listener under a name; one with
// the same name is replaced.
func (s *Scheduler) AddSchedulerListener(name string, l SchedulerListener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.schedulerListeners = slices.DeleteFunc(s.schedulerListeners, func(x namedSchedulerListener) bool { return x.name == name })
	s.schedulerListeners = append(s.schedulerListeners, namedSchedulerListener{name: name, fn: l})
}

// RemoveSchedulerListener removes the scheduler listener with the name and
// reports whether there was one.
func (s *Scheduler) RemoveSchedulerListener(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.schedulerListeners)
	s.schedulerListeners = slices.DeleteFunc(s.schedulerListeners, func(x namedSchedulerListener) bool { return x.name == name })
	return len(s.schedulerListeners) < n
}

// emit queues a scheduler event for the scheduler listeners.
func (s *Scheduler) emit(ev SchedulerEvent) {
	s.mu.RLock()
	listeners := slices.Clone(s.schedulerListeners)
	s.mu.RUnlock()
	if len(listeners) == 0 {
		return
	}
	s.events.post(func(ctx context.Context) {
		for _, l := range listeners {
			l.fn(ctx, ev)
		}
	})
}

// misfired tells trigger listeners that a misfire instruction was applied.
func (s *Scheduler) misfired(rec store.TriggerRecord) {
	info, err := triggerInfoOf(&rec)
	if err != nil {
		s.log.Error("cannot report misfire", "trigger_key", rec.Key.String(), "error", err)
		return
	}
	s.mu.RLock()
	listeners := slices.Clone(s.triggerListeners)
	s.mu.RUnlock()
	for _, l := range listeners {
		if l.Misfired != nil && l.Matcher.Match(info.Key) {
			s.events.post(func(ctx context.Context) { l.Misfired(ctx, *info) })
		}
	}
}

// execute runs one firing: listeners, veto, the job itself, and the outcome.
func (s *Scheduler) execute(ctx context.Context, f *engine.Firing) engine.Outcome {
	s.mu.RLock()
	job, registered := s.jobTypes[f.Job.Type]
	jobListeners := slices.Clone(s.jobListeners)
	triggerListeners := slices.Clone(s.triggerListeners)
	s.mu.RUnlock()

	jc, err := s.jobContext(f)
	if err != nil {
		s.log.Error("cannot build job context", "execution_id", f.Execution.ID, "error", err)
		return engine.Outcome{Err: err}
	}
	if !registered {
		err := fmt.Errorf("chime: job type %q of job %s is not registered on node %s", f.Job.Type, f.Job.Key, s.cfg.NodeID)
		jc.Logger.Error("job type not registered", "job_type", f.Job.Type)
		return engine.Outcome{Err: err}
	}
	jobKey := jc.Job.Key
	var triggerKey TriggerKey
	if jc.Trigger != nil {
		triggerKey = jc.Trigger.Key
	}

	vetoed := false
	for _, l := range triggerListeners {
		if jc.Trigger == nil || !l.Matcher.Match(triggerKey) {
			continue
		}
		if l.Fired != nil {
			s.callListener(jc, "trigger listener "+l.Name, func() { l.Fired(ctx, jc) })
		}
		if l.VetoExecution != nil && !vetoed {
			s.callListener(jc, "trigger listener "+l.Name, func() { vetoed = l.VetoExecution(ctx, jc) })
		}
	}
	if vetoed {
		for _, l := range jobListeners {
			if l.ExecutionVetoed != nil && l.Matcher.Match(jobKey) {
				s.callListener(jc, "job listener "+l.Name, func() { l.ExecutionVetoed(ctx, jc) })
			}
		}
		return engine.Outcome{Vetoed: true}
	}
	for _, l := range jobListeners {
		if l.ToBeExecuted != nil && l.Matcher.Match(jobKey) {
			s.callListener(jc, "job listener "+l.Name, func() { l.ToBeExecuted(ctx, jc) })
		}
	}

	if !f.LeaseValid() {
		// The node's lease lapsed while the listeners ran: another node
		// may be running this execution by now. The engine holds it.
		return engine.Outcome{NotStarted: true}
	}
	runCtx := ctx
	if jc.Job.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, jc.Job.Timeout, ErrTimeout)
		defer cancel()
	}
	jobErr := runJob(runCtx, job, jc)
	if jobErr != nil {
		var pe *PanicError
		if errors.As(jobErr, &pe) {
			jc.Logger.Error("job panicked", "panic", formatValue(pe.Value), "stack", string(pe.Stack))
		} else if failure := jobError(jobErr); failure != nil {
			jc.Logger.Warn("job failed", "error", failure)
		}
	}

	for _, l := range jobListeners {
		if l.WasExecuted != nil && l.Matcher.Match(jobKey) {
			s.callListener(jc, "job listener "+l.Name, func() { l.WasExecuted(ctx, jc, jobErr) })
		}
	}
	for _, l := range triggerListeners {
		if l.Completed != nil && jc.Trigger != nil && l.Matcher.Match(triggerKey) {
			s.callListener(jc, "trigger listener "+l.Name, func() { l.Completed(ctx, jc, jobErr) })
		}
	}

	out := engine.Outcome{Err: jobError(jobErr)}
	if je, ok := jobErr.(*JobError); ok { //nolint:errorlint // only a JobError returned as such counts (see JobError)
		out.RefireImmediately = je.RefireImmediately
		out.UnscheduleFiringTrigger = je.UnscheduleFiringTrigger
		out.UnscheduleAllTriggers = je.UnscheduleAllTriggers
	}
	if jc.Job.PersistJobDataAfterExecution {
		data, err := s.encodeData("JobContext.Job.Data", jc.Job.Data)
		if err != nil {
			// The stored data stays as it was; the execution fails so the
			// loss of the job's output is visible.
			jc.Logger.Error("cannot persist the job data the job left; keeping the stored data", "error", err)
			out.Err = errors.Join(out.Err, err)
		} else {
			out.JobData = data
			if out.JobData == nil {
				out.JobData = []byte("{}")
			}
		}
	}
	return out
}

// runJob runs the job and turns a panic into a PanicError.
func runJob(ctx context.Context, job Job, jc *JobContext) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return job.Execute(ctx, jc)
}

// callListener runs a listener callback and logs a panic instead of
// crashing the worker.
func (s *Scheduler) callListener(jc *JobContext, name string, call func()) {
	defer func() {
		if r := recover(); r != nil {
			jc.Logger.Error("listener panicked", "listener", name, "panic", formatValue(r))
		}
	}()
	call()
}

func (s *Scheduler) jobContext(f *engine.Firing) (*JobContext, error) {
	detail, err := jobDetailOf(&f.Job)
	if err != nil {
		return nil, err
	}
	merged := detail.Data.Clone()
	jc := &JobContext{
		ExecutionID:       f.Execution.ID,
		FireTime:          f.Execution.FiredTime,
		ScheduledFireTime: f.Execution.ScheduledTime,
		PreviousFireTime:  f.PreviousFireTime,
		RefireCount:       f.RefireCount,
		Recovering:        f.Execution.Recovering,
		Job:               detail,
		Scheduler:         s,
	}
	attrs := []any{"job_key", detail.Key.String(), "execution_id", f.Execution.ID, "scheduled_fire_time", f.Execution.ScheduledTime}
	if f.Trigger != nil {
		info, err := triggerInfoWith(f.Trigger, f.Schedule)
		if err != nil {
			return nil, err
		}
		jc.Trigger = &info.Trigger
		jc.NextFireTime = info.NextFireTime
		merged = merged.merge(info.Data)
		attrs = append(attrs, "trigger_key", info.Key.String())
	}
	if merged == nil {
		merged = JobData{}
	}
	jc.MergedData = merged
	jc.Logger = s.log.With(attrs...)
	return jc, nil
}

func formatValue(v any) string { return fmt.Sprint(v) }
