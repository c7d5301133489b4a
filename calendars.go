package chime

import (
	"context"
	"fmt"

	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/internal/engine"
	"github.com/chime-scheduler/chime/store"
)

func (s *Scheduler) loadCalendar(ctx context.Context, name string) (calendar.Calendar, error) {
	rec, err := s.store.CalendarGet(ctx, name)
	if err != nil {
		return nil, err
	}
	return calendar.Unmarshal(rec.Data)
}

// AddCalendarOptions are options of AddCalendar.
type AddCalendarOptions struct {
	// Replace overwrites a calendar with the same name.
	Replace bool
	// UpdateTriggers recomputes the next fire time of the triggers using
	// the calendar, when replacing it.
	UpdateTriggers bool
}

// AddCalendar stores an exclusion calendar that triggers can name.
func (s *Scheduler) AddCalendar(ctx context.Context, name string, cal calendar.Calendar, opts *AddCalendarOptions) error {
	if name == "" {
		return &ValidationError{Field: "name", Reason: "must not be empty"}
	}
	if err := checkText("name", name, MaxKeyLength); err != nil {
		return err
	}
	if cal == nil {
		return &ValidationError{Field: "cal", Reason: "must not be nil"}
	}
	data, err := calendar.Marshal(cal)
	if err != nil {
		return &ValidationError{Field: "cal", Reason: "cannot be stored", Err: err}
	}
	replace := opts != nil && opts.Replace
	if err := s.store.CalendarUpsert(ctx, &store.CalendarUpsertParams{Calendar: store.CalendarRecord{Name: name, Data: data}, Replace: replace}); err != nil {
		return fmt.Errorf("chime: add calendar %q: %w", name, err)
	}
	if replace && opts.UpdateTriggers {
		if err := s.updateCalendarTriggers(ctx, name, cal); err != nil {
			return err
		}
	}
	return nil
}

// updateCalendarTriggers recomputes the next fire time of every waiting or
// paused trigger using the named calendar.
func (s *Scheduler) updateCalendarTriggers(ctx context.Context, name string, cal calendar.Calendar) error {
	recs, err := s.store.TriggerList(ctx, &store.TriggerListParams{})
	if err != nil {
		return fmt.Errorf("chime: update triggers of calendar %q: %w", name, err)
	}
	now, err := s.now(ctx)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.CalendarName != name || rec.State == store.StateComplete {
			continue
		}
		tr, err := engine.TriggerTiming(&rec)
		if err != nil {
			return fmt.Errorf("chime: update trigger %s: %w", rec.Key, err)
		}
		after := now
		if rec.PreviousFireTime.After(after) {
			after = rec.PreviousFireTime
		}
		tr.NextFireTime = tr.NextIncludedAfter(after, cal)
		if err := engine.SetTiming(&rec, tr); err != nil {
			return fmt.Errorf("chime: update trigger %s: %w", rec.Key, err)
		}
		if err := s.store.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: rec, Replace: true}); err != nil {
			return fmt.Errorf("chime: update trigger %s: %w", rec.Key, err)
		}
	}
	s.engine.Wake()
	return nil
}

// DeleteCalendar deletes a calendar no trigger uses. It reports whether it
// existed.
func (s *Scheduler) DeleteCalendar(ctx context.Context, name string) (bool, error) {
	ok, err := s.store.CalendarDelete(ctx, name)
	if err != nil {
		return false, fmt.Errorf("chime: delete calendar %q: %w", name, err)
	}
	return ok, nil
}

// Calendar returns a stored calendar.
func (s *Scheduler) Calendar(ctx context.Context, name string) (calendar.Calendar, error) {
	cal, err := s.loadCalendar(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("chime: calendar %q: %w", name, err)
	}
	return cal, nil
}

// CalendarNames returns the names of the stored calendars.
func (s *Scheduler) CalendarNames(ctx context.Context) ([]string, error) {
	recs, err := s.store.CalendarList(ctx)
	if err != nil {
		return nil, fmt.Errorf("chime: list calendars: %w", err)
	}
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = r.Name
	}
	return names, nil
}
