// Package store defines the contract between chime's scheduler engine and
// the databases that keep its jobs, triggers, calendars, executions and
// cluster nodes.
//
// The contract is deliberately dumb: a store keeps records and applies
// atomic compare-and-set transitions; every schedule computation (next fire
// times, misfire instructions, calendars) happens in the engine, which hands
// the store the resulting record. That keeps one implementation of the
// semantics, and lets each store concentrate on atomicity and claiming.
//
// Every method that changes state on behalf of a node carries that node's
// ID and lease epoch ([Lease]). A store rejects the write with [ErrFenced]
// when the epoch is no longer the node's current one, so a node that was
// declared dead and whose work was taken over can no longer change anything.
//
// The suite in package storetest checks every store against this contract.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Stores translate their driver's errors to these at the
// boundary, and callers branch on them with errors.Is.
var (
	// ErrJobNotFound is returned when a job key names no stored job.
	ErrJobNotFound = errors.New("store: job not found")
	// ErrJobExists is returned when a job is added without replace and its
	// key is taken.
	ErrJobExists = errors.New("store: job already exists")
	// ErrTriggerNotFound is returned when a trigger key names no stored
	// trigger.
	ErrTriggerNotFound = errors.New("store: trigger not found")
	// ErrTriggerExists is returned when a trigger is added without replace and
	// its key is taken.
	ErrTriggerExists = errors.New("store: trigger already exists")
	// ErrCalendarNotFound is returned when a calendar name is unknown.
	ErrCalendarNotFound = errors.New("store: calendar not found")
	// ErrCalendarExists is returned when a calendar is added without replace
	// and its name is taken.
	ErrCalendarExists = errors.New("store: calendar already exists")
	// ErrCalendarInUse is returned when a calendar still referenced by a
	// trigger is deleted.
	ErrCalendarInUse = errors.New("store: calendar is referenced by a trigger")
	// ErrExecutionNotFound is returned when a fired-trigger ID is unknown.
	ErrExecutionNotFound = errors.New("store: execution not found")
	// ErrNotClaimed is returned when a node acts on a trigger it no longer
	// holds: the trigger was paused, rescheduled, deleted or released since it
	// was acquired. The engine drops the firing.
	ErrNotClaimed = errors.New("store: trigger is not claimed by this node")
	// ErrAlreadyFired is returned when a fired record for the same trigger and
	// scheduled fire time exists: the unique key that makes a second firing of
	// one instant impossible.
	ErrAlreadyFired = errors.New("store: trigger already fired for this scheduled time")
	// ErrFenced is returned when a node writes under a lease epoch that is no
	// longer current: another node declared it dead and took over its work.
	ErrFenced = errors.New("store: node lease epoch is stale")
	// ErrVersionMismatch is returned when a conditional write expected a
	// record version that is no longer the stored one: someone else changed
	// the record since the caller read it.
	ErrVersionMismatch = errors.New("store: version mismatch")
	// ErrNodeNotFound is returned when a node ID is not registered.
	ErrNodeNotFound = errors.New("store: node not registered")
	// ErrClosed is returned by a store that was closed.
	ErrClosed = errors.New("store: closed")
)

// Key identifies a job or a trigger: a name within a group.
type Key struct {
	Group string
	Name  string
}

// String returns "group.name".
func (k Key) String() string { return k.Group + "." + k.Name }

// TriggerState is the stored state of a trigger. The engine only acquires
// triggers in StateWaiting.
type TriggerState string

// Trigger states, as in Quartz's job stores.
const (
	// StateWaiting: the trigger waits for its next fire time.
	StateWaiting TriggerState = "WAITING"
	// StateAcquired: a node claimed the trigger to fire it.
	StateAcquired TriggerState = "ACQUIRED"
	// StatePaused: the trigger is paused; it is not acquired.
	StatePaused TriggerState = "PAUSED"
	// StateBlocked: the trigger's job disallows concurrent execution and is
	// running; the trigger waits for it to finish.
	StateBlocked TriggerState = "BLOCKED"
	// StatePausedBlocked: paused while blocked.
	StatePausedBlocked TriggerState = "PAUSED_BLOCKED"
	// StateComplete: the trigger will not fire again.
	StateComplete TriggerState = "COMPLETE"
	// StateError: the trigger cannot fire (for example its job type is not
	// registered on any node that tried it).
	StateError TriggerState = "ERROR"
)

// ExecutionState is the state of a fired-trigger record.
type ExecutionState string

// Execution states.
const (
	// ExecutionExecuting: a node runs the job.
	ExecutionExecuting ExecutionState = "EXECUTING"
	// ExecutionRecoverable: the node running the job died and the job
	// requests recovery; a live node will claim and re-run it.
	ExecutionRecoverable ExecutionState = "RECOVERABLE"
	// ExecutionSucceeded: the job finished without error.
	ExecutionSucceeded ExecutionState = "SUCCEEDED"
	// ExecutionFailed: the job returned an error, panicked, or its node was
	// lost and it does not request recovery.
	ExecutionFailed ExecutionState = "FAILED"
	// ExecutionVetoed: a listener vetoed the execution.
	ExecutionVetoed ExecutionState = "VETOED"
)

