package server

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/jobversion"
)

// Limits of the job service methods.
const (
	defaultListLimit    = 50
	maxListLimit        = 500
	defaultUpcoming     = 10
	maxUpcoming         = 100
	maxBackfill         = 1000
	maxWriteAttempts    = 5
	jobAuditTargetStart = "jobs/"
)

// decisionResumed is the decision a resume records; with the pause's
// (history.DecisionPaused) it tells Explain when a job was paused.
const decisionResumed history.DecisionKind = "resumed"

// jobNotFound returns the not_found error of a job.
func jobNotFound(key chime.JobKey) *api.Error {
	return httpjson.Errorf(api.CodeNotFound, "", "job %s/%s not found", key.Group, key.Name)
}

// jobTarget names a job in the audit log.
func jobTarget(key chime.JobKey) string { return jobAuditTargetStart + key.Group + "/" + key.Name }

// schedulerErr translates the scheduler's errors about a job into API
// errors where the client is to blame.
func schedulerErr(key chime.JobKey, err error) error {
	var ve *chime.ValidationError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, chime.ErrJobNotFound):
		return jobNotFound(key)
	case errors.Is(err, chime.ErrJobExists):
		return httpjson.Errorf(api.CodeConflict, "", "job %s/%s already exists; PUT it to change it", key.Group, key.Name)
	case errors.Is(err, chime.ErrTriggerExists):
		return httpjson.Errorf(api.CodeConflict, "triggers", "a trigger of the job has the key of an existing trigger: %v", err)
	case errors.Is(err, chime.ErrCalendarNotFound):
		return httpjson.Errorf(api.CodeInvalidArgument, "triggers", "%v", err)
	case errors.As(err, &ve):
		return httpjson.Errorf(api.CodeInvalidArgument, "", "%v", err)
	}
	return err
}

// jobWriteErr translates the errors of the scheduler's ScheduleJob as
// schedulerErr does, naming the field of a refused job or trigger as the
// API's job object does; triggerAt maps the index of a trigger in the
// write to its index in the request (nil: the same).
func jobWriteErr(key chime.JobKey, err error, triggerAt []int) error {
	var ve *chime.ValidationError
	if errors.As(err, &ve) {
		return jobInvalid(ve, triggerAt)
	}
	return schedulerErr(key, err)
}

// Bounds of the store reads of one ListJobs request.
const (
	// listScanBatch is the fewest jobs ListJobs reads from the store at a
	// time when filters it applies itself may skip jobs.
	listScanBatch = 250
	// maxListScan bounds the jobs one ListJobs request reads from the
	// store; a filter that matches few jobs then returns a short page, or
	// an empty one, with a next cursor.
	maxListScan = 2000
)

// ListJobs returns a page of the jobs q selects, ordered by group and
// name. Group is applied by the store, which reads the page from its
// index; text, state and failing are applied here, reading pages of jobs
// until this page is full or maxListScan jobs were read. The cursor is the
// key of the last job the request looked at, returned or not, so the next
// page continues right after it: a job is never skipped or repeated, and
// Next is empty only when no job is left to look at. A filtered page may
// therefore hold fewer than limit jobs, or none, and still have a Next.
//
// A page costs a bounded number of reads, whatever the number of jobs:
// per batch of jobs read, two store reads and one history statement per
// 100 jobs of the batch; one batch without filters, at most
// maxListScan/listScanBatch with them.
func (s *Server) ListJobs(ctx context.Context, q api.JobQuery) (*api.JobList, error) {
	l, err := newJobListing(q)
	if err != nil {
		return nil, err
	}
	list := &api.JobList{Jobs: []api.Job{}}
	after := l.after
	for scanned := 0; ; {
		batch := l.limit
		if l.filtered {
			batch = min(max(l.limit+1, s.listBatch), s.listMaxScan-scanned)
		}
		page, err := s.sched.JobsPage(ctx, chime.JobPageQuery{Group: q.Group, After: after, Limit: batch})
		if err != nil {
			return nil, err
		}
		scanned += len(page.Jobs)
		// Filters first, then the status of the jobs they keep, which the
		// failing filter needs.
		kept, err := l.match(page.Jobs)
		if err != nil {
			return nil, err
		}
		if err := s.addSummaries(ctx, kept); err != nil {
			return nil, err
		}
		for _, j := range kept {
			if q.Failing && !j.Status.Failing {
				continue
			}
			if len(list.Jobs) == l.limit {
				// Another job matches: the next page starts after the
				// last one of this one.
				last := list.Jobs[l.limit-1]
				list.Next = encodeJobCursor(chime.NewJobKey(last.Group, last.Name))
				return list, nil
			}
			list.Jobs = append(list.Jobs, j)
		}
		switch {
		case page.Next == nil:
			return list, nil
		case !l.filtered || scanned >= s.listMaxScan:
			list.Next = encodeJobCursor(*page.Next)
			return list, nil
		}
		after = *page.Next
	}
}

