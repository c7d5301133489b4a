// Command quickstart runs chime on its embedded default store: it schedules
// a cron job and a repeating job, prints each firing, and stops after a
// while.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/schedule/cron"
)

func main() {
	runFor := flag.Duration("for", 10*time.Second, "how long to run before stopping")
	flag.Parse()
	if err := run(*runFor); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(runFor time.Duration) error {
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stopSignals()

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := chime.New(chime.Config{Logger: logger})
	if err != nil {
		return err
	}
	err = s.Register("hello", chime.JobFunc(func(ctx context.Context, jc *chime.JobContext) error {
		who, _ := jc.MergedData.String("who")
		fmt.Printf("%s  %-22s scheduled %s  hello, %s\n",
			jc.FireTime.Format("15:04:05.000"), jc.Trigger.Key, jc.ScheduledFireTime.Format("15:04:05"), who)
		return nil
	}))
	if err != nil {
		return err
	}

	const expr = "*/2 * * * * ?"
	explained, err := cron.Explain(expr)
	if err != nil {
		return err
	}
	fmt.Printf("cron %q: %s\n", expr, explained)
	every2s, err := schedule.NewCron(expr, "UTC")
	if err != nil {
		return err
	}
	job := chime.JobDetail{Key: chime.NewJobKey("demo", "greeter"), Type: "hello", Data: chime.JobData{"who": "world"}}
	triggers := []chime.Trigger{
		{Key: chime.NewTriggerKey("demo", "every-2s-cron"), Schedule: every2s},
		{
			Key:      chime.NewTriggerKey("demo", "three-times"),
			Schedule: &schedule.Simple{RepeatCount: 2, RepeatInterval: 3 * time.Second},
			Data:     chime.JobData{"who": "simple trigger"},
		},
	}
	if err := s.ScheduleJob(ctx, job, triggers, nil); err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	select {
	case <-time.After(runFor):
	case <-ctx.Done():
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Stop(stopCtx)
}