// Errors a store records on the FAILED executions of a node that was
// lost while they ran, when their job does not request recovery.
const (
	// ErrorNodeLost: the node was declared dead (NodesRecover), or a
	// reconciliation found its lease gone (Reconcile).
	ErrorNodeLost = "node lost"
	// ErrorNodeStopped: the node left the cluster (NodeUnregister).
	ErrorNodeStopped = "node stopped"
)

// Done reports whether the execution has finished.
func (s ExecutionState) Done() bool {
	return s == ExecutionSucceeded || s == ExecutionFailed || s == ExecutionVetoed
}

// JobRecord is a stored job detail.
type JobRecord struct {
	Key         Key
	Type        string // registered job type name
	Description string
	Durable     bool
	// RequestsRecovery: re-run the job on a live node when its node dies.
	RequestsRecovery bool
	// DisallowConcurrent: at most one execution of this job at a time,
	// cluster-wide.
	DisallowConcurrent bool
	// PersistData: store the job data map the job leaves behind.
	PersistData bool
	// Timeout bounds each execution; zero for none.
	Timeout time.Duration
	Data    []byte // JSON object, nil when empty
	// Meta is JSON the program that schedules the job keeps with it, nil
	// when empty; opaque to the store and to the engine.
	Meta    []byte
	Version int64 // incremented by the store on each write
}

// TriggerRecord is a stored trigger with its firing state.
type TriggerRecord struct {
	Key                Key
	JobKey             Key
	Description        string
	Priority           int
	Kind               string // schedule kind
	Schedule           []byte // JSON schedule definition, opaque to the store
	CalendarName       string // "" for none
	MisfireInstruction string
	Data               []byte // JSON object, nil when empty
	// Origin says what made the trigger, such as "manual" or "retry", in
	// at most MaxOriginLength bytes; "" for a schedule, and for triggers
	// stored before stores kept origins. Opaque to the store.
	Origin string
	// Meta is JSON the program that made the trigger keeps with it, nil
	// when empty; opaque to the store and to the engine.
	Meta []byte
	// RearmDelay, when positive, makes the trigger a fixed-delay one: a
	// firing that leaves it no NextFireTime does not complete it but
	// leaves it BLOCKED, awaiting its run, and the store re-arms it when
	// it records the end of that run (ExecutionCompletion.Rearm), or
	// recovery fails the run: NextFireTime becomes the recorded end plus
	// RearmDelay, state WAITING (PAUSED when it was paused meanwhile,
	// COMPLETE past EndTime). A whole number of milliseconds; zero for
	// every other trigger. Set on insert; firings and releases keep it.
	RearmDelay       time.Duration
	StartTime        time.Time
	EndTime          time.Time // zero for none
	NextFireTime     time.Time // zero when the trigger will not fire again
	PreviousFireTime time.Time // zero before the first fire
	TimesTriggered   int
	State            TriggerState
	ClaimedBy        string // node ID holding the claim, when acquired
	ClaimEpoch       int64  // lease epoch of that node
	Version          int64  // incremented by the store on each write
}

// MaxOriginLength is the longest TriggerRecord.Origin a store keeps, in
// bytes.
const MaxOriginLength = 16

// CalendarRecord is a stored exclusion calendar.
type CalendarRecord struct {
	Name    string
	Data    []byte // JSON calendar definition, opaque to the store
	Version int64
}

// ExecutionRecord is a fired trigger: one execution of a job for one
// scheduled fire time. (TriggerKey, ScheduledTime) is unique.
type ExecutionRecord struct {
	ID               string
	TriggerKey       Key
	JobKey           Key
	ScheduledTime    time.Time // the fire time the trigger was due at
	FiredTime        time.Time // when the node fired it
	FinishedTime     time.Time // zero while running
	NodeID           string    // node running it ("" while recoverable)
	Epoch            int64     // lease epoch of that node
	State            ExecutionState
	Recovering       bool // re-run after the original node was lost
	RequestsRecovery bool
	Priority         int
	Error            string // failure reason
}

// NodeRecord is a registered scheduler node.
type NodeRecord struct {
	ID          string
	Epoch       int64
	LastCheckIn time.Time // database clock
	// Dead is set once another node declared this node dead.
	Dead bool
}

// Lease identifies a node and the epoch of its lease. Every state change a
// node makes carries it.
type Lease struct {
	NodeID string
	Epoch  int64
}

// Store is the contract every chime store implements. Methods are safe for
// concurrent use by many goroutines and, for shared databases, by many
// processes.
type Store interface {
	JobStore
	TriggerStore
	CalendarStore
	ExecutionStore
	NodeStore
	Batcher
	// Reconcile repairs states that no sequence of contract calls leaves
	// behind, but that a crash between statements of a non-transactional
	// store, a bug, or a hand edit of the database can:
	//   - ACQUIRED triggers whose claim no live lease holds (ClaimedBy names
	//     no registered, live node, or ClaimEpoch is not that node's current
	//     epoch) return to WAITING;
	//   - EXECUTING executions whose (NodeID, Epoch) is not a registered, live
	//     node's current lease become RECOVERABLE when they request recovery
	//     and FAILED with Error "node lost" otherwise;
	//   - BLOCKED and PAUSED_BLOCKED triggers of a job that has no EXECUTING
	//     or RECOVERABLE execution become WAITING and PAUSED; a fixed-delay
	//     trigger awaiting a run that is no longer EXECUTING or RECOVERABLE
	//     is re-armed at the store's clock (and reported unblocked).
	// Each repair is atomic with the check that found it, so Reconcile is
	// safe while other nodes work. Fails with ErrFenced for a stale lease.
	Reconcile(ctx context.Context, lease Lease) (*Reconciliation, error)
	// Now returns the store's clock: the database's clock for SQL stores.
	// Leases, check-ins and dead-node detection use it.
	Now(ctx context.Context) (time.Time, error)
	// Close releases the store's resources.
	Close() error
}

