package chime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// AddJobOptions are options of AddJob.
type AddJobOptions struct {
	// Replace overwrites a job with the same key, keeping its triggers.
	Replace bool
	// IfVersion, when not zero, overwrites the job only if its stored
	// Version is this one: ErrVersionMismatch when it changed since it was
	// read, ErrJobNotFound when it is gone. It implies Replace.
	IfVersion int64
}

// AddJob stores a job without scheduling it. The job must be durable, since
// a non-durable job without triggers would be deleted at once.
func (s *Scheduler) AddJob(ctx context.Context, job JobDetail, opts *AddJobOptions) error {
	if !job.Durable {
		return &ValidationError{Field: "JobDetail.Durable", Reason: "a job added without a trigger must be durable"}
	}
	rec, err := s.jobRecord(job)
	if err != nil {
		return placed("JobDetail", err)
	}
	p := &store.JobUpsertParams{Job: rec}
	if opts != nil {
		p.Replace, p.IfVersion = opts.Replace, opts.IfVersion
	}
	if err := s.store.JobUpsert(ctx, p); err != nil {
		return fmt.Errorf("chime: add job %s: %w", rec.Key, err)
	}
	s.emit(SchedulerEvent{Type: EventJobAdded, JobKey: jobKeyOf(rec.Key)})
	return nil
}

// ScheduleJobOptions are options of ScheduleJob.
type ScheduleJobOptions struct {
	// Replace overwrites a job or triggers with the same keys.
	Replace bool
	// IfVersion, when not zero, stores the job only if its stored Version
	// is this one (ErrVersionMismatch otherwise, ErrJobNotFound when it is
	// gone), checked in the same atomic step as the rest of the write. It
	// implies Replace.
	IfVersion int64
	// Unschedule lists triggers of the job to delete in the same step,
	// before the new triggers are stored (so a key may be in both). Keys
	// that name no trigger of this job are ignored. Deleting the last
	// trigger of a job that is not durable deletes the job, as Unschedule
	// does.
	Unschedule []TriggerKey
	// Pause pauses or resumes every trigger of the job in the same step,
	// the new ones included, as PauseJob and ResumeJob do. Defaults to
	// KeepPauseState.
	Pause PauseChange
}

// PauseChange is what ScheduleJob does to the paused state of the job's
// triggers.
type PauseChange string

// Pause changes of ScheduleJobOptions.
const (
	// KeepPauseState leaves the job's triggers as they are; a new trigger
	// starts paused only when a paused group covers it.
	KeepPauseState PauseChange = ""
	// PauseTriggers pauses every trigger of the job, as PauseJob does.
	PauseTriggers PauseChange = "pause"
	// ResumeTriggers resumes every trigger of the job, as ResumeJob does.
	ResumeTriggers PauseChange = "resume"
)

