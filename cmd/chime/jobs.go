package main

import (
	"bytes"
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

// newJobsCmd is `chime jobs`: list, inspect and act on a server's jobs.
func newJobsCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List, inspect, apply, pause, resume, run, backfill, explain, delete and roll back jobs on a server",
	}
	cmd.AddCommand(
		newJobsListCmd(cfg),
		newJobsGetCmd(cfg),
		newApplyCmd(cfg),
		newJobActionCmd(cfg, "delete", "Delete a job and its triggers", "deleted", (*apiclient.Client).DeleteJob),
		newJobActionCmd(cfg, "pause", "Pause every trigger of a job", "paused", (*apiclient.Client).PauseJob),
		newJobActionCmd(cfg, "resume", "Resume every trigger of a job", "resumed", (*apiclient.Client).ResumeJob),
		newJobsRunCmd(cfg),
		newJobsUpcomingCmd(cfg),
		newJobsExplainCmd(cfg),
		newJobsBackfillCmd(cfg),
		newJobsVersionsCmd(cfg),
		newJobsDiffCmd(cfg),
		newJobsRollbackCmd(cfg),
	)
	return cmd
}

// newJobsListCmd is `chime jobs list`.
func newJobsListCmd(cfg *clientConfig) *cobra.Command {
	var q api.JobQuery
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List jobs with their schedule and last outcome",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			var jobs []api.Job
			for job, err := range c.Jobs(ctx, q) {
				if err != nil {
					return err
				}
				jobs = append(jobs, job)
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, api.JobList{Jobs: nonNil(jobs)})
			}
			t := newTable(cmd.OutOrStdout(), "JOB", "TYPE", "SCHEDULE", "STATE", "NEXT FIRE", "LAST RUN", "LAST OUTCOME").ifEmpty("no jobs")
			for _, j := range jobs {
				st := j.Status
				if st == nil {
					st = &api.JobStatus{}
				}
				t.row(j.Group+"/"+j.Name, j.Type, scheduleSummary(j.Triggers), jobState(j), formatTime(st.NextFireTime),
					formatTime(st.LastRun), orDash(st.LastOutcome))
			}
			return t.flush()
		}),
	}
	f := cmd.Flags()
	f.StringVar(&q.Group, "group", "", "only the jobs of this group")
	f.StringVar(&q.Text, "search", "", "only jobs whose group, name or description contains this text")
	f.StringVar(&q.State, "state", "", "only paused or active jobs")
	f.BoolVar(&q.Failing, "failing", false, "only jobs whose last finished execution did not succeed")
	return cmd
}

// newJobsGetCmd is `chime jobs get GROUP/NAME`.
func newJobsGetCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "get GROUP/NAME",
		Short: "Show a job with its triggers and status",
		Args:  jobArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			group, name, _ := jobRef(args)
			job, err := c.GetJob(ctx, group, name)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, job)
			}
			return writeJob(cmd.OutOrStdout(), job)
		}),
	}
}

