// Command chime is chime's server and its command-line client. It holds
// no test or benchmark code: the benchmark driver is cmd/chime-bench.
//
//	chime server                 run a scheduler node with its API on :8080
//	chime jobs list              manage jobs over a server's API
//	chime cron next '0 0 2 * * ?' --count 5    explain cron offline
//	chime version                which build this is
//
// Run `chime help` for every command.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		var reported *fatalError
		if !errors.As(err, &reported) {
			fmt.Fprintln(os.Stderr, "chime:", err)
		}
		os.Exit(1)
	}
}

// newRootCmd assembles the command tree, reading the process's
// environment.
func newRootCmd() *cobra.Command { return newRootCmdEnv(os.Getenv) }

// newRootCmdEnv assembles the command tree, whose client commands read
// the environment with getenv. Each command lives in the file named after
// it.
func newRootCmdEnv(getenv func(string) string) *cobra.Command {
	root := &cobra.Command{
		Use:           "chime",
		Short:         "chime: a distributed, persistent job scheduler",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServerCmd())
	root.AddCommand(newClientCmds(getenv)...)
	root.AddCommand(newCronCmd(), newMigrateCmd(), newVersionCmd())
	return root
}
