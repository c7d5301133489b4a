package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// parseVersion reads a version number argument.
func parseVersion(what, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s %q: want a version number, 1 or more", what, s)
	}
	return n, nil
}

// jobAndVersions checks the arguments GROUP/NAME N [M]: min to max
// version numbers after the job.
func jobAndVersions(minN, maxN int) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < 1+minN || len(args) > 1+maxN {
			return fmt.Errorf("want GROUP/NAME and %d to %d version numbers, got %d arguments", minN, maxN, len(args))
		}
		if _, _, err := jobRef(args[:1]); err != nil {
			return err
		}
		for _, a := range args[1:] {
			if _, err := parseVersion("version", a); err != nil {
				return err
			}
		}
		return nil
	}
}

// newJobsVersionsCmd is `chime jobs versions GROUP/NAME`.
func newJobsVersionsCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "versions GROUP/NAME",
		Short: "List the versions of a job: who changed it, when, and how",
		Long: `List the versions of a job, newest first. Every create, update (pause and
resume included), delete and rollback of a job through the server records
one. chime jobs diff shows what a version changed, chime jobs rollback
restores one.`,
		Args: jobAndVersions(0, 0),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			group, name, _ := jobRef(args)
			var list []api.JobVersion
			for v, err := range c.JobVersions(ctx, group, name) {
				if err != nil {
					return err
				}
				list = append(list, v)
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, api.JobVersionList{Versions: nonNil(list)})
			}
			t := newTable(cmd.OutOrStdout(), "VERSION", "KIND", "BY", "TIME", "JOB VERSION").ifEmpty("no versions")
			for _, v := range list {
				kind := v.Kind
				if v.RolledBackFrom != 0 {
					kind += fmt.Sprintf(" (to %d)", v.RolledBackFrom)
				}
				jv := "-"
				if v.JobVersion != 0 {
					jv = strconv.FormatInt(v.JobVersion, 10)
				}
				t.row(strconv.FormatInt(v.Number, 10), kind, v.Actor, formatTime(&v.Time), jv)
			}
			return t.flush()
		}),
	}
}

// newJobsDiffCmd is `chime jobs diff GROUP/NAME N [M]`.
func newJobsDiffCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "diff GROUP/NAME N [M]",
		Short: "Show what version N of a job changed, or the difference from version N to M",
		Example: `  chime jobs diff reports/nightly 7      # what version 7 changed
  chime jobs diff reports/nightly 3 7    # from version 3 to version 7`,
		Args: jobAndVersions(1, 2),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			group, name, _ := jobRef(args[:1])
			n, _ := parseVersion("version", args[1])
			from, to := int64(0), n
			if len(args) == 3 {
				from = n
				to, _ = parseVersion("version", args[2])
			}
			d, err := c.DiffJobVersions(ctx, group, name, from, to)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, d)
			}
			if d.Diff == "" {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "Versions %d and %d of job %s/%s are the same.\n", d.From, d.To, group, name)
				return err
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), d.Diff)
			return err
		}),
	}
}

// newJobsRollbackCmd is `chime jobs rollback GROUP/NAME N`.
func newJobsRollbackCmd(cfg *clientConfig) *cobra.Command {
	var ifVersion int64
	cmd := &cobra.Command{
		Use:   "rollback GROUP/NAME N",
		Short: "Write version N of a job back as the job (a deleted job comes back)",
		Long: `Write version N of a job back as the job, with the checks of an update, and
record it as a rolled_back version. A deleted job comes back. Values the
versions keep masked (credentials in headers or variables) keep the job's
current ones. With --if-version, the server refuses if the job is no longer
at that version.`,
		Args: jobAndVersions(1, 1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			group, name, _ := jobRef(args[:1])
			n, _ := parseVersion("version", args[1])
			job, err := c.RollbackJob(ctx, group, name, n, ifVersion)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, job)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Job %s/%s rolled back to version %d (job version %d).\n", group, name, n, job.Version)
			return err
		}),
	}
	cmd.Flags().Int64Var(&ifVersion, "if-version", 0, "refuse unless the job is at this job version (its ETag)")
	return cmd
}
