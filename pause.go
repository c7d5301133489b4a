package chime

import (
	"context"
	"fmt"

	"github.com/chime-scheduler/chime/store"
)

// PauseTrigger pauses one trigger.
func (s *Scheduler) PauseTrigger(ctx context.Context, key TriggerKey) error {
	k := key.store()
	return s.pause(ctx, &store.TriggerSelector{Trigger: &k}, SchedulerEvent{Type: EventTriggerPaused, TriggerKey: key.normalized()})
}

// ResumeTrigger resumes one trigger. If it missed fire times while paused,
// its misfire instruction applies.
func (s *Scheduler) ResumeTrigger(ctx context.Context, key TriggerKey) error {
	k := key.store()
	return s.resume(ctx, &store.TriggerSelector{Trigger: &k}, SchedulerEvent{Type: EventTriggerResumed, TriggerKey: key.normalized()})
}

// PauseJob pauses every trigger of a job.
func (s *Scheduler) PauseJob(ctx context.Context, key JobKey) error {
	k := key.store()
	return s.pause(ctx, &store.TriggerSelector{Job: &k}, SchedulerEvent{Type: EventJobPaused, JobKey: key.normalized()})
}

// ResumeJob resumes every trigger of a job.
func (s *Scheduler) ResumeJob(ctx context.Context, key JobKey) error {
	k := key.store()
	return s.resume(ctx, &store.TriggerSelector{Job: &k}, SchedulerEvent{Type: EventJobResumed, JobKey: key.normalized()})
}

// PauseTriggerGroup pauses every trigger of a group, including triggers
// added to the group later, until ResumeTriggerGroup.
func (s *Scheduler) PauseTriggerGroup(ctx context.Context, group string) error {
	group = groupOrDefault(group)
	return s.pause(ctx, &store.TriggerSelector{Group: group}, SchedulerEvent{Type: EventTriggersPaused, Group: group})
}

// ResumeTriggerGroup resumes a trigger group.
func (s *Scheduler) ResumeTriggerGroup(ctx context.Context, group string) error {
	group = groupOrDefault(group)
	return s.resume(ctx, &store.TriggerSelector{Group: group}, SchedulerEvent{Type: EventTriggersResumed, Group: group})
}

// PauseJobGroup pauses every trigger of the jobs of a group, including jobs
// added to the group later, until ResumeJobGroup.
func (s *Scheduler) PauseJobGroup(ctx context.Context, group string) error {
	group = groupOrDefault(group)
	return s.pause(ctx, &store.TriggerSelector{JobGroup: group}, SchedulerEvent{Type: EventJobsPaused, Group: group})
}

// ResumeJobGroup resumes a job group.
func (s *Scheduler) ResumeJobGroup(ctx context.Context, group string) error {
	group = groupOrDefault(group)
	return s.resume(ctx, &store.TriggerSelector{JobGroup: group}, SchedulerEvent{Type: EventJobsResumed, Group: group})
}

// PauseAll pauses every trigger, including triggers added later, until
// ResumeAll.
func (s *Scheduler) PauseAll(ctx context.Context) error {
	return s.pause(ctx, &store.TriggerSelector{All: true}, SchedulerEvent{Type: EventTriggersPaused})
}

// ResumeAll resumes every trigger and group.
func (s *Scheduler) ResumeAll(ctx context.Context) error {
	return s.resume(ctx, &store.TriggerSelector{All: true}, SchedulerEvent{Type: EventTriggersResumed})
}

func (s *Scheduler) pause(ctx context.Context, sel *store.TriggerSelector, ev SchedulerEvent) error {
	if _, err := s.store.TriggersPause(ctx, sel); err != nil {
		return fmt.Errorf("chime: pause: %w", err)
	}
	s.emit(ev)
	return nil
}

func (s *Scheduler) resume(ctx context.Context, sel *store.TriggerSelector, ev SchedulerEvent) error {
	if _, err := s.store.TriggersResume(ctx, sel); err != nil {
		return fmt.Errorf("chime: resume: %w", err)
	}
	s.emit(ev)
	s.engine.Wake()
	return nil
}

// PausedTriggerGroups returns the trigger groups recorded as paused.
func (s *Scheduler) PausedTriggerGroups(ctx context.Context) ([]string, error) {
	pg, err := s.store.PausedGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("chime: paused groups: %w", err)
	}
	return pg.TriggerGroups, nil
}
