// Command executor is a small chime executor: it registers with a chime
// server as an executor of a group and runs that group's "executor" jobs
// with three handlers:
//
//   - "echo" prints its parameters and logs a line;
//   - "sleep" waits for its "seconds" parameter (default 1; a number, or
//     a string such as `chime jobs run --param seconds=60` gives), or until the
//     run is killed, times out or the executor stops;
//   - "fail" fails with its "message" parameter.
//
// Create a token of role executor for the group first, as an admin:
//
//	chime tokens create --name billing-executor --role executor --group billing
//	go run ./examples/executor -server http://127.0.0.1:8080 -token chime_… -group billing
//
// The token may also come from $CHIME_TOKEN. SIGINT or SIGTERM stops the
// executor gracefully: it takes no new run and lets the running ones
// finish for up to 10 seconds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chime-scheduler/chime/executor"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8080", "the chime server's URL")
	token := flag.String("token", os.Getenv("CHIME_TOKEN"), "a token of role executor serving the group (default $CHIME_TOKEN)")
	group := flag.String("group", "billing", "the executor group to serve")
	instance := flag.String("instance", "", "this process's name (default: host name and process ID)")
	labels := flag.String("labels", "", "labels jobs may require, as k=v,k=v")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*server, *token, *group, *instance, *labels, log); err != nil {
		log.Error("executor stopped", "error", err)
		os.Exit(1)
	}
}

func run(server, token, group, instance, labelList string, log *slog.Logger) error {
	labels := map[string]string{}
	for kv := range strings.SplitSeq(labelList, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("-labels: %q is not k=v", kv)
		}
		labels[k] = v
	}
	ex, err := executor.New(executor.Config{
		Server: server, Token: token, Group: group, Instance: instance, Labels: labels,
		Version: "example", ShutdownTimeout: 10 * time.Second, Logger: log,
	})
	if err != nil {
		return err
	}
	ex.Handle("echo", func(_ context.Context, r *executor.Run) error {
		r.Logger.Info("echo", "job_key", r.JobKey.String(), "attempt", r.Attempt, "recovering", r.Recovering)
		if r.ShardTotal > 0 {
			// An item of a sharded firing (sharding_broadcast: one per executor).
			if _, err := fmt.Fprintf(r.Output, "shard: %d/%d\n", r.ShardIndex, r.ShardTotal); err != nil {
				return err
			}
		}
		_, err := fmt.Fprintf(r.Output, "params: %v\n", r.Params)
		return err
	})
	ex.Handle("sleep", func(ctx context.Context, r *executor.Run) error {
		d := time.Second
		// A number from a job's data, or a string from `chime jobs run --param`.
		switch s := r.Params["seconds"].(type) {
		case float64:
			d = time.Duration(s * float64(time.Second))
		case string:
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				d = time.Duration(f * float64(time.Second))
			}
		}
		r.Logger.Info("sleeping", "for", d.String(), "attempt", r.Attempt, "recovering", r.Recovering)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
		_, err := fmt.Fprintf(r.Output, "slept %s on %s\n", d, os.Getenv("HOSTNAME"))
		return err
	})
	ex.Handle("fail", func(_ context.Context, r *executor.Run) error {
		msg, _ := r.Params["message"].(string)
		if msg == "" {
			msg = "asked to fail"
		}
		return errors.New(msg)
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return ex.Run(ctx)
}
