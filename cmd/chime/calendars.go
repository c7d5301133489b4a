package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/apiclient"
)

// newCalendarsCmd is `chime calendars`: exclusion calendars.
func newCalendarsCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "calendars",
		Short: "List, show, apply, import and delete exclusion calendars",
	}
	cmd.AddCommand(newCalendarsListCmd(cfg), newCalendarsGetCmd(cfg), newCalendarsApplyCmd(cfg), newCalendarsDeleteCmd(cfg),
		newCalendarsImportCmd(cfg))
	return cmd
}

// newCalendarsListCmd is `chime calendars list`.
func newCalendarsListCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List calendars with the triggers that use them",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			cals, err := c.ListCalendars(ctx)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, nonNil(cals))
			}
			t := newTable(cmd.OutOrStdout(), "CALENDAR", "DEFINITION", "USED BY").ifEmpty("no calendars")
			for _, cal := range cals {
				t.row(cal.Name, truncate(compactJSON(cal.Calendar), 80), orDash(strings.Join(cal.UsedBy, ", ")))
			}
			return t.flush()
		}),
	}
}

// newCalendarsGetCmd is `chime calendars get NAME`: the calendar as YAML
// that chime calendars apply reads back (or JSON).
func newCalendarsGetCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "get NAME",
		Short: "Show a calendar",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			cal, err := c.GetCalendar(ctx, args[0])
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, cal)
			}
			out, err := marshalYAML(cal)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		}),
	}
}

// newCalendarsApplyCmd is `chime calendars apply -f FILE`: chime apply for
// a file of calendars only.
func newCalendarsApplyCmd(cfg *clientConfig) *cobra.Command {
	opts := applyOptions{only: "calendars"}
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create or replace the calendars of a YAML file (calendars: list), after showing the diff",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			return runApply(ctx, cmd, c, opts)
		}),
	}
	addApplyFlags(cmd, &opts)
	return cmd
}

// newCalendarsDeleteCmd is `chime calendars delete NAME`.
func newCalendarsDeleteCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a calendar (refused while a trigger uses it)",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			if err := c.DeleteCalendar(ctx, args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "Calendar %s deleted.\n", args[0])
			return err
		}),
	}
}
