package engine

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chime-scheduler/chime/calendar"
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
	// Lease returns the node's current lease. Required.
	Lease func() store.Lease
	// Execute runs one job and reports its outcome. Required.
	Execute func(ctx context.Context, f *Firing) Outcome
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
	// OnMisfire is called after a misfire instruction was applied to a
	// trigger, on the goroutine that applied it: it must not block.
	// Optional.
	OnMisfire func(rec store.TriggerRecord)
	// LeaseValid reports whether lease is the node's current lease and is
	// known to be valid now: judged on the node's monotonic clock against
	// the expiry the node computed when it last renewed the lease, not on a
	// flag that another goroutine sets once it notices the lapse. While the
	// current lease is not valid the loop neither claims nor fires, and no
	// fired job starts unless the lease it was fired under is valid (see
	// the package documentation, Lease): the store would refuse the
	// writes, or another node may already be taking the work over.
	// Optional: nil means always valid.
	LeaseValid func(lease store.Lease) bool
	// OnFenced is called with the refused lease when the store refuses a
	// write because the lease is stale. Optional.
	OnFenced func(lease store.Lease)
	// OnTriggerFinalized is called when a trigger completed and will not
	// fire again, on the loop's or a worker's goroutine: it must not block.
	// Optional.
	OnTriggerFinalized func(key store.Key)
	// OnError is called when a store operation of the loop failed and the
	// failure is logged: when an outage starts and then at most every 30s
	// while it lasts. The loop retries on its own. Optional.
	OnError func(operation string, err error)
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

// Firing is one execution of a job handed to Execute.
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

	leaseValid func(store.Lease) bool // Config.LeaseValid, set by dispatch
}

// LeaseValid reports whether the lease the execution runs under is still
// known to be valid (Config.LeaseValid). The engine asks before it calls
// Execute; Execute asks again last thing before it starts the job itself,
// after whatever it runs first (listeners), and when the answer is false
// returns an Outcome with NotStarted set without starting the job.
func (f *Firing) LeaseValid() bool {
	if f.leaseValid == nil {
		return true
	}
	return f.leaseValid(f.lease())
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

// Retries after store failures: the wait starts at retryMin and doubles up
// to retryMax; while the store stays unreachable, a failure is logged at
// most every outageLogEvery.
const (
	retryMin       = 100 * time.Millisecond
	retryMax       = 5 * time.Second
	outageLogEvery = 30 * time.Second
)

// New validates cfg and returns an Engine.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil {
		return nil, errors.New("engine: Config.Store is required")
	}
	if cfg.Lease == nil {
		return nil, errors.New("engine: Config.Lease is required")
	}
	if cfg.Execute == nil {
		return nil, errors.New("engine: Config.Execute is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LeaseValid == nil {
		cfg.LeaseValid = func(store.Lease) bool { return true }
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

// pruneInterval is how often the loop deletes finished executions older
// than the retention.
const pruneInterval = time.Minute

// recoveryScan is how often the loop looks for executions of lost nodes
// that no node has re-run yet, besides when WakeRecovery asks.
const recoveryScan = 10 * time.Second

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

// freeWorkers returns how many workers are free: neither running a job
// nor promised to a fired job waiting for one.
func (e *Engine) freeWorkers() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return max(e.cfg.Workers-e.busy, 0)
}

// queueWait is how long a fired job may be expected to wait for a worker.
// It is what lets a node with few workers fire many short jobs at once, in
// one store call, and what keeps a node whose workers run long jobs from
// firing triggers that other nodes could run at once.
const queueWait = 10 * time.Millisecond

// capacity returns how many due triggers the node may fire now: one per
// free worker, and beyond those as many as the workers are expected to
// start within queueWait, judging by the jobs' recent run times (none
// before a job ran).
func (e *Engine) capacity() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	free := max(e.cfg.Workers-e.busy, 0)
	if e.runs == 0 {
		return free
	}
	queued := max(e.busy-e.cfg.Workers, 0)
	extra := e.cfg.BatchSize
	if e.runTime > 0 {
		extra = int(min(int64(queueWait)*int64(e.cfg.Workers)/int64(e.runTime), int64(e.cfg.BatchSize)))
	}
	return free + max(extra-queued, 0)
}

