// Command testnode is one node of the cluster tests in package
// internal/testkit/clustertest: a chime scheduler on a SQL store that runs the
// tests' job types and appends what it ran to a file in package firelog's
// format.
//
// It creates no triggers: the test seeds them on the same database. It
// prints "ready" on stdout once the scheduler has started, stops gracefully
// on SIGTERM or SIGINT, and exits with status 1 on any error, including a
// failure to record a firing.
//
// With -stop-on-fire GROUP.NAME, the node stops itself with SIGSTOP the
// first time that trigger fires on it (not for a recovery re-run): after the
// fire transaction committed, in a trigger listener, right before the job
// would start. It prints StoppingLine on stdout first. The test resumes it
// with SIGCONT.
//
// Job types:
//
//	record  appends one "fire" line and returns; it never touches the store
//	slow    appends "start", waits for its duration (the job data's
//	        "duration", a Go duration, or -job-duration) while honouring its
//	        context, then appends "end", or "cancel" with the cause
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/clock"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

type options struct {
	databaseURL      string
	nodeID           string
	workers          int
	out              string
	clockSkew        time.Duration
	checkIn          time.Duration
	deadAfter        time.Duration
	lookAhead        time.Duration
	idleWait         time.Duration
	misfireThreshold time.Duration
	jobDuration      time.Duration
	stopTimeout      time.Duration
	logLevel         slog.Level
	stopOnFire       string
}

// StoppingLine is what the node prints before it stops itself with
// -stop-on-fire.
const StoppingLine = "stopping"

func main() {
	var o options
	flag.StringVar(&o.databaseURL, "database-url", "", "store URL: sqlite:PATH, postgres://… or mysql://… (required)")
	flag.StringVar(&o.nodeID, "node-id", "", "node ID in the cluster (required)")
	flag.IntVar(&o.workers, "workers", 10, "jobs run at once")
	flag.StringVar(&o.out, "out", "", "file the jobs append their records to (required)")
	flag.DurationVar(&o.clockSkew, "clock-skew", 0, "offset added to the scheduler's clock (the records keep true time)")
	flag.DurationVar(&o.checkIn, "check-in", 0, "Config.CheckInInterval (0 for the default)")
	flag.DurationVar(&o.deadAfter, "dead-after", 0, "Config.DeadAfter (0 for the default)")
	flag.DurationVar(&o.lookAhead, "look-ahead", 0, "Config.LookAhead (0 for the default)")
	flag.DurationVar(&o.idleWait, "idle-wait", 0, "Config.IdleWait (0 for the default)")
	flag.DurationVar(&o.misfireThreshold, "misfire-threshold", 0, "Config.MisfireThreshold (0 for the default)")
	flag.DurationVar(&o.jobDuration, "job-duration", 3*time.Second, "how long a slow job runs when its data names no duration")
	flag.DurationVar(&o.stopTimeout, "stop-timeout", 30*time.Second, "how long to wait for running jobs when stopping")
	flag.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "log level")
	flag.StringVar(&o.stopOnFire, "stop-on-fire", "", "trigger key GROUP.NAME: stop with SIGSTOP the first time it fires, before its job starts")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: o.logLevel}))
	if err := run(o, log); err != nil {
		log.Error("testnode failed", "error", err)
		os.Exit(1)
	}
}

func run(o options, log *slog.Logger) error {
	if o.databaseURL == "" || o.nodeID == "" || o.out == "" {
		return errors.New("-database-url, -node-id and -out are required")
	}
	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()

	out, err := firelog.Create(o.out)
	if err != nil {
		return err
	}
	defer out.Close()

	st, err := sqlstore.Open(ctx, o.databaseURL, &sqlstore.Options{Logger: log})
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()

	var clk clock.Clock = clock.Real{}
	if o.clockSkew != 0 {
		skew := o.clockSkew
		clk = clock.Offset{Base: clock.Real{}, Offset: func() time.Duration { return skew }}
	}
	s, err := chime.New(chime.Config{
		Store:            st,
		NodeID:           o.nodeID,
		Workers:          o.workers,
		MisfireThreshold: o.misfireThreshold,
		LookAhead:        o.lookAhead,
		IdleWait:         o.idleWait,
		CheckInInterval:  o.checkIn,
		DeadAfter:        o.deadAfter,
		Clock:            clk,
		Logger:           log,
	})
	if err != nil {
		return err
	}

	// A job that cannot record what it ran makes the test's evidence
	// incomplete: it reports here and the node exits with an error.
	writeFailed := make(chan error, 1)
	j := &jobs{node: o.nodeID, out: out, defaultDuration: o.jobDuration, failed: writeFailed}
	if err := s.Register("record", chime.JobFunc(j.record)); err != nil {
		return err
	}
	if err := s.Register("slow", chime.JobFunc(j.slow)); err != nil {
		return err
	}
	if o.stopOnFire != "" {
		stopOnFire(s, o.stopOnFire, log)
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	log.Info("testnode started", "clock_skew", o.clockSkew)
	fmt.Println("ready")

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("signal received; stopping")
	case runErr = <-writeFailed:
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), o.stopTimeout)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("stop: %w", err))
	}
	return runErr
}

