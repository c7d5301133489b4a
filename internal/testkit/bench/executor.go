package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/executor"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
)

// ExecutorGroup is the executor group of the benchmark's executor jobs
// and processes.
const ExecutorGroup = "bench"

// The handlers of the benchmark's executors.
const (
	handlerRecord = "bench.record" // records its run's start and returns
	handlerLong   = "bench.long"   // records its start, runs, records its end
)

// ExecutorCommand runs RunExecutor: the hidden subcommand of
// cmd/chime-bench that runs one executor process of a run.
const ExecutorCommand = "executor"

// ExecutorConfig configures one executor process of a run.
type ExecutorConfig struct {
	// Server is the URL of the node the executor connects to.
	Server string
	// Token is a token of role executor serving ExecutorGroup.
	Token string
	// Instance names the executor; it is the node field of its fire log.
	Instance string
	// Out is the fire log the handlers append to.
	Out string
	// Concurrency bounds the runs the executor runs at once. Defaults
	// to 50.
	Concurrency int
}

// RunExecutor runs one executor process of a run until ctx ends: the Go
// SDK (package executor) serving ExecutorGroup with the benchmark's
// handlers, which append one fire-log line when they start (the dispatch
// lag is that line's actual minus scheduled time) and, for a long run, one
// when it ends. It prints nodeproc.ReadyLine on stdout once registered.
func RunExecutor(ctx context.Context, cfg ExecutorConfig, stdout io.Writer, log *slog.Logger) (err error) {
	if cfg.Server == "" || cfg.Token == "" || cfg.Instance == "" || cfg.Out == "" {
		return errors.New("bench executor: the server, the token, the instance and the fire log are required")
	}
	out, err := firelog.Create(cfg.Out)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	ex, err := executor.New(executor.Config{
		Server: cfg.Server, Token: cfg.Token, Group: ExecutorGroup, Instance: cfg.Instance,
		Concurrency: cmp.Or(cfg.Concurrency, 50), PollWait: 5 * time.Second, ShutdownTimeout: 10 * time.Second,
		Logger: log,
	})
	if err != nil {
		return err
	}
	write := func(r *executor.Run, ev firelog.Event) error {
		return out.Write(firelog.Record{
			Trigger: r.JobKey.String(), Scheduled: r.ScheduledTime, Actual: time.Now(),
			Node: cfg.Instance, Recovering: r.Recovering, Event: ev,
		})
	}
	ex.Handle(handlerRecord, func(_ context.Context, r *executor.Run) error { return write(r, firelog.EventFire) })
	ex.Handle(handlerLong, func(ctx context.Context, r *executor.Run) error {
		s, _ := r.Params[runKey].(string)
		run, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("parameter %q: %w", runKey, err)
		}
		if err := write(r, firelog.EventStart); err != nil {
			return err
		}
		t := time.NewTimer(run)
		defer t.Stop()
		select {
		case <-t.C:
			return write(r, firelog.EventEnd)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(announceReadyEvery)
		defer tick.Stop()
		for ex.ID() == "" {
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
		}
		fmt.Fprintln(stdout, nodeproc.ReadyLine)
	})
	err = ex.Run(runCtx)
	cancel()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("bench executor %s: %w", cfg.Instance, err)
	}
	return nil
}