// took records the run time of a job in the moving average.
func (e *Engine) took(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.runs == 0 {
		e.runTime = d
	} else {
		e.runTime += (d - e.runTime) / 8
	}
	e.runs++
}

// jobFinished counts a fired job as finished and tells the loop.
func (e *Engine) jobFinished() {
	e.mu.Lock()
	e.busy--
	e.mu.Unlock()
	select {
	case e.slotFree <- struct{}{}:
	default:
	}
}

// loopState is what the loop remembers between passes.
type loopState struct {
	lookNow          bool
	lastLook         time.Time
	lastRecoveryScan time.Time
	lastPrune        time.Time
	epoch            int64 // lease epoch of the claims in pending
	// moreDue: the last acquisition was cut short by its limit, so more
	// triggers may be due.
	moreDue bool
	// lookOnSlot: a look skipped claiming because no worker was free; the
	// loop looks again when one frees up.
	lookOnSlot bool
	// starved is when the loop first held due triggers it had no worker
	// for; zero while it fires all that is due.
	starved time.Time
	// acquiring: an acquisition runs (see startAcquire); lookAgain: a look
	// came while it ran, and the loop looks again once it ended.
	acquiring, lookAgain bool
}

// starvedRelease is how long due triggers wait for a worker of this node
// before they are handed back to the cluster, where a node with free
// workers can claim them.
const starvedRelease = time.Second

func (e *Engine) loop(ctx context.Context) {
	var pending triggerHeap
	st := loopState{lookNow: true, epoch: e.cfg.Lease().Epoch}
	defer func() {
		if st.acquiring {
			// Its claims are handed back with the others.
			e.absorb(context.Background(), <-e.acquired, &st, &pending)
		}
		e.releaseAll(&pending)
	}()

	timer := e.cfg.Clock.NewTimer(time.Hour)
	defer timer.Stop()
	e.recoverNow.Store(true)
	for ctx.Err() == nil {
		select {
		case a := <-e.acquired:
			e.absorb(ctx, a, &st, &pending)
		default:
		}
		wait := e.pass(ctx, &st, &pending)
		if wait <= 0 {
			continue
		}
		timer.Stop()
		drain(timer)
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		case <-e.wake:
			st.lookNow = true
		case <-e.slotFree:
			if st.lookOnSlot {
				st.lookNow = true
			}
		case <-e.replan:
		case a := <-e.acquired:
			e.absorb(ctx, a, &st, &pending)
		}
	}
}

// pass does what is due now: it looks at the store when there is a reason
// to, and fires the acquired triggers whose instant came. It returns how
// long the loop may sleep.
func (e *Engine) pass(ctx context.Context, st *loopState, pending *triggerHeap) time.Duration {
	now := e.cfg.Clock.Now()
	e.passFailed = false
	if e.down.Failing() {
		if now.Before(e.retryAt) {
			return e.retryAt.Sub(now)
		}
		st.lookNow = true
	}
	lease := e.cfg.Lease()
	if !e.cfg.LeaseValid(lease) {
		// Nothing is claimed or fired under a lease that may have expired;
		// the node wakes the loop once it renewed or replaced it.
		st.lookNow = true
		return e.cfg.IdleWait
	}
	if lease.Epoch != st.epoch {
		e.dropStaleClaims(pending, lease.Epoch)
		st.epoch = lease.Epoch
	}
	e.settleHeld(lease)
	room := e.cfg.BatchSize - pending.Len()
	if !st.lookNow && (now.Sub(st.lastLook) >= e.cfg.IdleWait || e.dueHinted(now) ||
		(st.moreDue && room >= max(e.cfg.BatchSize/8, 1))) {
		st.lookNow = true
	}
	if st.lookNow {
		st.lookNow = false
		st.lastLook = now
		again, ok := e.look(ctx, now, st, pending)
		if !ok {
			return e.retryWait(now)
		}
		st.lookNow = again
		now = e.cfg.Clock.Now()
	}
	if pending.Len() > 0 && !(*pending)[0].NextFireTime.After(now) {
		if !e.fireDue(ctx, now, st, pending) {
			return e.retryWait(now)
		}
		now = e.cfg.Clock.Now()
	}
	if e.passFailed {
		return e.retryWait(now)
	}
	// A whole pass went through: an outage, if any, is over. (Judging by
	// whole passes rather than single calls keeps a store that answers
	// some calls and fails others from flapping between the two; an
	// acquisition in flight is part of the pass.)
	if !st.acquiring {
		e.storeAnswered()
	}
	if st.lookNow {
		return 0
	}
	wait := e.cfg.IdleWait - now.Sub(st.lastLook)
	if pending.Len() > 0 {
		next := (*pending)[0].NextFireTime
		if !st.starved.IsZero() && !next.After(now) {
			// Due, but waiting for a worker: a freed one wakes the loop,
			// and the wait ends in a hand-back.
			next = st.starved.Add(starvedRelease)
		}
		wait = min(wait, next.Sub(now))
	}
	if due := e.dueHint(); !due.IsZero() && e.freeWorkers() > 0 {
		wait = min(wait, due.Add(-e.cfg.LookAhead).Sub(now))
	}
	return max(wait, 0)
}