// jobListing is a checked ListJobs query.
type jobListing struct {
	limit int
	after chime.JobKey
	// text is the query's text, lower-cased; state its state.
	text, state string
	// filtered is set when a filter may leave jobs of a batch out.
	filtered bool
}

// newJobListing checks q.
func newJobListing(q api.JobQuery) (*jobListing, error) {
	l := &jobListing{limit: q.Limit, text: strings.ToLower(q.Text), state: q.State,
		filtered: q.Text != "" || q.State != "" || q.Failing}
	switch {
	case l.limit == 0:
		l.limit = defaultListLimit
	case l.limit < 0 || l.limit > maxListLimit:
		return nil, invalidf("limit", "%d: want 1 to %d", q.Limit, maxListLimit)
	}
	switch q.State {
	case "", "paused", "active":
	default:
		return nil, invalidf("state", "%q: want paused or active", q.State)
	}
	if q.Cursor != "" {
		var err error
		if l.after, err = decodeJobCursor(q.Cursor); err != nil {
			return nil, invalidf("cursor", "%q is not a cursor this server returned", q.Cursor)
		}
	}
	return l, nil
}

// match returns the jobs of a batch that pass the text and state filters,
// with their triggers' part of the status.
func (l *jobListing) match(batch []chime.JobWithTriggers) ([]api.Job, error) {
	var kept []api.Job
	for i := range batch {
		p := &batch[i]
		d := &p.Job
		if l.text != "" && !strings.Contains(strings.ToLower(d.Key.Group+"/"+d.Key.Name+" "+d.Description), l.text) {
			continue
		}
		j, err := jobToAPI(d, p.Triggers)
		if err != nil {
			return nil, err
		}
		j.Paused = j.Paused || allPaused(p.Triggers)
		if (l.state == "paused" && !j.Paused) || (l.state == "active" && j.Paused) {
			continue
		}
		j.Status = triggerStatus(p.Triggers)
		kept = append(kept, *j)
	}
	return kept, nil
}

// addSummaries adds the history's part of their status to jobs, in one
// read for all of them.
func (s *Server) addSummaries(ctx context.Context, jobs []api.Job) error {
	refs := make([]history.JobRef, len(jobs))
	for i, j := range jobs {
		refs[i] = history.JobRef{Group: j.Group, Name: j.Name}
	}
	summaries, err := s.history.JobSummaries(ctx, refs)
	if err != nil {
		return err
	}
	for i, j := range jobs {
		addSummary(j.Status, summaries[refs[i]])
	}
	return nil
}

// A job cursor is the key of the last job a page looked at, as
// "group\x00name" in unpadded URL-safe base64. Clients treat it as opaque.
func encodeJobCursor(key chime.JobKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key.Group + "\x00" + key.Name))
}

func decodeJobCursor(c string) (chime.JobKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return chime.JobKey{}, err
	}
	group, name, ok := strings.Cut(string(b), "\x00")
	if !ok {
		return chime.JobKey{}, errors.New("server: job cursor without a separator")
	}
	return chime.JobKey{Group: group, Name: name}, nil
}

// jobTriggers returns the triggers of one job.
func (s *Server) jobTriggers(ctx context.Context, key chime.JobKey) ([]chime.TriggerInfo, error) {
	return s.sched.Triggers(ctx, &chime.TriggerFilter{JobKey: &key})
}

// allPaused reports whether a job has schedule triggers and all of them
// are paused.
func allPaused(triggers []chime.TriggerInfo) bool {
	n := 0
	for _, t := range triggers {
		if serverMade(t.Origin) {
			continue
		}
		if t.State != chime.TriggerPaused {
			return false
		}
		n++
	}
	return n > 0
}

// triggerStatus returns the part of a job's status its triggers tell: the
// next fire time.
func triggerStatus(triggers []chime.TriggerInfo) *api.JobStatus {
	st := &api.JobStatus{}
	for _, t := range triggers {
		if t.NextFireTime.IsZero() || t.State == chime.TriggerPaused {
			continue
		}
		if st.NextFireTime == nil || t.NextFireTime.Before(*st.NextFireTime) {
			st.NextFireTime = new(t.NextFireTime)
		}
	}
	return st
}

