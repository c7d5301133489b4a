package chime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// A scheduler on the embedded SQLite store. Jobs, triggers and executions
// live in the file, so they survive a restart, and processes that open the
// same file form a cluster. A PostgreSQL or MySQL URL in the same place
// gives a cluster across machines.
func Example_sqlite() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "chime-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "chime.db"), &sqlstore.Options{Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	defer st.Close()

	s, err := chime.New(chime.Config{Store: st, Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	runs := make(chan struct{}, 3)
	err = s.Register("count", chime.JobFunc(func(ctx context.Context, jc *chime.JobContext) error {
		runs <- struct{}{}
		return nil
	}))
	if err != nil {
		panic(err)
	}
	job := chime.JobDetail{Key: chime.NewJobKey("demo", "counter"), Type: "count", Durable: true}
	thrice := chime.Trigger{Key: chime.NewTriggerKey("demo", "thrice"), Schedule: &schedule.Simple{RepeatCount: 2, RepeatInterval: 100 * time.Millisecond}}
	if err := s.ScheduleJob(ctx, job, []chime.Trigger{thrice}, nil); err != nil {
		panic(err)
	}
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	for i := range 3 {
		<-runs
		fmt.Printf("run %d of %s\n", i+1, job.Key)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil { // waits until the outcomes are recorded
		panic(err)
	}
	execs, err := st.ExecutionList(ctx, &store.ExecutionListParams{JobKey: &store.Key{Group: "demo", Name: "counter"}})
	if err != nil {
		panic(err)
	}
	states := map[store.ExecutionState]int{}
	for _, e := range execs {
		states[e.State]++
	}
	fmt.Printf("executions in the file: %d, %d succeeded\n", len(execs), states[store.ExecutionSucceeded])
	// Output:
	// run 1 of demo.counter
	// run 2 of demo.counter
	// run 3 of demo.counter
	// executions in the file: 3, 3 succeeded
}
