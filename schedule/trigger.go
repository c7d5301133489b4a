package schedule

import (
	"time"
)

// maxCalendarHops bounds how many excluded fire times one computation skips
// before it gives up and reports that the trigger never fires. Each hop jumps
// to the calendar's next included instant, so reaching it needs a calendar
// that excludes nearly every fire time for a century or more.
const maxCalendarHops = 200_000

// Trigger is a trigger's timing and firing state: a schedule, the window it
// fires in, its misfire instruction and how far it got. It is a plain value,
// safe to copy; its methods never modify the Schedule in place (a misfire
// instruction that changes the schedule replaces it).
//
// The methods reproduce Quartz 2.3.2's trigger implementations
// (getFireTimeAfter, computeFirstFireTime, triggered, updateAfterMisfire)
// with time as an input instead of the wall clock.
type Trigger struct {
	// Schedule is the timing rule. Required.
	Schedule Schedule
	// StartTime is the earliest instant the trigger may fire. Required.
	StartTime time.Time
	// EndTime is the instant after which the trigger never fires; zero means
	// none. It must not be before StartTime.
	EndTime time.Time
	// MisfireInstruction says what UpdateAfterMisfire does; "" means
	// SMART_POLICY.
	MisfireInstruction MisfireInstruction
	// NextFireTime is when the trigger fires next; zero means never again.
	NextFireTime time.Time
	// PreviousFireTime is when it last fired; zero means never.
	PreviousFireTime time.Time
	// TimesTriggered counts the fires so far (simple and daily-time-interval
	// schedules use it to stop after their repeat count).
	TimesTriggered int
}

// Validate reports whether the trigger is well formed: a valid schedule, a
// start time, an end time not before it, and a misfire instruction defined
// for the schedule's kind. The error is a *ValidationError naming the field.
func (t *Trigger) Validate() error {
	if t.Schedule == nil {
		return invalid("schedule", "missing")
	}
	if err := t.Schedule.Validate(); err != nil {
		return err
	}
	if t.StartTime.IsZero() {
		return invalid("start_time", "missing")
	}
	if !t.EndTime.IsZero() && t.EndTime.Before(t.StartTime) {
		return invalid("end_time", "%s is before the start time %s",
			t.EndTime.Format(time.RFC3339Nano), t.StartTime.Format(time.RFC3339Nano))
	}
	if m := t.MisfireInstruction.orSmart(); !t.Schedule.allowsInstruction(m) {
		return invalid("misfire_instruction", "%q is not defined for %s schedules", string(t.MisfireInstruction), t.Schedule.Kind())
	}
	if t.TimesTriggered < 0 {
		return invalid("times_triggered", "%d is negative", t.TimesTriggered)
	}
	return nil
}

// FireTimeAfter returns the first time strictly after after at which the
// trigger would fire, ignoring calendars, or the zero time when there is
// none. A zero after means "before the start time". For simple and
// daily-time-interval schedules the answer depends on TimesTriggered, as in
// Quartz: a trigger that used up its repeat count has no further fire time.
func (t *Trigger) FireTimeAfter(after time.Time) time.Time {
	if !t.computable() {
		return time.Time{}
	}
	if after.IsZero() {
		after = t.StartTime.Add(-time.Hour)
	}
	return t.withinHorizon(t.Schedule.fireTimeAfter(t, after))
}

// computable reports whether the trigger has what fire-time arithmetic
// needs; the methods of a trigger that fails it report "no fire time"
// instead of panicking.
func (t *Trigger) computable() bool {
	return t.Schedule != nil && !t.StartTime.IsZero() && t.Schedule.Validate() == nil
}

// withinHorizon drops fire times in or after the year 2200.
func (t *Trigger) withinHorizon(ft time.Time) time.Time {
	if ft.IsZero() || ft.In(t.Schedule.location()).Year() >= horizonYear {
		return time.Time{}
	}
	return ft
}

// ComputeFirstFireTime sets NextFireTime to the trigger's first fire time
// not excluded by cal (which may be nil) and returns it; zero means the
// trigger never fires (or is not valid: call Validate first).
func (t *Trigger) ComputeFirstFireTime(cal Calendar) time.Time {
	if !t.computable() {
		t.NextFireTime = time.Time{}
		return t.NextFireTime
	}
	t.NextFireTime = t.skipExcluded(t.withinHorizon(t.Schedule.firstFireTime(t)), cal)
	return t.NextFireTime
}

