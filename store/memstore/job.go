package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/chime-scheduler/chime/store"
)

// JobUpsert stores a job. Without Replace an existing key fails with
// [store.ErrJobExists]. Replacing keeps the job's triggers. A non-zero
// IfVersion replaces only a job stored with that version.
func (s *Store) JobUpsert(ctx context.Context, p *store.JobUpsertParams) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkUpsert(&p.Job, p.Replace, p.IfVersion); err != nil {
		return err
	}
	s.putJob(&p.Job)
	return nil
}

// checkUpsert refuses to store j as JobUpsert would with replace and
// expect.
func (s *Store) checkUpsert(j *store.JobRecord, replace bool, expect int64) error {
	old, ok := s.jobs[j.Key]
	switch {
	case expect != 0 && !ok:
		return fmt.Errorf("%w: %s", store.ErrJobNotFound, j.Key)
	case expect != 0 && old.Version != expect:
		return fmt.Errorf("%w: job %s is at version %d, not %d", store.ErrVersionMismatch, j.Key, old.Version, expect)
	case ok && !replace && expect == 0:
		return fmt.Errorf("%w: %s", store.ErrJobExists, j.Key)
	}
	return nil
}

// putJob stores a copy of j, which checkUpsert accepted, counting the
// write in its Version.
func (s *Store) putJob(src *store.JobRecord) {
	j := copyJob(src)
	j.Version = 1
	if old, ok := s.jobs[j.Key]; ok {
		j.Version = old.Version + 1
	}
	s.jobs[j.Key] = &j
}

// JobWrite stores a job with changes to its triggers in one step; see
// [store.JobStore]. Everything is checked before anything changes, under
// the store's one lock.
func (s *Store) JobWrite(ctx context.Context, p *store.JobWriteParams) (*store.JobWriteResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if err := s.checkUpsert(&p.Job, p.Replace, p.IfVersion); err != nil {
		return nil, err
	}
	replace := p.Replace || p.IfVersion != 0
	var deleting []*trigger
	deleted := make(map[store.Key]bool)
	for _, k := range p.DeleteTriggers {
		if t, ok := s.triggers[k]; ok && t.rec.JobKey == p.Job.Key && !deleted[k] {
			deleting = append(deleting, t)
			deleted[k] = true
		}
	}
	for i := range p.Triggers {
		rec := &p.Triggers[i]
		if err := s.checkInsert(rec, replace || deleted[rec.Key]); err != nil {
			return nil, err
		}
	}

	s.putJob(&p.Job)
	res := &store.JobWriteResult{}
	for _, t := range deleting {
		res.Deleted = append(res.Deleted, t.rec.Key)
		s.deleteTrigger(t)
	}
	for i := range p.Triggers {
		s.putTrigger(&p.Triggers[i])
	}
	var ts []*trigger
	for tk := range s.jobTriggers[p.Job.Key] {
		ts = append(ts, s.triggers[tk])
	}
	switch p.Pause {
	case store.PauseTriggers:
		s.pauseTriggers(ts)
	case store.ResumeTriggers:
		s.resumeTriggers(ts)
	}
	if len(deleting) > 0 {
		s.deleteJobIfOrphan(p.Job.Key)
	}
	return res, nil
}

// JobGet returns a job or [store.ErrJobNotFound].
func (s *Store) JobGet(ctx context.Context, key store.Key) (*store.JobRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	j, ok := s.jobs[key]
	if !ok {
		return nil, fmt.Errorf("%w: %s", store.ErrJobNotFound, key)
	}
	c := copyJob(j)
	return &c, nil
}

// JobDelete deletes a job and all its triggers, and reports whether the job
// existed.
func (s *Store) JobDelete(ctx context.Context, key store.Key) (bool, error) {
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	if _, ok := s.jobs[key]; !ok {
		return false, nil
	}
	for tk := range s.jobTriggers[key] {
		s.deleteTrigger(s.triggers[tk])
	}
	delete(s.jobs, key)
	return true, nil
}

// JobList returns a page of the jobs of a group ("" for all), ordered by
// key; see [store.JobStore].
func (s *Store) JobList(ctx context.Context, p *store.JobListParams) ([]store.JobRecord, error) {
	if p.Limit < 0 {
		return nil, fmt.Errorf("memstore: listing jobs: limit %d is negative", p.Limit)
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var keys []store.Key
	for k := range s.jobs {
		if (p.Group == "" || k.Group == p.Group) && keyLess(p.After, k) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, keyCompare)
	if p.Limit > 0 && len(keys) > p.Limit {
		keys = keys[:p.Limit]
	}
	out := make([]store.JobRecord, 0, len(keys))
	for _, k := range keys {
		out = append(out, copyJob(s.jobs[k]))
	}
	return out, nil
}

// deleteJobIfOrphan deletes a job that is not durable and has no trigger.
func (s *Store) deleteJobIfOrphan(key store.Key) {
	j, ok := s.jobs[key]
	if ok && !j.Durable && len(s.jobTriggers[key]) == 0 {
		delete(s.jobs, key)
	}
}

// jobBusy reports whether the job disallows concurrency and has a running
// (EXECUTING or RECOVERABLE) execution, so its triggers must stay blocked.
func (s *Store) jobBusy(key store.Key) bool {
	j, ok := s.jobs[key]
	return ok && j.DisallowConcurrent && s.runningJobs[key] > 0
}

// unpausedState is the state of a trigger of the job that may fire: BLOCKED
// while the job is busy, WAITING otherwise.
func (s *Store) unpausedState(job store.Key) store.TriggerState {
	if s.jobBusy(job) {
		return store.StateBlocked
	}
	return store.StateWaiting
}

// blockJob moves the job's WAITING triggers to BLOCKED and its PAUSED ones
// to PAUSED_BLOCKED. Triggers other nodes acquired keep their claim: firing
// them reports Blocked.
func (s *Store) blockJob(key store.Key) {
	for tk := range s.jobTriggers[key] {
		t := s.triggers[tk]
		switch t.rec.State {
		case store.StateWaiting:
			s.setState(t, store.StateBlocked)
		case store.StatePaused:
			s.setState(t, store.StatePausedBlocked)
		}
	}
}

// unblockJob moves the job's BLOCKED triggers to WAITING and PAUSED_BLOCKED
// ones to PAUSED, unless the job is still busy. Fixed-delay triggers
// awaiting their run stay blocked: rearm frees them.
func (s *Store) unblockJob(key store.Key) {
	if s.jobBusy(key) {
		return
	}
	for tk := range s.jobTriggers[key] {
		t := s.triggers[tk]
		if awaitingRun(&t.rec) {
			continue // a fixed-delay trigger waits for its run's end
		}
		switch t.rec.State {
		case store.StateBlocked:
			s.setState(t, store.StateWaiting)
		case store.StatePausedBlocked:
			s.setState(t, store.StatePaused)
		}
	}
}
