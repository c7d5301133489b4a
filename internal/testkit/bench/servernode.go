package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
	"github.com/chime-scheduler/chime/server"
)

// ServerNodeConfig configures one node process of a ViaServer run.
type ServerNodeConfig struct {
	// DatabaseURL is the server's database, as server.Config takes it:
	// the run's own namespace.
	DatabaseURL string
	// NodeID names the node.
	NodeID string
	// Out is the fire log the jobs append to.
	Out string
	// Listen is the address of the server's HTTP API. Defaults to
	// 127.0.0.1:0, a free local port.
	Listen string
	// Workers, CheckIn and DeadAfter configure the server's scheduler;
	// zero takes the server's default, as `chime server` does.
	Workers   int
	CheckIn   time.Duration
	DeadAfter time.Duration
	// AdminPassword is the first admin's password, with which the run
	// creates the executors' token; empty for a random one, discarded.
	AdminPassword string
	// ExecutorLease is the executors' lease; zero takes the server's
	// default.
	ExecutorLease time.Duration
	// CPUProfile, when set, is the file the node writes a CPU profile of
	// its whole run to.
	CPUProfile string
}

// RunServerNode runs one node of a ViaServer run until ctx ends: the
// product's package server, built through its public API with every other
// setting at the default `chime server` gives it, with the benchmark's job
// types registered through Server.RegisterJobType. Like `chime server` it
// listens first, then opens (and migrates) the database and creates the
// first admin on an empty database (its password is discarded). It prints
// nodeproc.ReadyLine on stdout once the server reports ready.
//
// A job that cannot append to the fire log fails, and the run counts its
// firing as missed; the node goes on, as a server does when a job fails.
func RunServerNode(ctx context.Context, cfg ServerNodeConfig, stdout io.Writer, log *slog.Logger) (err error) {
	if cfg.DatabaseURL == "" || cfg.NodeID == "" || cfg.Out == "" {
		return errors.New("bench server node: the database URL, the node ID and the fire log are required")
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	stopProfile, err := startCPUProfile(cfg.CPUProfile)
	if err != nil {
		return fmt.Errorf("bench server node: %w", err)
	}
	defer func() { err = errors.Join(err, stopProfile()) }()
	out, err := firelog.Create(cfg.Out)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()

	ln, err := server.Listen(cfg.Listen)
	if err != nil {
		return err
	}
	srv, err := server.New(ctx, server.Config{
		DatabaseURL:     cfg.DatabaseURL,
		NodeID:          cfg.NodeID,
		Workers:         cfg.Workers,
		CheckInInterval: cfg.CheckIn,
		DeadAfter:       cfg.DeadAfter,
		AdminPassword:   cfg.AdminPassword,
		ExecutorLease:   cfg.ExecutorLease,
		Logger:          log,
	})
	if err != nil {
		_ = ln.Close()
		return err
	}
	j := &jobs{node: srv.NodeID(), out: out}
	err = srv.RegisterJobType(jobRecord, chime.JobFunc(j.record))
	if err == nil {
		err = srv.RegisterJobType(jobLong, chime.JobFunc(j.long))
	}
	if err == nil {
		err = srv.RegisterJobType(jobWorkflowTask, chime.JobFunc(j.workflowTask))
	}
	if err == nil {
		err = srv.RegisterJobType(jobShardItem, chime.JobFunc(j.shardItem))
	}
	if err == nil {
		_, _, err = srv.BootstrapAdmin(ctx)
	}
	if err != nil {
		_ = ln.Close()
		return errors.Join(err, srv.Close())
	}

	readyCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { announceReady(readyCtx, srv, stdout) })
	err = srv.Serve(ctx, ln)
	cancel()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("bench server node: %w", err)
	}
	return nil
}

// announceReadyEvery is how often announceReady asks the server whether
// it is ready.
const announceReadyEvery = 50 * time.Millisecond

// announceReady prints nodeproc.ReadyLine to w once srv is ready, for the
// run that started the node; it gives up when ctx ends.
func announceReady(ctx context.Context, srv *server.Server, w io.Writer) {
	tick := time.NewTicker(announceReadyEvery)
	defer tick.Stop()
	for {
		if srv.Ready(ctx) == nil {
			fmt.Fprintln(w, nodeproc.ReadyLine)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
