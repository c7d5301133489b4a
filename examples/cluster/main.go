// Command cluster runs one chime node of a cluster: start it several times
// against one database and the processes share the triggers. Each firing
// runs on exactly one node, whichever claims it first; kill a node and the
// others take its triggers over, and re-run its recoverable jobs, within a
// few seconds.
//
//	go run ./examples/cluster -database-url 'postgres://postgres@127.0.0.1:5432/chime?sslmode=disable' -node a
//	go run ./examples/cluster -database-url 'postgres://postgres@127.0.0.1:5432/chime?sslmode=disable' -node b
//
// The database URL is any sqlstore.Open accepts: postgres://…,
// mysql://user:password@host:port/db, or sqlite:PATH for processes on one
// machine sharing one file. With -jobs (the default) each node seeds the
// demo jobs unless they exist; the first node to start creates them.
// SIGINT or SIGTERM stops the node gracefully: it stops claiming, lets
// running jobs finish for up to 10 seconds and leaves the cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

func main() {
	databaseURL := flag.String("database-url", "", "database the nodes share (required): postgres://…, mysql://…, sqlite:PATH")
	node := flag.String("node", defaultNodeID(), "this node's ID; unique among running nodes")
	seed := flag.Bool("jobs", true, "add the demo jobs unless they exist")
	flag.Parse()
	if *databaseURL == "" {
		fmt.Fprintln(os.Stderr, "cluster: -database-url is required")
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*databaseURL, *node, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func defaultNodeID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "node"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

func run(databaseURL, nodeID string, seed bool) (err error) {
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	// Info shows the cluster at work: registration, recovery of dead nodes,
	// store outages and their end.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	st, err := sqlstore.Open(ctx, databaseURL, &sqlstore.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()

	s, err := chime.New(chime.Config{Store: st, NodeID: nodeID, Logger: logger})
	if err != nil {
		return err
	}
	if err := s.Register("demo", chime.JobFunc(func(ctx context.Context, jc *chime.JobContext) error {
		note := ""
		if jc.Recovering {
			note = " (re-run: its node was lost)"
		}
		fmt.Printf("%s  node %-12s ran %-10s trigger %-16s scheduled %s%s\n",
			time.Now().Format("15:04:05.000"), nodeID, jc.Job.Key.Name, triggerName(jc), jc.ScheduledFireTime.Format("15:04:05"), note)
		d, _ := jc.MergedData.Int("seconds")
		select {
		case <-time.After(time.Duration(d) * time.Second):
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})); err != nil {
		return err
	}
	if seed {
		if err := seedJobs(ctx, s); err != nil {
			return err
		}
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	fmt.Printf("node %s started (pid %d); Ctrl-C stops it\n", nodeID, os.Getpid())
	<-ctx.Done()
	stopSignals() // a second signal kills the process the usual way

	fmt.Printf("node %s stopping\n", nodeID)
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Stop(stopCtx)
}

func triggerName(jc *chime.JobContext) string {
	if jc.Trigger == nil {
		return "-" // a re-run whose trigger was deleted since
	}
	return jc.Trigger.Key.Name
}

// seedJobs adds the demo jobs. Nodes seed at the same time without harm:
// a job that exists is left as it is.
func seedJobs(ctx context.Context, s *chime.Scheduler) error {
	every := func(expr string) schedule.Schedule {
		c, err := schedule.NewCron(expr, "UTC")
		if err != nil {
			panic(err) // the expressions below are constants
		}
		return c
	}
	jobs := []struct {
		job      chime.JobDetail
		triggers []chime.Trigger
	}{
		{
			chime.JobDetail{Key: chime.NewJobKey("demo", "tick"), Type: "demo"},
			[]chime.Trigger{{Key: chime.NewTriggerKey("demo", "every-second"), Schedule: every("* * * * * ?")}},
		},
		{
			// Runs for 4s; when its node dies mid-run, another node
			// re-runs it.
			chime.JobDetail{Key: chime.NewJobKey("demo", "report"), Type: "demo", RequestsRecovery: true, Data: chime.JobData{"seconds": 4}},
			[]chime.Trigger{{Key: chime.NewTriggerKey("demo", "every-10s"), Schedule: every("*/10 * * * * ?")}},
		},
		{
			// Never two runs at once in the whole cluster: every 6s both
			// triggers are due, and the second run waits for the first.
			chime.JobDetail{Key: chime.NewJobKey("demo", "exclusive"), Type: "demo", DisallowConcurrentExecution: true, Data: chime.JobData{"seconds": 1}},
			[]chime.Trigger{
				{Key: chime.NewTriggerKey("demo", "every-2s"), Schedule: every("*/2 * * * * ?")},
				{Key: chime.NewTriggerKey("demo", "every-3s"), Schedule: every("*/3 * * * * ?")},
			},
		},
	}
	for _, j := range jobs {
		err := s.ScheduleJob(ctx, j.job, j.triggers, nil)
		switch {
		case err == nil:
			fmt.Printf("added job %s\n", j.job.Key)
		case errors.Is(err, chime.ErrJobExists), errors.Is(err, chime.ErrTriggerExists):
		default:
			return err
		}
	}
	return nil
}
