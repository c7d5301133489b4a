package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/apiclient"
)

// newExecutionsItemsCmd is `chime executions items ID`.
func newExecutionsItemsCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "items ID",
		Short: "List the items of a sharded firing: state, node, attempts, duration",
		Long: `List the items of the sharded firing whose parent execution (any attempt
of it) is ID: each item's state, the node of its latest attempt, its
attempts and how long its latest attempt took.`,
		Args: cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			si, err := c.ShardItems(ctx, args[0])
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, si)
			}
			w := cmd.OutOrStdout()
			if _, err := fmt.Fprintf(w, "Sharded firing %s: %s, %d items, %d not ended, %d failed (round %d)\n",
				si.FirstID, si.State, si.Total, si.Remaining, si.Failed, si.Round); err != nil {
				return err
			}
			t := newTable(w, "INDEX", "STATE", "NODE", "ATTEMPTS", "DURATION", "EXECUTION", "ERROR")
			for _, it := range si.Items {
				t.row(strconv.Itoa(it.Index), it.State, orDash(it.NodeID), strconv.Itoa(it.Attempts), orDash(it.Duration),
					orDash(it.ExecutionID), orDash(it.Error))
			}
			return t.flush()
		}),
	}
}

// newExecutionsRerunFailedCmd is `chime executions rerun-failed ID`.
func newExecutionsRerunFailedCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "rerun-failed ID",
		Short: "Re-run only the failed items of a failed sharded firing",
		Long: `Re-run the failed items of the failed sharded firing whose parent
execution (any attempt of it) is ID, and only those, as the parent's next
attempt. The items that succeeded do not run again.`,
		Args: cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			e, err := c.RerunFailedItems(ctx, args[0])
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, e)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Sharded firing %s of %s/%s: failed items re-run as attempt %d, execution %s.\n",
				e.FirstID, e.JobGroup, e.JobName, e.Attempt, e.ID)
			return err
		}),
	}
}
