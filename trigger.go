package chime

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// The range of Trigger.Priority: 32 bits, as every store keeps it.
const (
	MinPriority = math.MinInt32
	MaxPriority = math.MaxInt32
)

// Trigger fires a job on a schedule.
type Trigger struct {
	// Key identifies the trigger. Its name is required; an empty group means
	// DefaultGroup.
	Key TriggerKey
	// JobKey is the job the trigger fires. Required.
	JobKey JobKey
	// Description is free text for people.
	Description string
	// Priority breaks ties between triggers due at the same instant: higher
	// fires first. It lies between MinPriority and MaxPriority, the range
	// stores keep. Defaults to 0.
	Priority int
	// Schedule computes the fire times: a *schedule.Cron, *schedule.Simple,
	// *schedule.CalendarInterval or *schedule.DailyTimeInterval. Required.
	Schedule schedule.Schedule
	// StartTime is the earliest fire time, between EarliestTime and
	// LatestTime. Defaults to the time the trigger is scheduled.
	StartTime time.Time
	// EndTime is the time after which the trigger never fires, at most
	// LatestTime; zero for none.
	EndTime time.Time
	// CalendarName names an exclusion calendar added with
	// Scheduler.AddCalendar; instants it excludes are skipped.
	CalendarName string
	// MisfireInstruction says what to do when the trigger could not fire on
	// time (for longer than Config.MisfireThreshold). Defaults to
	// schedule.MisfireSmartPolicy.
	MisfireInstruction schedule.MisfireInstruction
	// Data is the trigger's data map; it overrides the job's in
	// JobContext.MergedData.
	Data JobData
	// Origin says what made the trigger. Defaults to OriginSchedule;
	// TriggerJob makes OriginManual triggers.
	Origin TriggerOrigin
	// Metadata is a JSON value the program that made the trigger keeps
	// with it, such as the facts of the run a one-shot trigger stands
	// for. The scheduler stores it and returns it with the trigger (a
	// running job sees it in JobContext.Trigger), but it is never part of
	// JobContext.MergedData. It counts against Config.MaxJobDataBytes on
	// its own. Nil for none.
	Metadata json.RawMessage
}

// TriggerOrigin says what made a trigger: a schedule someone set up, or a
// one-shot trigger standing for a run asked for otherwise.
type TriggerOrigin string

// Trigger origins.
const (
	// OriginSchedule: a trigger set up to fire a job on its schedule. The
	// origin of every trigger stored before origins were kept.
	OriginSchedule TriggerOrigin = "schedule"
	// OriginManual: a one-shot trigger standing for a run someone asked
	// for by hand, as TriggerJob makes.
	OriginManual TriggerOrigin = "manual"
	// OriginRetry: a one-shot trigger standing for a new attempt of a
	// failed run.
	OriginRetry TriggerOrigin = "retry"
	// OriginBackfill: a one-shot trigger standing for a fire time missed
	// in the past, run late on purpose.
	OriginBackfill TriggerOrigin = "backfill"
	// OriginWorkflow: a one-shot trigger standing for a task of a
	// workflow instance whose upstream tasks ended (chime server's
	// workflows), keyed by the instance and the task.
	OriginWorkflow TriggerOrigin = "workflow"
	// OriginChild: a one-shot trigger standing for a run of a child job
	// after an execution of its parent ended (chime server's children).
	OriginChild TriggerOrigin = "child"
	// OriginShard: a one-shot trigger standing for one item of a sharded
	// firing.
	OriginShard TriggerOrigin = "shard"
)

// TriggerOrigins returns every origin, OriginSchedule first.
func TriggerOrigins() []TriggerOrigin {
	return []TriggerOrigin{OriginSchedule, OriginManual, OriginRetry, OriginBackfill, OriginWorkflow, OriginChild, OriginShard}
}

// validate refuses an origin that is none of TriggerOrigins; the empty
// origin is OriginSchedule.
func (o TriggerOrigin) validate() (TriggerOrigin, error) {
	switch o {
	case "":
		return OriginSchedule, nil
	case OriginSchedule, OriginManual, OriginRetry, OriginBackfill, OriginWorkflow, OriginChild, OriginShard:
		return o, nil
	}
	return "", &ValidationError{Field: "Origin", Reason: fmt.Sprintf("%q: want one of %v", string(o), TriggerOrigins())}
}

// originOf reads a stored origin; triggers stored before origins were
// kept have none.
func originOf(s string) TriggerOrigin {
	if s == "" {
		return OriginSchedule
	}
	return TriggerOrigin(s)
}

// TriggerState is the state of a trigger as Quartz reports it.
type TriggerState string

// Trigger states.
const (
	// TriggerNormal: the trigger waits for its next fire time.
	TriggerNormal TriggerState = "NORMAL"
	// TriggerPaused: the trigger is paused.
	TriggerPaused TriggerState = "PAUSED"
	// TriggerBlocked: the trigger's job disallows concurrent execution and is
	// running.
	TriggerBlocked TriggerState = "BLOCKED"
	// TriggerComplete: the trigger will not fire again.
	TriggerComplete TriggerState = "COMPLETE"
	// TriggerError: the trigger cannot fire; see the logs.
	TriggerError TriggerState = "ERROR"
)

func triggerStateOf(s store.TriggerState) TriggerState {
	switch s {
	case store.StatePaused, store.StatePausedBlocked:
		return TriggerPaused
	case store.StateBlocked:
		return TriggerBlocked
	case store.StateComplete:
		return TriggerComplete
	case store.StateError:
		return TriggerError
	default:
		return TriggerNormal
	}
}

// TriggerInfo is a stored trigger with its state and timing.
type TriggerInfo struct {
	Trigger
	State            TriggerState
	NextFireTime     time.Time // zero when it will not fire again
	PreviousFireTime time.Time // zero before the first fire
	TimesTriggered   int
}