// retryWait is how long the loop waits after a failed store call: until
// the retry instant during an outage, the idle wait otherwise (the lease
// was refused; the node replaces it and wakes the loop).
func (e *Engine) retryWait(now time.Time) time.Duration {
	if e.down.Failing() {
		return max(e.retryAt.Sub(now), 0)
	}
	return e.cfg.IdleWait
}

// look asks the store for work: it hands back claims it could not release
// earlier, claims executions of lost nodes and due triggers, and prunes old
// executions. It reports whether to look again at once, and false in ok
// when the store failed.
func (e *Engine) look(ctx context.Context, now time.Time, st *loopState, pending *triggerHeap) (again, ok bool) {
	if !e.retryReleases(ctx) {
		return false, false
	}
	if now.Sub(st.lastRecoveryScan) >= recoveryScan {
		e.recoverNow.Store(true)
	}
	if e.recoverNow.Swap(false) {
		sawAll, err := e.acquireRecoverable(ctx)
		if err != nil {
			e.recoverNow.Store(true)
			return false, false
		}
		st.lastRecoveryScan = now
		if !sawAll {
			e.recoverNow.Store(true) // slots ran out: more may wait
		}
	}
	e.startAcquire(ctx, now, st, pending)
	if now.Sub(st.lastPrune) >= pruneInterval {
		st.lastPrune = now
		e.prune(ctx, now)
	}
	return false, true
}

// dropStaleClaims forgets the acquired triggers claimed under an epoch other
// than the current one: the node registered again since, and the store
// returned those claims to the pool when it did.
func (e *Engine) dropStaleClaims(pending *triggerHeap, epoch int64) {
	kept := (*pending)[:0]
	for _, rec := range *pending {
		if rec.ClaimEpoch == epoch {
			kept = append(kept, rec)
			continue
		}
		e.log.Debug("dropping a claim of an earlier lease", "trigger_key", rec.Key.String(), "claim_epoch", rec.ClaimEpoch)
		delete(e.unheard, rec.Key)
	}
	*pending = kept
	heap.Init(pending)
}

// drain empties a stopped timer's channel so Reset starts clean.
func drain(t clock.Timer) {
	select {
	case <-t.C():
	default:
	}
}

// prune deletes finished executions older than the retention. A failure
// is only logged: pruning is housekeeping, and it runs again in a minute.
func (e *Engine) prune(ctx context.Context, now time.Time) {
	n, err := e.cfg.Store.ExecutionsPrune(ctx, now.Add(-e.cfg.ExecutionRetention))
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("pruning finished executions failed", "error", err)
		}
		return
	}
	if n > 0 {
		e.log.Debug("pruned finished executions", "count", n)
	}
}