// ScheduleJob stores a job together with its triggers, whose JobKey may be
// left empty, in one atomic step: the job, the triggers, the deletions of
// opts.Unschedule and the pause or resume of opts.Pause are all stored, or,
// on any error, none of them. Without opts.Replace an existing job fails
// with ErrJobExists and an existing trigger with ErrTriggerExists.
// Listeners hear of the write once it is stored: EventJobAdded, then
// EventJobUnscheduled for each deleted trigger, EventJobScheduled for each
// stored one, and EventJobPaused or EventJobResumed.
//
// On an SQL store, new jobs (no Replace, no IfVersion) that goroutines
// schedule while an earlier one is being written are stored together in
// the next transaction, one commit for all of them; each call still
// returns its own outcome, and a refused job does not hold back the
// others.
//
// An invalid argument is a *ValidationError whose path names it from the
// arguments: "JobDetail.Timeout", "triggers[2].Schedule.expression" for a
// schedule's field, "triggers[2].Schedule" for a trigger that would never
// fire (it also matches ErrWillNeverFire) and "triggers[2].CalendarName"
// for a calendar that does not exist (it also matches
// ErrCalendarNotFound).
func (s *Scheduler) ScheduleJob(ctx context.Context, job JobDetail, triggers []Trigger, opts *ScheduleJobOptions) error {
	var o ScheduleJobOptions
	if opts != nil {
		o = *opts
	}
	rec, trecs, err := s.jobWithTriggers(ctx, "JobDetail", job, triggers)
	if err != nil {
		return err
	}
	p := &store.JobWriteParams{
		Job:       rec,
		Replace:   o.Replace,
		IfVersion: o.IfVersion,
		Triggers:  trecs,
	}
	for i, k := range o.Unschedule {
		if err := checkKey(fmt.Sprintf("ScheduleJobOptions.Unschedule[%d]", i), k.store()); err != nil {
			return err
		}
		p.DeleteTriggers = append(p.DeleteTriggers, k.store())
	}
	switch o.Pause {
	case KeepPauseState:
	case PauseTriggers:
		p.Pause = store.PauseTriggers
	case ResumeTriggers:
		p.Pause = store.ResumeTriggers
	default:
		return &ValidationError{Field: "ScheduleJobOptions.Pause", Reason: fmt.Sprintf("%q: want %q, %q or %q", o.Pause, KeepPauseState, PauseTriggers, ResumeTriggers)}
	}
	res, err := s.store.JobWrite(ctx, p)
	if err != nil {
		return fmt.Errorf("chime: schedule job %s: %w", rec.Key, err)
	}
	jk := jobKeyOf(rec.Key)
	s.emit(SchedulerEvent{Type: EventJobAdded, JobKey: jk})
	for _, k := range res.Deleted {
		s.emit(SchedulerEvent{Type: EventJobUnscheduled, TriggerKey: triggerKeyOf(k)})
	}
	for _, trec := range p.Triggers {
		s.emit(SchedulerEvent{Type: EventJobScheduled, JobKey: jk, TriggerKey: triggerKeyOf(trec.Key)})
	}
	switch o.Pause {
	case PauseTriggers:
		s.emit(SchedulerEvent{Type: EventJobPaused, JobKey: jk})
	case ResumeTriggers:
		s.emit(SchedulerEvent{Type: EventJobResumed, JobKey: jk})
	}
	if o.Replace || o.IfVersion != 0 || o.Pause == ResumeTriggers {
		// Triggers the write did not name may have changed: a resume,
		// or a claim the replace dropped.
		s.engine.Wake()
		return nil
	}
	s.engine.WakeFor(earliestFire([]store.JobInsert{{Triggers: p.Triggers}}))
	return nil
}

// DeleteJob deletes a job and its triggers. It reports whether the job
// existed. Running executions finish.
func (s *Scheduler) DeleteJob(ctx context.Context, key JobKey) (bool, error) {
	ok, err := s.store.JobDelete(ctx, key.store())
	if err != nil {
		return false, fmt.Errorf("chime: delete job %s: %w", key.normalized(), err)
	}
	if ok {
		s.emit(SchedulerEvent{Type: EventJobDeleted, JobKey: key.normalized()})
	}
	return ok, nil
}

// ManualTriggerGroup is the group of the one-shot triggers TriggerJob
// creates. It is only a name: their Origin, OriginManual, is what tells
// them from the triggers of schedules.
const ManualTriggerGroup = "MANUAL_TRIGGER"

// TriggerJob fires a stored job now, once, with data overriding the job's
// data map. It returns the key of the one-shot trigger it created, whose
// Origin is OriginManual.
func (s *Scheduler) TriggerJob(ctx context.Context, key JobKey, data JobData) (TriggerKey, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	t := Trigger{
		Key:      NewTriggerKey(ManualTriggerGroup, "MT_"+hex.EncodeToString(b[:])),
		JobKey:   key,
		Schedule: &schedule.Simple{RepeatCount: 0},
		Data:     data,
		Priority: 0,
		Origin:   OriginManual,
	}
	if _, err := s.Schedule(ctx, t); err != nil {
		return TriggerKey{}, err
	}
	return t.Key, nil
}

// Job returns a stored job.
func (s *Scheduler) Job(ctx context.Context, key JobKey) (*JobDetail, error) {
	rec, err := s.store.JobGet(ctx, key.store())
	if err != nil {
		return nil, fmt.Errorf("chime: job %s: %w", key.normalized(), err)
	}
	return jobDetailOf(rec)
}

// Jobs returns the jobs of a group, or of every group when group is "".
func (s *Scheduler) Jobs(ctx context.Context, group string) ([]JobDetail, error) {
	recs, err := s.store.JobList(ctx, &store.JobListParams{Group: group})
	if err != nil {
		return nil, fmt.Errorf("chime: list jobs: %w", err)
	}
	out := make([]JobDetail, 0, len(recs))
	for i := range recs {
		d, err := jobDetailOf(&recs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, nil
}