// addSummary adds to a job's status what the history knows of its recent
// runs.
func addSummary(st *api.JobStatus, sum history.JobSummary) {
	if !sum.LastSuccess.IsZero() {
		st.LastSuccess = new(sum.LastSuccess)
	}
	st.Failing = sum.LastFinished != "" && sum.LastFinished != history.OutcomeSucceeded
	if !sum.LastRun.IsZero() {
		st.LastOutcome = string(sum.LastOutcome)
		st.LastRun = new(sum.LastRun)
	}
	st.Running = sum.Running
}

// jobStatus computes a job's status from its triggers and the history.
func (s *Server) jobStatus(ctx context.Context, key chime.JobKey, triggers []chime.TriggerInfo) (*api.JobStatus, error) {
	ref := history.JobRef{Group: key.Group, Name: key.Name}
	sums, err := s.history.JobSummaries(ctx, []history.JobRef{ref})
	if err != nil {
		return nil, err
	}
	st := triggerStatus(triggers)
	addSummary(st, sums[ref])
	return st, nil
}

// GetJob returns a job with its triggers and status.
func (s *Server) GetJob(ctx context.Context, group, name string) (*api.Job, error) {
	j, _, err := s.readJob(ctx, chime.NewJobKey(group, name))
	return j, err
}

