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
	// BatchSize bounds the triggers claimed per acquisition. Defaults to
	// Workers.
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
	// OnMisfire is called, on its own goroutine, after a misfire instruction
	// was applied to a trigger. Optional.
	OnMisfire func(rec store.TriggerRecord)
	// OnFenced is called when the store refuses a write because the node's
	// lease is stale. Optional.
	OnFenced func()
	// OnTriggerFinalized is called when a trigger completed and will not
	// fire again. Optional.
	OnTriggerFinalized func(key store.Key)
	// OnError is called when a store operation of the loop failed; the loop
	// retries on its own. Optional.
	OnError func(operation string, err error)
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

	wake     chan struct{} // capacity 1: a change may need an earlier acquisition
	slotFree chan struct{} // capacity 1: a worker finished
	// recoverNow asks the loop to claim recoverable executions at its next
	// pass; otherwise it looks for them every recoveryScan.
	recoverNow atomic.Bool

	mu       sync.Mutex
	active   bool // Start called and Stop/Standby not
	stopLoop context.CancelFunc
	loopDone chan struct{}
	reserved int // worker slots held by acquired or running triggers
	running  map[string]*runningJob
	jobsWG   sync.WaitGroup
	decoded  scheduleCache
	// jobsCtx is the parent of every job's context; cancelled when Stop's
	// wait ends.
	jobsCtx    context.Context
	cancelJobs context.CancelFunc
}

type runningJob struct {
	run    Running
	cancel context.CancelCauseFunc
}

// ErrInterrupted is the cause of a job context cancelled by Interrupt.
var ErrInterrupted = errors.New("chime: job interrupted")

// ErrShutdown is the cause of a job context cancelled because the scheduler
// stopped before the job finished.
var ErrShutdown = errors.New("chime: scheduler stopped")

// ErrLeaseLost is the cause of a job context cancelled because the node lost
// its lease and another node may already be re-running the job.
var ErrLeaseLost = errors.New("chime: node lost its lease")

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
	if cfg.Workers <= 0 {
		cfg.Workers = 10
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = cfg.Workers
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
		running:    make(map[string]*runningJob),
		jobsCtx:    jobsCtx,
		cancelJobs: func() { cancelJobs(ErrShutdown) },
	}, nil
}

// Start starts the firing loop. Starting a started engine does nothing.
func (e *Engine) Start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.active {
		return
	}
	e.active = true
	ctx, cancel := context.WithCancel(context.Background())
	e.stopLoop = cancel
	e.loopDone = make(chan struct{})
	go e.loop(ctx, e.loopDone)
}

// Standby stops acquiring and firing triggers and releases the acquired
// ones. Running jobs go on. Start resumes.
func (e *Engine) Standby() {
	e.mu.Lock()
	if !e.active {
		e.mu.Unlock()
		return
	}
	e.active = false
	stop, done := e.stopLoop, e.loopDone
	e.mu.Unlock()
	stop()
	<-done
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
		return nil
	case <-ctx.Done():
		e.cancelJobs()
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

// freeSlots returns how many more triggers may be acquired.
func (e *Engine) freeSlots() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg.Workers - e.reserved
}

func (e *Engine) reserve(n int) {
	e.mu.Lock()
	e.reserved += n
	e.mu.Unlock()
}

func (e *Engine) releaseSlot() {
	e.mu.Lock()
	e.reserved--
	e.mu.Unlock()
	select {
	case e.slotFree <- struct{}{}:
	default:
	}
}