// JobStore keeps job details.
type JobStore interface {
	// JobUpsert stores a job. Without Replace an existing key fails with
	// ErrJobExists. Replacing keeps the job's triggers. With IfVersion
	// set the write replaces the job only when its stored Version is that
	// one, checked and written in one atomic step: a missing job fails with
	// ErrJobNotFound, another version with ErrVersionMismatch.
	JobUpsert(ctx context.Context, p *JobUpsertParams) error
	// JobWrite stores a job together with changes to its triggers in one
	// atomic step: on any error nothing is written. In this order it
	// writes the job as JobUpsert does (ErrJobExists, ErrJobNotFound,
	// ErrVersionMismatch); deletes the triggers of DeleteTriggers; stores
	// each of Triggers as TriggerInsert does (ErrCalendarNotFound,
	// ErrTriggerExists); and pauses or resumes every trigger of the job,
	// those just stored included, as TriggersPause and TriggersResume with
	// a Job selector do. When the deletions leave a job that is not
	// durable without any trigger, it is deleted, as TriggerDelete does.
	// It reports which triggers it deleted.
	JobWrite(ctx context.Context, p *JobWriteParams) (*JobWriteResult, error)
	// JobsInsert stores new jobs, each with its triggers, in one atomic
	// step, as River's InsertMany does: on any error nothing is written.
	// Each element is stored as JobWrite stores a new job (no Replace, no
	// IfVersion, no DeleteTriggers): a job key that is taken fails the
	// whole call with ErrJobExists, a trigger key that is taken with
	// ErrTriggerExists, a calendar that does not exist with
	// ErrCalendarNotFound. New triggers start paused under a recorded
	// pause of their groups, and blocked while a job of their job's key
	// that disallows concurrency still runs (an execution that outlived a
	// deleted job), unless the element's Pause says otherwise. SQL stores
	// send a few multi-row statements for the whole batch.
	JobsInsert(ctx context.Context, p *JobsInsertParams) error
	// JobGet returns a job or ErrJobNotFound.
	JobGet(ctx context.Context, key Key) (*JobRecord, error)
	// JobDelete deletes a job and all its triggers. It reports whether the job
	// existed.
	JobDelete(ctx context.Context, key Key) (bool, error)
	// JobList returns the jobs of a group ("" for all), ordered by key
	// (group, then name), starting after p.After and at most p.Limit of
	// them. SQL stores read the page from the primary key index, so a
	// page costs the same however many jobs there are.
	JobList(ctx context.Context, p *JobListParams) ([]JobRecord, error)
}

// JobUpsertParams are the parameters of JobUpsert.
type JobUpsertParams struct {
	Job     JobRecord
	Replace bool
	// IfVersion, when not zero, makes the write conditional on the
	// stored job's Version being exactly this; Replace is then implied.
	// Callers use it for optimistic concurrency: read a job, change it,
	// write it back expecting the version they read.
	IfVersion int64
}

// JobWriteParams are the parameters of JobWrite.
type JobWriteParams struct {
	// Job is the job record, written as JobUpsert writes it.
	Job JobRecord
	// Replace overwrites a stored job and stored triggers with the keys
	// of Job and Triggers. Without it an existing job fails with
	// ErrJobExists, and an existing trigger that DeleteTriggers does not
	// delete with ErrTriggerExists.
	Replace bool
	// IfVersion, when not zero, makes the whole write conditional on
	// the stored job's Version being exactly this, as for JobUpsert;
	// Replace is then implied.
	IfVersion int64
	// DeleteTriggers are keys of the job's triggers to delete before
	// Triggers are stored. Keys that name no trigger of this job are
	// ignored: a write never deletes another job's trigger.
	DeleteTriggers []Key
	// Triggers are stored as TriggerInsert stores a trigger. Each one's
	// JobKey must be Job.Key, and their keys must differ.
	Triggers []TriggerRecord
	// Pause changes the paused state of every trigger of the job once
	// Triggers are stored; PauseNoChange leaves it.
	Pause PauseChange
}

// JobWriteResult is the result of JobWrite.
type JobWriteResult struct {
	// Deleted are the keys of DeleteTriggers that named a trigger of the
	// job, which is now deleted, in the order of DeleteTriggers.
	Deleted []Key
}

// Validate refuses parameters that no stored state makes valid: a trigger
// of another job, two triggers with one key, an unknown pause change.
// Stores call it before they look at their data.
func (p *JobWriteParams) Validate() error {
	seen := make(map[Key]bool, len(p.Triggers))
	for i := range p.Triggers {
		rec := &p.Triggers[i]
		if rec.JobKey != p.Job.Key {
			return fmt.Errorf("store: writing job %s: trigger %s is of job %s", p.Job.Key, rec.Key, rec.JobKey)
		}
		if seen[rec.Key] {
			return fmt.Errorf("store: writing job %s: trigger %s is listed twice", p.Job.Key, rec.Key)
		}
		seen[rec.Key] = true
	}
	switch p.Pause {
	case PauseNoChange, PauseTriggers, ResumeTriggers:
		return nil
	}
	return fmt.Errorf("store: writing job %s: unknown pause change %q", p.Job.Key, p.Pause)
}

