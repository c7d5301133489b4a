package chime_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
)

// ScheduleJobs stores many new jobs in one atomic step: here a reminder
// for each of three users, each due in ten minutes.
func ExampleScheduler_ScheduleJobs() {
	ctx := context.Background()
	s, err := chime.New(chime.Config{Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	defer s.Stop(ctx)
	if err := s.Register("remind", chime.JobFunc(func(context.Context, *chime.JobContext) error { return nil })); err != nil {
		panic(err)
	}
	due := time.Now().Add(10 * time.Minute)
	var jobs []chime.JobToSchedule
	for _, user := range []string{"ada", "grace", "linus"} {
		jobs = append(jobs, chime.JobToSchedule{
			Job: chime.JobDetail{Key: chime.NewJobKey("reminders", user), Type: "remind", Data: chime.JobData{"user": user}},
			Triggers: []chime.Trigger{{
				Key:      chime.NewTriggerKey("reminders", user),
				Schedule: &schedule.Simple{}, StartTime: due,
			}},
		})
	}
	if err := s.ScheduleJobs(ctx, jobs); err != nil {
		panic(err)
	}
	for _, user := range []string{"ada", "grace", "linus"} {
		info, err := s.Trigger(ctx, chime.NewTriggerKey("reminders", user))
		if err != nil {
			panic(err)
		}
		fmt.Println(info.Key, info.State)
	}
	// A batch with a taken key stores nothing.
	jobs = append(jobs[:1:1], chime.JobToSchedule{
		Job:      chime.JobDetail{Key: chime.NewJobKey("reminders", "margaret"), Type: "remind", Durable: true},
		Triggers: nil,
	})
	err = s.ScheduleJobs(ctx, jobs)
	fmt.Println(errors.Is(err, chime.ErrJobExists))
	_, err = s.Job(ctx, chime.NewJobKey("reminders", "margaret"))
	fmt.Println(errors.Is(err, chime.ErrJobNotFound))
	// Output:
	// reminders.ada NORMAL
	// reminders.grace NORMAL
	// reminders.linus NORMAL
	// true
	// true
}

// ScheduleTriggers fires many stored jobs in one atomic step: here a
// one-shot trigger for each of two reports, made twice, as a node might
// after a crash; SkipExisting makes the second time harmless.
func ExampleScheduler_ScheduleTriggers() {
	ctx := context.Background()
	s, err := chime.New(chime.Config{Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	defer s.Stop(ctx)
	if err := s.Register("report", chime.JobFunc(func(context.Context, *chime.JobContext) error { return nil })); err != nil {
		panic(err)
	}
	var triggers []chime.Trigger
	for _, name := range []string{"daily", "weekly"} {
		job := chime.JobDetail{Key: chime.NewJobKey("reports", name), Type: "report", Durable: true}
		if err := s.AddJob(ctx, job, nil); err != nil {
			panic(err)
		}
		triggers = append(triggers, chime.Trigger{
			Key:      chime.NewTriggerKey("runs", name+"-2025-03-01"),
			JobKey:   job.Key,
			Schedule: &schedule.Simple{}, StartTime: time.Now().Add(10 * time.Minute),
		})
	}
	keys, err := s.ScheduleTriggers(ctx, triggers, nil)
	fmt.Println(keys, err)
	// Without SkipExisting a taken key refuses the whole batch.
	_, err = s.ScheduleTriggers(ctx, triggers, nil)
	fmt.Println(errors.Is(err, chime.ErrTriggerExists))
	keys, err = s.ScheduleTriggers(ctx, triggers, &chime.ScheduleTriggersOptions{SkipExisting: true})
	fmt.Println(len(keys), err)
	// Output:
	// [runs.daily-2025-03-01 runs.weekly-2025-03-01] <nil>
	// true
	// 0 <nil>
}