func (e *Engine) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	var pending triggerHeap
	defer func() { e.releaseAll(&pending) }()

	timer := e.cfg.Clock.NewTimer(time.Hour)
	defer timer.Stop()
	lookNow := true
	lastLook := time.Time{}
	lastRecoveryScan := time.Time{}
	lastPrune := time.Time{}
	e.recoverNow.Store(true)
	for {
		if ctx.Err() != nil {
			return
		}
		now := e.cfg.Clock.Now()
		if !lookNow && now.Sub(lastLook) >= e.cfg.IdleWait {
			lookNow = true
		}
		if lookNow {
			lookNow = false
			lastLook = now
			if now.Sub(lastRecoveryScan) >= recoveryScan {
				e.recoverNow.Store(true)
			}
			if e.recoverNow.Swap(false) {
				lastRecoveryScan = now
				if !e.acquireRecoverable(ctx) {
					e.recoverNow.Store(true) // slots ran out: more may wait
				}
			}
			if now.Sub(lastPrune) >= pruneInterval {
				lastPrune = now
				e.prune(ctx, now)
			}
			full := e.acquire(ctx, now, &pending)
			// A full batch means more may be due: look again at once.
			lookNow = full
			now = e.cfg.Clock.Now()
		}
		for pending.Len() > 0 && !pending[0].NextFireTime.After(now) {
			rec := heap.Pop(&pending).(store.TriggerRecord)
			e.fire(ctx, rec)
		}
		if lookNow {
			continue
		}
		wait := e.cfg.IdleWait - now.Sub(lastLook)
		if pending.Len() > 0 {
			if d := pending[0].NextFireTime.Sub(now); d < wait {
				wait = d
			}
		}
		if wait < 0 {
			wait = 0
		}
		timer.Stop()
		drain(timer)
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		case <-e.wake:
			lookNow = true
		case <-e.slotFree:
			lookNow = true
		}
	}
}

// drain empties a stopped timer's channel so Reset starts clean.
func drain(t clock.Timer) {
	select {
	case <-t.C():
	default:
	}
}

// prune deletes finished executions older than the retention.
func (e *Engine) prune(ctx context.Context, now time.Time) {
	n, err := e.cfg.Store.ExecutionsPrune(ctx, now.Add(-e.cfg.ExecutionRetention))
	if err != nil {
		e.storeError(ctx, "prune executions", err)
		return
	}
	if n > 0 {
		e.log.Debug("pruned finished executions", "count", n)
	}
}