// JobsInsertParams are the parameters of JobsInsert.
type JobsInsertParams struct {
	// Jobs are the new jobs, with their triggers.
	Jobs []JobInsert
}

// JobInsert is one element of JobsInsert: a new job and its triggers.
type JobInsert struct {
	Job JobRecord
	// Triggers are the job's triggers. Each one's JobKey must be Job.Key.
	Triggers []TriggerRecord
	// Pause stores the triggers paused (PauseTriggers) or not paused
	// whatever the paused groups say (ResumeTriggers); PauseNoChange
	// lets the recorded pauses of their groups decide.
	Pause PauseChange
}

// Validate refuses parameters that no stored state makes valid: two
// jobs or two triggers with one key, a trigger of another job, an
// unknown pause change. Errors name the element by its index. Stores call
// it before they look at their data.
func (p *JobsInsertParams) Validate() error {
	jobs := make(map[Key]int, len(p.Jobs))
	triggers := make(map[Key]int, len(p.Jobs))
	for i := range p.Jobs {
		e := &p.Jobs[i]
		if first, dup := jobs[e.Job.Key]; dup {
			return fmt.Errorf("store: inserting jobs: jobs[%d] has the key %s of jobs[%d]", i, e.Job.Key, first)
		}
		jobs[e.Job.Key] = i
		for j := range e.Triggers {
			rec := &e.Triggers[j]
			if rec.JobKey != e.Job.Key {
				return fmt.Errorf("store: inserting jobs: jobs[%d] (%s): trigger %s is of job %s", i, e.Job.Key, rec.Key, rec.JobKey)
			}
			if first, dup := triggers[rec.Key]; dup {
				return fmt.Errorf("store: inserting jobs: jobs[%d] (%s): trigger %s is also a trigger of jobs[%d]", i, e.Job.Key, rec.Key, first)
			}
			triggers[rec.Key] = i
		}
		switch e.Pause {
		case PauseNoChange, PauseTriggers, ResumeTriggers:
		default:
			return fmt.Errorf("store: inserting jobs: jobs[%d] (%s): unknown pause change %q", i, e.Job.Key, e.Pause)
		}
	}
	return nil
}

// PauseChange is what JobWrite does to the paused state of a job's
// triggers.
type PauseChange string

// Pause changes of JobWrite.
const (
	// PauseNoChange leaves every trigger in its state; new triggers start
	// paused when a recorded pause of their group covers them.
	PauseNoChange PauseChange = ""
	// PauseTriggers pauses every trigger of the job, as TriggersPause with
	// a Job selector does.
	PauseTriggers PauseChange = "PAUSE"
	// ResumeTriggers resumes every trigger of the job, as TriggersResume
	// with a Job selector does.
	ResumeTriggers PauseChange = "RESUME"
)

// JobListParams are the parameters of JobList.
type JobListParams struct {
	// Group selects the jobs of one group; "" selects every group.
	Group string
	// After is the key of the last job of the previous page: the list
	// starts with the first job ordered after it. The zero Key starts at
	// the beginning.
	After Key
	// Limit is the most jobs to return; 0 returns them all.
	Limit int
}

