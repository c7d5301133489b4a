package chime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// JobToSchedule is one element of ScheduleJobs: a new job with its
// triggers.
type JobToSchedule struct {
	// Job is the new job. Its key must be free.
	Job JobDetail
	// Triggers are the job's triggers; their keys must be free. A trigger
	// may leave its JobKey empty. A job that is not durable needs at
	// least one.
	Triggers []Trigger
	// Pause starts the triggers paused (PauseTriggers), or not paused
	// whatever the paused groups say (ResumeTriggers). Defaults to
	// KeepPauseState: a trigger starts paused when a paused group covers
	// it.
	Pause PauseChange
}

// ScheduleJobs stores new jobs, each with its triggers, in one atomic
// step: either every job and trigger is stored, or, on any error, none.
// It is what ScheduleJob does for a new job (no Replace, no IfVersion, no
// Unschedule), for many jobs at once, in the spirit of River's
// InsertMany: SQL stores write the whole batch in a handful of multi-row
// statements and one commit, which costs the database a fraction of one
// ScheduleJob per job. Use it to create jobs in bulk, or to gather the
// jobs of many requests (say, one reminder per user action) into one
// write.
//
// Each element is validated as ScheduleJob validates its arguments; a
// *ValidationError names the element by its index, as in
// "jobs[3].triggers[0].Key.Name". Two elements with one job key or one
// trigger key are refused. A job key that is taken fails the whole call
// with ErrJobExists, a trigger key that is taken with ErrTriggerExists,
// and a calendar that does not exist with ErrCalendarNotFound; the error
// names the key. Scheduler listeners hear of the jobs once they are
// stored.
func (s *Scheduler) ScheduleJobs(ctx context.Context, jobs []JobToSchedule) error {
	if len(jobs) == 0 {
		return nil
	}
	p := &store.JobsInsertParams{Jobs: make([]store.JobInsert, 0, len(jobs))}
	jobIndex := make(map[store.Key]int, len(jobs))
	triggerIndex := make(map[store.Key]int, len(jobs))
	for i, e := range jobs {
		field := fmt.Sprintf("jobs[%d]", i)
		rec, triggers, err := s.jobWithTriggers(ctx, "Job", e.Job, e.Triggers)
		if err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				return ve.underIndex("jobs", i)
			}
			return fmt.Errorf("chime: %s: %w", field, err)
		}
		if first, dup := jobIndex[rec.Key]; dup {
			return &ValidationError{Field: field + ".Job.Key", Reason: fmt.Sprintf("%s is also the key of jobs[%d]", rec.Key, first)}
		}
		jobIndex[rec.Key] = i
		for j, t := range triggers {
			if first, dup := triggerIndex[t.Key]; dup {
				return &ValidationError{Field: fmt.Sprintf("%s.triggers[%d].Key", field, j), Reason: fmt.Sprintf("%s is also the key of a trigger of jobs[%d]", t.Key, first)}
			}
			triggerIndex[t.Key] = i
		}
		el := store.JobInsert{Job: rec, Triggers: triggers}
		switch e.Pause {
		case KeepPauseState:
		case PauseTriggers:
			el.Pause = store.PauseTriggers
		case ResumeTriggers:
			el.Pause = store.ResumeTriggers
		default:
			return &ValidationError{Field: field + ".Pause", Reason: fmt.Sprintf("%q: want %q, %q or %q", e.Pause, KeepPauseState, PauseTriggers, ResumeTriggers)}
		}
		p.Jobs = append(p.Jobs, el)
	}
	if err := s.store.JobsInsert(ctx, p); err != nil {
		return fmt.Errorf("chime: schedule %d jobs: %w", len(jobs), err)
	}
	for i, el := range p.Jobs {
		jk := jobKeyOf(el.Job.Key)
		s.emit(SchedulerEvent{Type: EventJobAdded, JobKey: jk})
		for _, t := range el.Triggers {
			s.emit(SchedulerEvent{Type: EventJobScheduled, JobKey: jk, TriggerKey: triggerKeyOf(t.Key)})
		}
		switch jobs[i].Pause {
		case PauseTriggers:
			s.emit(SchedulerEvent{Type: EventJobPaused, JobKey: jk})
		case ResumeTriggers:
			s.emit(SchedulerEvent{Type: EventJobResumed, JobKey: jk})
		}
	}
	s.engine.WakeFor(earliestFire(p.Jobs))
	return nil
}

// earliestFire returns the earliest next fire time of the triggers of
// jobs; zero when none will fire.
func earliestFire(jobs []store.JobInsert) time.Time {
	var first time.Time
	for _, j := range jobs {
		for _, t := range j.Triggers {
			if !t.NextFireTime.IsZero() && (first.IsZero() || t.NextFireTime.Before(first)) {
				first = t.NextFireTime
			}
		}
	}
	return first
}

// jobWithTriggers validates a job and its triggers as ScheduleJob does
// and returns their records: a job that is not durable needs a trigger,
// each trigger is of the job (an empty JobKey says so) and has a key of
// its own. A *ValidationError about the job is placed under jobField,
// one about a trigger under triggers[i].
func (s *Scheduler) jobWithTriggers(ctx context.Context, jobField string, job JobDetail, triggers []Trigger) (store.JobRecord, []store.TriggerRecord, error) {
	if len(triggers) == 0 && !job.Durable {
		return store.JobRecord{}, nil, &ValidationError{Field: "triggers", Reason: "a non-durable job needs at least one trigger"}
	}
	rec, err := s.jobRecord(job)
	if err != nil {
		return store.JobRecord{}, nil, placed(jobField, err)
	}
	recs := make([]store.TriggerRecord, 0, len(triggers))
	seen := make(map[store.Key]int, len(triggers))
	for i, t := range triggers {
		trec, err := s.jobTrigger(ctx, job.Key, t, seen)
		if err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				return store.JobRecord{}, nil, ve.underIndex("triggers", i)
			}
			return store.JobRecord{}, nil, err
		}
		seen[trec.Key] = i
		recs = append(recs, trec)
	}
	return rec, recs, nil
}

// jobTrigger validates t, a trigger of the job with key job, whose key
// must not be one of seen (the keys of the job's other triggers, with
// their indexes). A *ValidationError names a field of the trigger.
func (s *Scheduler) jobTrigger(ctx context.Context, job JobKey, t Trigger, seen map[store.Key]int) (store.TriggerRecord, error) {
	if t.JobKey == (JobKey{}) {
		t.JobKey = job
	}
	if t.JobKey.normalized() != job.normalized() {
		return store.TriggerRecord{}, &ValidationError{Field: "JobKey", Reason: fmt.Sprintf("%s is not the job's key %s", t.JobKey.normalized(), job.normalized())}
	}
	trec, err := s.triggerRecord(ctx, t)
	if err != nil {
		return store.TriggerRecord{}, err
	}
	if first, dup := seen[trec.Key]; dup {
		return store.TriggerRecord{}, &ValidationError{Field: "Key", Reason: fmt.Sprintf("%s is also the key of triggers[%d]", trec.Key, first)}
	}
	return trec, nil
}