// readJob reads job key as GetJob answers it, and its spec as
// versionSpec reads it, with one read of the job and one of its triggers.
func (s *Server) readJob(ctx context.Context, key chime.JobKey) (answer, spec *api.Job, err error) {
	d, err := s.sched.Job(ctx, key)
	if err != nil {
		return nil, nil, schedulerErr(key, err)
	}
	triggers, err := s.jobTriggers(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	j, err := jobToAPI(d, triggers)
	if err != nil {
		return nil, nil, err
	}
	spec = specForm(*j)
	j.Paused = j.Paused || allPaused(triggers)
	if j.Status, err = s.jobStatus(ctx, key, triggers); err != nil {
		return nil, nil, err
	}
	return j, spec, nil
}

// CreateJob stores a new job; a job with its key is a conflict.
func (s *Server) CreateJob(ctx context.Context, actor string, job api.Job) (*api.Job, error) {
	if err := s.refuseWorkflowJob(ctx, job.Group, job.Name, "created"); err != nil {
		return nil, err
	}
	if job.Type == typeShell {
		if err := s.checkShellWrite(ctx, chime.NewJobKey(job.Group, job.Name), typeShell, "creating"); err != nil {
			return nil, err
		}
	}
	w, err := s.jobFromAPI(ctx, job)
	if err != nil {
		return nil, err
	}
	key := w.detail.Key
	if err := s.sched.ScheduleJob(ctx, w.detail, w.triggers, &chime.ScheduleJobOptions{Pause: w.pauseChange(false)}); err != nil {
		if errors.Is(err, chime.ErrTriggerExists) {
			// The store refuses a taken trigger key; which trigger, and
			// whose, is read only then, not before every create.
			if err := s.checkTriggerKeys(ctx, key, w.triggers); err != nil {
				return nil, err
			}
		}
		return nil, jobWriteErr(key, err, nil)
	}
	// The version is built from the job read back for the answer, rather
	// than read again.
	stored, spec, err := s.readJob(ctx, key)
	if err != nil {
		return nil, err
	}
	rec, done := recordCtx(ctx)
	s.recordVersion(rec, actor, jobversion.Created, key, spec, stored.Version, 0)
	done()
	s.audit(ctx, actor, auditJobCreate, jobTarget(key), map[string]any{"version": stored.Version, "type": stored.Type})
	stored.Warnings = s.warn(ctx, actor, jobTarget(key), w.warnings)
	return stored, nil
}

// checkTriggerKeys refuses triggers whose key belongs to another job's
// trigger, which an upsert must not take over.
func (s *Server) checkTriggerKeys(ctx context.Context, job chime.JobKey, triggers []chime.Trigger) error {
	for i, t := range triggers {
		ti, err := s.sched.Trigger(ctx, t.Key)
		switch {
		case errors.Is(err, chime.ErrTriggerNotFound):
			continue
		case err != nil:
			return err
		case ti.JobKey != job:
			return httpjson.Errorf(api.CodeConflict, fmt.Sprintf("triggers[%d].name", i),
				"trigger %s/%s belongs to job %s/%s; choose another name", t.Key.Group, t.Key.Name, ti.JobKey.Group, ti.JobKey.Name)
		}
	}
	return nil
}

// PutJob creates or replaces a job by key, reconciling its triggers:
// triggers no longer listed are removed, unchanged ones keep their firing
// state, and an upsert that changes nothing writes nothing. keep lists the
// fields of job, by JSON name, that the request left out: an existing job
// keeps its stored values of them (the triggers included, untouched), so
// that the same PUT twice changes nothing; see keepStored. With ifMatch
// set, the write happens only if the stored job has that version, checked
// atomically with the write.
func (s *Server) PutJob(ctx context.Context, actor string, job api.Job, ifMatch int64, keep []string) (*api.Job, bool, error) {
	if err := s.refuseWorkflowJob(ctx, job.Group, job.Name, "changed"); err != nil {
		return nil, false, err
	}
	return s.putJob(ctx, actor, job, ifMatch, keep, 0)
}

// putJob is PutJob; rollbackOf, when not 0, is the version a rollback
// writes, which the version it records names.
func (s *Server) putJob(ctx context.Context, actor string, job api.Job, ifMatch int64, keep []string, rollbackOf int64) (*api.Job, bool, error) {
	for range maxWriteAttempts {
		merged, base, keepTriggers, err := s.keepStored(ctx, job, keep)
		if err != nil {
			return nil, false, err
		}
		if err := s.checkShellWrite(ctx, chime.NewJobKey(job.Group, job.Name), merged.Type, "writing"); err != nil {
			return nil, false, err
		}
		w, err := s.jobFromAPI(ctx, merged)
		if err != nil {
			return nil, false, err
		}
		w.keepTriggers = keepTriggers
		key := w.detail.Key
		if err := s.checkTriggerKeys(ctx, key, w.triggers); err != nil {
			return nil, false, err
		}
		created, changed, err := s.putJobOnce(ctx, w, ifMatch, base)
		if errors.Is(err, errRaced) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		stored, err := s.GetJob(ctx, key.Group, key.Name)
		if err != nil {
			return nil, false, err
		}
		if changed {
			action, kind := auditJobUpdate, jobversion.Updated
			if created {
				action, kind = auditJobCreate, jobversion.Created
			}
			if rollbackOf != 0 {
				kind = jobversion.RolledBack
			}
			s.recordJobVersion(ctx, actor, kind, key, rollbackOf)
			s.audit(ctx, actor, action, jobTarget(key), map[string]any{"version": stored.Version, "type": stored.Type})
		}
		stored.Warnings = s.warn(ctx, actor, jobTarget(key), w.warnings)
		return stored, created, nil
	}
	key := chime.NewJobKey(job.Group, job.Name)
	return nil, false, httpjson.Errorf(api.CodeConflict, "", "job %s/%s changed under this request %d times; try again", key.Group, key.Name, maxWriteAttempts)
}

// keepStored fills the fields of job that keep names from the stored job
// with its key, if there is one: description, type, http, shell, executor, data,
// timeout, retry, overlap, requests_recovery, alerts and paused take the
// stored values, and triggers, when kept, are left as they are
// (keepTriggers). group and name are the path's, and version, status and
// warnings are read-only, so keeping them changes nothing. It returns the
// version it read, which the write must still find, or 0 when it read
// nothing.
func (s *Server) keepStored(ctx context.Context, job api.Job, keep []string) (merged api.Job, version int64, keepTriggers bool, err error) {
	if len(keep) == 0 {
		return job, 0, false, nil
	}
	key := chime.NewJobKey(job.Group, job.Name)
	d, err := s.sched.Job(ctx, key)
	switch {
	case errors.Is(err, chime.ErrJobNotFound):
		return job, 0, false, nil
	case err != nil:
		return job, 0, false, err
	}
	cur, err := jobToAPI(d, nil)
	if err != nil {
		return job, 0, false, err
	}
	for _, field := range keep {
		switch field {
		case "description":
			job.Description = cur.Description
		case "type":
			job.Type = cur.Type
		case "http":
			job.HTTP = cur.HTTP
		case "shell":
			job.Shell = cur.Shell
		case "executor":
			job.Executor = cur.Executor
		case "data":
			job.Data = cur.Data
		case "triggers":
			keepTriggers = true
		case "timeout":
			job.Timeout = cur.Timeout
		case "retry":
			job.Retry = cur.Retry
		case "overlap":
			job.Overlap = cur.Overlap
		case "pool":
			job.Pool = cur.Pool
		case "pool_max_wait":
			job.PoolMaxWait = cur.PoolMaxWait
		case "requests_recovery":
			job.RequestsRecovery = cur.RequestsRecovery
		case "alerts":
			job.Alerts = cur.Alerts
		case "paused":
			job.Paused = cur.Paused
		case "children":
			job.Children = cur.Children
		case "shards":
			job.Shards = cur.Shards
		case "shard_params":
			job.ShardParams = cur.ShardParams
		}
	}
	return job, d.Version, keepTriggers, nil
}

// errRaced reports a write that lost a race with another one, which
// PutJob tries again.
var errRaced = errors.New("server: concurrent write")

// putJobOnce makes one attempt at PutJob's write. base, when not 0, is
// the version the write was merged from: a job at another version, or a
// missing one, lost a race.
func (s *Server) putJobOnce(ctx context.Context, w *jobWrite, ifMatch, base int64) (created, changed bool, err error) {
	key := w.detail.Key
	cur, err := s.sched.Job(ctx, key)
	switch {
	case errors.Is(err, chime.ErrJobNotFound):
		if ifMatch != 0 {
			return false, false, httpjson.Errorf(api.CodeVersionMismatch, "", "job %s/%s does not exist, and If-Match named version %d", key.Group, key.Name, ifMatch)
		}
		if base != 0 {
			return false, false, errRaced
		}
		return s.createJob(ctx, w)
	case err != nil:
		return false, false, err
	case ifMatch != 0 && cur.Version != ifMatch:
		return false, false, versionMismatch(key, cur.Version, ifMatch)
	case base != 0 && cur.Version != base:
		return false, false, errRaced
	}
	existing, err := s.jobTriggers(ctx, key)
	if err != nil {
		return false, false, err
	}
	write, writeAt, unschedule := w.triggerChanges(existing)
	if sameJob(cur, w) && len(write) == 0 && len(unschedule) == 0 {
		return false, false, nil
	}
	wasPaused := false
	if st, err := settingsOf(cur); err == nil {
		wasPaused = st.Paused
	}
	// One atomic write: the job, the triggers that changed, the removal of
	// those no longer listed and the paused state are all stored, or,
	// should anything fail, none of them.
	err = s.sched.ScheduleJob(ctx, w.detail, write, &chime.ScheduleJobOptions{
		IfVersion: cur.Version, Unschedule: unschedule, Pause: w.pauseChange(wasPaused),
	})
	switch {
	case errors.Is(err, chime.ErrVersionMismatch) && ifMatch != 0:
		return false, false, httpjson.Errorf(api.CodeVersionMismatch, "", "job %s/%s changed since version %d", key.Group, key.Name, ifMatch)
	case errors.Is(err, chime.ErrVersionMismatch), errors.Is(err, chime.ErrJobNotFound):
		return false, false, errRaced
	case err != nil:
		return false, false, jobWriteErr(key, err, writeAt)
	}
	return false, true, nil
}

// createJob stores w, a job that did not exist, with its triggers, in one
// write; another writer that created it first is errRaced.
func (s *Server) createJob(ctx context.Context, w *jobWrite) (created, changed bool, err error) {
	err = s.sched.ScheduleJob(ctx, w.detail, w.triggers, &chime.ScheduleJobOptions{Pause: w.pauseChange(false)})
	switch {
	case errors.Is(err, chime.ErrJobExists):
		return false, false, errRaced
	case err != nil:
		return false, false, jobWriteErr(w.detail.Key, err, nil)
	}
	return true, true, nil
}

// triggerChanges compares w's triggers with the job's existing ones: it
// returns those to write (new or changed), the index in w.triggers of each,
// and the keys of the stored schedule triggers w no longer lists, sorted,
// to unschedule. The server's one-shot triggers are never unscheduled, nor
// any trigger when w keeps the stored ones.
func (w *jobWrite) triggerChanges(existing []chime.TriggerInfo) (write []chime.Trigger, writeAt []int, unschedule []chime.TriggerKey) {
	stored := make(map[chime.TriggerKey]chime.TriggerInfo)
	for _, t := range existing {
		if !serverMade(t.Origin) && !w.keepTriggers {
			stored[t.Key] = t
		}
	}
	for i, t := range w.triggers {
		if old, ok := stored[t.Key]; !ok || !sameTrigger(old, t) {
			write = append(write, t)
			writeAt = append(writeAt, i)
		}
		delete(stored, t.Key)
	}
	unschedule = slices.SortedFunc(maps.Keys(stored), func(a, b chime.TriggerKey) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Name, b.Name))
	})
	return write, writeAt, unschedule
}

