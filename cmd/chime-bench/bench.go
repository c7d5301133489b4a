package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/chime-scheduler/chime/internal/testkit/bench"
)

// newRootCmd is the chime-bench command: it runs one benchmark workload on
// node processes it starts (its hidden subcommands node and server-node,
// run by this same program) and prints one result line.
func newRootCmd() *cobra.Command {
	var (
		workload, databaseURL, dir string
		via, seed                  string
		nodes, rate, workers       int
		scale                      float64
		checkIn, deadAfter, warmUp time.Duration
		duration                   time.Duration
		cpuProfile, countSQL       bool
		verbose                    bool
	)
	cmd := &cobra.Command{
		Use:   "chime-bench --workload W1a|W1b|W1c|W2a|W2b|W3|E1|D1|S1|C1 --nodes N --database-url URL",
		Short: "Run a benchmark workload on node processes and print one result line",
		Long: `Run a benchmark workload: seed its triggers in tables of its own, start N node
processes (each a chime scheduler), let them fire, stop them, merge what they
ran and print one line:

  chime W1a nodes=2 fires=20000 thr=1234/s p50=12ms p95=30ms p99=45ms max=80ms dup=0 miss=0 dbcpu=0.412ms/fire seed=batch create=25000/s createcpu=0.081ms/job

dbcpu is the CPU the database server used per firing, read from its processes
in /proc from the first firing to the end of the run and divided by every
firing that ran meanwhile (in W2 and E1 more than fires, which counts the
middle of the run only); it is there when the server runs on this
machine (PostgreSQL or MariaDB at a loopback address or socket). The line
ends with how the jobs were created before the run (--seed batch or single)
and at what rate, and createcpu, the database server's CPU per created job,
read the same way over the seeding.

Workloads (--scale multiplies K or R):
  W1a  K=20,000 one-shot triggers spread over 10 s
  W1b  K=50,000 spread over 5 s
  W1c  K=100,000 due within one second
  W2a  R=1,000 triggers firing every second for 60 s; the middle 40 s measured
  W2b  R=5,000 likewise (--rate sets another R for W2a or W2b)
  W3   2 nodes: 200 triggers every second and 20 jobs of 5 s that request
       recovery, for 40 s; the busiest node is killed with SIGKILL at 20 s
  E1   R=2,000 executor jobs firing every second for 60 s (the middle 40 s
       measured), a no-op handler on 20 executor processes of one group
       (the Go SDK), round robin, connected to the nodes in turn; server
       nodes only (--rate sets another R). Its lag figures are the dispatch
       lag, from the scheduled time to the handler's start on an executor,
       and its line adds executors=20 split=…, the runs each executor began.
  D1   1,000 instances of a 10-task diamond workflow (start, 8 in parallel,
       end) started at once through the API by 50 clients, on server nodes
       (2 unless --nodes; --scale multiplies the instances; --rate N starts
       N a second instead, to measure a cluster that keeps up). Its line reads
       instances/s, the task-start lag after a task's last upstream task
       ended (p50, p99, max, from the instances' recorded times), dup and
       miss (from the tasks' own records), and the command waits at most
       120 s for the tasks.
  S1   20 firings of a sharded job of 64 items, run at once through the API
       (spread over the nodes), on server nodes (2 unless --nodes; --scale
       multiplies the firings). Its line reads items/s and split=NODE:N,…,
       the item runs each node made, then dup and miss (from the items' own
       records); the command waits at most 120 s for the items.
  C1   5,000 one-shot jobs created through a server node's API by 8
       clients, one a request (POST /api/v1/jobs), then 5,000 more 1,000 a
       request (POST /api/v1/jobs/batch, as chime apply sends them); none
       fires during the run (--scale multiplies the jobs). Its line reads,
       for each path, jobs created a second, the requests' p50 and p99,
       and createcpu, the database server's CPU per job created.

--via library (the default) runs each node as a chime scheduler on the store,
as a Go service embedding the library does. --via server runs each node as
the real chime server (package server, the code chime server runs, with its
default settings, listening on a free local port), whose scheduler fires
through the server's store and records every execution in its history: the
product path. Its nodes take no table prefix, so the run
creates a PostgreSQL schema, a MySQL database or an SQLite file of its own,
and removes it at the end.

The command exits with status 1 when a firing ran twice or was missed. See
docs/performance.md.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if databaseURL == "" {
				return errors.New("bench: --database-url is required")
			}
			if strings.EqualFold(workload, "D1") {
				return runD1(cmd, d1Flags{databaseURL: databaseURL, nodes: nodes, workers: workers, rate: rate, scale: scale, dir: dir, cpuProfile: cpuProfile, verbose: verbose})
			}
			if strings.EqualFold(workload, "C1") {
				return runC1(cmd, d1Flags{databaseURL: databaseURL, nodes: nodes, scale: scale, dir: dir, cpuProfile: cpuProfile, verbose: verbose})
			}
			if strings.EqualFold(workload, "S1") {
				return runS1(cmd, d1Flags{databaseURL: databaseURL, nodes: nodes, workers: workers, scale: scale, dir: dir, cpuProfile: cpuProfile, verbose: verbose})
			}
			w, err := bench.Lookup(workload, scale, rate)
			if err != nil {
				return err
			}
			if duration > 0 {
				if w.Name != "E1" {
					return fmt.Errorf("bench: --duration applies to E1 only, not %s", w.Name)
				}
				w = bench.Executors(w.Series[0].Count, bench.E1Executors, duration, min(10*time.Second, duration/6))
			}
			if cpuProfile && dir == "" {
				return errors.New("bench: --cpu-profile needs --dir, where the profiles go")
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("bench: finding this program to start nodes: %w", err)
			}
			logOut := io.Discard
			if verbose {
				logOut = cmd.ErrOrStderr()
			}
			if w.Executors > 0 && !cmd.Flags().Changed("via") {
				via = bench.ViaServer
			}
			switch via {
			case bench.ViaLibrary, bench.ViaServer:
			default:
				return fmt.Errorf("bench: --via %q: want %s or %s", via, bench.ViaLibrary, bench.ViaServer)
			}
			rep, err := bench.Run(cmd.Context(), bench.Options{
				Workload:    w,
				Nodes:       nodes,
				DatabaseURL: databaseURL,
				Via:         via,
				Executable:  exe,
				Workers:     workers,
				CheckIn:     checkIn,
				DeadAfter:   deadAfter,
				WarmUp:      warmUp,
				Dir:         dir,
				CPUProfile:  cpuProfile,
				CountSQL:    countSQL,
				Seed:        seed,
				Logger:      slog.New(slog.NewTextHandler(logOut, nil)),
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), rep.Result.String())
			if verbose || countSQL {
				printDiagnostics(cmd.ErrOrStderr(), rep)
			}
			if !rep.Result.OK() {
				return fmt.Errorf("bench %s: %d duplicated, %d missed and %d unexpected firings; first: %s",
					w.Name, rep.Result.Duplicates, rep.Result.Misses, rep.Result.Unexpected, strings.Join(rep.Result.Problems, "; "))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&workload, "workload", "", "workload: "+strings.Join(bench.Names, ", ")+", D1, S1, C1 (required)")
	f.IntVar(&nodes, "nodes", 0, "node processes (default 1; W3 runs on 2)")
	f.StringVar(&databaseURL, "database-url", "", "sqlite:PATH, postgres://… or mysql://… (required)")
	f.StringVar(&via, "via", bench.ViaLibrary, "what the nodes are: library (chime schedulers) or server (chime server processes)")
	f.StringVar(&seed, "seed", bench.SeedBatch, "how the jobs are created before the run: batch (ScheduleJobs, 1,000 to a call) or single (one ScheduleJob each)")
	f.Float64Var(&scale, "scale", 1, "multiplies the workload's trigger count K or R")
	f.IntVar(&rate, "rate", 0, "W2 and E1: triggers firing every second, instead of 1,000 (W2a), 5,000 (W2b) or 2,000 (E1); D1: instances started every second, instead of all at once")
	f.DurationVar(&duration, "duration", 0, "E1 only: how long its triggers fire, instead of 60s (the first and last sixth, at most 10s, not measured)")
	f.IntVar(&workers, "workers", 0, "workers of each node (default 10; E1: half its rate, as a node holds a worker while an executor runs its run)")
	f.DurationVar(&checkIn, "check-in", 0, "nodes' check-in interval (default the scheduler's, 2s)")
	f.DurationVar(&deadAfter, "dead-after", 0, "nodes' DeadAfter (default 3 × check-in)")
	f.DurationVar(&warmUp, "warm-up", 5*time.Second, "time from all nodes ready to the first fire")
	f.StringVar(&dir, "dir", "", "keep the nodes' fire logs, logs and profiles in this directory")
	f.BoolVar(&cpuProfile, "cpu-profile", false, "write each node's CPU profile to --dir")
	f.BoolVar(&countSQL, "count-sql", false, "count the statements the nodes send (PostgreSQL, --via library) and print them per firing")
	f.BoolVarP(&verbose, "verbose", "v", false, "log progress and print diagnostics on standard error")
	cmd.AddCommand(newNodeCmd(), newServerNodeCmd(), newExecutorCmd())
	return cmd
}

// printDiagnostics writes what the run observed besides its result line.
func printDiagnostics(w io.Writer, rep *bench.Report) {
	fires := max(rep.Result.Fires, 1)
	fmt.Fprintf(w, "seeded in %s; triggers moved %s before the first fire, all nodes ready; load average %s before, %s after\n",
		rep.Seeded.Round(time.Millisecond), rep.Gap.Round(time.Millisecond), rep.LoadBefore, rep.LoadAfter)
	if rep.Result.Killed != "" {
		fmt.Fprintf(w, "killed %s with %d long jobs running; %d recovery re-runs\n", rep.Result.Killed, rep.Result.Interrupted, rep.Result.Reruns)
	}
	if len(rep.Waits) > 0 {
		keys := make([]string, 0, len(rep.Waits))
		for k := range rep.Waits {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int { return cmp.Or(rep.Waits[b]-rep.Waits[a], strings.Compare(a, b)) })
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%d", k, rep.Waits[k])
		}
		fmt.Fprintf(w, "active sessions sampled every 100ms, by wait event:%s\n", b.String())
	}
	if total := rep.SQL.Total(); total > 0 {
		perFiring := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(fires) }
		fmt.Fprintf(w, "statements: %d, %.2f per firing, taking %.0fµs per firing as the nodes saw them; most frequent:\n",
			total, float64(total)/float64(fires), perFiring(rep.SQL.TotalTime()))
		for _, s := range rep.SQL.Top(15) {
			fmt.Fprintf(w, "  %6.2f/firing %6.1fµs/firing  %.100s\n", float64(s.Count)/float64(fires), perFiring(s.Time), s.Text)
		}
	}
	if rep.Dir != "" {
		fmt.Fprintf(w, "nodes' files in %s\n", rep.Dir)
	}
}

// newNodeCmd is `chime-bench node`, one node process of a --via library
// run, started by chime-bench.
func newNodeCmd() *cobra.Command {
	var (
		cfg      bench.NodeConfig
		logLevel string
	)
	cmd := hiddenCmd(bench.NodeCommand, "Run one benchmark node, a chime scheduler (started by chime-bench)", &logLevel,
		func(cmd *cobra.Command, log *slog.Logger) error {
			return bench.RunNode(cmd.Context(), cfg, cmd.OutOrStdout(), log)
		})
	f := cmd.Flags()
	nodeFlags(f, &cfg.DatabaseURL, &cfg.NodeID, &cfg.Out, &cfg.Workers, &cfg.CheckIn, &cfg.DeadAfter, &logLevel)
	f.StringVar(&cfg.TablePrefix, "table-prefix", "", "the run's table prefix")
	f.StringVar(&cfg.CPUProfile, "cpu-profile", "", "write a CPU profile to this file")
	f.BoolVar(&cfg.CountSQL, "count-sql", false, "count statements (PostgreSQL)")
	return cmd
}

// newServerNodeCmd is `chime-bench server-node`, one node process of a
// --via server run, started by chime-bench: package server with the
// benchmark's job types (bench.RunServerNode).
func newServerNodeCmd() *cobra.Command {
	var (
		cfg      bench.ServerNodeConfig
		logLevel string
	)
	cmd := hiddenCmd(bench.ServerNodeCommand, "Run one benchmark node, a chime server (started by chime-bench --via server)", &logLevel,
		func(cmd *cobra.Command, log *slog.Logger) error {
			// The first admin's password comes from the environment, off
			// the command line; the run logs in with it to create the
			// executors' token.
			cfg.AdminPassword = os.Getenv(bench.AdminPasswordEnv)
			return bench.RunServerNode(cmd.Context(), cfg, cmd.OutOrStdout(), log)
		})
	f := cmd.Flags()
	nodeFlags(f, &cfg.DatabaseURL, &cfg.NodeID, &cfg.Out, &cfg.Workers, &cfg.CheckIn, &cfg.DeadAfter, &logLevel)
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:0", "address of the server's HTTP API")
	f.DurationVar(&cfg.ExecutorLease, "executor-lease", 0, "the executors' lease (default the server's, 15s)")
	f.StringVar(&cfg.CPUProfile, "cpu-profile", "", "write a CPU profile to this file")
	return cmd
}

// newExecutorCmd is `chime-bench executor`, one executor process of a run
// with executors, started by chime-bench: the Go SDK with the benchmark's
// handlers (bench.RunExecutor). Its token comes from $CHIME_TOKEN.
func newExecutorCmd() *cobra.Command {
	var (
		cfg      bench.ExecutorConfig
		logLevel string
	)
	cmd := hiddenCmd(bench.ExecutorCommand, "Run one benchmark executor (started by chime-bench for a workload with executors)", &logLevel,
		func(cmd *cobra.Command, log *slog.Logger) error {
			cfg.Token = os.Getenv(bench.ExecutorTokenEnv)
			return bench.RunExecutor(cmd.Context(), cfg, cmd.OutOrStdout(), log)
		})
	f := cmd.Flags()
	f.StringVar(&cfg.Server, "server", "", "the URL of the node to connect to")
	f.StringVar(&cfg.Instance, "instance", "", "the executor's instance name")
	f.StringVar(&cfg.Out, "out", "", "the fire log the handlers append to")
	f.IntVar(&cfg.Concurrency, "concurrency", 0, "runs at once (default 50)")
	f.StringVar(&logLevel, "log-level", "warn", "log level")
	return cmd
}

// hiddenCmd is a hidden subcommand that chime-bench starts as a child
// process: run gets a logger at the level the subcommand's --log-level
// flag sets into logLevel.
func hiddenCmd(use, short string, logLevel *string, run func(cmd *cobra.Command, log *slog.Logger) error) *cobra.Command {
	return &cobra.Command{
		Use:    use,
		Short:  short,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := nodeLogger(cmd.ErrOrStderr(), *logLevel)
			if err != nil {
				return err
			}
			return run(cmd, log)
		},
	}
}

// nodeFlags declares the flags both kinds of node take, which chime-bench
// passes to every node it starts.
func nodeFlags(f *pflag.FlagSet, databaseURL, nodeID, out *string, workers *int, checkIn, deadAfter *time.Duration, logLevel *string) {
	f.StringVar(databaseURL, "database-url", "", "the database's URL")
	f.StringVar(nodeID, "node-id", "", "the node's ID")
	f.StringVar(out, "out", "", "the fire log the jobs append to")
	f.IntVar(workers, "workers", 10, "workers")
	f.DurationVar(checkIn, "check-in", 0, "check-in interval")
	f.DurationVar(deadAfter, "dead-after", 0, "DeadAfter")
	f.StringVar(logLevel, "log-level", "info", "log level")
}

// nodeLogger returns a node's logger, writing text to w at level.
func nodeLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
