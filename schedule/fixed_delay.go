package schedule

import (
	"time"
)

// FixedDelay fires at StartTime, then again Delay after each run ended: "run
// again 30 s after the last run ended", not "every 30 s". Runs never
// overlap and a slow run pushes the next one back.
//
// The next fire time depends on when a run ends, which no schedule math
// knows: once fired, a fixed-delay trigger has no next fire time
// (Triggered leaves NextFireTime zero) until the store records its
// execution's end and re-arms it at that end plus Delay (see Rearm). The
// calendar then applies to the re-armed time: an excluded one moves to the
// calendar's next included instant.
//
// Misfire instructions: SMART_POLICY, IGNORE_MISFIRE_POLICY and
// FIRE_ONCE_NOW fire once as soon as possible (there is never more than
// one missed run to catch up on), then the chain goes on from that run's
// end; DO_NOTHING waits Delay from the instant the misfire was found.
type FixedDelay struct {
	// Delay is the time between the end of a run and the start of the
	// next: a positive whole number of milliseconds.
	Delay time.Duration
}

// NewFixedDelay returns a validated fixed-delay schedule.
func NewFixedDelay(delay time.Duration) (*FixedDelay, error) {
	s := &FixedDelay{Delay: delay}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Kind returns KindFixedDelay.
func (s *FixedDelay) Kind() Kind { return KindFixedDelay }

// Validate checks the delay.
func (s *FixedDelay) Validate() error {
	if s.Delay <= 0 {
		return invalid("delay", "%s is not positive", s.Delay)
	}
	if s.Delay%time.Millisecond != 0 {
		return invalid("delay", "%s is not a whole number of milliseconds", s.Delay)
	}
	return nil
}

func (s *FixedDelay) location() *time.Location { return time.UTC }

func (s *FixedDelay) allowsInstruction(m MisfireInstruction) bool {
	switch m {
	case MisfireSmartPolicy, MisfireIgnore, MisfireFireOnceNow, MisfireDoNothing:
		return true
	}
	return false
}

func (s *FixedDelay) firstFireTime(t *Trigger) time.Time {
	return t.StartTime.Truncate(time.Millisecond)
}

// fireTimeAfter knows only the first run: every later one waits for the
// end of the one before.
func (s *FixedDelay) fireTimeAfter(t *Trigger, after time.Time) time.Time {
	if t.TimesTriggered > 0 || !after.Before(t.StartTime) {
		return time.Time{}
	}
	if !t.EndTime.IsZero() && t.EndTime.Before(t.StartTime) {
		return time.Time{}
	}
	return t.StartTime.Truncate(time.Millisecond)
}

// RearmDelay returns the delay after which the store re-arms a trigger of
// schedule s once its execution ends, or zero when s is not a fixed-delay
// schedule (its next fire time is known when it fires).
func RearmDelay(s Schedule) time.Duration {
	if fd, ok := s.(*FixedDelay); ok {
		return fd.Delay
	}
	return 0
}

// Rearm sets NextFireTime after a fixed-delay trigger's run ended at end:
// end plus the delay, moved to the first instant cal includes, or zero
// when that is after EndTime (the trigger completes). It is what the store
// computes when it records the end (without the calendar, which the engine
// applies when it claims the trigger: see Trigger.Excluded). On a trigger
// of another kind it does nothing.
func (t *Trigger) Rearm(end time.Time, cal Calendar) time.Time {
	fd, ok := t.Schedule.(*FixedDelay)
	if !ok {
		return t.NextFireTime
	}
	t.NextFireTime = t.delayedIncluded(end.Truncate(time.Millisecond).Add(fd.Delay), cal)
	return t.NextFireTime
}

// delayedIncluded returns at, or the first instant after it that cal
// includes, or zero when that is past EndTime or the horizon.
func (t *Trigger) delayedIncluded(at time.Time, cal Calendar) time.Time {
	if cal != nil && !cal.Includes(at) {
		at = cal.NextIncluded(at)
	}
	if at.IsZero() || (!t.EndTime.IsZero() && at.After(t.EndTime)) {
		return time.Time{}
	}
	return t.withinHorizon(at)
}

// Excluded reports where a fixed-delay trigger whose NextFireTime was
// re-armed without a calendar should fire instead: the first instant cal
// includes at or after NextFireTime (zero when none), and true when that
// differs from NextFireTime. Other kinds, whose fire times already skip
// the calendar, report false.
func (t *Trigger) Excluded(cal Calendar) (time.Time, bool) {
	if _, ok := t.Schedule.(*FixedDelay); !ok || cal == nil || t.NextFireTime.IsZero() || cal.Includes(t.NextFireTime) {
		return t.NextFireTime, false
	}
	return t.delayedIncluded(t.NextFireTime, cal), true
}

// fixedDelayMisfire applies a misfire instruction to a fixed-delay trigger
// at now.
func (t *Trigger) fixedDelayMisfire(s *FixedDelay, m MisfireInstruction, now time.Time, cal Calendar) {
	if m == MisfireDoNothing {
		t.NextFireTime = t.delayedIncluded(now.Add(s.Delay), cal)
		return
	}
	if !t.EndTime.IsZero() && now.After(t.EndTime) {
		t.NextFireTime = time.Time{}
		return
	}
	t.NextFireTime = now
}