// pauseChange is what a write of w does to the paused state of the job's
// triggers, the server's one-shot ones included: a paused job pauses them
// all, and a job that was paused (wasPaused) and no longer is resumes
// them.
func (w *jobWrite) pauseChange(wasPaused bool) chime.PauseChange {
	switch {
	case w.plan.settings.Paused:
		return chime.PauseTriggers
	case wasPaused:
		return chime.ResumeTriggers
	}
	return chime.KeepPauseState
}

// versionMismatch is the error of a write whose If-Match is not the
// stored version.
func versionMismatch(key chime.JobKey, stored, ifMatch int64) *api.Error {
	return httpjson.Errorf(api.CodeVersionMismatch, "", "job %s/%s is at version %d, not %d: someone changed it; read it again", key.Group, key.Name, stored, ifMatch)
}

// DeleteJob deletes a job, its triggers and its pending runs. Running
// executions finish; the history stays. The jobs of a workflow go with
// their workflow only (refuseWorkflowJob).
func (s *Server) DeleteJob(ctx context.Context, actor, group, name string) error {
	if err := s.refuseWorkflowJob(ctx, group, name, "deleted"); err != nil {
		return err
	}
	return s.deleteJob(ctx, actor, group, name)
}

// deleteJob is DeleteJob for any job, a workflow's included.
func (s *Server) deleteJob(ctx context.Context, actor, group, name string) error {
	key := chime.NewJobKey(group, name)
	if err := s.checkShellWrite(ctx, key, "", "deleting"); err != nil {
		return err
	}
	// The version of a delete is the job as it was.
	spec, _, err := s.versionSpec(ctx, key)
	switch {
	case errors.Is(err, chime.ErrJobNotFound):
		return jobNotFound(key)
	case err != nil:
		return err
	}
	ok, err := s.sched.DeleteJob(ctx, key)
	if err != nil {
		return err
	}
	if !ok {
		return jobNotFound(key)
	}
	rec, done := recordCtx(ctx)
	defer done()
	s.recordVersion(rec, actor, jobversion.Deleted, key, spec, 0, 0)
	s.metrics.jobDeleted(key)
	s.audit(ctx, actor, auditJobDelete, jobTarget(key), nil)
	return nil
}