// acquireRecoverable claims executions of lost nodes and runs them again.
// It reports whether it saw all of them (it had slots to spare).
func (e *Engine) acquireRecoverable(ctx context.Context) bool {
	free := e.freeSlots()
	if free <= 0 {
		return false
	}
	recovered, err := e.cfg.Store.ExecutionsAcquireRecoverable(ctx, &store.ExecutionsAcquireRecoverableParams{Lease: e.cfg.Lease(), Limit: free})
	if err != nil {
		e.storeError(ctx, "acquire recoverable executions", err)
		return false
	}
	for _, r := range recovered {
		e.reserve(1)
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
	return len(recovered) < free
}

// acquire claims due triggers into pending and reports whether the store
// should be asked again at once.
func (e *Engine) acquire(ctx context.Context, now time.Time, pending *triggerHeap) bool {
	free := e.freeSlots()
	if free <= 0 {
		return false
	}
	limit := min(free, e.cfg.BatchSize)
	recs, err := e.cfg.Store.TriggersAcquire(ctx, &store.TriggersAcquireParams{
		Lease:       e.cfg.Lease(),
		NoLaterThan: now.Add(e.cfg.LookAhead),
		Limit:       limit,
	})
	if err != nil {
		e.storeError(ctx, "acquire triggers", err)
		return false
	}
	misfired := false
	for _, rec := range recs {
		if rec.NextFireTime.Before(now.Add(-e.cfg.MisfireThreshold)) {
			e.misfire(ctx, now, rec)
			misfired = true
			continue
		}
		e.reserve(1)
		heap.Push(pending, rec)
	}
	// Misfired triggers went back with new timing, often due now: look
	// again at once rather than after the idle wait.
	return len(recs) == limit || misfired
}

// misfire applies the trigger's misfire instruction and releases it with its
// new timing.
func (e *Engine) misfire(ctx context.Context, now time.Time, rec store.TriggerRecord) {
	tr, cal, err := e.timing(ctx, &rec)
	if err != nil {
		e.log.Error("cannot apply misfire instruction", "trigger_key", rec.Key.String(), "error", err)
		e.release(ctx, rec.Key, nil)
		return
	}
	if tr.MisfireInstruction == schedule.MisfireIgnore {
		// Fire every missed time, one after the other, as Quartz does.
		e.reserve(1)
		e.fire(ctx, rec)
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
		go e.cfg.OnMisfire(timing)
	}
	if timing.NextFireTime.IsZero() && e.cfg.OnTriggerFinalized != nil {
		go e.cfg.OnTriggerFinalized(rec.Key)
	}
}

func (e *Engine) release(ctx context.Context, key store.Key, timing *store.TriggerRecord) bool {
	err := e.cfg.Store.TriggerRelease(ctx, &store.TriggerReleaseParams{Lease: e.cfg.Lease(), Key: key, Timing: timing})
	if err != nil && !errors.Is(err, store.ErrNotClaimed) {
		e.storeError(ctx, "release trigger", err)
		return false
	}
	return err == nil
}

// releaseAll hands back every acquired trigger that was not fired.
func (e *Engine) releaseAll(pending *triggerHeap) {
	ctx := context.Background()
	for pending.Len() > 0 {
		rec := heap.Pop(pending).(store.TriggerRecord)
		e.release(ctx, rec.Key, nil)
		e.releaseSlot()
	}
}

// fire fires one acquired trigger whose slot is reserved.
func (e *Engine) fire(ctx context.Context, rec store.TriggerRecord) {
	tr, cal, err := e.timing(ctx, &rec)
	if err != nil {
		e.log.Error("cannot compute trigger timing", "trigger_key", rec.Key.String(), "error", err)
		e.release(ctx, rec.Key, nil)
		e.releaseSlot()
		return
	}
	scheduled := rec.NextFireTime
	previous := rec.PreviousFireTime
	original := tr.Schedule
	tr.Triggered(cal)
	advanced := rec
	if err := storeTiming(&advanced, tr, original); err != nil {
		e.log.Error("cannot store advanced trigger timing", "trigger_key", rec.Key.String(), "error", err)
		e.release(ctx, rec.Key, nil)
		e.releaseSlot()
		return
	}
	lease := e.cfg.Lease()
	exec := store.ExecutionRecord{
		ID:            newID(),
		TriggerKey:    rec.Key,
		JobKey:        rec.JobKey,
		ScheduledTime: scheduled,
		FiredTime:     e.cfg.Clock.Now(),
		NodeID:        lease.NodeID,
		Epoch:         lease.Epoch,
		State:         store.ExecutionExecuting,
	}
	res, err := e.cfg.Store.TriggerFire(ctx, &store.TriggerFireParams{Lease: lease, Trigger: advanced, Execution: exec})
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotClaimed):
		e.log.Debug("trigger changed before it fired", "trigger_key", rec.Key.String())
		e.releaseSlot()
		return
	case errors.Is(err, store.ErrAlreadyFired):
		e.log.Warn("trigger already fired for this time; skipping it", "trigger_key", rec.Key.String(), "fire_time", scheduled)
		e.release(ctx, rec.Key, &advanced)
		e.releaseSlot()
		return
	default:
		e.storeError(ctx, "fire trigger", err)
		e.releaseSlot()
		return
	}
	if res.Blocked {
		e.releaseSlot()
		return
	}
	exec.RequestsRecovery = res.Job.RequestsRecovery
	exec.Priority = rec.Priority
	e.dispatch(&Firing{Execution: exec, Job: res.Job, Trigger: &advanced, PreviousFireTime: previous, Schedule: tr.Schedule})
}

