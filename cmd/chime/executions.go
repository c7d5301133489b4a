package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// newExecutionsCmd is `chime executions`: the execution history.
func newExecutionsCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "executions",
		Aliases: []string{"execs"},
		Short:   "List, inspect, follow, retry and kill executions",
	}
	cmd.AddCommand(newExecutionsListCmd(cfg), newExecutionsGetCmd(cfg), newExecutionsLogsCmd(cfg), newExecutionsAttemptsCmd(cfg),
		newExecutionsRetryCmd(cfg), newExecutionsKillCmd(cfg), newExecutionsItemsCmd(cfg), newExecutionsRerunFailedCmd(cfg))
	return cmd
}

// newExecutionsListCmd is `chime executions list`.
func newExecutionsListCmd(cfg *clientConfig) *cobra.Command {
	var (
		job, since, until string
		q                 api.ExecutionQuery
		limit             int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List executions, newest first",
		Example: `  chime executions list --job reports/nightly --outcome failed --since 24h
  chime executions list --since 2025-03-01T00:00:00Z --until 2025-03-02T00:00:00Z`,
		Args: cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			if job != "" {
				var err error
				if q.JobGroup, q.JobName, err = jobRef([]string{job}); err != nil {
					return fmt.Errorf("--job: %w", err)
				}
			}
			now := time.Now()
			var err error
			if q.From, err = parseSince("--since", since, now); err != nil {
				return err
			}
			if q.To, err = parseSince("--until", until, now); err != nil {
				return err
			}
			if limit < 1 {
				return fmt.Errorf("--limit %d: want at least 1", limit)
			}
			q.Limit = min(limit, 500)
			execs, err := collect(c.Executions(ctx, q), limit)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, api.ExecutionList{Executions: nonNil(execs)})
			}
			return writeExecutions(cmd.OutOrStdout(), execs)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&job, "job", "", "only this job's executions, as GROUP/NAME")
	f.StringArrayVar(&q.Outcomes, "outcome", nil, "only this outcome (repeatable): running, succeeded, failed, timed_out, cancelled, skipped, node_lost, killed")
	f.StringVar(&since, "since", "", "only executions scheduled since this instant (RFC 3339) or this long ago (1h, 30m)")
	f.StringVar(&until, "until", "", "only executions scheduled before this instant (RFC 3339) or this long ago")
	f.StringVar(&q.NodeID, "node", "", "only this node's executions")
	f.IntVar(&limit, "limit", 50, "list at most this many executions")
	return cmd
}

// parseSince reads an instant given as RFC 3339 or as a duration before
// now; empty is nil.
func parseSince(flag, s string, now time.Time) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return &t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return nil, fmt.Errorf("%s %q: want an RFC 3339 instant (2025-03-01T00:00:00Z) or a duration ago (90m, 24h)", flag, s)
	}
	t := now.Add(-d)
	return &t, nil
}

// writeExecutions prints executions as a table.
func writeExecutions(w io.Writer, execs []api.Execution) error {
	t := newTable(w, "ID", "JOB", "ATTEMPT", "OUTCOME", "SCHEDULED", "DURATION", "NODE", "ERROR").ifEmpty("no executions")
	for _, e := range execs {
		t.row(e.ID, e.JobGroup+"/"+e.JobName, strconv.Itoa(e.Attempt), e.Outcome, formatTime(&e.ScheduledTime),
			duration(e), orDash(e.NodeID), truncate(e.Error, 60))
	}
	return t.flush()
}

// duration is how long an execution ran, or "-".
func duration(e api.Execution) string {
	if e.StartedTime == nil || e.FinishedTime == nil {
		return "-"
	}
	return formatDuration(e.FinishedTime.Sub(*e.StartedTime))
}

// truncate shortens s to n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// newExecutionsGetCmd is `chime executions get ID`.
func newExecutionsGetCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show an execution with its output and log lines",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			e, err := c.GetExecution(ctx, args[0])
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, e)
			}
			return writeExecution(cmd.OutOrStdout(), e)
		}),
	}
}