// PauseJob pauses every trigger of the job, retries and pending runs
// included, and records it: the job's version changes, and explanations
// of its fire times meanwhile say it was paused.
func (s *Server) PauseJob(ctx context.Context, actor, group, name string) error {
	if err := s.refuseWorkflowJob(ctx, group, name, "paused"); err != nil {
		return err
	}
	return s.setPaused(ctx, actor, chime.NewJobKey(group, name), true)
}

// ResumeJob resumes the job's triggers. Fire times missed meanwhile follow
// each trigger's misfire instruction.
func (s *Server) ResumeJob(ctx context.Context, actor, group, name string) error {
	if err := s.refuseWorkflowJob(ctx, group, name, "resumed"); err != nil {
		return err
	}
	return s.setPaused(ctx, actor, chime.NewJobKey(group, name), false)
}

func (s *Server) setPaused(ctx context.Context, actor string, key chime.JobKey, paused bool) error {
	for range maxWriteAttempts {
		d, err := s.sched.Job(ctx, key)
		if err != nil {
			return schedulerErr(key, err)
		}
		st, err := settingsOf(d)
		if err != nil {
			return err
		}
		changed := st.Paused != paused && d.Durable
		if changed {
			st.Paused = paused
			if d.Metadata, err = json.Marshal(st); err != nil {
				return fmt.Errorf("server: encoding job settings: %w", err)
			}
			err = s.sched.AddJob(ctx, *d, &chime.AddJobOptions{IfVersion: d.Version})
			if errors.Is(err, chime.ErrVersionMismatch) {
				continue
			}
			if err != nil {
				return schedulerErr(key, err)
			}
		}
		action, kind, verb := auditJobResume, decisionResumed, "resume"
		if paused {
			err, action, kind, verb = s.sched.PauseJob(ctx, key), auditJobPause, history.DecisionPaused, "pause"
		} else {
			err = s.sched.ResumeJob(ctx, key)
		}
		if err != nil {
			return err
		}
		rec, done := recordCtx(ctx)
		defer done()
		s.decide(rec, &attempt{job: key}, kind, verb+" by "+actor, "")
		if changed {
			s.recordJobVersion(rec, actor, jobversion.Updated, key, 0)
		}
		s.audit(rec, actor, action, jobTarget(key), nil)
		return nil
	}
	return httpjson.Errorf(api.CodeConflict, "", "job %s/%s changed under this request %d times; try again", key.Group, key.Name, maxWriteAttempts)
}

