package chime

import (
	"context"
	"fmt"
	"slices"

	"github.com/chime-scheduler/chime/store"
)

// JobListener is told about the executions of the jobs its Matcher selects.
// Its functions run on the worker that runs the job, never on the firing
// loop; nil functions are skipped.
type JobListener struct {
	// Name identifies the listener for RemoveJobListener.
	Name string
	// Matcher selects jobs; nil selects every job.
	Matcher Matcher[JobKey]
	// ToBeExecuted is called just before the job runs.
	ToBeExecuted func(ctx context.Context, jc *JobContext)
	// ExecutionVetoed is called instead when a trigger listener vetoed the
	// execution.
	ExecutionVetoed func(ctx context.Context, jc *JobContext)
	// WasExecuted is called after the job ran, with its error.
	WasExecuted func(ctx context.Context, jc *JobContext, err error)
}

// TriggerListener is told about the firings of the triggers its Matcher
// selects, and may veto them. Fired, VetoExecution and Completed run on the
// worker that runs the job; Misfired runs on the scheduler's event
// goroutine. Nil functions are skipped. When the node's lease lapses while
// Fired, VetoExecution or a JobListener's ToBeExecuted runs, the job does
// not start; if the lease is then renewed, the listeners are called again
// for the same firing before the job runs.
type TriggerListener struct {
	// Name identifies the listener for RemoveTriggerListener.
	Name string
	// Matcher selects triggers; nil selects every trigger.
	Matcher Matcher[TriggerKey]
	// Fired is called when the trigger fired, before the job runs.
	Fired func(ctx context.Context, jc *JobContext)
	// VetoExecution is called after Fired; returning true stops the job
	// from running this time.
	VetoExecution func(ctx context.Context, jc *JobContext) bool
	// Misfired is called after the trigger's misfire instruction was
	// applied.
	Misfired func(ctx context.Context, t TriggerInfo)
	// Completed is called after the job ran, with its error.
	Completed func(ctx context.Context, jc *JobContext, err error)
}

// SchedulerListener is told about scheduler events. It runs on the
// scheduler's event goroutine, one event at a time, in order; a slow
// listener delays only later events, never firing.
type SchedulerListener func(ctx context.Context, ev SchedulerEvent)

// EventType names a scheduler event.
type EventType string

// Scheduler events: every event Quartz's SchedulerListener has.
const (
	EventJobAdded               EventType = "JOB_ADDED"
	EventJobDeleted             EventType = "JOB_DELETED"
	EventJobScheduled           EventType = "JOB_SCHEDULED"
	EventJobUnscheduled         EventType = "JOB_UNSCHEDULED"
	EventTriggerFinalized       EventType = "TRIGGER_FINALIZED"
	EventTriggerPaused          EventType = "TRIGGER_PAUSED"
	EventTriggersPaused         EventType = "TRIGGERS_PAUSED"
	EventTriggerResumed         EventType = "TRIGGER_RESUMED"
	EventTriggersResumed        EventType = "TRIGGERS_RESUMED"
	EventJobPaused              EventType = "JOB_PAUSED"
	EventJobsPaused             EventType = "JOBS_PAUSED"
	EventJobResumed             EventType = "JOB_RESUMED"
	EventJobsResumed            EventType = "JOBS_RESUMED"
	EventSchedulerError         EventType = "SCHEDULER_ERROR"
	EventSchedulerInStandbyMode EventType = "SCHEDULER_IN_STANDBY_MODE"
	EventSchedulerStarting      EventType = "SCHEDULER_STARTING"
	EventSchedulerStarted       EventType = "SCHEDULER_STARTED"
	EventSchedulerShuttingDown  EventType = "SCHEDULER_SHUTTING_DOWN"
	EventSchedulerShutdown      EventType = "SCHEDULER_SHUTDOWN"
	EventSchedulingDataCleared  EventType = "SCHEDULING_DATA_CLEARED"
	// EventNodeRecovered is chime's own: this node declared another node
	// dead and recovered its work (Quartz's cluster recovery, which tells
	// no listener). Exactly one node of the cluster recovers each dead
	// node incarnation, so exactly one emits the event for it.
	EventNodeRecovered EventType = "NODE_RECOVERED"
	// EventNodeRegisteredAgain is chime's own: this node lost its lease
	// (it was declared dead, or could not renew in time) and registered
	// again under a new epoch. Registering recovered the executions fired
	// under the lost lease that no other node had, as declaring the node
	// dead does; a node that declared it dead first emitted
	// EventNodeRecovered for them.
	EventNodeRegisteredAgain EventType = "NODE_REGISTERED_AGAIN"
)

// SchedulerEvent is one scheduler event. Only the fields that apply to its
// Type are set.
type SchedulerEvent struct {
	Type       EventType
	JobKey     JobKey
	TriggerKey TriggerKey
	// Group is the group paused or resumed; "" with an all-groups event.
	Group string
	// Err is the error of EventSchedulerError.
	Err error
	// Recovered is the dead node's recovery, with EventNodeRecovered.
	Recovered *NodeRecovery
}

// NodeRecovery is what recovering a dead node did: the node as it was
// before (Dead is set and Alive is not), how many of its claimed triggers
// went back to waiting, and which of its executions will be re-run
// because their jobs request recovery, or were recorded failed.
type NodeRecovery struct {
	Node             Node
	ReleasedTriggers int
	Recoverable      []Execution
	Failed           []Execution
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

// engineEvents is the Scheduler as the engine's Observer: it turns what
// the engine did into listener events, queued, so the engine never waits
// for a listener.
type engineEvents struct{ s *Scheduler }

// TriggerMisfired tells trigger listeners that a misfire instruction was
// applied.
func (ev engineEvents) TriggerMisfired(rec store.TriggerRecord) { ev.s.misfired(rec) }

// TriggerFinalized tells scheduler listeners that a trigger will not fire
// again.
func (ev engineEvents) TriggerFinalized(key store.Key) {
	ev.s.emit(SchedulerEvent{Type: EventTriggerFinalized, TriggerKey: triggerKeyOf(key)})
}

// StoreFailed tells scheduler listeners that a store operation of the
// firing loop failed.
func (ev engineEvents) StoreFailed(operation string, err error) {
	ev.s.emit(SchedulerEvent{Type: EventSchedulerError, Err: fmt.Errorf("chime: %s: %w", operation, err)})
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
