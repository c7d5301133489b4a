package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// newAuditCmd is `chime audit`: who changed what, when (admin only).
func newAuditCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read the audit log: who changed what, when (admin only)",
	}
	cmd.AddCommand(newAuditListCmd(cfg))
	return cmd
}

// newAuditListCmd is `chime audit list`.
func newAuditListCmd(cfg *clientConfig) *cobra.Command {
	var (
		q     api.AuditQuery
		limit int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List audit entries, newest first",
		Example: `  chime audit list --actor ann
  chime audit list --target jobs/reports/nightly --limit 10`,
		Args: cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			if limit < 1 {
				return fmt.Errorf("--limit %d: want at least 1", limit)
			}
			q.Limit = min(limit, 500)
			entries, err := collect(c.Audit(ctx, q), limit)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, api.AuditList{Entries: nonNil(entries)})
			}
			t := newTable(cmd.OutOrStdout(), "TIME", "ACTOR", "ACTION", "TARGET", "DETAIL").ifEmpty("no audit entries")
			for _, e := range entries {
				detail := "-"
				if len(e.Detail) > 0 {
					raw, _ := json.Marshal(e.Detail) // a decoded map always encodes
					detail = truncate(string(raw), 80)
				}
				t.row(formatTime(&e.Time), e.Actor, e.Action, e.Target, detail)
			}
			return t.flush()
		}),
	}
	f := cmd.Flags()
	f.StringVar(&q.Actor, "actor", "", "only the entries of this user or token")
	f.StringVar(&q.Target, "target", "", "only the entries about this target, such as jobs/GROUP/NAME or users/NAME")
	f.IntVar(&limit, "limit", 50, "list at most this many entries")
	return cmd
}
