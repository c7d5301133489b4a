package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/apiclient"
)

// newExecutorsCmd is `chime executors`: the registered executors.
func newExecutorsCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "executors",
		Short: "Inspect the executors: the worker processes that run the jobs of type executor",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the registered executors by group, live or not, with their labels, version, last heartbeat and running runs",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			list, err := c.ListExecutors(ctx)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, nonNil(list))
			}
			t := newTable(cmd.OutOrStdout(), "GROUP", "ID", "INSTANCE", "LIVE", "LABELS", "VERSION", "LAST HEARTBEAT", "RUNNING").ifEmpty("no executors")
			for _, e := range list {
				live := "no"
				if e.Live {
					live = "yes"
				}
				labels := make([]string, 0, len(e.Labels))
				for _, k := range sortedKeys(e.Labels) {
					labels = append(labels, k+"="+e.Labels[k])
				}
				t.row(e.Group, e.ID, orDash(e.Instance), live, orDash(strings.Join(labels, ",")), orDash(e.Version),
					formatTime(&e.LastHeartbeat), strconv.Itoa(e.Running))
			}
			return t.flush()
		}),
	})
	return cmd
}
