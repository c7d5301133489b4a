package chime

import (
	"context"
	"fmt"

	"github.com/chime-scheduler/chime/store"
)

// Limits of a JobPageQuery.
const (
	// DefaultJobPageLimit is the page size of a JobPageQuery without a
	// Limit.
	DefaultJobPageLimit = 100
	// MaxJobPageLimit is the largest Limit of a JobPageQuery.
	MaxJobPageLimit = 1000
)

// JobPageQuery selects a page of jobs for Scheduler.JobsPage.
type JobPageQuery struct {
	// Group selects the jobs of one group; "" selects every group.
	Group string
	// After is the key of the last job of the previous page, JobPage.Next:
	// the page starts with the first job ordered after it. The key need
	// not name a stored job. The zero JobKey starts at the beginning.
	After JobKey
	// Limit is the most jobs of the page, 1 to MaxJobPageLimit. Defaults
	// to DefaultJobPageLimit.
	Limit int
	// WithoutTriggers leaves every JobWithTriggers.Triggers nil: the page
	// is one read of the store instead of two, for a pass over the jobs
	// that needs none of their triggers.
	WithoutTriggers bool
}

// JobPage is one page of jobs, ordered by key: group, then name, compared
// byte by byte.
type JobPage struct {
	Jobs []JobWithTriggers
	// Next is the After of the query for the next page, or nil on the
	// last page.
	Next *JobKey
}

// JobWithTriggers is a stored job with its triggers, ordered by key, with
// their states and timing.
type JobWithTriggers struct {
	Job      JobDetail
	Triggers []TriggerInfo
}

// JobsPage returns a page of the stored jobs with their triggers. It reads
// the store twice, once for the jobs and once for all their triggers,
// however many jobs the page or the store holds; walking every page with
// Next is how to list a large store without loading it whole. The two
// reads are not one snapshot: a trigger added between them may show, and
// one deleted may be missing.
func (s *Scheduler) JobsPage(ctx context.Context, q JobPageQuery) (*JobPage, error) {
	limit := q.Limit
	switch {
	case limit == 0:
		limit = DefaultJobPageLimit
	case limit < 0 || limit > MaxJobPageLimit:
		return nil, &ValidationError{Field: "JobPageQuery.Limit",
			Reason: fmt.Sprintf("%d is not between 1 and %d", q.Limit, MaxJobPageLimit)}
	}
	// One job more than the page tells whether another page follows.
	recs, err := s.store.JobList(ctx, &store.JobListParams{
		Group: q.Group,
		After: store.Key{Group: q.After.Group, Name: q.After.Name},
		Limit: limit + 1,
	})
	if err != nil {
		return nil, fmt.Errorf("chime: list jobs: %w", err)
	}
	page := &JobPage{}
	if len(recs) > limit {
		recs = recs[:limit]
		next := jobKeyOf(recs[limit-1].Key)
		page.Next = &next
	}
	if len(recs) == 0 {
		return page, nil
	}
	var byJob map[store.Key][]TriggerInfo
	if !q.WithoutTriggers {
		if byJob, err = s.triggersOfJobs(ctx, recs); err != nil {
			return nil, err
		}
	}
	page.Jobs = make([]JobWithTriggers, 0, len(recs))
	for i := range recs {
		d, err := jobDetailOf(&recs[i])
		if err != nil {
			return nil, err
		}
		page.Jobs = append(page.Jobs, JobWithTriggers{Job: *d, Triggers: byJob[recs[i].Key]})
	}
	return page, nil
}

// triggersOfJobs reads the triggers of the jobs recs, in one read, by job.
func (s *Scheduler) triggersOfJobs(ctx context.Context, recs []store.JobRecord) (map[store.Key][]TriggerInfo, error) {
	keys := make([]store.Key, len(recs))
	for i := range recs {
		keys[i] = recs[i].Key
	}
	trecs, err := s.store.TriggerList(ctx, &store.TriggerListParams{JobKeys: keys})
	if err != nil {
		return nil, fmt.Errorf("chime: list the triggers of a page of jobs: %w", err)
	}
	byJob := make(map[store.Key][]TriggerInfo, len(recs))
	for i := range trecs {
		info, err := triggerInfoOf(&trecs[i])
		if err != nil {
			return nil, err
		}
		byJob[trecs[i].JobKey] = append(byJob[trecs[i].JobKey], *info)
	}
	return byJob, nil
}