// writeExecution prints one execution for people.
func writeExecution(w io.Writer, e *api.Execution) error {
	t := newTable(w)
	t.row("Execution:", e.ID)
	t.row("Job:", e.JobGroup+"/"+e.JobName)
	if e.TriggerName != "" {
		t.row("Trigger:", e.TriggerGroup+"/"+e.TriggerName)
	}
	attempt := strconv.Itoa(e.Attempt)
	if e.FirstID != "" && e.FirstID != e.ID {
		attempt += " (first attempt " + e.FirstID + ")"
	}
	t.row("Attempt:", attempt)
	t.row("Outcome:", e.Outcome)
	if e.KilledBy != "" {
		t.row("Killed by:", e.KilledBy)
	}
	if e.Error != "" {
		t.row("Error:", e.Error)
	}
	t.row("Node:", orDash(e.NodeID))
	if e.ExecutorID != "" {
		t.row("Executor:", orDash(e.ExecutorInstance)+" ("+e.ExecutorID+")")
	}
	t.row("Scheduled:", formatTime(&e.ScheduledTime))
	t.row("Started:", formatTime(e.StartedTime))
	t.row("Finished:", formatTime(e.FinishedTime))
	t.row("Duration:", duration(*e))
	var flags []string
	if e.Manual {
		flags = append(flags, "run by hand")
	}
	if e.Recovering {
		flags = append(flags, "recovering a run whose node died")
	}
	if len(flags) > 0 {
		t.row("Notes:", strings.Join(flags, "; "))
	}
	for _, k := range sortedKeys(e.Params) {
		t.row("Param:", fmt.Sprintf("%s=%v", k, e.Params[k]))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if e.Output != "" {
		fmt.Fprintln(w, "\nOutput:")
		fmt.Fprint(w, indent(e.Output))
		if e.OutputTruncated {
			fmt.Fprintln(w, "  … (truncated)")
		}
	}
	if len(e.Logs) > 0 {
		fmt.Fprintln(w, "\nLogs:")
		for _, l := range e.Logs {
			fmt.Fprintln(w, "  "+formatLogLine(l))
		}
	}
	return nil
}

// formatLogLine formats a log line for people: time, level, message and
// attributes, on one line.
func formatLogLine(l api.LogLine) string {
	line := fmt.Sprintf("%s %-5s %s", l.Time.Format("15:04:05.000"), l.Level, l.Message)
	for _, k := range sortedKeys(l.Attrs) {
		line += fmt.Sprintf(" %s=%v", k, l.Attrs[k])
	}
	return line
}

// newExecutionsLogsCmd is `chime executions logs ID [--follow]`.
func newExecutionsLogsCmd(cfg *clientConfig) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Print an execution's log lines; with --follow, as they are logged",
		Long: `Print the log lines of an execution. With --follow, print them as the job
logs them, from whichever node of the cluster runs it, until the execution
ends; then print how it ended. The command fails when the execution did not
succeed. With -o json or yaml each line is printed as the API's object,
one per line for json.

Without --follow, an execution still running shows no line yet: its lines
are recorded when it ends.`,
		Args: cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			w := cmd.OutOrStdout()
			if !follow {
				e, err := c.GetExecution(ctx, args[0])
				if err != nil {
					return err
				}
				if e.Outcome == "running" {
					fmt.Fprintf(cmd.ErrOrStderr(), "Execution %s is running; its lines are recorded when it ends. Follow them live with --follow.\n", e.ID)
				}
				for i, l := range e.Logs {
					if err := writeLogLine(w, cfg.output, api.LiveLogLine{Seq: int64(i) + 1, LogLine: l}); err != nil {
						return err
					}
				}
				return nil
			}
			end, err := c.FollowExecutionLogs(ctx, args[0], 0, func(l api.LiveLogLine) error {
				return writeLogLine(w, cfg.output, l)
			})
			if err != nil {
				return err
			}
			if cfg.output == formatTable {
				msg := "Execution " + args[0] + " " + end.Outcome
				if end.Error != "" {
					msg += ": " + end.Error
				}
				fmt.Fprintln(cmd.ErrOrStderr(), msg+".")
			}
			if end.Outcome != "succeeded" {
				return fmt.Errorf("execution %s ended %s", args[0], end.Outcome)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "print the lines as they are logged, until the execution ends")
	return cmd
}

// writeLogLine prints one log line in the output format: formatted for
// people, or the API's object (compact JSON, one per line, for json).
func writeLogLine(w io.Writer, format outputFormat, l api.LiveLogLine) error {
	switch format {
	case formatTable:
		_, err := fmt.Fprintln(w, formatLogLine(l.LogLine))
		return err
	case formatJSON:
		raw, err := json.Marshal(l)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", raw)
		return err
	}
	return writeStructured(w, format, []api.LiveLogLine{l})
}

// indent indents every line of s by two spaces and ends it with a
// newline.
func indent(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		b.WriteString("  ")
		b.WriteString(strings.TrimRight(line, "\n"))
		b.WriteByte('\n')
	}
	return b.String()
}

// newExecutionsAttemptsCmd is `chime executions attempts ID`.
func newExecutionsAttemptsCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "attempts ID",
		Short: "List every attempt of an execution's firing",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			execs, err := c.Attempts(ctx, args[0])
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, nonNil(execs))
			}
			return writeExecutions(cmd.OutOrStdout(), execs)
		}),
	}
}

// newExecutionsRetryCmd is `chime executions retry ID`.
func newExecutionsRetryCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "retry ID",
		Short: "Run a finished execution's job again as a new attempt",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			acc, err := c.RetryExecution(ctx, args[0])
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, acc)
			}
			return writeAccepted(cmd.OutOrStdout(), "Execution "+args[0]+" retried", acc)
		}),
	}
}

// newExecutionsKillCmd is `chime executions kill ID`.
func newExecutionsKillCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "kill ID",
		Short: "Kill a running execution, on whichever node runs it",
		Long: `Kill a running execution of any job type, on whichever node of the cluster
runs it. The node running it cancels the job within a second, and the
execution ends killed, with your name as killed_by. A killed execution is
not retried and raises no alert. Killing an execution that already ended
fails with a conflict.`,
		Args: cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			e, err := c.KillExecution(ctx, args[0])
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, e)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Execution %s of %s/%s on node %s: kill requested by %s.\n",
				e.ID, e.JobGroup, e.JobName, e.NodeID, e.KilledBy)
			return err
		}),
	}
}
