package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// newPoolsCmd is `chime pools`: the concurrency pools.
func newPoolsCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pools",
		Short: "List, set and delete concurrency pools: cluster-wide limits on the executions of the jobs that name them",
	}
	cmd.AddCommand(newPoolsListCmd(cfg), newPoolsSetCmd(cfg), newPoolsDeleteCmd(cfg))
	return cmd
}

// newPoolsListCmd is `chime pools list`.
func newPoolsListCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the pools with their limits, the executions running and the firings waiting",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			list, err := c.ListPools(ctx)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, nonNil(list))
			}
			t := newTable(cmd.OutOrStdout(), "NAME", "LIMIT", "RUNNING", "WAITING", "JOBS", "DESCRIPTION").ifEmpty("no pools")
			for _, p := range list {
				t.row(p.Name, strconv.Itoa(p.Limit), strconv.Itoa(p.Running), strconv.Itoa(p.Waiting),
					strconv.Itoa(len(p.Jobs)), orDash(p.Description))
			}
			return t.flush()
		}),
	}
}

// newPoolsSetCmd is `chime pools set`.
func newPoolsSetCmd(cfg *clientConfig) *cobra.Command {
	var p api.Pool
	cmd := &cobra.Command{
		Use:     "set NAME --limit N",
		Short:   "Create a pool or change its limit and description (operator or admin)",
		Example: `  chime pools set reports --limit 4 --description "report jobs"`,
		Args:    cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			p.Name = args[0]
			stored, created, err := c.PutPool(ctx, p)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, stored)
			}
			verb := "updated"
			if created {
				verb = "created"
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Pool %s %s: at most %d executions at once.\n", stored.Name, verb, stored.Limit)
			return err
		}),
	}
	f := cmd.Flags()
	f.IntVar(&p.Limit, "limit", 0, "how many executions of the pool's jobs may run at once, across the cluster (required)")
	f.StringVar(&p.Description, "description", "", "what the pool is for")
	return cmd
}

// newPoolsDeleteCmd is `chime pools delete`.
func newPoolsDeleteCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a pool no job names (operator or admin)",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			if err := c.DeletePool(ctx, args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "Pool %s deleted.\n", args[0])
			return err
		}),
	}
}