// acquireRecoverable claims executions of lost nodes and runs them again.
// It reports whether it saw all of them (it had slots to spare).
func (e *Engine) acquireRecoverable(ctx context.Context) (bool, error) {
	free := e.freeWorkers()
	if free <= 0 {
		return false, nil
	}
	lease := e.cfg.Lease()
	recovered, err := e.cfg.Store.ExecutionsAcquireRecoverable(ctx, &store.ExecutionsAcquireRecoverableParams{
		Lease: lease, Limit: free, ExcludeJobTypes: e.cfg.ExcludeJobTypes,
	})
	if err != nil {
		e.storeError(ctx, "acquire recoverable executions", lease, err)
		return false, err
	}
	for _, r := range recovered {
		e.log.Info("re-running execution of a lost node", "execution_id", r.Execution.ID, "job_key", r.Execution.JobKey.String(), "scheduled_fire_time", r.Execution.ScheduledTime)
		f := &Firing{Execution: r.Execution, Job: r.Job}
		if r.Trigger != nil {
			sched, err := e.decoded.decode(r.Trigger.Schedule)
			if err != nil {
				e.log.Error("cannot decode the schedule of a recovered execution's trigger; running it without", "trigger_key", r.Trigger.Key.String(), "error", err)
			} else {
				f.Trigger, f.Schedule = r.Trigger, sched
				f.PreviousFireTime = r.Trigger.PreviousFireTime
			}
		}
		e.dispatch(f)
	}
	return len(recovered) < free, nil
}

// misfire applies the misfire instruction of a trigger this node claimed
// (never MisfireIgnore, whose missed times are all fired) and releases it
// with its new timing.
func (e *Engine) misfire(ctx context.Context, now time.Time, rec store.TriggerRecord) {
	tr, cal, err := e.timing(ctx, &rec)
	if err != nil {
		var unavailable *storeUnavailableError
		if !errors.As(err, &unavailable) {
			e.log.Error("cannot apply misfire instruction", "trigger_key", rec.Key.String(), "error", err)
		}
		e.release(ctx, rec.Key, nil)
		return
	}
	original := tr.Schedule
	tr.UpdateAfterMisfire(now, cal)
	timing := rec
	if err := storeTiming(&timing, tr, original); err != nil {
		e.log.Error("cannot store misfire outcome", "trigger_key", rec.Key.String(), "error", err)
		e.release(ctx, rec.Key, nil)
		return
	}
	e.log.Warn("trigger misfired", "trigger_key", rec.Key.String(), "fire_time", rec.NextFireTime, "next_fire_time", timing.NextFireTime, "misfire_instruction", string(tr.MisfireInstruction))
	if e.release(ctx, rec.Key, &timing) && e.cfg.OnMisfire != nil {
		e.cfg.OnMisfire(timing)
	}
	if timing.NextFireTime.IsZero() && e.cfg.OnTriggerFinalized != nil {
		e.cfg.OnTriggerFinalized(rec.Key)
	}
}

// release hands a claim back to the store, with new timing when not nil.
// It reports whether the store took it. When the store failed, the claim
// is queued and handed back at the next look.
func (e *Engine) release(ctx context.Context, key store.Key, timing *store.TriggerRecord) bool {
	lease := e.cfg.Lease()
	err := e.cfg.Store.TriggerRelease(ctx, &store.TriggerReleaseParams{Lease: lease, Key: key, Timing: timing})
	switch {
	case err == nil:
		return true
	case errors.Is(err, store.ErrNotClaimed):
		return false
	case errors.Is(err, store.ErrFenced):
		// The claim went with the lease: the store returned it already.
		e.storeError(ctx, "release trigger", lease, err)
		return false
	}
	e.storeError(ctx, "release trigger", lease, err)
	e.mu.Lock()
	e.unreleased[key] = timing
	e.mu.Unlock()
	return false
}

// retryReleases hands back the claims whose release failed earlier. It
// reports false when the store failed again.
func (e *Engine) retryReleases(ctx context.Context) bool {
	e.mu.Lock()
	queued := e.unreleased
	e.unreleased = make(map[store.Key]*store.TriggerRecord)
	e.mu.Unlock()
	ok := true
	for key, timing := range queued {
		if !ok {
			e.mu.Lock()
			e.unreleased[key] = timing
			e.mu.Unlock()
			continue
		}
		e.release(ctx, key, timing)
		ok = !e.passFailed
	}
	return ok
}