// Triggered records that the trigger just fired at NextFireTime: it counts
// the fire, moves NextFireTime to PreviousFireTime and computes the next
// fire time not excluded by cal (Quartz's triggered). It does nothing when
// NextFireTime is zero.
func (t *Trigger) Triggered(cal Calendar) {
	if t.NextFireTime.IsZero() {
		return
	}
	t.TimesTriggered++
	t.PreviousFireTime = t.NextFireTime
	t.NextFireTime = t.nextIncluded(t.NextFireTime, cal)
}

// MayFireAgain reports whether the trigger has a next fire time.
func (t *Trigger) MayFireAgain() bool {
	return !t.NextFireTime.IsZero()
}

// Upcoming returns the next n fire times from the trigger's current state,
// NextFireTime first, as firing it n times would produce them. The trigger
// is not changed. Fewer than n times means the trigger completes.
func (t *Trigger) Upcoming(cal Calendar, n int) []time.Time {
	if n <= 0 {
		return nil
	}
	sim := *t
	var out []time.Time
	for len(out) < n && !sim.NextFireTime.IsZero() {
		out = append(out, sim.NextFireTime)
		sim.Triggered(cal)
	}
	return out
}

// UpdateAfterMisfire applies the trigger's misfire instruction at instant
// now, when the scheduler finds NextFireTime in the past (Quartz's
// updateAfterMisfire with now instead of the wall clock). IGNORE leaves the
// trigger unchanged. Instructions that restart a simple schedule replace
// Schedule and StartTime. With FIRE_ONCE_NOW or SMART_POLICY, a cron,
// calendar-interval or daily-time-interval trigger whose end time has passed
// completes (NextFireTime becomes zero), where Quartz would fire once more.
// An instruction not defined for the schedule's kind (see Validate) changes
// nothing.
func (t *Trigger) UpdateAfterMisfire(now time.Time, cal Calendar) {
	if t.Schedule == nil {
		return
	}
	now = now.Truncate(time.Millisecond)
	m := t.MisfireInstruction.orSmart()
	if m == MisfireIgnore || !t.Schedule.allowsInstruction(m) {
		return
	}
	if s, ok := t.Schedule.(*Simple); ok {
		t.simpleMisfire(s, m, now, cal)
		return
	}
	if s, ok := t.Schedule.(*FixedDelay); ok {
		t.fixedDelayMisfire(s, m, now, cal)
		return
	}
	switch m {
	case MisfireDoNothing:
		t.NextFireTime = t.nextIncluded(now, cal)
	case MisfireSmartPolicy, MisfireFireOnceNow:
		if t.endPassed(now) {
			t.NextFireTime = time.Time{}
			return
		}
		t.NextFireTime = now
	}
}

// endPassed reports whether the trigger's end time rules out firing at now.
// Cron and daily-time-interval triggers may fire at their end time itself;
// calendar-interval (and simple) triggers may not, as in Quartz.
func (t *Trigger) endPassed(now time.Time) bool {
	if t.EndTime.IsZero() {
		return false
	}
	if t.Schedule.Kind() == KindCalendarInterval {
		return !now.Before(t.EndTime)
	}
	return now.After(t.EndTime)
}

// NextIncludedAfter returns the first fire time strictly after after that
// cal does not exclude, or zero when there is none: the trigger ends
// first, or cal excludes every fire time for maxCalendarHops stretches.
// A nil cal excludes nothing. It is how a trigger moves when its calendar
// changes.
func (t *Trigger) NextIncludedAfter(after time.Time, cal Calendar) time.Time {
	return t.nextIncluded(after, cal)
}

// nextIncluded is the first fire time strictly after after that cal does
// not exclude.
func (t *Trigger) nextIncluded(after time.Time, cal Calendar) time.Time {
	return t.skipExcluded(t.FireTimeAfter(after), cal)
}

// skipExcluded returns ft if cal includes it, otherwise the first later
// fire time cal includes (zero if none). It steps like Quartz, one fire
// time at a time, while that lands on the calendar's next included instant
// or later; across a longer excluded stretch it jumps straight to the first
// fire time at or after the next included instant, so it always terminates.
func (t *Trigger) skipExcluded(ft time.Time, cal Calendar) time.Time {
	if cal == nil {
		return ft
	}
	if _, ok := t.Schedule.(*FixedDelay); ok && !ft.IsZero() {
		return t.delayedIncluded(ft, cal)
	}
	for range maxCalendarHops {
		if ft.IsZero() || cal.Includes(ft) {
			return ft
		}
		resume := cal.NextIncluded(ft)
		if resume.IsZero() {
			return time.Time{}
		}
		next := t.FireTimeAfter(ft)
		if !next.IsZero() && next.Before(resume) {
			next = t.FireTimeAfter(resume.Add(-time.Nanosecond))
		}
		ft = next
	}
	return time.Time{}
}
