package chime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/internal/engine"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// jobRecord validates job for the store. Its *ValidationError names a
// field of the job ("Key.Name"); the caller places it.
func (s *Scheduler) jobRecord(job JobDetail) (store.JobRecord, error) {
	key := job.Key.normalized()
	if key.Name == "" {
		return store.JobRecord{}, &ValidationError{Field: "Key.Name", Reason: "must not be empty"}
	}
	if job.Type == "" {
		return store.JobRecord{}, &ValidationError{Field: "Type", Reason: "must name a registered job type"}
	}
	if job.Timeout < 0 {
		return store.JobRecord{}, &ValidationError{Field: "Timeout", Reason: "must not be negative"}
	}
	if err := checkKey("Key", key.store()); err != nil {
		return store.JobRecord{}, err
	}
	if err := checkText("Type", job.Type, MaxKeyLength); err != nil {
		return store.JobRecord{}, err
	}
	if err := checkText("Description", job.Description, 0); err != nil {
		return store.JobRecord{}, err
	}
	data, err := s.encodeData("Data", job.Data)
	if err != nil {
		return store.JobRecord{}, err
	}
	meta, err := s.encodeMetadata("Metadata", job.Metadata)
	if err != nil {
		return store.JobRecord{}, err
	}
	return store.JobRecord{
		Key:                key.store(),
		Type:               job.Type,
		Description:        job.Description,
		Durable:            job.Durable,
		RequestsRecovery:   job.RequestsRecovery,
		DisallowConcurrent: job.DisallowConcurrentExecution,
		PersistData:        job.PersistJobDataAfterExecution,
		Timeout:            job.Timeout,
		Data:               data,
		Meta:               meta,
	}, nil
}

// encodeMetadata checks metadata for the store, refusing what is not JSON
// or too large; field names it in the error.
func (s *Scheduler) encodeMetadata(field string, m json.RawMessage) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	if !json.Valid(m) {
		return nil, &ValidationError{Field: field, Reason: "is not valid JSON"}
	}
	if len(m) > s.cfg.MaxJobDataBytes {
		return nil, &ValidationError{Field: field, Reason: fmt.Sprintf("is %d bytes long, more than the limit of %d (Config.MaxJobDataBytes)", len(m), s.cfg.MaxJobDataBytes)}
	}
	return bytes.Clone(m), nil
}

// encodeData encodes a data map for the store, refusing what is not JSON or
// too large; field names the map in the error.
func (s *Scheduler) encodeData(field string, d JobData) ([]byte, error) {
	data, err := encodeJobData(d)
	if err != nil {
		return nil, &ValidationError{Field: field, Reason: "invalid", Err: err}
	}
	if len(data) > s.cfg.MaxJobDataBytes {
		return nil, &ValidationError{Field: field, Reason: fmt.Sprintf("encodes to %d bytes, more than the limit of %d (Config.MaxJobDataBytes)", len(data), s.cfg.MaxJobDataBytes)}
	}
	return data, nil
}

// triggerRecord validates t and computes its first fire time. Its
// *ValidationError names a field of the trigger ("Priority",
// "Schedule.expression"); the caller places it.
func (s *Scheduler) triggerRecord(ctx context.Context, t Trigger) (store.TriggerRecord, error) {
	key := t.Key.normalized()
	if key.Name == "" {
		return store.TriggerRecord{}, &ValidationError{Field: "Key.Name", Reason: "must not be empty"}
	}
	jobKey := t.JobKey.normalized()
	if jobKey.Name == "" {
		return store.TriggerRecord{}, &ValidationError{Field: "JobKey.Name", Reason: "must not be empty"}
	}
	if t.Schedule == nil {
		return store.TriggerRecord{}, &ValidationError{Field: "Schedule", Reason: "must not be nil"}
	}
	if t.Priority < MinPriority || t.Priority > MaxPriority {
		return store.TriggerRecord{}, &ValidationError{Field: "Priority",
			Reason: fmt.Sprintf("%d is out of range %d to %d", t.Priority, MinPriority, MaxPriority)}
	}
	for _, err := range []error{
		checkKey("Key", key.store()),
		checkKey("JobKey", jobKey.store()),
		checkText("Description", t.Description, 0),
		checkText("CalendarName", t.CalendarName, MaxKeyLength),
		checkInstant("StartTime", t.StartTime),
		checkInstant("EndTime", t.EndTime),
	} {
		if err != nil {
			return store.TriggerRecord{}, err
		}
	}
	start := t.StartTime
	if start.IsZero() {
		now, err := s.now(ctx)
		if err != nil {
			return store.TriggerRecord{}, err
		}
		start = now
	}
	data, err := s.encodeData("Data", t.Data)
	if err != nil {
		return store.TriggerRecord{}, err
	}
	origin, err := t.Origin.validate()
	if err != nil {
		return store.TriggerRecord{}, err
	}
	meta, err := s.encodeMetadata("Metadata", t.Metadata)
	if err != nil {
		return store.TriggerRecord{}, err
	}
	tr := &schedule.Trigger{
		Schedule:           t.Schedule,
		StartTime:          start,
		EndTime:            t.EndTime,
		MisfireInstruction: t.MisfireInstruction,
	}
	if err := timingErr(t.Schedule.Validate(), true); err != nil {
		return store.TriggerRecord{}, err
	}
	if err := timingErr(tr.Validate(), false); err != nil {
		return store.TriggerRecord{}, err
	}
	var cal schedule.Calendar
	if t.CalendarName != "" {
		c, err := s.loadCalendar(ctx, t.CalendarName)
		switch {
		case errors.Is(err, ErrCalendarNotFound):
			return store.TriggerRecord{}, &ValidationError{Field: "CalendarName", Reason: fmt.Sprintf("no calendar is named %q", t.CalendarName), Err: err}
		case err != nil:
			return store.TriggerRecord{}, fmt.Errorf("chime: trigger %s: %w", key, err)
		}
		cal = c
	}
	first := tr.ComputeFirstFireTime(cal)
	if first.IsZero() {
		return store.TriggerRecord{}, &ValidationError{Field: "Schedule", Err: ErrWillNeverFire,
			Reason: fmt.Sprintf("never fires after %s (within its end time and calendar)", start.Format(time.RFC3339Nano))}
	}
	if first.Before(EarliestTime()) {
		// Schedules fire before the year 2200, but the first fire time of
		// a start at EarliestTime, cut to the millisecond, comes before it.
		return store.TriggerRecord{}, &ValidationError{Field: "StartTime", Reason: fmt.Sprintf("%s first fires at %s, before %s, the earliest instant stores keep",
			start.Format(time.RFC3339Nano), first.Format(time.RFC3339Nano), EarliestTime().Format(time.RFC3339Nano))}
	}
	rec := store.TriggerRecord{
		Key:          key.store(),
		JobKey:       jobKey.store(),
		Description:  t.Description,
		Priority:     t.Priority,
		CalendarName: t.CalendarName,
		Data:         data,
		Origin:       string(origin),
		Meta:         meta,
	}
	if err := engine.SetTiming(&rec, tr); err != nil {
		return store.TriggerRecord{}, &ValidationError{Field: "Schedule", Reason: "cannot be stored", Err: err}
	}
	return rec, nil
}