// TriggerStore keeps triggers and moves them through their states.
type TriggerStore interface {
	// TriggerInsert stores a trigger. The job must exist (ErrJobNotFound) and
	// the calendar, if named, too (ErrCalendarNotFound). Without Replace an
	// existing key fails with ErrTriggerExists. The stored state is
	// StatePaused when the trigger's group or its job's group is paused (or
	// everything is), StateBlocked when its job disallows concurrency and is
	// executing, StateComplete when NextFireTime is zero, and StateWaiting
	// otherwise; the State field of the argument is ignored.
	TriggerInsert(ctx context.Context, p *TriggerInsertParams) error
	// TriggersInsert stores many triggers in one atomic step, each as
	// TriggerInsert stores one without Replace: on any error nothing is
	// written. A missing job fails the whole call with ErrJobNotFound, a
	// missing calendar with ErrCalendarNotFound, and a taken key with
	// ErrTriggerExists, unless SkipExisting is set: then a trigger whose
	// key is taken is left as it is and the others are stored. It returns
	// the keys of the triggers it stored, in the order of p.Triggers.
	TriggersInsert(ctx context.Context, p *TriggersInsertParams) ([]Key, error)
	// TriggerGet returns a trigger or ErrTriggerNotFound.
	TriggerGet(ctx context.Context, key Key) (*TriggerRecord, error)
	// TriggerDelete deletes a trigger and, when its job is not durable and has
	// no trigger left, the job. It reports whether the trigger existed.
	TriggerDelete(ctx context.Context, key Key) (bool, error)
	// TriggerList returns triggers ordered by key, filtered by p.
	TriggerList(ctx context.Context, p *TriggerListParams) ([]TriggerRecord, error)
	// TriggersPause pauses the selected triggers: WAITING and ACQUIRED become
	// PAUSED, BLOCKED becomes PAUSED_BLOCKED. Selecting a group (or all) also
	// records the group as paused, so triggers added to it later start
	// paused. It returns the number of triggers whose state changed.
	TriggersPause(ctx context.Context, sel *TriggerSelector) (int, error)
	// TriggersResume undoes TriggersPause: PAUSED becomes WAITING (BLOCKED if
	// the job is executing and disallows concurrency), PAUSED_BLOCKED becomes
	// BLOCKED, and the selected groups are no longer recorded as paused.
	TriggersResume(ctx context.Context, sel *TriggerSelector) (int, error)
	// PausedGroups returns the trigger groups and job groups recorded as
	// paused, and whether everything is paused.
	PausedGroups(ctx context.Context) (*PausedGroups, error)
	// TriggersAcquire claims up to Limit WAITING triggers whose NextFireTime
	// is at or before NoLaterThan, earliest first and, at the same instant,
	// highest priority first, skipping those whose job's type is in
	// ExcludeJobTypes. Claimed triggers become ACQUIRED with ClaimedBy
	// and ClaimEpoch set. Claiming is row by row: nodes never wait on a
	// global lock. Fails with ErrFenced for a stale lease.
	TriggersAcquire(ctx context.Context, p *TriggersAcquireParams) ([]TriggerRecord, error)
	// TriggerRelease returns a trigger this node acquired to WAITING,
	// optionally with new timing (after a misfire instruction was applied).
	// Fails with ErrNotClaimed when the claim was lost.
	TriggerRelease(ctx context.Context, p *TriggerReleaseParams) error
	// TriggerFire records that this node fires an acquired trigger, in one
	// atomic step: it checks the claim (ErrNotClaimed) and the lease
	// (ErrFenced); inserts Execution, unique per trigger and scheduled time
	// (ErrAlreadyFired); stores the trigger's advanced timing from Trigger
	// (NextFireTime, PreviousFireTime, TimesTriggered, StartTime, EndTime,
	// Schedule, MisfireInstruction) with state WAITING, or COMPLETE when
	// NextFireTime is zero (BLOCKED, awaiting its run, when the trigger has
	// a RearmDelay); and when the job disallows concurrency it moves the
	// job's triggers (this one included) to BLOCKED / PAUSED_BLOCKED.
	// When the job disallows concurrency and is already executing, nothing
	// is fired: the trigger becomes BLOCKED and the result has Blocked set.
	// The store fills the execution's RequestsRecovery from the job and
	// Priority from the trigger.
	TriggerFire(ctx context.Context, p *TriggerFireParams) (*TriggerFireResult, error)
}

// TriggerInsertParams are the parameters of TriggerInsert.
type TriggerInsertParams struct {
	Trigger TriggerRecord
	Replace bool
}

// TriggersInsertParams are the parameters of TriggersInsert.
type TriggersInsertParams struct {
	Triggers []TriggerRecord
	// SkipExisting leaves a trigger whose key is taken as it is, instead
	// of failing the call with ErrTriggerExists.
	SkipExisting bool
}

// Validate refuses two triggers with one key, before any store is
// touched.
func (p *TriggersInsertParams) Validate() error {
	seen := make(map[Key]int, len(p.Triggers))
	for i := range p.Triggers {
		k := p.Triggers[i].Key
		if first, dup := seen[k]; dup {
			return fmt.Errorf("store: inserting triggers: triggers[%d] has the key %s of triggers[%d]", i, k, first)
		}
		seen[k] = i
	}
	return nil
}

// TriggerListParams filter TriggerList. Zero fields do not filter; set
// fields all apply.
type TriggerListParams struct {
	Group  string // trigger group
	JobKey *Key   // triggers of this job
	// JobKeys selects the triggers of any of these jobs, for example of a
	// page of JobList, in one call. An empty list does not filter.
	JobKeys []Key
	// ClaimedUnder selects the triggers ACQUIRED under this lease: claimed
	// by its NodeID in its Epoch. A node whose claim failed without an
	// answer learns from it what the store may have claimed for it all
	// the same.
	ClaimedUnder *Lease
}

// TriggerSelector selects triggers for pausing and resuming. Exactly one
// field is set.
type TriggerSelector struct {
	Trigger  *Key   // one trigger
	Job      *Key   // every trigger of one job
	Group    string // every trigger of a trigger group; recorded as paused
	JobGroup string // every trigger of the jobs of a job group; recorded as paused
	All      bool   // every trigger; every group recorded as paused
}

// PausedGroups lists what is recorded as paused.
type PausedGroups struct {
	TriggerGroups []string
	JobGroups     []string
	All           bool
}

// TriggersAcquireParams are the parameters of TriggersAcquire.
type TriggersAcquireParams struct {
	Lease       Lease
	NoLaterThan time.Time
	Limit       int
	// ExcludeJobTypes, when not empty, leaves alone the triggers of jobs
	// whose Type is listed, so that a node claims only what it can run;
	// they stay WAITING for the nodes that can. Empty excludes nothing and
	// costs nothing.
	ExcludeJobTypes []string
}

// TriggerReleaseParams are the parameters of TriggerRelease.
type TriggerReleaseParams struct {
	Lease Lease
	Key   Key
	// Timing, when not nil, replaces the trigger's timing fields
	// (NextFireTime, PreviousFireTime, TimesTriggered, StartTime, EndTime,
	// Schedule, MisfireInstruction). A zero NextFireTime completes the
	// trigger.
	Timing *TriggerRecord
}

