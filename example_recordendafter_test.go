package chime_test

import (
	"context"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
)

// A job that keeps its own record of each run, written in the background,
// asks the scheduler to record the execution's end only once that record
// is written: until then the execution is running in the store.
func ExampleJobContext_RecordEndAfter() {
	ctx := context.Background()
	s, err := chime.New(chime.Config{Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	written := make(chan struct{}) // closed by the background writer
	ran := make(chan struct{})
	err = s.Register("audited", chime.JobFunc(func(ctx context.Context, jc *chime.JobContext) error {
		jc.RecordEndAfter(written)
		close(ran)
		return nil
	}))
	if err != nil {
		panic(err)
	}
	job := chime.JobDetail{Key: chime.NewJobKey("demo", "audited"), Type: "audited"}
	once := chime.Trigger{Key: chime.NewTriggerKey("demo", "now"), Schedule: &schedule.Simple{}}
	if err := s.ScheduleJob(ctx, job, []chime.Trigger{once}, nil); err != nil {
		panic(err)
	}
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	<-ran
	running, _ := s.Executions(ctx, &chime.ExecutionFilter{Running: true})
	fmt.Println("running before the record is written:", len(running))

	close(written)
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		panic(err)
	}
	execs, _ := s.Executions(ctx, nil)
	fmt.Println("then:", execs[0].State)
	// Output:
	// running before the record is written: 1
	// then: SUCCEEDED
}
