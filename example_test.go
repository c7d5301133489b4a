package chime_test

import (
	"context"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
)

// A scheduler on the default in-memory store runs a registered job type on
// a simple trigger.
func Example() {
	ctx := context.Background()
	s, err := chime.New(chime.Config{Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	done := make(chan struct{})
	err = s.Register("greet", chime.JobFunc(func(ctx context.Context, jc *chime.JobContext) error {
		who, _ := jc.MergedData.String("who")
		fmt.Printf("hello, %s, from trigger %s\n", who, jc.Trigger.Key)
		close(done)
		return nil
	}))
	if err != nil {
		panic(err)
	}
	job := chime.JobDetail{Key: chime.NewJobKey("demo", "greeter"), Type: "greet", Data: chime.JobData{"who": "world"}}
	once := chime.Trigger{Key: chime.NewTriggerKey("demo", "now"), Schedule: &schedule.Simple{RepeatCount: 0}}
	if err := s.ScheduleJob(ctx, job, []chime.Trigger{once}, nil); err != nil {
		panic(err)
	}
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	<-done
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		panic(err)
	}
	// Output: hello, world, from trigger demo.now
}

// A cron trigger in a time zone: Trigger returns its state and next fire
// time.
func ExampleScheduler_Schedule() {
	ctx := context.Background()
	s, err := chime.New(chime.Config{Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	defer s.Stop(ctx)
	if err := s.Register("report", chime.JobFunc(func(context.Context, *chime.JobContext) error { return nil })); err != nil {
		panic(err)
	}
	if err := s.AddJob(ctx, chime.JobDetail{Key: chime.NewJobKey("reports", "daily"), Type: "report", Durable: true}, nil); err != nil {
		panic(err)
	}
	nightly, err := schedule.NewCron("0 30 2 ? * MON-FRI", "Europe/Berlin")
	if err != nil {
		panic(err)
	}
	first, err := s.Schedule(ctx, chime.Trigger{
		Key:       chime.NewTriggerKey("reports", "weeknights"),
		JobKey:    chime.NewJobKey("reports", "daily"),
		Schedule:  nightly,
		StartTime: time.Date(2024, 3, 29, 12, 0, 0, 0, time.UTC), // a Friday
	})
	if err != nil {
		panic(err)
	}
	info, err := s.Trigger(ctx, chime.NewTriggerKey("reports", "weeknights"))
	if err != nil {
		panic(err)
	}
	fmt.Println(first.In(time.UTC).Format(time.RFC3339), info.State)
	// Output: 2024-04-01T00:30:00Z NORMAL
}

// A job can ask to be unscheduled: its error carries the instruction.
func ExampleUnscheduleFiringTrigger() {
	job := chime.JobFunc(func(ctx context.Context, jc *chime.JobContext) error {
		if n, _ := jc.MergedData.Int("remaining"); n <= 0 {
			return chime.UnscheduleFiringTrigger(nil)
		}
		return nil
	})
	err := job.Execute(context.Background(), &chime.JobContext{MergedData: chime.JobData{"remaining": 0}})
	fmt.Println(err)
	// Output: chime: job asks to unschedule firing trigger
}

// ScheduleJob replaces a job, its triggers and their paused state in one
// atomic step: here the hourly trigger gives way to a nightly one, and the
// job is paused, or, had anything failed, nothing would have changed.
func ExampleScheduleJobOptions() {
	ctx := context.Background()
	s, err := chime.New(chime.Config{Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	defer s.Stop(ctx)
	if err := s.Register("report", chime.JobFunc(func(context.Context, *chime.JobContext) error { return nil })); err != nil {
		panic(err)
	}
	job := chime.JobDetail{Key: chime.NewJobKey("reports", "sales"), Type: "report", Durable: true}
	hourly, err := schedule.NewCron("0 0 * * * ?", "UTC")
	if err != nil {
		panic(err)
	}
	hourlyKey := chime.NewTriggerKey("reports", "hourly")
	if err := s.ScheduleJob(ctx, job, []chime.Trigger{{Key: hourlyKey, Schedule: hourly}}, nil); err != nil {
		panic(err)
	}
	read, err := s.Job(ctx, job.Key)
	if err != nil {
		panic(err)
	}
	nightly, err := schedule.NewCron("0 30 2 * * ?", "UTC")
	if err != nil {
		panic(err)
	}
	err = s.ScheduleJob(ctx, *read, []chime.Trigger{{Key: chime.NewTriggerKey("reports", "nightly"), Schedule: nightly}},
		&chime.ScheduleJobOptions{
			IfVersion:  read.Version, // nobody changed the job since it was read
			Unschedule: []chime.TriggerKey{hourlyKey},
			Pause:      chime.PauseTriggers,
		})
	if err != nil {
		panic(err)
	}
	triggers, err := s.Triggers(ctx, &chime.TriggerFilter{JobKey: &job.Key})
	if err != nil {
		panic(err)
	}
	for _, t := range triggers {
		fmt.Println(t.Key, t.State)
	}
	// Output: reports.nightly PAUSED
}
