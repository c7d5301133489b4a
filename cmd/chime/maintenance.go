package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// newMaintenanceCmd is `chime maintenance`: pause every job, or one job
// group's, for a while, with a reason the dashboard shows.
func newMaintenanceCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "maintenance",
		Short: "Start, end and show a maintenance window: every job, or one group's, paused with a reason",
	}
	cmd.AddCommand(newMaintenanceStartCmd(cfg), newMaintenanceEndCmd(cfg), newMaintenanceStatusCmd(cfg))
	return cmd
}

// newMaintenanceStartCmd is `chime maintenance start`.
func newMaintenanceStartCmd(cfg *clientConfig) *cobra.Command {
	var req api.MaintenanceRequest
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Pause every job, or the jobs of --group, until `chime maintenance end` (operator or admin)",
		Example: `  chime maintenance start --reason "database upgrade"
  chime maintenance start --group billing --reason "ledger migration"`,
		Args: cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			m, err := c.StartMaintenance(ctx, req)
			if err != nil {
				return err
			}
			return writeMaintenance(cmd.OutOrStdout(), cfg.output, m)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Group, "group", "", "pause only the jobs of this job group")
	f.StringVar(&req.Reason, "reason", "", "why, shown on the dashboard and in the audit log (required)")
	return cmd
}

// newMaintenanceEndCmd is `chime maintenance end`.
func newMaintenanceEndCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "end",
		Short: "End the maintenance window: its jobs resume, except those paused by hand (operator or admin)",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			if err := c.EndMaintenance(ctx); err != nil {
				return err
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "Maintenance ended; missed fire times follow each trigger's misfire instruction.")
			return err
		}),
	}
}

// newMaintenanceStatusCmd is `chime maintenance status`.
func newMaintenanceStatusCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the maintenance window in force, if any",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			m, err := c.Maintenance(ctx)
			if err != nil {
				return err
			}
			return writeMaintenance(cmd.OutOrStdout(), cfg.output, m)
		}),
	}
}

// writeMaintenance prints a maintenance window in the format asked for.
func writeMaintenance(w io.Writer, format outputFormat, m *api.Maintenance) error {
	if format != formatTable {
		return writeStructured(w, format, m)
	}
	if !m.Active {
		_, err := fmt.Fprintln(w, "No maintenance window is on.")
		return err
	}
	scope := "every job"
	if m.Group != "" {
		scope = "group " + m.Group
	}
	_, err := fmt.Fprintf(w, "Maintenance on %s since %s, started by %s: %s\n", scope, formatTime(m.Since), m.By, m.Reason)
	return err
}
