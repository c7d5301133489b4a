package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/api/wire"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/schedule/cron"
)

// maxCronCount bounds `chime cron next --count`.
const maxCronCount = 1000

// newCronCmd is `chime cron`: a cron expression explained in English and
// its next fire times, computed offline with package schedule/cron.
func newCronCmd() *cobra.Command {
	var out outputFormat
	cmd := &cobra.Command{
		Use:   "cron",
		Short: "Explain a cron expression and list its fire times (offline)",
		Long: `Explain a cron expression and list its next fire times, without a server.

Expressions are Quartz cron (6 or 7 fields, seconds first), standard 5-field
cron or a descriptor such as @daily or @every 90m; see 'go doc
github.com/chime-scheduler/chime/schedule/cron'. Fire times are computed in the
time zone of --tz exactly as the scheduler computes them, across daylight-saving
changes.`,
	}
	addOutputFlag(cmd, &out)
	cmd.AddCommand(newCronExplainCmd(&out), newCronNextCmd(&out))
	return cmd
}

// newCronExplainCmd is `chime cron explain EXPR`.
func newCronExplainCmd(out *outputFormat) *cobra.Command {
	var tz string
	cmd := &cobra.Command{
		Use:     "explain EXPRESSION",
		Short:   "Describe a cron expression in English",
		Example: `  chime cron explain '0 30 2 ? * MON-FRI' --tz Europe/Berlin`,
		Args:    oneExpression,
		RunE: func(cmd *cobra.Command, args []string) error {
			ex, err := explainCron(args[0], tz, time.Time{}, 0)
			if err != nil {
				return err
			}
			if *out != formatTable {
				return writeStructured(cmd.OutOrStdout(), *out, ex)
			}
			return writeCronHeader(cmd.OutOrStdout(), ex)
		},
	}
	cmd.Flags().StringVar(&tz, "tz", "UTC", "IANA time zone the expression is evaluated in")
	return cmd
}

// newCronNextCmd is `chime cron next EXPR`.
func newCronNextCmd(out *outputFormat) *cobra.Command {
	var (
		tz    string
		count int
		after string
	)
	cmd := &cobra.Command{
		Use:   "next EXPRESSION",
		Short: "List the next fire times of a cron expression",
		Long: `List the next fire times of a cron expression in a time zone.

A fire time whose UTC offset differs from the one before it (or, for the first,
from --after's) is marked: a daylight-saving change falls between them, or the
wall time fell into a gap and moved forward.`,
		Example: `  chime cron next '0 30 2 * * ?' --tz Europe/Berlin --count 5
  chime cron next '@every 90m' --after 2025-03-30T00:00:00Z`,
		Args: oneExpression,
		RunE: func(cmd *cobra.Command, args []string) error {
			from := time.Now()
			if after != "" {
				t, err := time.Parse(time.RFC3339, after)
				if err != nil {
					return fmt.Errorf("--after %q: want an RFC 3339 instant such as 2025-03-30T00:00:00Z", after)
				}
				from = t
			}
			if count < 1 || count > maxCronCount {
				return fmt.Errorf("--count %d: want 1 to %d", count, maxCronCount)
			}
			ex, err := explainCron(args[0], tz, from, count)
			if err != nil {
				return err
			}
			if *out != formatTable {
				return writeStructured(cmd.OutOrStdout(), *out, ex)
			}
			return writeCronNext(cmd.OutOrStdout(), ex, from)
		},
	}
	cmd.Flags().StringVar(&tz, "tz", "UTC", "IANA time zone the expression is evaluated in")
	cmd.Flags().IntVar(&count, "count", 10, fmt.Sprintf("how many fire times to list, 1 to %d", maxCronCount))
	cmd.Flags().StringVar(&after, "after", "", "list fire times after this RFC 3339 instant (default now)")
	return cmd
}

// oneExpression accepts exactly one argument, and says how to quote an
// expression given unquoted.
func oneExpression(_ *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return errors.New("missing the cron expression: pass it as one quoted argument, like '0 30 2 * * ?'")
	case len(args) > 1:
		return fmt.Errorf("got %d arguments: quote the cron expression so that it is one, like '%s'",
			len(args), strings.Join(args, " "))
	}
	return nil
}

// explainCron parses expr, loads the zone tz ("" is UTC) and computes up to
// count fire times after after, marking those next to a UTC offset change
// (schedule.OffsetChanges).
func explainCron(expr, tz string, after time.Time, count int) (*api.CronExplanation, error) {
	loc, err := wire.LoadZone(cmp.Or(tz, "UTC"))
	if err != nil {
		return nil, fmt.Errorf("--tz: %w", err)
	}
	parsed, err := cron.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression: %w", err)
	}
	ex := &api.CronExplanation{
		Expression:  expr,
		TimeZone:    loc.String(),
		Description: parsed.Explain(),
		Next:        []api.FireTime{},
	}
	if count == 0 {
		return ex, nil
	}
	for t, changed := range schedule.OffsetChanges(after, parsed.NextN(after.In(loc), count), loc) {
		ex.Next = append(ex.Next, api.FireTime{Time: t, DST: changed})
	}
	return ex, nil
}

// writeCronHeader prints the expression, its zone and its description.
func writeCronHeader(w io.Writer, ex *api.CronExplanation) error {
	t := newTable(w)
	t.row("Expression:", ex.Expression)
	t.row("Time zone:", ex.TimeZone)
	t.row("Description:", ex.Description)
	return t.flush()
}

// writeCronNext prints the header and a table of the fire times, the
// marked ones with the offset change.
func writeCronNext(w io.Writer, ex *api.CronExplanation, after time.Time) error {
	if err := writeCronHeader(w, ex); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if len(ex.Next) == 0 {
		_, err := fmt.Fprintln(w, "The expression has no fire time after", after.Format(time.RFC3339)+".")
		return err
	}
	t := newTable(w, "FIRE TIME", "DAY", "ZONE", "UTC OFFSET", "NOTE")
	prev := after.In(ex.Next[0].Time.Location())
	for _, ft := range ex.Next {
		note := ""
		if ft.DST {
			note = fmt.Sprintf("UTC offset changes %s → %s", offsetString(prev), offsetString(ft.Time))
		}
		zone, _ := ft.Time.Zone()
		t.row(ft.Time.Format("2006-01-02 15:04:05"), ft.Time.Format("Mon"), zone, offsetString(ft.Time), note)
		prev = ft.Time
	}
	return t.flush()
}

// offsetString formats t's UTC offset as +01:00.
func offsetString(t time.Time) string { return t.Format("-07:00") }
