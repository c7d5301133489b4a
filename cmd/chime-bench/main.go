// Command chime-bench is chime's benchmark driver: it runs one benchmark
// workload on node processes and a real database and prints one result
// line (see docs/performance.md and package internal/testkit/bench).
//
//	chime-bench --workload W1a --nodes 2 --database-url URL
//	chime-bench --workload W1b --via server --database-url URL -v
//
// It is a program of its own so that the product binary, cmd/chime, holds
// no benchmark code. Its nodes are this same program, re-executed with a
// hidden subcommand: `node` runs a chime scheduler (--via library) and
// `server-node` runs the product's package server (--via server), the code
// `chime server` runs, and `executor` runs an executor process on the Go
// SDK (package executor) for E1. --workload D1 runs the workflow benchmark
// of issue 17 (bench.RunD1) on server nodes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chime-bench:", err)
		os.Exit(1)
	}
}
