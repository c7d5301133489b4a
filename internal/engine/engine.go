package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chime-scheduler/chime/clock"
	"github.com/chime-scheduler/chime/internal/outage"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// Config configures an Engine. Zero durations and counts take the defaults
// documented on each field.
type Config struct {
	// Store keeps the triggers. Required.
	Store store.Store
	// Clock is the engine's time, already corrected to the store's clock.
	// Defaults to clock.Real.
	Clock clock.Clock
	// Logger receives the engine's logs. Defaults to slog.Default().
	Logger *slog.Logger
	// Membership is the node's place in the cluster: the lease the engine
	// claims, fires and records under. Required.
	Membership Membership
	// Runner runs the fired jobs. Required.
	Runner Runner
	// Observer hears of misfires, finalized triggers and store failures.
	// Optional: nil hears nothing.
	Observer Observer
	// Workers bounds the jobs running at once. Defaults to 10.
	Workers int
	// BatchSize bounds the triggers held claimed ahead of their instant,
	// and so the triggers claimed, and fired, by one store call. Defaults
	// to 1,024, and to Workers when that is more.
	BatchSize int
	// LookAhead is how far ahead of their instant triggers are claimed.
	// Defaults to 2s.
	LookAhead time.Duration
	// IdleWait is the longest the loop sleeps without looking at the store,
	// the fallback that notices changes made by other nodes. Defaults to 1s.
	IdleWait time.Duration
	// MisfireThreshold is how late a trigger may be before its misfire
	// instruction applies. Defaults to 60s.
	MisfireThreshold time.Duration
	// Jitter spreads the wait before retrying after a store failure, so
	// that the nodes of a cluster do not all retry at the same instant
	// when the database comes back. It is given the backoff and returns the
	// wait to use. Optional: nil waits the backoff exactly.
	Jitter func(backoff time.Duration) time.Duration
	// ExcludeJobTypes are the job types this node does not run: it claims
	// neither the triggers nor the recoverable executions of their jobs,
	// which wait for a node that runs them. Optional: empty claims all.
	ExcludeJobTypes []string
	// ExecutionRetention is how long finished executions are kept; the
	// unique (trigger, scheduled time) key of an execution guards against a
	// second firing for that long. Defaults to 24h.
	ExecutionRetention time.Duration
}

// Membership is the node's place in the cluster, as the engine sees it.
// *cluster.Member implements it.
type Membership interface {
	// Lease returns the node's current lease.
	Lease() store.Lease
	// LeaseHeld reports whether lease is the node's current lease and is
	// known to be valid now: judged on the node's monotonic clock against
	// the expiry the node computed when it last renewed the lease, not on
	// a flag that another goroutine sets once it notices the lapse. While
	// the current lease is not held the loop neither claims nor fires, and
	// no fired job starts unless the lease it was fired under is held (see
	// the package documentation, Lease): the store would refuse the
	// writes, or another node may already be taking the work over.
	LeaseHeld(lease store.Lease) bool
	// LeaseRefused tells the node that the store refused a write made
	// under lease because the lease is stale.
	LeaseRefused(lease store.Lease)
}

// Runner runs the jobs the engine fires. The chime package implements it
// with the registered job types and the listeners.
type Runner interface {
	// Execute runs one job, on a worker goroutine, and reports its
	// outcome. It calls f.LeaseValid last thing before it starts the job,
	// and returns an Outcome with NotStarted set when that reports false.
	Execute(ctx context.Context, f *Firing) Outcome
}

// Observer hears what the engine did that the chime package reports to its
// listeners. Its methods are called on the engine's goroutines (the loop,
// or the one recording outcomes) and must return quickly: the chime
// package queues them as events.
type Observer interface {
	// TriggerMisfired is called after a misfire instruction was applied to
	// a trigger and the trigger was released with its new timing, rec.
	TriggerMisfired(rec store.TriggerRecord)
	// TriggerFinalized is called when a trigger completed and will not
	// fire again.
	TriggerFinalized(key store.Key)
	// StoreFailed is called when a store operation of the loop failed and
	// the failure is logged: when an outage starts and then at most every
	// 30s while it lasts. The loop retries on its own.
	StoreFailed(operation string, err error)
}

// noObserver is the Observer of a Config without one.
type noObserver struct{}

func (noObserver) TriggerMisfired(store.TriggerRecord) {}
func (noObserver) TriggerFinalized(store.Key)          {}
func (noObserver) StoreFailed(string, error)           {}

