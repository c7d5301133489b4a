package chime_test

import (
	"context"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
)

// Executions lists the firings the store records, of every node of the
// cluster: here one job's run, once the scheduler stopped.
func ExampleScheduler_Executions() {
	ctx := context.Background()
	s, err := chime.New(chime.Config{Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	ran := make(chan struct{})
	err = s.Register("report", chime.JobFunc(func(context.Context, *chime.JobContext) error {
		close(ran)
		return nil
	}))
	if err != nil {
		panic(err)
	}
	key := chime.NewJobKey("reports", "nightly")
	job := chime.JobDetail{Key: key, Type: "report", Durable: true}
	once := chime.Trigger{Key: chime.NewTriggerKey("reports", "now"), Schedule: &schedule.Simple{}}
	if err := s.ScheduleJob(ctx, job, []chime.Trigger{once}, nil); err != nil {
		panic(err)
	}
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	<-ran
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// Stop waits for the run, whose outcome is then stored.
	if err := s.Stop(stopCtx); err != nil {
		panic(err)
	}
	execs, err := s.Executions(ctx, &chime.ExecutionFilter{JobKey: &key})
	if err != nil {
		panic(err)
	}
	for _, e := range execs {
		fmt.Println(e.JobKey, e.TriggerKey, e.State, e.NodeID == s.NodeID(), e.LostWithNode)
	}
	// Output: reports.nightly reports.now SUCCEEDED true false
}

// fireCounter is a chime.Metrics that prints the size of each fired
// batch; a real one would feed histograms.
type fireCounter struct{}

func (fireCounter) TriggersAcquired(int, time.Duration) {}

func (fireCounter) TriggersFired(firings int, _ time.Duration) {
	fmt.Println("fired a batch of", firings)
}

// Config.Metrics hears of the store calls that claim and fire triggers.
func ExampleMetrics() {
	ctx := context.Background()
	s, err := chime.New(chime.Config{Logger: quietLogger, Metrics: fireCounter{}})
	if err != nil {
		panic(err)
	}
	ran := make(chan struct{})
	err = s.Register("report", chime.JobFunc(func(context.Context, *chime.JobContext) error {
		close(ran)
		return nil
	}))
	if err != nil {
		panic(err)
	}
	job := chime.JobDetail{Key: chime.NewJobKey("reports", "nightly"), Type: "report"}
	once := chime.Trigger{Key: chime.NewTriggerKey("reports", "now"), Schedule: &schedule.Simple{}}
	if err := s.ScheduleJob(ctx, job, []chime.Trigger{once}, nil); err != nil {
		panic(err)
	}
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	<-ran
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		panic(err)
	}
	// Output: fired a batch of 1
}