// TriggerFireParams are the parameters of TriggerFire.
type TriggerFireParams struct {
	Lease Lease
	// Trigger carries the key and the advanced timing fields.
	Trigger   TriggerRecord
	Execution ExecutionRecord
}

// TriggerFireResult is the result of TriggerFire.
type TriggerFireResult struct {
	// Job is the trigger's job, read in the same step.
	Job JobRecord
	// Blocked reports that the job disallows concurrency and is executing
	// elsewhere: nothing was fired.
	Blocked bool
}

// CalendarStore keeps exclusion calendars.
type CalendarStore interface {
	// CalendarUpsert stores a calendar; without Replace an existing name fails
	// with ErrCalendarExists.
	CalendarUpsert(ctx context.Context, p *CalendarUpsertParams) error
	// CalendarGet returns a calendar or ErrCalendarNotFound.
	CalendarGet(ctx context.Context, name string) (*CalendarRecord, error)
	// CalendarDelete deletes a calendar; ErrCalendarInUse when a trigger
	// references it. It reports whether it existed.
	CalendarDelete(ctx context.Context, name string) (bool, error)
	// CalendarList returns every calendar ordered by name.
	CalendarList(ctx context.Context) ([]CalendarRecord, error)
}

// CalendarUpsertParams are the parameters of CalendarUpsert.
type CalendarUpsertParams struct {
	Calendar CalendarRecord
	Replace  bool
}

// ExecutionStore keeps fired-trigger records: the executions.
type ExecutionStore interface {
	// ExecutionComplete records the end of an execution this node runs
	// (ErrFenced for a stale lease, ErrExecutionNotFound). In the same atomic
	// step it applies p.Instruction, stores p.JobData on the job when not
	// nil, re-arms the firing trigger when p.Rearm is set (see
	// TriggerRecord.RearmDelay), unblocks the job's triggers when the job
	// disallows concurrency (BLOCKED becomes WAITING, PAUSED_BLOCKED
	// becomes PAUSED; a fixed-delay trigger awaiting its run stays
	// BLOCKED), and deletes the job when it is not durable and has no
	// trigger left.
	ExecutionComplete(ctx context.Context, p *ExecutionCompleteParams) error
	// ExecutionList returns executions filtered by p, newest scheduled time
	// first.
	ExecutionList(ctx context.Context, p *ExecutionListParams) ([]ExecutionRecord, error)
	// ExecutionsPrune deletes finished executions that finished before
	// Before, and returns how many it deleted.
	ExecutionsPrune(ctx context.Context, before time.Time) (int, error)
	// ExecutionsAcquireRecoverable claims up to Limit RECOVERABLE executions
	// whose job's type is not in ExcludeJobTypes for this node: they become EXECUTING under its lease, with Recovering
	// set. It returns them with their jobs.
	ExecutionsAcquireRecoverable(ctx context.Context, p *ExecutionsAcquireRecoverableParams) ([]RecoverableExecution, error)
	// ExecutionsRelease hands executions this node ran back to the cluster
	// unfinished, for recovery: the node cancelled their jobs because its
	// lease lapsed by its own clock (the store was out of its reach), and
	// the jobs request recovery. In one atomic step under the lease check,
	// each execution of p.IDs that is EXECUTING under p.Lease and requests
	// recovery becomes RECOVERABLE, as NodesRecover makes a dead node's: a
	// live node claims it with ExecutionsAcquireRecoverable and re-runs it
	// with Recovering set, and a job that disallows concurrency stays
	// blocked meanwhile. It returns one error per element of p.IDs, nil for
	// those released, ErrExecutionNotFound for an execution that is not
	// EXECUTING under p.Lease or does not request recovery. ErrFenced for
	// the whole call when the lease is stale: another node declared this one
	// dead and recovered its executions already, so nothing runs twice.
	ExecutionsRelease(ctx context.Context, p *ExecutionsReleaseParams) ([]error, error)
}

// ExecutionsReleaseParams are the parameters of ExecutionsRelease.
type ExecutionsReleaseParams struct {
	Lease Lease
	IDs   []string
}

// Instruction tells ExecutionComplete what to do with the firing trigger,
// as Quartz's CompletedExecutionInstruction does.
type Instruction string

// Completion instructions.
const (
	// InstructionNoop leaves the trigger as it is.
	InstructionNoop Instruction = "NOOP"
	// InstructionDeleteTrigger deletes the firing trigger (it will not fire
	// again).
	InstructionDeleteTrigger Instruction = "DELETE_TRIGGER"
	// InstructionSetTriggerComplete marks the firing trigger COMPLETE.
	InstructionSetTriggerComplete Instruction = "SET_TRIGGER_COMPLETE"
	// InstructionSetAllJobTriggersComplete marks every trigger of the job
	// COMPLETE.
	InstructionSetAllJobTriggersComplete Instruction = "SET_ALL_JOB_TRIGGERS_COMPLETE"
	// InstructionSetTriggerError marks the firing trigger ERROR.
	InstructionSetTriggerError Instruction = "SET_TRIGGER_ERROR"
)

