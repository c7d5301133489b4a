package main

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/apiclient"
)

// newNodesCmd is `chime nodes`: the cluster's nodes.
func newNodesCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "nodes",
		Short: "List the cluster's nodes, alive or not, with their clock offsets",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			nodes, err := c.Nodes(ctx)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, nonNil(nodes))
			}
			t := newTable(cmd.OutOrStdout(), "NODE", "ALIVE", "EPOCH", "LAST CHECK-IN", "CLOCK OFFSET", "").ifEmpty("no nodes")
			for _, n := range nodes {
				alive := "no"
				if n.Alive {
					alive = "yes"
				}
				self := ""
				if n.Self {
					self = "(answered this request)"
				}
				t.row(n.ID, alive, strconv.FormatInt(n.Epoch, 10), formatTime(&n.LastCheckIn), formatOffset(n.ClockOffset), self)
			}
			return t.flush()
		}),
	}
}