// RunJob runs the job now, once, with params merged over its data.
func (s *Server) RunJob(ctx context.Context, actor, group, name string, req api.RunRequest) (*api.Accepted, error) {
	key := chime.NewJobKey(group, name)
	if n, err := dataSize(req.Params); err != nil || n > s.cfg.MaxJobDataBytes {
		return nil, invalidf("params", "encode to %d bytes, more than this server's limit of %d", n, s.cfg.MaxJobDataBytes)
	}
	if err := s.refuseWorkflowJob(ctx, group, name, "run by hand"); err != nil {
		return nil, err
	}
	d, err := s.sched.Job(ctx, key)
	if err != nil {
		return nil, schedulerErr(key, err)
	}
	if u := shellCaller(ctx); u != nil && d.Type == typeShell && len(req.Params) > 0 {
		return nil, denyShell(u, "running with parameters", key)
	}
	id := newID()
	meta, err := factsMeta(runFacts{ID: id, Manual: true})
	if err != nil {
		return nil, err
	}
	t := chime.Trigger{
		Key:      chime.NewTriggerKey(chime.ManualTriggerGroup, id),
		JobKey:   key,
		Schedule: &schedule.Simple{},
		Origin:   chime.OriginManual,
		Metadata: meta,
	}
	if len(req.Params) > 0 {
		t.Data = chime.JobData(maps.Clone(req.Params))
	}
	if _, err := s.sched.Schedule(ctx, t); err != nil {
		return nil, schedulerErr(key, err)
	}
	s.audit(ctx, actor, auditJobRun, jobTarget(key), map[string]any{"execution_id": id, "params": len(req.Params)})
	return &api.Accepted{ExecutionIDs: []string{id}, Count: 1}, nil
}

// Backfill runs the job once for each fire time of its triggers (or of
// one) in [From, To), as if each had fired then: each run's scheduled
// time is the fire time it stands for. Fire times before a trigger's
// start time count too, so that a new job can catch up.
func (s *Server) Backfill(ctx context.Context, actor, group, name string, req api.BackfillRequest) (*api.Accepted, error) {
	key := chime.NewJobKey(group, name)
	switch {
	case req.From.IsZero():
		return nil, invalidf("from", "is required")
	case req.To.IsZero():
		return nil, invalidf("to", "is required")
	case !req.From.Before(req.To):
		return nil, invalidf("to", "%s is not after from %s", req.To.Format(time.RFC3339), req.From.Format(time.RFC3339))
	}
	if err := s.refuseWorkflowJob(ctx, group, name, "backfilled"); err != nil {
		return nil, err
	}
	if _, err := s.sched.Job(ctx, key); err != nil {
		return nil, schedulerErr(key, err)
	}
	triggers, err := s.jobTriggers(ctx, key)
	if err != nil {
		return nil, err
	}
	type run struct {
		at time.Time
		t  chime.TriggerInfo
	}
	var runs []run
	found := false
	for _, t := range triggers {
		if serverMade(t.Origin) || (req.Trigger != "" && t.Key.Name != req.Trigger) {
			continue
		}
		found = true
		cal, err := s.calendarOf(ctx, t.CalendarName)
		if err != nil {
			return nil, err
		}
		timing := schedule.Trigger{Schedule: t.Schedule, StartTime: req.From, EndTime: t.EndTime}
		if t.Schedule.Kind() == schedule.KindSimple {
			// A simple schedule counts from its own start.
			timing.StartTime = t.StartTime
		}
		for at := timing.FireTimeAfter(req.From.Add(-time.Millisecond)); !at.IsZero() && at.Before(req.To); at = timing.FireTimeAfter(at) {
			if cal != nil && !cal.Includes(at) {
				continue
			}
			if len(runs) == maxBackfill {
				return nil, invalidf("to", "the range holds more than %d fire times; backfill a shorter range", maxBackfill)
			}
			runs = append(runs, run{at: at, t: t})
		}
	}
	switch {
	case req.Trigger != "" && !found:
		return nil, invalidf("trigger", "job %s/%s has no trigger named %q", key.Group, key.Name, req.Trigger)
	case !found:
		return nil, invalidf("", "job %s/%s has no trigger whose fire times could be backfilled", key.Group, key.Name)
	}
	slices.SortStableFunc(runs, func(a, b run) int { return a.at.Compare(b.at) })
	acc := &api.Accepted{ExecutionIDs: []string{}}
	for _, r := range runs {
		id := newID()
		meta, err := factsMeta(runFacts{
			ID: id, ScheduledTime: r.at, TriggerGroup: r.t.Key.Group, TriggerName: r.t.Key.Name, Manual: true,
		})
		if err != nil {
			return nil, err
		}
		if _, err := s.sched.Schedule(ctx, chime.Trigger{
			Key: chime.NewTriggerKey(backfillGroup, id), JobKey: key, Schedule: &schedule.Simple{},
			Data: r.t.Data.Clone(), Origin: chime.OriginBackfill, Metadata: meta,
		}); err != nil {
			return acc, schedulerErr(key, err)
		}
		acc.ExecutionIDs = append(acc.ExecutionIDs, id)
		acc.Count++
	}
	s.audit(ctx, actor, auditJobBackfill, jobTarget(key), map[string]any{
		"from": req.From, "to": req.To, "trigger": req.Trigger, "count": acc.Count,
	})
	return acc, nil
}