// ExecutionCompleteParams are the parameters of ExecutionComplete.
type ExecutionCompleteParams struct {
	Lease        Lease
	ID           string
	State        ExecutionState // a finished state
	Error        string
	FinishedTime time.Time
	Instruction  Instruction
	JobData      []byte // new job data map, nil to keep it
	// Rearm re-arms the firing trigger, when it has a RearmDelay and
	// awaits its run, at FinishedTime (the store's clock when zero) plus
	// its RearmDelay. The engine sets it for the runs of fixed-delay
	// triggers; without it the store leaves the trigger alone, so that
	// the common completion costs nothing more.
	Rearm bool
}

// ExecutionListParams filter ExecutionList. Zero fields do not filter.
type ExecutionListParams struct {
	JobKey     *Key
	TriggerKey *Key
	NodeID     string
	Running    bool // only EXECUTING and RECOVERABLE executions
	Limit      int  // 0 for no limit
}

// ExecutionsAcquireRecoverableParams are the parameters of
// ExecutionsAcquireRecoverable.
type ExecutionsAcquireRecoverableParams struct {
	Lease Lease
	Limit int
	// ExcludeJobTypes, when not empty, leaves alone the executions of
	// jobs whose Type is listed, as TriggersAcquireParams.ExcludeJobTypes
	// does for triggers.
	ExcludeJobTypes []string
}

// RecoverableExecution is an execution claimed for re-running, with its job
// and trigger data as they are now.
type RecoverableExecution struct {
	Execution ExecutionRecord
	Job       JobRecord
	// Trigger is the firing trigger when it still exists.
	Trigger *TriggerRecord
}

// NodeStore keeps cluster membership and leases.
type NodeStore interface {
	// NodeRegister registers a node, or re-registers one that restarts with
	// the same ID, with a new epoch greater than any it had before. A node
	// re-registering under an ID whose previous incarnation left executions
	// behind must first have them recovered; the store does that in the same
	// step, as NodesRecover would.
	NodeRegister(ctx context.Context, nodeID string) (*NodeRecord, error)
	// NodeCheckIn renews the node's lease on the store's clock and returns
	// that clock. ErrFenced when the epoch is stale.
	NodeCheckIn(ctx context.Context, lease Lease) (time.Time, error)
	// NodeList returns every registered node.
	NodeList(ctx context.Context) ([]NodeRecord, error)
	// NodeUnregister removes a node that stops, releasing its acquired
	// triggers. Executions it still runs (jobs that ignored cancellation) are
	// treated as NodesRecover treats a dead node's, with Error "node
	// stopped". Later writes under the lease fail with ErrFenced.
	NodeUnregister(ctx context.Context, lease Lease) error
	// NodesRecover declares dead every node (other than the caller) that has
	// not checked in for DeadAfter on the store's clock, in one atomic step
	// per dead node: bumps its epoch (fencing it), returns its ACQUIRED
	// triggers to WAITING, marks its EXECUTING executions RECOVERABLE when
	// they request recovery and FAILED with Error "node lost" otherwise,
	// unblocking their jobs' triggers and re-arming the fixed-delay
	// triggers that awaited the failed runs (see TriggerRecord.RearmDelay)
	// at the store's clock. It returns what it did.
	NodesRecover(ctx context.Context, p *NodesRecoverParams) ([]NodeRecovery, error)
}

// Reconciliation reports what Reconcile repaired; a healthy store reports
// nothing.
type Reconciliation struct {
	ReleasedTriggers  []Key // ACQUIRED under no live lease, now WAITING
	UnblockedTriggers []Key // BLOCKED or PAUSED_BLOCKED with no running execution
	Recoverable       []ExecutionRecord
	Failed            []ExecutionRecord
}

// Empty reports whether nothing was repaired.
func (r *Reconciliation) Empty() bool {
	return len(r.ReleasedTriggers) == 0 && len(r.UnblockedTriggers) == 0 && len(r.Recoverable) == 0 && len(r.Failed) == 0
}

// TriggerWatcher is implemented by stores that can tell every node at once
// that a trigger became due soon, such as PostgreSQL with LISTEN/NOTIFY.
// The engine uses it to wake early instead of waiting for its next poll;
// polling stays the fallback, so a lost notification only costs latency.
type TriggerWatcher interface {
	// WatchTriggers delivers the NextFireTime of every trigger that any node
	// inserts, resumes, releases or reschedules into WAITING, until ctx ends;
	// then the channel is closed. Deliveries may be coalesced or dropped
	// when the receiver is slow. The watch reconnects by itself after the
	// database comes back.
	WatchTriggers(ctx context.Context) (<-chan time.Time, error)
}

// NodesRecoverParams are the parameters of NodesRecover.
type NodesRecoverParams struct {
	Lease     Lease
	DeadAfter time.Duration
}

// NodeRecovery reports the recovery of one dead node.
type NodeRecovery struct {
	Node             NodeRecord // as it was before recovery
	ReleasedTriggers int
	// Recoverable executions will be re-run; Failed ones were recorded as
	// failed with "node lost".
	Recoverable []ExecutionRecord
	Failed      []ExecutionRecord
}