// releaseAll hands back every acquired trigger that was not fired, in one
// store call, so that a node holding a full batch of claims stops at once.
// When the store failed, the claims are queued as release does: the next
// look hands them back if the engine starts again, and otherwise the
// node's unregistering or its recovery does.
func (e *Engine) releaseAll(pending *triggerHeap) {
	ctx := context.Background()
	var keys []store.Key
	for pending.Len() > 0 {
		rec := heap.Pop(pending).(store.TriggerRecord)
		if e.unheard[rec.Key] {
			if adopted, ok := e.adoptUnheard(ctx, rec); ok {
				delete(e.unheard, rec.Key)
				if adopted {
					continue
				}
			}
		}
		keys = append(keys, rec.Key)
	}
	if len(keys) == 0 {
		return
	}
	lease := e.cfg.Lease()
	_, err := e.cfg.Store.TriggersRelease(ctx, &store.TriggersReleaseParams{Lease: lease, Keys: keys})
	if err == nil {
		return
	}
	e.storeError(ctx, "release triggers", lease, err)
	if errors.Is(err, store.ErrFenced) {
		return // the claims went with the lease
	}
	e.mu.Lock()
	for _, k := range keys {
		e.unreleased[k] = nil
	}
	e.mu.Unlock()
}

// sleep waits d on the engine's clock. It reports false when ctx ended
// first.
func (e *Engine) sleep(ctx context.Context, d time.Duration) bool {
	t := e.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

func (e *Engine) jitter(d time.Duration) time.Duration {
	if e.cfg.Jitter == nil {
		return d
	}
	return e.cfg.Jitter(d)
}

// storeError handles a failed store call of the loop made under lease. A
// refused lease is reported at once. Anything else is an outage: the loop backs off before
// its next call, and logs the first failure, then one failure every
// outageLogEvery while the outage lasts.
func (e *Engine) storeError(ctx context.Context, what string, lease store.Lease, err error) {
	if ctx.Err() != nil {
		return
	}
	if errors.Is(err, store.ErrFenced) {
		e.log.Error("store refused the node's lease", "operation", what, "epoch", lease.Epoch, "error", err)
		if e.cfg.OnFenced != nil {
			e.cfg.OnFenced(lease)
		}
		return
	}
	now := e.cfg.Clock.Now()
	e.passFailed = true
	f := e.down.Fail(now)
	wait := e.jitter(f.Backoff)
	e.retryAt = now.Add(wait)
	if !f.Log {
		return
	}
	if f.First {
		e.log.Warn("store unreachable; retrying", "operation", what, "error", err, "retry_in", wait)
	} else {
		e.log.Warn("store still unreachable; retrying", "operation", what, "error", err, "attempts", f.Attempts, "outage", f.Duration, "retry_in", wait)
	}
	if e.cfg.OnError != nil {
		e.cfg.OnError(what, err)
	}
}

// storeAnswered records that a pass of the loop made its store calls
// without a failure, ending an outage if one was under way.
func (e *Engine) storeAnswered() {
	if r, ended := e.down.Succeed(e.cfg.Clock.Now()); ended {
		e.log.Info("store reachable again", "outage", r.Duration, "attempts", r.Attempts)
	}
}

// storeUnavailableError is a store failure met while computing a trigger's
// timing (loading its calendar), as opposed to a definition that cannot be
// decoded: the firing is retried rather than given up.
type storeUnavailableError struct {
	err error
}

func (e *storeUnavailableError) Error() string { return e.err.Error() }
func (e *storeUnavailableError) Unwrap() error { return e.err }

// timing decodes a stored trigger's schedule math and loads its calendar.
func (e *Engine) timing(ctx context.Context, rec *store.TriggerRecord) (*schedule.Trigger, schedule.Calendar, error) {
	sched, err := e.decoded.decode(rec.Schedule)
	if err != nil {
		return nil, nil, fmt.Errorf("decode schedule of trigger %s: %w", rec.Key, err)
	}
	tr := timingOf(rec, sched)
	if rec.CalendarName == "" {
		return tr, nil, nil
	}
	crec, err := e.cfg.Store.CalendarGet(ctx, rec.CalendarName)
	if err != nil {
		err = fmt.Errorf("load calendar %q: %w", rec.CalendarName, err)
		if errors.Is(err, store.ErrCalendarNotFound) {
			return nil, nil, err
		}
		e.storeError(ctx, "load calendar", store.Lease{}, err)
		return nil, nil, &storeUnavailableError{err: err}
	}
	cal, err := calendar.Unmarshal(crec.Data)
	if err != nil {
		return nil, nil, fmt.Errorf("decode calendar %q: %w", rec.CalendarName, err)
	}
	return tr, cal, nil
}

// TriggerTiming decodes the schedule math of a stored trigger.
func TriggerTiming(rec *store.TriggerRecord) (*schedule.Trigger, error) {
	sched, err := schedule.Unmarshal(rec.Schedule)
	if err != nil {
		return nil, fmt.Errorf("decode schedule of trigger %s: %w", rec.Key, err)
	}
	return timingOf(rec, sched), nil
}

// timingOf builds a trigger's schedule math state from its record and its
// decoded schedule.
func timingOf(rec *store.TriggerRecord, sched schedule.Schedule) *schedule.Trigger {
	return &schedule.Trigger{
		Schedule:           sched,
		StartTime:          rec.StartTime,
		EndTime:            rec.EndTime,
		MisfireInstruction: schedule.MisfireInstruction(rec.MisfireInstruction),
		NextFireTime:       rec.NextFireTime,
		PreviousFireTime:   rec.PreviousFireTime,
		TimesTriggered:     rec.TimesTriggered,
	}
}

// SetTiming copies a trigger's schedule math state into its stored record.
func SetTiming(rec *store.TriggerRecord, tr *schedule.Trigger) error {
	data, err := schedule.Marshal(tr.Schedule)
	if err != nil {
		return err
	}
	rec.Kind = string(tr.Schedule.Kind())
	rec.Schedule = data
	copyTiming(rec, tr)
	return nil
}

// copyTiming copies a trigger's window and firing state, everything but the
// schedule, into its stored record.
func copyTiming(rec *store.TriggerRecord, tr *schedule.Trigger) {
	rec.StartTime = tr.StartTime
	rec.EndTime = tr.EndTime
	rec.MisfireInstruction = string(tr.MisfireInstruction)
	rec.NextFireTime = tr.NextFireTime
	rec.PreviousFireTime = tr.PreviousFireTime
	rec.TimesTriggered = tr.TimesTriggered
}

// storeTiming is SetTiming for a trigger whose schedule was decoded from
// the record as original: the stored schedule bytes are kept unless a
// misfire instruction replaced the schedule.
func storeTiming(rec *store.TriggerRecord, tr *schedule.Trigger, original schedule.Schedule) error {
	if tr.Schedule != original {
		return SetTiming(rec, tr)
	}
	copyTiming(rec, tr)
	return nil
}

// maxCachedSchedules bounds the decoded-schedule cache.
const maxCachedSchedules = 4096

// scheduleCache keeps decoded schedules by their stored bytes. Decoding a
// schedule (parsing a cron expression, loading a time zone) costs more than
// the rest of a firing, and schedules are immutable, so one decoded value
// serves every firing of every trigger with the same definition.
type scheduleCache struct {
	mu sync.Mutex
	m  map[string]schedule.Schedule
}

func (c *scheduleCache) decode(data []byte) (schedule.Schedule, error) {
	c.mu.Lock()
	sched, ok := c.m[string(data)]
	c.mu.Unlock()
	if ok {
		return sched, nil
	}
	sched, err := schedule.Unmarshal(data)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedSchedules {
		c.m = make(map[string]schedule.Schedule)
	}
	c.m[string(data)] = sched
	return sched, nil
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// triggerHeap orders acquired triggers by fire time, then priority (highest
// first).
type triggerHeap []store.TriggerRecord

func (h triggerHeap) Len() int { return len(h) }
func (h triggerHeap) Less(i, j int) bool {
	if !h[i].NextFireTime.Equal(h[j].NextFireTime) {
		return h[i].NextFireTime.Before(h[j].NextFireTime)
	}
	return h[i].Priority > h[j].Priority
}
func (h triggerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *triggerHeap) Push(x any)   { *h = append(*h, x.(store.TriggerRecord)) }
func (h *triggerHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	*h = old[:n-1]
	return x
}