// calendarOf loads a calendar by name; "" is none.
func (s *Server) calendarOf(ctx context.Context, name string) (schedule.Calendar, error) {
	if name == "" {
		return nil, nil
	}
	cal, err := s.sched.Calendar(ctx, name)
	if err != nil {
		return nil, err
	}
	return cal, nil
}

// UpcomingFireTimes returns the job's next fire times across its triggers
// that are not paused, earliest first, marking those next to a
// daylight-saving change.
func (s *Server) UpcomingFireTimes(ctx context.Context, group, name string, count int) ([]api.FireTime, error) {
	switch {
	case count == 0:
		count = defaultUpcoming
	case count < 0 || count > maxUpcoming:
		return nil, invalidf("count", "%d: want 1 to %d", count, maxUpcoming)
	}
	key := chime.NewJobKey(group, name)
	if _, err := s.sched.Job(ctx, key); err != nil {
		return nil, schedulerErr(key, err)
	}
	triggers, err := s.jobTriggers(ctx, key)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var out []api.FireTime
	for _, t := range triggers {
		if t.State == chime.TriggerPaused || t.NextFireTime.IsZero() {
			continue
		}
		times, err := s.sched.UpcomingFireTimes(ctx, t.Key, count)
		if err != nil {
			return nil, err
		}
		for ft, changed := range schedule.OffsetChanges(now, times, scheduleLocation(t.Schedule)) {
			out = append(out, api.FireTime{Time: ft, DST: changed})
		}
	}
	slices.SortStableFunc(out, func(a, b api.FireTime) int { return a.Time.Compare(b.Time) })
	if len(out) > count {
		out = out[:count]
	}
	if out == nil {
		out = []api.FireTime{}
	}
	return out, nil
}

// scheduleLocation returns the time zone a schedule is evaluated in.
func scheduleLocation(sc schedule.Schedule) *time.Location {
	switch v := sc.(type) {
	case *schedule.Cron:
		return v.Location()
	case *schedule.CalendarInterval:
		return cmp.Or(v.Location, time.UTC)
	case *schedule.DailyTimeInterval:
		return cmp.Or(v.Location, time.UTC)
	}
	return time.UTC
}

// eachJob calls fn with every stored job of group ("" for every group),
// in key order, read pageSize at a time without their triggers, so that
// a pass over the jobs holds no more than a page of them in memory
// however many are stored. It stops at fn's first error.
func (s *Server) eachJob(ctx context.Context, group string, pageSize int, fn func(*chime.JobDetail) error) error {
	q := chime.JobPageQuery{Group: group, Limit: pageSize, WithoutTriggers: true}
	for {
		page, err := s.sched.JobsPage(ctx, q)
		if err != nil {
			return err
		}
		for i := range page.Jobs {
			if err := fn(&page.Jobs[i].Job); err != nil {
				return err
			}
		}
		if page.Next == nil {
			return nil
		}
		q.After = *page.Next
	}
}
