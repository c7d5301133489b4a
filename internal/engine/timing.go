package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

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
	rec.RearmDelay = schedule.RearmDelay(tr.Schedule)
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