// writeJob prints a job for people: its settings, then its triggers.
func writeJob(w io.Writer, j *api.Job) error {
	t := newTable(w)
	t.row("Job:", j.Group+"/"+j.Name)
	t.row("Description:", orDash(j.Description))
	t.row("Type:", j.Type)
	for _, spec := range []struct {
		label string
		raw   json.RawMessage
	}{{"HTTP:", j.HTTP}, {"Shell:", j.Shell}} {
		if len(spec.raw) > 0 {
			t.row(spec.label, compactJSON(spec.raw))
		}
	}
	if len(j.Data) > 0 {
		raw, _ := json.Marshal(j.Data) // a decoded map always encodes
		t.row("Data:", string(raw))
	}
	t.row("State:", jobState(*j))
	t.row("Version:", strconv.FormatInt(j.Version, 10))
	t.row("Timeout:", orDash(j.Timeout))
	t.row("Retry:", retrySummary(j.Retry))
	t.row("Overlap:", firstNonEmpty(string(j.Overlap), string(api.OverlapAllow)))
	if j.RequestsRecovery {
		t.row("Recovery:", "re-run on a live node if its node dies mid-run")
	}
	if a := j.Alerts; a != nil {
		t.row("Alerts:", alertsSummary(a))
	}
	if st := j.Status; st != nil {
		t.row("Last run:", formatTime(st.LastRun)+" "+orDash(st.LastOutcome))
		t.row("Last success:", formatTime(st.LastSuccess))
		t.row("Running:", strconv.Itoa(st.Running))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(j.Triggers) == 0 {
		_, err := fmt.Fprintln(w, "\nNo triggers: the job runs only when asked (chime jobs run).")
		return err
	}
	fmt.Fprintln(w)
	t = newTable(w, "TRIGGER", "SCHEDULE", "CALENDAR", "STATE", "NEXT FIRE", "PREVIOUS FIRE")
	for _, tr := range j.Triggers {
		t.row(tr.Name, describeSchedule(tr.Schedule), orDash(tr.Calendar), orDash(tr.State),
			formatTime(tr.NextFireTime), formatTime(tr.PreviousFireTime))
	}
	return t.flush()
}

// newJobActionCmd is a command that acts on one job and reports it done:
// `chime jobs delete|pause|resume GROUP/NAME`.
func newJobActionCmd(cfg *clientConfig, verb, short, done string, act func(*apiclient.Client, context.Context, string, string) error) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " GROUP/NAME",
		Short: short,
		Args:  jobArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			group, name, _ := jobRef(args)
			if err := act(c, ctx, group, name); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "Job %s/%s %s.\n", group, name, done)
			return err
		}),
	}
}

// newJobsRunCmd is `chime jobs run GROUP/NAME [--param k=v]…`.
func newJobsRunCmd(cfg *clientConfig) *cobra.Command {
	var params []string
	cmd := &cobra.Command{
		Use:     "run GROUP/NAME",
		Short:   "Run a job now, optionally with parameters merged over its data",
		Example: `  chime jobs run reports/nightly --param date=2025-03-01 --param dry_run=true`,
		Args:    jobArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			group, name, _ := jobRef(args)
			var req api.RunRequest
			for _, p := range params {
				k, v, ok := strings.Cut(p, "=")
				if !ok || k == "" {
					return fmt.Errorf("--param %q: want KEY=VALUE", p)
				}
				if req.Params == nil {
					req.Params = map[string]any{}
				}
				req.Params[k] = v
			}
			acc, err := c.RunJob(ctx, group, name, req)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, acc)
			}
			return writeAccepted(cmd.OutOrStdout(), "Job "+group+"/"+name, acc)
		}),
	}
	cmd.Flags().StringArrayVar(&params, "param", nil, "a parameter KEY=VALUE (repeatable); values are strings")
	return cmd
}

// newJobsUpcomingCmd is `chime jobs upcoming GROUP/NAME`.
func newJobsUpcomingCmd(cfg *clientConfig) *cobra.Command {
	var count int
	cmd := &cobra.Command{
		Use:   "upcoming GROUP/NAME",
		Short: "List a job's next fire times across its triggers",
		Args:  jobArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			group, name, _ := jobRef(args)
			times, err := c.Upcoming(ctx, group, name, count)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, nonNil(times))
			}
			t := newTable(cmd.OutOrStdout(), "FIRE TIME", "NOTE").ifEmpty("no upcoming fire times: the job has no trigger that fires again")
			for _, ft := range times {
				note := ""
				if ft.DST {
					note = "next to a daylight-saving change"
				}
				t.row(formatTime(&ft.Time), note)
			}
			return t.flush()
		}),
	}
	cmd.Flags().IntVar(&count, "count", 10, "how many fire times to list")
	return cmd
}

// newJobsExplainCmd is `chime jobs explain GROUP/NAME [--at TIME]`.
func newJobsExplainCmd(cfg *clientConfig) *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "explain GROUP/NAME",
		Short: "Say why a job did or did not run at an instant",
		Long: `Say why a job did or did not run at an instant (now by default): its fire
times around it, the scheduler's decisions (fired, skipped, misfired, …)
and the executions recorded near it.`,
		Example: `  chime jobs explain reports/nightly --at 2025-06-02T02:30:00+02:00
  chime jobs explain reports/nightly --at 3h`,
		Args: jobArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			group, name, _ := jobRef(args)
			when, err := parseSince("--at", firstNonEmpty(at, "0s"), time.Now())
			if err != nil {
				return err
			}
			ex, err := c.Explain(ctx, group, name, *when)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, ex)
			}
			return writeExplanation(cmd.OutOrStdout(), group+"/"+name, ex)
		}),
	}
	cmd.Flags().StringVar(&at, "at", "", "the instant, as RFC 3339 or a duration ago (90m, 24h); default now")
	return cmd
}