// timingErr translates an error of package schedule about a trigger's
// timing into a *ValidationError naming the trigger's field: inSchedule
// says the error is the schedule's own (Schedule.Validate), whose fields
// go under "Schedule"; otherwise it is schedule.Trigger.Validate's, which
// names fields of the trigger.
func timingErr(err error, inSchedule bool) error {
	var se *schedule.ValidationError
	if err == nil || !errors.As(err, &se) {
		return err
	}
	ve := &ValidationError{Field: se.Field, Reason: se.Reason, Err: se.Err}
	if inSchedule {
		return ve.Under("Schedule")
	}
	switch se.Field {
	case "schedule":
		ve.Field = "Schedule"
	case "start_time":
		ve.Field = "StartTime"
	case "end_time":
		ve.Field = "EndTime"
	case "misfire_instruction":
		ve.Field = "MisfireInstruction"
	}
	return ve
}

func jobDetailOf(rec *store.JobRecord) (*JobDetail, error) {
	data, err := decodeJobData(rec.Data)
	if err != nil {
		return nil, fmt.Errorf("chime: job %s: %w", rec.Key, err)
	}
	return &JobDetail{
		Key:                          jobKeyOf(rec.Key),
		Type:                         rec.Type,
		Description:                  rec.Description,
		Durable:                      rec.Durable,
		RequestsRecovery:             rec.RequestsRecovery,
		DisallowConcurrentExecution:  rec.DisallowConcurrent,
		PersistJobDataAfterExecution: rec.PersistData,
		Timeout:                      rec.Timeout,
		Data:                         data,
		Metadata:                     json.RawMessage(bytes.Clone(rec.Meta)),
		Version:                      rec.Version,
	}, nil
}

func triggerInfoOf(rec *store.TriggerRecord) (*TriggerInfo, error) {
	tr, err := engine.TriggerTiming(rec)
	if err != nil {
		return nil, fmt.Errorf("chime: trigger %s: %w", rec.Key, err)
	}
	return triggerInfoWith(rec, tr.Schedule)
}

// triggerInfoWith is triggerInfoOf for a record whose schedule is decoded
// already.
func triggerInfoWith(rec *store.TriggerRecord, sched schedule.Schedule) (*TriggerInfo, error) {
	data, err := decodeJobData(rec.Data)
	if err != nil {
		return nil, fmt.Errorf("chime: trigger %s: %w", rec.Key, err)
	}
	return &TriggerInfo{
		Trigger: Trigger{
			Key:                triggerKeyOf(rec.Key),
			JobKey:             jobKeyOf(rec.JobKey),
			Description:        rec.Description,
			Priority:           rec.Priority,
			Schedule:           sched,
			StartTime:          rec.StartTime,
			EndTime:            rec.EndTime,
			CalendarName:       rec.CalendarName,
			MisfireInstruction: schedule.MisfireInstruction(rec.MisfireInstruction),
			Data:               data,
			Origin:             originOf(rec.Origin),
			Metadata:           json.RawMessage(bytes.Clone(rec.Meta)),
		},
		State:            triggerStateOf(rec.State),
		NextFireTime:     rec.NextFireTime,
		PreviousFireTime: rec.PreviousFireTime,
		TimesTriggered:   rec.TimesTriggered,
	}, nil
}
