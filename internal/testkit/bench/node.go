package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Job types the nodes register.
const (
	jobRecord = "bench.record" // records its firing and returns
	jobLong   = "bench.long"   // records its start, runs, records its end
)

// runKey is the job data entry holding a long job's run time.
const runKey = "run"

// NodeConfig configures one node process of a benchmark run.
type NodeConfig struct {
	// DatabaseURL is the store's URL, as sqlstore.Open takes it.
	DatabaseURL string
	// TablePrefix is the store's table prefix, unique to the run.
	TablePrefix string
	// NodeID names the node.
	NodeID string
	// Out is the fire log the jobs append to.
	Out string
	// Workers, CheckIn and DeadAfter configure the scheduler; zero takes
	// its default.
	Workers   int
	CheckIn   time.Duration
	DeadAfter time.Duration
	// CPUProfile, when set, is the file the node writes a CPU profile of
	// its whole run to.
	CPUProfile string
	// CountSQL counts the statements the node sends (PostgreSQL only) and
	// prints them when it stops; see SQLCounts.
	CountSQL bool
	// StopTimeout bounds the wait for running jobs when the node stops.
	StopTimeout time.Duration
}

// RunNode runs one benchmark node until ctx ends: a chime scheduler on the
// store with the benchmark's job types. It prints nodeproc.ReadyLine on
// stdout once the scheduler has started and, with CountSQL, the statement
// counts when it has stopped. A job that cannot append to the fire log
// stops the node with an error, since the run's evidence would be
// incomplete.
func RunNode(ctx context.Context, cfg NodeConfig, stdout io.Writer, log *slog.Logger) (err error) {
	if cfg.DatabaseURL == "" || cfg.NodeID == "" || cfg.Out == "" {
		return errors.New("bench node: the database URL, the node ID and the fire log are required")
	}
	stopProfile, err := startCPUProfile(cfg.CPUProfile)
	if err != nil {
		return fmt.Errorf("bench node: %w", err)
	}
	defer func() { err = errors.Join(err, stopProfile()) }()
	out, err := firelog.Create(cfg.Out)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()

	var counts *SQLCounts
	if cfg.CountSQL {
		counts = NewSQLCounts()
	}
	st, closeStore, err := openStore(ctx, cfg, counts, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStore()) }()

	s, err := chime.New(chime.Config{
		Store:           st,
		NodeID:          cfg.NodeID,
		Workers:         cfg.Workers,
		CheckInInterval: cfg.CheckIn,
		DeadAfter:       cfg.DeadAfter,
		Logger:          log,
	})
	if err != nil {
		return err
	}
	failed := make(chan error, 1)
	j := &jobs{node: cfg.NodeID, out: out, failed: failed}
	if err := s.Register(jobRecord, chime.JobFunc(j.record)); err != nil {
		return err
	}
	if err := s.Register(jobLong, chime.JobFunc(j.long)); err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintln(stdout, nodeproc.ReadyLine)

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-failed:
	}
	timeout := cfg.StopTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("stop: %w", err))
	}
	if counts != nil {
		counts.Print(stdout)
	}
	return runErr
}

// openStore opens the node's store. Counting statements needs a pool the
// node builds itself, with a pgx tracer: the store then holds one of the
// pool's connections for its LISTEN instead of a dedicated one. The
// returned function closes the store and the pool.
func openStore(ctx context.Context, cfg NodeConfig, counts *SQLCounts, log *slog.Logger) (*sqlstore.Store, func() error, error) {
	opts := &sqlstore.Options{TablePrefix: cfg.TablePrefix, Logger: log}
	if counts == nil {
		st, err := sqlstore.Open(ctx, cfg.DatabaseURL, opts)
		if err != nil {
			return nil, nil, err
		}
		return st, st.Close, nil
	}
	if !strings.HasPrefix(cfg.DatabaseURL, "postgres") {
		return nil, nil, errors.New("bench node: counting statements needs a postgres:// database URL")
	}
	pc, err := pgx.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, nil, fmt.Errorf("bench node: %w", err)
	}
	pc.Tracer = counts
	db := stdlib.OpenDB(*pc)
	// One connection more than the store's default, for the LISTEN.
	db.SetMaxOpenConns(11)
	db.SetMaxIdleConns(11)
	st, err := sqlstore.OpenDB(ctx, db, sqlstore.Postgres, opts)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return st, func() error { return errors.Join(st.Close(), db.Close()) }, nil
}

// jobs are the benchmark's job types.
type jobs struct {
	node   string
	out    *firelog.Writer
	failed chan<- error
}

// write appends one line for the job's firing.
func (j *jobs) write(jc *chime.JobContext, ev firelog.Event) error {
	err := j.out.Write(firelog.Record{
		Trigger:    jc.Job.Key.String(),
		Scheduled:  jc.ScheduledFireTime,
		Actual:     time.Now(),
		Node:       j.node,
		Recovering: jc.Recovering,
		Event:      ev,
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
	return j.write(jc, firelog.EventFire)
}

func (j *jobs) long(ctx context.Context, jc *chime.JobContext) error {
	s, _ := jc.MergedData.String(runKey)
	run, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("job data %q: %w", runKey, err)
	}
	if err := j.write(jc, firelog.EventStart); err != nil {
		return err
	}
	t := time.NewTimer(run)
	defer t.Stop()
	select {
	case <-t.C:
		return j.write(jc, firelog.EventEnd)
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// startCPUProfile starts a CPU profile written to path, and returns the
// function that stops it and writes the process's allocation profile
// beside it (path with ".allocs" for its extension); an empty path
// profiles nothing.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		err := f.Close()
		a, aerr := os.Create(strings.TrimSuffix(path, filepath.Ext(path)) + ".allocs")
		if aerr != nil {
			return errors.Join(err, aerr)
		}
		return errors.Join(err, pprof.Lookup("allocs").WriteTo(a, 0), a.Close())
	}, nil
}