// writeExplanation prints an explanation for people: the summary, then
// the fire times, decisions and executions around the instant.
func writeExplanation(w io.Writer, job string, ex *api.Explanation) error {
	t := newTable(w)
	t.row("Job:", job)
	t.row("At:", formatTime(&ex.At))
	t.row("Summary:", ex.Summary)
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nFire times around it:")
	t = newTable(w, "FIRE TIME").ifEmpty("no fire times")
	for _, ft := range ex.FireTimes {
		t.row(formatTime(&ft))
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nDecisions:")
	t = newTable(w, "SCHEDULED", "DECIDED", "KIND", "NODE", "EXECUTION", "REASON").ifEmpty("no decisions")
	for _, d := range ex.Decisions {
		t.row(formatTime(&d.ScheduledTime), formatTime(&d.At), d.Kind, orDash(d.NodeID), orDash(d.ExecutionID), d.Reason)
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nExecutions:")
	return writeExecutions(w, ex.Executions)
}

// newJobsBackfillCmd is `chime jobs backfill GROUP/NAME --from T --to T`.
func newJobsBackfillCmd(cfg *clientConfig) *cobra.Command {
	var (
		from, to string
		req      api.BackfillRequest
	)
	cmd := &cobra.Command{
		Use:   "backfill GROUP/NAME --from TIME --to TIME",
		Short: "Run a job once for each fire time of its triggers in [--from, --to)",
		Example: `  chime jobs backfill reports/nightly --from 2025-03-01T00:00:00Z --to 2025-03-08T00:00:00Z
  chime jobs backfill reports/nightly --from 72h --to 24h --trigger weekdays`,
		Args: jobArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			group, name, _ := jobRef(args)
			now := time.Now()
			for _, f := range []struct {
				flag, value string
				into        *time.Time
			}{{"--from", from, &req.From}, {"--to", to, &req.To}} {
				if f.value == "" {
					return fmt.Errorf("%s is required: an RFC 3339 instant or a duration ago", f.flag)
				}
				t, err := parseSince(f.flag, f.value, now)
				if err != nil {
					return err
				}
				*f.into = *t
			}
			if !req.From.Before(req.To) {
				return fmt.Errorf("--to %s is not after --from %s", req.To.Format(time.RFC3339), req.From.Format(time.RFC3339))
			}
			acc, err := c.Backfill(ctx, group, name, req)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, acc)
			}
			return writeAccepted(cmd.OutOrStdout(), "Job "+group+"/"+name+" backfilled", acc)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the first instant of the range, as RFC 3339 or a duration ago")
	f.StringVar(&to, "to", "", "the end of the range (excluded), as RFC 3339 or a duration ago")
	f.StringVar(&req.Trigger, "trigger", "", "only this trigger's fire times (its name)")
	return cmd
}

// writeAccepted reports runs the server accepted.
func writeAccepted(w io.Writer, what string, acc *api.Accepted) error {
	runs := "run"
	if acc.Count != 1 {
		runs = "runs"
	}
	msg := fmt.Sprintf("%s: %d %s scheduled.", what, acc.Count, runs)
	if len(acc.ExecutionIDs) > 0 {
		msg += " Execution IDs: " + strings.Join(acc.ExecutionIDs, ", ") +
			"\nFollow with: chime executions get " + acc.ExecutionIDs[0]
	}
	_, err := fmt.Fprintln(w, msg)
	return err
}

// jobState is "paused" or "active".
func jobState(j api.Job) string {
	if j.Paused {
		return "paused"
	}
	return "active"
}

// scheduleSummary describes a job's triggers in one cell: the first
// trigger's schedule, and how many more there are.
func scheduleSummary(triggers []api.Trigger) string {
	switch len(triggers) {
	case 0:
		return "on demand"
	case 1:
		return describeSchedule(triggers[0].Schedule)
	}
	return fmt.Sprintf("%s (+%d more)", describeSchedule(triggers[0].Schedule), len(triggers)-1)
}

// describeSchedule renders a schedule's JSON form briefly: the cron
// expression and zone, "once", or the interval.
func describeSchedule(raw json.RawMessage) string {
	var s struct {
		Kind        string          `json:"kind"`
		Expression  string          `json:"expression"`
		TimeZone    string          `json:"time_zone"`
		Unit        string          `json:"unit"`
		Interval    json.RawMessage `json:"interval"`
		RepeatCount *int            `json:"repeat_count"`
		Start       string          `json:"start_time_of_day"`
		End         string          `json:"end_time_of_day"`
		Delay       string          `json:"delay"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.Kind == "" {
		return compactJSON(raw)
	}
	zone := ""
	if s.TimeZone != "" && s.TimeZone != "UTC" {
		zone = " " + s.TimeZone
	}
	var every string
	if err := json.Unmarshal(s.Interval, &every); err != nil && len(s.Interval) > 0 {
		every = string(s.Interval) + " " + s.Unit // calendar_interval: a count of units
	}
	times := ""
	if s.RepeatCount != nil {
		times = fmt.Sprintf(", %d more times", *s.RepeatCount)
	}
	switch s.Kind {
	case "cron":
		return "cron " + s.Expression + zone
	case "once":
		return "once"
	case "simple":
		return "every " + every + times
	case "daily_time_interval":
		return fmt.Sprintf("every %s from %s to %s%s%s", every, s.Start, s.End, zone, times)
	case "calendar_interval":
		return "every " + every + zone
	case "fixed_delay":
		return s.Delay + " after each run ends"
	}
	return s.Kind
}

// retrySummary describes a retry policy in words.
func retrySummary(r *api.RetryPolicy) string {
	if r == nil {
		return "none"
	}
	s := fmt.Sprintf("up to %d attempts, %s backoff", r.MaxAttempts, firstNonEmpty(r.Backoff, "exponential"))
	if r.Delay != "" {
		s += " from " + r.Delay
	}
	if r.MaxDelay != "" {
		s += " up to " + r.MaxDelay
	}
	return s
}

// alertsSummary describes a job's own alert settings.
func alertsSummary(a *api.JobAlerts) string {
	if a.Disabled {
		return "off"
	}
	var parts []string
	if len(a.Emails) > 0 {
		parts = append(parts, "e-mail "+strings.Join(a.Emails, ", "))
	}
	if len(a.Webhooks) > 0 {
		parts = append(parts, "webhooks "+strings.Join(a.Webhooks, ", "))
	}
	if len(a.Slack) > 0 {
		parts = append(parts, "Slack "+strings.Join(a.Slack, ", "))
	}
	if len(a.Teams) > 0 {
		parts = append(parts, "Teams "+strings.Join(a.Teams, ", "))
	}
	if len(a.PagerDuty) > 0 {
		var pd []string
		for _, t := range a.PagerDuty {
			sev := t.Severity
			if sev == "" {
				sev = "error"
			}
			key := "key ****" // a routing key is a secret; a reference to one is not
			if strings.Contains(t.RoutingKey, "{{") {
				key = t.RoutingKey
			}
			pd = append(pd, key+" ("+sev+")")
		}
		parts = append(parts, "PagerDuty "+strings.Join(pd, ", "))
	}
	if a.AfterFailures > 1 {
		parts = append(parts, fmt.Sprintf("failures after %d in a row", a.AfterFailures))
	}
	if a.RunningLongerThan != "" {
		parts = append(parts, "when running longer than "+a.RunningLongerThan)
	}
	if a.DeadMan != "" {
		parts = append(parts, "when no success for "+a.DeadMan)
	}
	if a.Recovered {
		parts = append(parts, "on recovery")
	}
	if len(parts) == 0 {
		return "the global defaults"
	}
	return strings.Join(parts, "; ")
}

// compactJSON returns raw on one line.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// nonNil returns s, or an empty slice for nil, so that JSON output shows []
// rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
