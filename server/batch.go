package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// CreateJobs creates new jobs in one atomic step (POST
// /api/v1/jobs/batch): each job is checked as CreateJob checks it, and
// then all are stored with one Scheduler.ScheduleJobs, or none is. A
// problem with one job is an error whose field starts with its index
// ("jobs[3].triggers[0].schedule"); a taken job or trigger key is a
// conflict naming the key.
func (s *Server) CreateJobs(ctx context.Context, actor string, jobs []api.Job) (*api.JobBatchResult, error) {
	switch {
	case len(jobs) == 0:
		return nil, invalidf("jobs", "is empty: list the jobs to create")
	case len(jobs) > api.MaxJobBatch:
		return nil, invalidf("jobs", "lists %d jobs, more than the %d one request may create", len(jobs), api.MaxJobBatch)
	}
	writes := make([]*jobWrite, len(jobs))
	batch := make([]chime.JobToSchedule, len(jobs))
	// The start time the scheduler would give triggers without one, given
	// here so that the versions are built from what is written.
	at := s.now()
	for i, job := range jobs {
		if job.Type == typeShell {
			if err := s.checkShellWrite(ctx, chime.NewJobKey(job.Group, job.Name), typeShell, "creating"); err != nil {
				return nil, atJob(i, err)
			}
		}
		w, err := s.jobFromAPI(ctx, job)
		if err != nil {
			return nil, atJob(i, err)
		}
		for j := range w.triggers {
			if w.triggers[j].StartTime.IsZero() {
				w.triggers[j].StartTime = at
			}
		}
		writes[i] = w
		batch[i] = chime.JobToSchedule{Job: w.detail, Triggers: w.triggers, Pause: w.pauseChange(false)}
	}
	if err := s.sched.ScheduleJobs(ctx, batch); err != nil {
		return nil, batchErr(err)
	}
	s.recordCreatedVersions(ctx, actor, writes)
	res := &api.JobBatchResult{Created: make([]api.CreatedJob, len(jobs))}
	entries := make([]*history.AuditEntry, len(writes))
	for i, w := range writes {
		key := w.detail.Key
		entries[i] = &history.AuditEntry{Time: s.now(), Actor: actor, Action: auditJobCreate, Target: jobTarget(key),
			Detail: map[string]any{"type": w.detail.Type, "batch": len(jobs)}}
	}
	s.auditAll(ctx, entries)
	for i, w := range writes {
		key := w.detail.Key
		res.Created[i] = api.CreatedJob{Group: key.Group, Name: key.Name, Warnings: s.warn(ctx, actor, jobTarget(key), w.warnings)}
	}
	return res, nil
}

// atJob places a client's mistake about jobs[i] at that job: its field
// gets the prefix "jobs[i]". Other errors pass through.
func atJob(i int, err error) error {
	var apiErr *api.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	placed := *apiErr
	placed.Field = fmt.Sprintf("jobs[%d]", i)
	if apiErr.Field != "" {
		placed.Field += "." + apiErr.Field
	}
	return &placed
}

// batchErr translates an error of ScheduleJobs as jobWriteErr does for
// one job: the store names the taken key or missing calendar in the
// message, and a ValidationError the field of its element
// ("jobs[3].triggers[0].priority").
func batchErr(err error) error {
	var ve *chime.ValidationError
	switch {
	case errors.As(err, &ve):
		return jobInvalid(ve, nil)
	case errors.Is(err, chime.ErrJobExists):
		return httpjson.Errorf(api.CodeConflict, "jobs", "a job's key is taken; PUT a job to change it: %v", err)
	case errors.Is(err, chime.ErrTriggerExists):
		return httpjson.Errorf(api.CodeConflict, "jobs", "a trigger's key is taken: %v", err)
	case errors.Is(err, chime.ErrCalendarNotFound):
		return httpjson.Errorf(api.CodeInvalidArgument, "jobs", "%v", err)
	}
	return err
}
