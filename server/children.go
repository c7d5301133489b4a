package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/server/history"
)

// Child jobs: a job names jobs to run when one of its executions ends for
// good (api.ChildJob). Each child runs as a one-shot trigger of origin
// chime.OriginChild named by the parent's execution and the child's
// index, so that the parent's node dying after it made the trigger, or a
// second try of the write, makes no second run; the child's execution
// records the parent's as its cause.

// childGroup is the group of the children's one-shot triggers.
const childGroup = "CHILD_TRIGGER"

// maxChildren bounds a job's children.
const maxChildren = 20

// checkChildren refuses children that are not existing jobs, given twice,
// the job itself, or with an unknown condition, naming the field
// (children[1].job).
func (s *Server) checkChildren(ctx context.Context, j api.Job) error {
	if len(j.Children) > maxChildren {
		return invalidf("children", "%d children; at most %d are allowed", len(j.Children), maxChildren)
	}
	seen := make(map[string]int, len(j.Children))
	for i, c := range j.Children {
		field := fmt.Sprintf("children[%d]", i)
		switch c.On {
		case "", api.OnSuccess, api.OnFailure, api.OnAlways:
		default:
			return invalidf(field+".on", "%q: want success, failure or always", string(c.On))
		}
		key, err := childKey(c.Job)
		if err != nil {
			return invalidf(field+".job", "%v", err)
		}
		if key == chime.NewJobKey(j.Group, j.Name) {
			return invalidf(field+".job", "%q is the job itself", c.Job)
		}
		if prev, dup := seen[c.Job]; dup {
			return invalidf(field+".job", "%q is children[%d] too", c.Job, prev)
		}
		seen[c.Job] = i
		if _, err := s.sched.Job(ctx, key); errors.Is(err, chime.ErrJobNotFound) {
			return invalidf(field+".job", "no job %s exists", c.Job)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// childKey parses a child's "group/name".
func childKey(ref string) (chime.JobKey, error) {
	group, name, ok := strings.Cut(ref, "/")
	if !ok || group == "" || name == "" || strings.Contains(name, "/") {
		return chime.JobKey{}, fmt.Errorf("%q: want group/name", ref)
	}
	return chime.NewJobKey(group, name), nil
}

// runChildren schedules the children of a's job that its end calls for,
// when a was its firing's last attempt: it succeeded, or failed or timed
// out with no retry left.
func (s *Server) runChildren(ctx context.Context, a *attempt, p *plan, f history.Finish) {
	if p == nil || len(p.settings.Children) == 0 {
		return
	}
	var ended api.EdgeCondition
	switch {
	case f.Outcome == history.OutcomeSucceeded:
		ended = api.OnSuccess
	case decides(f.Outcome) && !p.retryLeft(a.number):
		ended = api.OnFailure
	default:
		return
	}
	rec, done := recordCtx(ctx)
	defer done()
	for i, c := range p.settings.Children {
		on := c.On
		if on == "" {
			on = api.OnSuccess
		}
		if on != api.OnAlways && on != ended {
			continue
		}
		err := s.writes.persist(rec, a.log, "the run of a child job", func(ctx context.Context) error {
			return s.scheduleChild(ctx, a, i, c)
		})
		if err != nil {
			a.log.Warn("cannot run a child job", "child", c.Job, "error", err)
		}
	}
}

// scheduleChild makes the one-shot trigger of child i of a's job.
func (s *Server) scheduleChild(ctx context.Context, a *attempt, i int, c api.ChildJob) error {
	key, err := childKey(c.Job)
	if err != nil {
		return permanent(err)
	}
	meta, err := factsMeta(runFacts{Cause: a.id})
	if err != nil {
		return permanent(err)
	}
	_, err = s.sched.Schedule(ctx, chime.Trigger{
		Key:      chime.NewTriggerKey(childGroup, fmt.Sprintf("%s.%d", a.id, i)),
		JobKey:   key,
		Schedule: &schedule.Simple{},
		Origin:   chime.OriginChild,
		Metadata: meta,
	})
	switch {
	case errors.Is(err, chime.ErrTriggerExists):
		return nil
	case errors.Is(err, chime.ErrJobNotFound):
		return permanent(err) // deleted since the parent was saved
	}
	return err
}