// Firing is one execution of a job handed to Runner.Execute.
type Firing struct {
	Execution store.ExecutionRecord
	Job       store.JobRecord
	// Trigger is the firing trigger after its timing advanced: its
	// NextFireTime is the next one after this firing. Nil for a recovered
	// execution whose trigger was deleted since.
	Trigger *store.TriggerRecord
	// PreviousFireTime is the trigger's fire time before this one.
	PreviousFireTime time.Time
	// RefireCount counts immediate re-executions of this firing.
	RefireCount int
	// Schedule is the trigger's decoded schedule; nil when Trigger is nil.
	Schedule schedule.Schedule

	membership Membership // Config.Membership, set by dispatch
}

// LeaseValid reports whether the lease the execution runs under is still
// known to be valid (Membership.LeaseHeld). The engine asks before it calls
// Runner.Execute; Execute asks again last thing before it starts the job itself,
// after whatever it runs first (listeners), and when the answer is false
// returns an Outcome with NotStarted set without starting the job.
func (f *Firing) LeaseValid() bool {
	if f.membership == nil {
		return true
	}
	return f.membership.LeaseHeld(f.lease())
}

// Outcome is what came of one run of a job.
type Outcome struct {
	// Err is the job's error; nil for success.
	Err error
	// Vetoed reports that a listener vetoed the execution.
	Vetoed bool
	// RefireImmediately asks to run the job again at once.
	RefireImmediately bool
	// UnscheduleFiringTrigger completes the firing trigger.
	UnscheduleFiringTrigger bool
	// UnscheduleAllTriggers completes every trigger of the job.
	UnscheduleAllTriggers bool
	// JobData, when not nil, is stored as the job's data map.
	JobData []byte
	// NotStarted reports that Execute did not start the job because
	// Firing.LeaseValid reported false. The engine holds the execution, as
	// it holds one whose lease lapsed before Execute was called.
	NotStarted bool
	// RecordAfter, when not nil, holds back the recording of the outcome
	// until it is closed, while the worker goes on to the next job: the
	// runner records the run elsewhere first (see complete). Nil records
	// it at once.
	RecordAfter <-chan struct{}
}

// Running describes an execution in progress on this node.
type Running struct {
	Firing  Firing
	Started time.Time
}

// Engine fires triggers. Create it with New, run it with Start and Stop.
type Engine struct {
	cfg Config
	log *slog.Logger

	wake     chan struct{}    // capacity 1: a change may need an earlier acquisition
	slotFree chan struct{}    // capacity 1: a worker finished
	replan   chan struct{}    // capacity 1: the watcher reported an earlier due time
	acquired chan acquisition // capacity 1: the acquisition in flight ended
	// recoverNow asks the loop to claim recoverable executions at its next
	// pass; otherwise it looks for them every recoveryScan.
	recoverNow atomic.Bool

	// runMu serializes Start and Standby, so that one loop at most runs.
	runMu    sync.Mutex
	active   bool // Start called and Stop/Standby not
	stopLoop context.CancelFunc
	loops    sync.WaitGroup // the loop and the watcher

	// down and retryAt belong to the loop goroutine (one at a time, see
	// runMu): the run of store failures it is in, and the earliest instant
	// it may call the store again.
	down       outage.Tracker
	retryAt    time.Time
	passFailed bool // a store call of the current pass failed
	// unheard holds the acquired triggers whose TriggerFire failed without
	// an answer: the store may have fired them all the same.
	unheard map[store.Key]bool
	// unsettled holds the firings of a claim that failed without an
	// answer (see settleUnsettled).
	unsettled map[store.Key]proposal
	// claimsUnknown: a claim failed without an answer, and the store may
	// have claimed triggers for the node all the same (see
	// adoptLostClaims).
	claimsUnknown bool

	mu sync.Mutex
	// busy counts the fired jobs not finished: running, or waiting for a
	// worker in queue.
	busy    int
	queue   []*runningJob // fired jobs waiting for a worker, in firing order
	workers int           // worker goroutines, at most Config.Workers
	running map[string]*runningJob
	// held are fired jobs whose start the lease refused, in firing order;
	// see hold.
	held []*runningJob
	// runTime is the moving average of the jobs' run times, over runs
	// samples; it tells how soon a worker frees up.
	runTime time.Duration
	runs    int
	// due is the earliest fire time the watcher reported that no
	// acquisition has covered yet; zero for none.
	due time.Time
	// unreleased holds claims the loop must hand back but could not,
	// because the store failed; each maps to its new timing, or nil.
	unreleased map[store.Key]*store.TriggerRecord
	jobsWG     sync.WaitGroup
	decoded    scheduleCache
	// outcomes are the outcomes of finished jobs not yet recorded;
	// recording is set while a goroutine records them.
	outcomesMu sync.Mutex
	outcomes   []finished
	recording  bool
	// jobsCtx is the parent of every job's context; cancelled when Stop's
	// wait ends.
	jobsCtx    context.Context
	cancelJobs context.CancelFunc
}

