package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// newExportCmd is `chime export`: the server's jobs, the calendars they
// use and the workflows, as a file chime apply reads back unchanged.
func newExportCmd(cfg *clientConfig) *cobra.Command {
	var group string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the server's jobs, workflows and the calendars they use as YAML for chime apply",
		Long: `Write the server's jobs, the calendars their triggers use, and the workflows
(but with --group), as a YAML file that chime apply reads: export, edit, apply. Applying an export unchanged
changes nothing. Read-only fields (versions, status, fire times) are left
out.`,
		Example: `  chime export --group reports > reports.yaml
  chime apply -f reports.yaml`,
		Args: cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			m, err := export(ctx, c, group)
			if err != nil {
				return err
			}
			if cfg.output == formatJSON {
				return writeJSON(cmd.OutOrStdout(), m)
			}
			out, err := marshalYAML(m)
			if err != nil {
				return err
			}
			header := fmt.Sprintf("# chime export from %s", c.BaseURL())
			if group != "" {
				header += ", group " + group
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n# Apply with: chime apply -f FILE\n%s", header, out)
			return err
		}),
	}
	cmd.Flags().StringVar(&group, "group", "", "export only this group's jobs")
	return cmd
}

// dropPastCronStarts leaves out the start times of cron triggers that have
// passed. The server sets a trigger's start time to when it was scheduled,
// and for a cron schedule a past start time changes nothing; written into
// the file it would make an edited schedule start in the past and misfire
// at once. apply compares a trigger without a start time as having the
// server's (see adoptServerDefaults).
func dropPastCronStarts(j *api.Job, now time.Time) {
	for i, t := range j.Triggers {
		var s struct {
			Kind string `json:"kind"`
		}
		if t.StartTime != nil && t.StartTime.Before(now) && json.Unmarshal(t.Schedule, &s) == nil && s.Kind == "cron" {
			j.Triggers[i].StartTime = nil
		}
	}
}

// export collects the jobs of group ("" for all) in canonical form, the
// calendars their triggers name, and with no group the workflows.
func export(ctx context.Context, c *apiclient.Client, group string) (*manifest, error) {
	var m manifest
	var calendars []string
	now := time.Now()
	for job, err := range c.Jobs(ctx, api.JobQuery{Group: group}) {
		if err != nil {
			return nil, err
		}
		if workflowOwned(job.Group) {
			continue // chime workflows get -o yaml exports the workflow
		}
		canon, _, err := canonicalJob(job)
		if err != nil {
			return nil, fmt.Errorf("job %s/%s: %w", job.Group, job.Name, err)
		}
		dropPastCronStarts(&canon, now)
		m.Jobs = append(m.Jobs, canon)
		for _, t := range job.Triggers {
			if t.Calendar != "" {
				calendars = append(calendars, t.Calendar)
			}
		}
	}
	slices.Sort(calendars)
	for _, name := range slices.Compact(calendars) {
		cal, err := c.GetCalendar(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("calendar %s: %w", name, err)
		}
		canon, _, err := canonicalCalendar(*cal)
		if err != nil {
			return nil, fmt.Errorf("calendar %s: %w", name, err)
		}
		m.Calendars = append(m.Calendars, canon)
	}
	if err := exportPools(ctx, c, &m); err != nil {
		return nil, err
	}
	if group == "" {
		if err := exportWorkflows(ctx, c, &m, now); err != nil {
			return nil, err
		}
	}
	return &m, nil
}