// dispatch runs a fired job on a worker goroutine that holds a reserved
// slot.
func (e *Engine) dispatch(f *Firing) {
	jobCtx, cancel := context.WithCancelCause(e.jobsCtx)
	r := &runningJob{run: Running{Firing: *f, Started: e.cfg.Clock.Now()}, cancel: cancel}
	e.mu.Lock()
	e.running[f.Execution.ID] = r
	e.mu.Unlock()
	e.jobsWG.Add(1)
	go func() {
		defer e.jobsWG.Done()
		defer e.releaseSlot()
		defer func() {
			e.mu.Lock()
			delete(e.running, f.Execution.ID)
			e.mu.Unlock()
			cancel(nil)
		}()
		var out Outcome
		for {
			out = e.cfg.Execute(jobCtx, f)
			if !out.RefireImmediately || jobCtx.Err() != nil {
				break
			}
			f.RefireCount++
		}
		e.complete(f, out)
	}()
}

// complete records the end of an execution. It uses a context that survives
// Stop, and retries while the store is unreachable.
func (e *Engine) complete(f *Firing, out Outcome) {
	p := &store.ExecutionCompleteParams{
		Lease:        store.Lease{NodeID: f.Execution.NodeID, Epoch: f.Execution.Epoch},
		ID:           f.Execution.ID,
		State:        store.ExecutionSucceeded,
		FinishedTime: e.cfg.Clock.Now(),
		Instruction:  instruction(f, out),
		JobData:      out.JobData,
	}
	switch {
	case out.Vetoed:
		p.State = store.ExecutionVetoed
	case out.Err != nil:
		p.State = store.ExecutionFailed
		p.Error = out.Err.Error()
	}
	ctx := context.WithoutCancel(e.jobsCtx)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := e.cfg.Store.ExecutionComplete(ctx, p)
		if err == nil {
			break
		}
		if errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrExecutionNotFound) || errors.Is(err, store.ErrClosed) || attempt >= 10 {
			e.log.Error("cannot record execution outcome", "execution_id", f.Execution.ID, "job_key", f.Execution.JobKey.String(), "error", err)
			if errors.Is(err, store.ErrFenced) && e.cfg.OnFenced != nil {
				e.cfg.OnFenced()
			}
			return
		}
		e.log.Warn("recording execution outcome failed; retrying", "execution_id", f.Execution.ID, "attempt", attempt, "error", err)
		t := e.cfg.Clock.NewTimer(backoff)
		<-t.C()
		backoff = min(backoff*2, 5*time.Second)
	}
	if p.Instruction == store.InstructionDeleteTrigger && e.cfg.OnTriggerFinalized != nil && f.Trigger != nil {
		e.cfg.OnTriggerFinalized(f.Trigger.Key)
	}
	// A completed non-concurrent job unblocks triggers that may be due.
	if f.Job.DisallowConcurrent {
		e.Wake()
	}
}

// instruction maps an outcome to what the store does with the trigger, as
// Quartz's Trigger.executionComplete does.
func instruction(f *Firing, out Outcome) store.Instruction {
	switch {
	case f.Trigger == nil:
		return store.InstructionNoop
	case out.UnscheduleAllTriggers:
		return store.InstructionSetAllJobTriggersComplete
	case out.UnscheduleFiringTrigger:
		return store.InstructionSetTriggerComplete
	case f.Trigger.NextFireTime.IsZero():
		return store.InstructionDeleteTrigger
	default:
		return store.InstructionNoop
	}
}

func (e *Engine) storeError(ctx context.Context, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	if errors.Is(err, store.ErrFenced) {
		e.log.Error("store refused the node's lease", "operation", what, "error", err)
		if e.cfg.OnFenced != nil {
			e.cfg.OnFenced()
		}
		return
	}
	e.log.Warn("store operation failed", "operation", what, "error", err)
	if e.cfg.OnError != nil {
		e.cfg.OnError(what, err)
	}
}

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
		return nil, nil, fmt.Errorf("load calendar %q: %w", rec.CalendarName, err)
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