// jobs are the job types of the cluster tests.
type jobs struct {
	node            string
	out             *firelog.Writer
	defaultDuration time.Duration
	failed          chan<- error
}

func (j *jobs) write(jc *chime.JobContext, ev firelog.Event, detail string) error {
	// A recovered execution whose trigger was deleted meanwhile has no
	// trigger; the tests name each trigger like its job, so the job's key
	// stands in.
	key := jc.Job.Key.String()
	if jc.Trigger != nil {
		key = jc.Trigger.Key.String()
	}
	err := j.out.Write(firelog.Record{
		Trigger:    key,
		Scheduled:  jc.ScheduledFireTime,
		Actual:     time.Now(), // true time, whatever -clock-skew says
		Node:       j.node,
		Recovering: jc.Recovering,
		Event:      ev,
		Detail:     detail,
	})
	if err != nil {
		select {
		case j.failed <- err:
		default:
		}
	}
	return err
}

func (j *jobs) record(_ context.Context, jc *chime.JobContext) error {
	return j.write(jc, firelog.EventFire, "")
}

func (j *jobs) slow(ctx context.Context, jc *chime.JobContext) error {
	d := j.defaultDuration
	if s, ok := jc.MergedData.String("duration"); ok {
		parsed, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("job data duration: %w", err)
		}
		d = parsed
	}
	if err := j.write(jc, firelog.EventStart, ""); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return j.write(jc, firelog.EventEnd, "")
	case <-ctx.Done():
		cause := context.Cause(ctx)
		if err := j.write(jc, firelog.EventCancel, causeName(cause)); err != nil {
			return err
		}
		return cause
	}
}

// causeName names a cancellation cause for the record.
func causeName(err error) string {
	switch {
	case errors.Is(err, chime.ErrLeaseLost):
		return firelog.CauseLeaseLost
	case errors.Is(err, chime.ErrStopped):
		return firelog.CauseStopped
	case errors.Is(err, chime.ErrInterrupted):
		return firelog.CauseInterrupted
	case errors.Is(err, chime.ErrTimeout):
		return firelog.CauseTimeout
	default:
		return "other"
	}
}

// stopOnFire makes the node stop itself with SIGSTOP the first time the
// trigger named key fires on it, other than for a recovery re-run.
func stopOnFire(s *chime.Scheduler, key string, log *slog.Logger) {
	var once sync.Once
	s.AddTriggerListener(chime.TriggerListener{
		Name: "stop-on-fire",
		Fired: func(_ context.Context, jc *chime.JobContext) {
			if jc.Trigger == nil || jc.Trigger.Key.String() != key || jc.Recovering {
				return
			}
			once.Do(func() {
				// kill does not stop the calling thread before it returns:
				// the listener waits for the SIGCONT that resumes the
				// process, so that nothing after it runs before the stop.
				cont := make(chan os.Signal, 1)
				signal.Notify(cont, syscall.SIGCONT)
				defer signal.Stop(cont)
				log.Info("stopping with SIGSTOP before the job starts", "trigger_key", key, "execution_id", jc.ExecutionID)
				fmt.Println(StoppingLine)
				if err := syscall.Kill(os.Getpid(), syscall.SIGSTOP); err != nil {
					log.Error("cannot stop", "error", err)
					return
				}
				<-cont
			})
		},
	})
}