type runningJob struct {
	run    Running
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// ErrInterrupted is the cause of a job context cancelled by Interrupt.
var ErrInterrupted = errors.New("chime: job interrupted")

// ErrStopped is the cause of a job context cancelled because the scheduler
// stopped before the job finished.
var ErrStopped = errors.New("chime: scheduler stopped")

// ErrLeaseLost is the cause of a job context cancelled because the node lost
// its lease and another node may already be re-running the job.
var ErrLeaseLost = errors.New("chime: node lost its lease")

// defaultBatchSize is Config.BatchSize's default.
const defaultBatchSize = 1024

// New validates cfg and returns an Engine.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil {
		return nil, errors.New("engine: Config.Store is required")
	}
	if cfg.Membership == nil {
		return nil, errors.New("engine: Config.Membership is required")
	}
	if cfg.Runner == nil {
		return nil, errors.New("engine: Config.Runner is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Observer == nil {
		cfg.Observer = noObserver{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 10
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = max(defaultBatchSize, cfg.Workers)
	}
	if cfg.LookAhead <= 0 {
		cfg.LookAhead = 2 * time.Second
	}
	if cfg.IdleWait <= 0 {
		cfg.IdleWait = time.Second
	}
	if cfg.MisfireThreshold <= 0 {
		cfg.MisfireThreshold = 60 * time.Second
	}
	if cfg.ExecutionRetention <= 0 {
		cfg.ExecutionRetention = 24 * time.Hour
	}
	jobsCtx, cancelJobs := context.WithCancelCause(context.Background())
	return &Engine{
		cfg:        cfg,
		log:        cfg.Logger,
		wake:       make(chan struct{}, 1),
		slotFree:   make(chan struct{}, 1),
		replan:     make(chan struct{}, 1),
		acquired:   make(chan acquisition, 1),
		down:       outage.Tracker{Min: retryMin, Max: retryMax, LogEvery: outageLogEvery},
		unheard:    make(map[store.Key]bool),
		unsettled:  make(map[store.Key]proposal),
		running:    make(map[string]*runningJob),
		unreleased: make(map[store.Key]*store.TriggerRecord),
		jobsCtx:    jobsCtx,
		cancelJobs: func() { cancelJobs(ErrStopped) },
	}, nil
}

// Start starts the firing loop and, when the store implements
// store.TriggerWatcher, the watcher that wakes it. Starting a started engine
// does nothing.
func (e *Engine) Start() {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if e.active {
		return
	}
	e.active = true
	ctx, cancel := context.WithCancel(context.Background())
	e.stopLoop = cancel
	e.loops.Go(func() { e.loop(ctx) })
	if w, ok := e.cfg.Store.(store.TriggerWatcher); ok {
		e.loops.Go(func() { e.watch(ctx, w) })
	}
}

// Standby stops acquiring and firing triggers and releases the acquired
// ones. Running jobs go on. Start resumes.
func (e *Engine) Standby() {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if !e.active {
		return
	}
	e.active = false
	e.stopLoop()
	e.loops.Wait()
}

// Stop stops the loop like Standby, then waits for running jobs until ctx is
// done. When ctx ends first, it cancels the jobs' contexts and returns
// ctx.Err() without waiting further.
func (e *Engine) Stop(ctx context.Context) error {
	e.Standby()
	done := make(chan struct{})
	go func() {
		e.jobsWG.Wait()
		close(done)
	}()
	select {
	case <-done:
		e.dropHeld("the scheduler stopped")
		return nil
	case <-ctx.Done():
		e.cancelJobs()
		e.dropHeld("the scheduler stopped")
		return ctx.Err()
	}
}

// WakeRecovery tells the loop that executions of a lost node wait to be
// re-run.
func (e *Engine) WakeRecovery() {
	e.recoverNow.Store(true)
	e.Wake()
}

// Wake tells the loop that triggers changed and it should look at the store
// again now rather than after its idle wait.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// WakeFor tells the loop that new triggers fire first at the instant at,
// as a notification of the store does (see noteDue): one due within the
// look-ahead window wakes the loop at once; a later one wakes it when it
// enters the window, so that a burst of jobs for the future costs no
// look at the store each. The zero time does nothing.
func (e *Engine) WakeFor(at time.Time) {
	e.noteDue(at)
}

// Interrupt cancels the context of the running execution with the given ID.
// It reports whether such an execution runs on this node.
func (e *Engine) Interrupt(executionID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.running[executionID]
	if ok {
		r.cancel(ErrInterrupted)
	}
	return ok
}

// CancelAll cancels every running job with the given cause, for example when
// the node lost its lease.
func (e *Engine) CancelAll(cause error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.running {
		r.cancel(cause)
	}
}

// Running returns the executions in progress on this node.
func (e *Engine) Running() []Running {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Running, 0, len(e.running))
	for _, r := range e.running {
		out = append(out, r.run)
	}
	return out
}