// Batcher fires triggers and records the ends of executions several at a
// time, each batch in one atomic step, so that a busy node spends one round
// of statements and one commit on many firings instead of one each. Each
// element means what the single-element method means (TriggerFire,
// ExecutionComplete). It is part of [Store], not an option: the engine
// fires, completes and hands back claims only through these methods, so a
// wrapper that embeds a Store keeps them and cannot fall back to one call
// per firing.
type Batcher interface {
	// TriggersFire fires several acquired triggers in one atomic step: each
	// firing as TriggerFire would, under one lease check. Its outcomes are in
	// the order of p.Firings. A firing refused on its own (ErrNotClaimed,
	// ErrAlreadyFired, an invalid element) has that error in its outcome
	// and does not hold the others back. An error for the whole call
	// (ErrFenced, a store failure) means that nothing was fired, unless the
	// store's answer was lost after it committed, in which case everything
	// may have been. Generated execution IDs are written back to
	// p.Firings[i].Execution.ID.
	TriggersFire(ctx context.Context, p *TriggersFireParams) ([]TriggerFireOutcome, error)
	// ExecutionsComplete records the end of several executions this node
	// runs in one atomic step, each as ExecutionComplete would. It returns
	// one error per element of p.Completions, nil for those recorded (an
	// element refused on its own: ErrExecutionNotFound, invalid input). An
	// error for the whole call (ErrFenced, a store failure) means that
	// nothing was recorded, unless the answer was lost after the commit.
	ExecutionsComplete(ctx context.Context, p *ExecutionsCompleteParams) ([]error, error)
	// TriggersRelease returns triggers this node acquired and did not fire
	// to WAITING (BLOCKED while their job disallows concurrency and runs,
	// COMPLETE for one without a next fire time), as TriggerRelease without
	// new timing does, in one atomic step. Triggers whose claim the lease
	// does not hold are left as they are. It returns how many it released.
	// Fails with ErrFenced for a stale lease.
	TriggersRelease(ctx context.Context, p *TriggersReleaseParams) (int, error)
	// TriggersAcquireFire claims due triggers as TriggersAcquire does and,
	// in the same atomic step, fires those of them that p.Fire asks to
	// fire, each as TriggersFire would fire it once claimed: the claim of
	// a trigger that is due already and its firing cost one transaction,
	// and SQL stores write the trigger's row once. For each trigger it
	// claims, in due order, the store calls p.Fire with the trigger as
	// TriggersAcquire returns it (ACQUIRED by p.Lease); Fire returns the
	// firing (advanced timing and execution, as an element of
	// TriggersFire) and true to fire it now, or false to leave it claimed.
	// A store may leave claimed a trigger Fire asked to fire (a job that
	// disallows concurrency, for example) and fire it not at all: it is
	// then in Claimed, and the caller fires it with TriggersFire. Fire runs
	// while the store holds its locks: it must return quickly and must not
	// call the store, and the store may call it again for the same trigger
	// when it retries the step; the last answer counts. An error for the
	// whole call means what it means for TriggersFire: nothing was claimed
	// or fired, unless the answer was lost after the commit. ErrFenced for
	// a stale lease.
	TriggersAcquireFire(ctx context.Context, p *TriggersAcquireFireParams) (*TriggersAcquireFireResult, error)
}

// TriggersAcquireFireParams are the parameters of TriggersAcquireFire.
type TriggersAcquireFireParams struct {
	// TriggersAcquireParams select and bound the triggers to claim.
	TriggersAcquireParams
	// Fire tells, for a trigger just claimed, whether to fire it now and
	// with which firing; nil fires nothing. See TriggersAcquireFire.
	Fire func(rec TriggerRecord) (TriggerFiring, bool)
}

// TriggersAcquireFireResult is the result of TriggersAcquireFire.
type TriggersAcquireFireResult struct {
	// Claimed are the triggers claimed and not fired, ACQUIRED as
	// TriggersAcquire returns them.
	Claimed []TriggerRecord
	// Firings are the firings made, as Fire returned them, with the
	// execution IDs the store gave them, and Outcomes their outcomes
	// (as TriggersFire's: a blocked job's trigger was not fired; a firing
	// refused on its own leaves its trigger claimed by the lease).
	Firings  []TriggerFiring
	Outcomes []TriggerFireOutcome
}

// TriggersReleaseParams are the parameters of TriggersRelease.
type TriggersReleaseParams struct {
	Lease Lease
	Keys  []Key
}

// TriggersFireParams are the parameters of TriggersFire.
type TriggersFireParams struct {
	Lease   Lease
	Firings []TriggerFiring
}

// TriggerFiring is one element of TriggersFire: the fields of
// TriggerFireParams but the lease.
type TriggerFiring struct {
	// Trigger carries the key and the advanced timing fields.
	Trigger   TriggerRecord
	Execution ExecutionRecord
}

// TriggerFireOutcome is the outcome of one firing of TriggersFire: its
// result, or the error that refused it.
type TriggerFireOutcome struct {
	Result *TriggerFireResult
	Err    error
}

// ExecutionsCompleteParams are the parameters of ExecutionsComplete.
type ExecutionsCompleteParams struct {
	Lease       Lease
	Completions []ExecutionCompletion
}

// ExecutionCompletion is one element of ExecutionsComplete: the fields of
// ExecutionCompleteParams but the lease.
type ExecutionCompletion struct {
	ID           string
	State        ExecutionState // a finished state
	Error        string
	FinishedTime time.Time
	Instruction  Instruction
	JobData      []byte // new job data map, nil to keep it
	// Rearm: see ExecutionCompleteParams.Rearm.
	Rearm bool
}
