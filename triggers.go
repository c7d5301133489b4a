package chime

import (
	"context"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/internal/engine"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// Schedule adds a trigger for a stored job and returns its first fire time.
func (s *Scheduler) Schedule(ctx context.Context, t Trigger) (time.Time, error) {
	rec, err := s.triggerRecord(ctx, t)
	if err != nil {
		return time.Time{}, placed("Trigger", err)
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
		return time.Time{}, placed("Trigger", err)
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
