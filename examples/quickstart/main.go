// Command quickstart runs chime on its embedded SQLite store: it schedules
// a cron trigger and a simple repeating trigger, prints each firing, and
// stops after a few seconds.
//
// The store is the file given by -db, by default chime-quickstart.db in the
// system's temporary directory. It outlives the run: run the command again
// and it reuses the file, replacing the demo job and its triggers.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -db ./chime.db -for 10s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/schedule/cron"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

func main() {
	db := flag.String("db", filepath.Join(os.TempDir(), "chime-quickstart.db"), "SQLite file that keeps the jobs and triggers")
	runFor := flag.Duration("for", 5*time.Second, "how long to run before stopping")
	flag.Parse()
	if err := run(*db, *runFor); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(dbPath string, runFor time.Duration) (err error) {
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stopSignals()

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := sqlstore.Open(ctx, "sqlite:"+dbPath, &sqlstore.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	fmt.Printf("store: SQLite file %s\n", dbPath)

	s, err := chime.New(chime.Config{Store: st, Logger: logger})
	if err != nil {
		return err
	}
	err = s.Register("hello", chime.JobFunc(func(ctx context.Context, jc *chime.JobContext) error {
		who, _ := jc.MergedData.String("who")
		fmt.Printf("%s  %-22s scheduled %s  hello, %s\n",
			jc.FireTime.Format("15:04:05.000"), jc.Trigger.Key, jc.ScheduledFireTime.Format("15:04:05.000"), who)
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
			Schedule: &schedule.Simple{RepeatCount: 2, RepeatInterval: 1500 * time.Millisecond},
			Data:     chime.JobData{"who": "simple trigger"},
		},
	}
	// Replace: a second run finds the job of the first in the file.
	if err := s.ScheduleJob(ctx, job, triggers, &chime.ScheduleJobOptions{Replace: true}); err != nil {
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
