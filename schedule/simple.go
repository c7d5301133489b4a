package schedule

import (
	"time"
)

// RepeatForever is the RepeatCount of a simple schedule that repeats
// without limit.
const RepeatForever = -1

// Simple fires at StartTime and then every RepeatInterval, RepeatCount more
// times (Quartz's SimpleTrigger). Fire times are fixed by their index:
// StartTime + i×RepeatInterval for i = 0…RepeatCount, so a fire time an
// exclusion calendar skips still uses up one repeat.
type Simple struct {
	// RepeatCount is how many times the trigger fires after the first:
	// 0 fires once, RepeatForever (-1) repeats without limit.
	RepeatCount int
	// RepeatInterval is the time between fires: a positive whole number of
	// milliseconds. It may be zero only when RepeatCount is 0.
	RepeatInterval time.Duration
}

// NewSimple returns a validated simple schedule.
func NewSimple(repeatCount int, repeatInterval time.Duration) (*Simple, error) {
	s := &Simple{RepeatCount: repeatCount, RepeatInterval: repeatInterval}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Kind returns KindSimple.
func (s *Simple) Kind() Kind { return KindSimple }

// Validate checks the repeat count and interval.
func (s *Simple) Validate() error {
	if s.RepeatCount < RepeatForever {
		return invalid("repeat_count", "%d is negative (use -1 to repeat forever)", s.RepeatCount)
	}
	if s.RepeatInterval < 0 {
		return invalid("repeat_interval", "%s is negative", s.RepeatInterval)
	}
	if s.RepeatInterval%time.Millisecond != 0 {
		return invalid("repeat_interval", "%s is not a whole number of milliseconds", s.RepeatInterval)
	}
	if s.RepeatCount != 0 && s.RepeatInterval == 0 {
		return invalid("repeat_interval", "must be positive when the schedule repeats")
	}
	return nil
}

func (s *Simple) location() *time.Location { return time.UTC }

func (s *Simple) allowsInstruction(m MisfireInstruction) bool {
	switch m {
	case MisfireSmartPolicy, MisfireIgnore, MisfireFireNow,
		MisfireRescheduleNowWithExistingRepeatCount, MisfireRescheduleNowWithRemainingRepeatCount,
		MisfireRescheduleNextWithRemainingCount, MisfireRescheduleNextWithExistingCount:
		return true
	}
	return false
}

func (s *Simple) firstFireTime(t *Trigger) time.Time { return t.StartTime.Truncate(time.Millisecond) }

func (s *Simple) intervalMs() int64 { return s.RepeatInterval.Milliseconds() }

func (s *Simple) fireTimeAfter(t *Trigger, after time.Time) time.Time {
	if s.RepeatCount != RepeatForever && t.TimesTriggered > s.RepeatCount {
		return time.Time{}
	}
	startMs, afterMs := t.StartTime.UnixMilli(), after.UnixMilli()
	if s.RepeatCount == 0 && afterMs >= startMs {
		return time.Time{}
	}
	if !t.EndTime.IsZero() && t.EndTime.UnixMilli() <= afterMs {
		return time.Time{}
	}
	if afterMs < startMs {
		return msTime(startMs, t.StartTime.Location())
	}
	interval := s.intervalMs()
	n := (afterMs-startMs)/interval + 1
	if s.RepeatCount != RepeatForever && n > int64(s.RepeatCount) {
		return time.Time{}
	}
	ms := startMs + n*interval
	if !t.EndTime.IsZero() && t.EndTime.UnixMilli() <= ms {
		return time.Time{}
	}
	return msTime(ms, t.StartTime.Location())
}

// timesBetween is how many whole intervals separate from and to (Quartz's
// computeNumTimesFiredBetween).
func (s *Simple) timesBetween(from, to time.Time) int {
	interval := s.intervalMs()
	if interval < 1 {
		return 0
	}
	return int((to.UnixMilli() - from.UnixMilli()) / interval)
}

// simpleMisfire is Quartz's SimpleTriggerImpl.updateAfterMisfire at now.
func (t *Trigger) simpleMisfire(s *Simple, m MisfireInstruction, now time.Time, cal Calendar) {
	switch {
	case m == MisfireSmartPolicy && s.RepeatCount == 0:
		m = MisfireFireNow
	case m == MisfireSmartPolicy && s.RepeatCount == RepeatForever:
		m = MisfireRescheduleNextWithRemainingCount
	case m == MisfireSmartPolicy:
		m = MisfireRescheduleNowWithExistingRepeatCount
	case m == MisfireFireNow && s.RepeatCount != 0:
		m = MisfireRescheduleNowWithRemainingRepeatCount
	}
	switch m {
	case MisfireFireNow:
		t.NextFireTime = now
	case MisfireRescheduleNextWithExistingCount:
		t.NextFireTime = t.nextIncluded(now, cal)
	case MisfireRescheduleNextWithRemainingCount:
		next := t.nextIncluded(now, cal)
		if !next.IsZero() && !t.NextFireTime.IsZero() {
			t.TimesTriggered += s.timesBetween(t.NextFireTime, next)
		}
		t.NextFireTime = next
	case MisfireRescheduleNowWithExistingRepeatCount:
		if s.RepeatCount != 0 && s.RepeatCount != RepeatForever {
			t.Schedule = &Simple{RepeatCount: max(s.RepeatCount-t.TimesTriggered, 0), RepeatInterval: s.RepeatInterval}
			t.TimesTriggered = 0
		}
		t.rescheduleNow(now)
	case MisfireRescheduleNowWithRemainingRepeatCount:
		missed := 0
		if !t.NextFireTime.IsZero() {
			missed = s.timesBetween(t.NextFireTime, now)
		}
		if s.RepeatCount != 0 && s.RepeatCount != RepeatForever {
			t.Schedule = &Simple{RepeatCount: max(s.RepeatCount-(t.TimesTriggered+missed), 0), RepeatInterval: s.RepeatInterval}
			t.TimesTriggered = 0
		}
		t.rescheduleNow(now)
	}
}

// rescheduleNow restarts a simple trigger at now unless its end time has
// passed.
func (t *Trigger) rescheduleNow(now time.Time) {
	if !t.EndTime.IsZero() && t.EndTime.Before(now) {
		t.NextFireTime = time.Time{}
		return
	}
	t.StartTime = now
	t.NextFireTime = now
}
