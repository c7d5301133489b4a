package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// action is what apply does to one calendar or job.
type action string

const (
	actionCreate    action = "create"
	actionUpdate    action = "update"
	actionUnchanged action = "unchanged"
	// actionDelete is a prune: a job on the server the file does not list.
	actionDelete action = "delete"
)

// change is the plan for one calendar or job of a manifest: what the server
// has, what the file says, and the difference.
type change struct {
	kind   string // "pool", "calendar", "job" or "workflow"
	key    string // the calendar's or workflow's name, the job's group/name
	action action
	// version is the job version the diff was made against; apply sends
	// it as If-Match, so that a job changed since is not overwritten.
	version int64
	diff    string
	job     api.Job
	cal     api.Calendar
	pool    api.Pool
	wf      api.Workflow
}

// applyOptions are the flags of chime apply.
type applyOptions struct {
	file   string
	yes    bool
	dryRun bool
	// only restricts the manifest to "calendars" (chime calendars apply);
	// empty allows both.
	only string
	// prune deletes the jobs of the file's groups that the file does not
	// list; pruneAllGroups widens it to every group.
	prune, pruneAllGroups bool
}

// newApplyCmd is `chime apply -f FILE` (also `chime jobs apply`).
func newApplyCmd(cfg *clientConfig) *cobra.Command {
	var opts applyOptions
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create or update the calendars and jobs of a YAML file, after showing the diff",
		Long: `Create or update the calendars and jobs of a YAML file, after showing the diff.

The file lists calendars and jobs in the API's form (chime export writes one):

  calendars:
    - name: holidays
      calendar: {type: holiday, time_zone: Europe/Berlin, excluded_dates: ["2025-12-25"]}
  jobs:
    - group: reports
      name: nightly
      type: http
      http: {method: POST, url: "https://reports.example.com/run"}
      triggers:
        - schedule: {kind: cron, expression: "0 30 2 ? * MON-FRI", time_zone: Europe/Berlin}
          calendar: holidays
      retry: {max_attempts: 3}

apply compares each entry with the server's, prints a unified diff of what
changes and asks before applying (--yes skips the question, --dry-run stops
after the diff). An update is sent with the version it was compared with, so
a job someone changed in the meantime is refused rather than overwritten.
Jobs and calendars on the server that the file does not list are left alone,
unless --prune is given: then the jobs of the groups the file lists jobs of
that the file does not list are deleted, after the diff shows them (and with
--prune-all-groups, those of every group). Workflows (a workflows: list, as chime workflows apply takes) are applied
after the jobs; with --prune, a file that lists workflows also deletes the
workflows it does not list (workflows have no groups; a file that lists none
leaves them alone). Calendars are never pruned. A prune
needs a file that lists at least one job: an empty file is refused rather than
read as "delete everything". --dry-run shows the deletions and changes nothing.
Each change, deletions included, is kept as a version of the job on the server
(chime jobs versions), so a pruned job can be brought back with chime jobs
rollback.`,
		Args: cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			return runApply(ctx, cmd, c, opts)
		}),
	}
	addApplyFlags(cmd, &opts)
	f := cmd.Flags()
	f.BoolVar(&opts.prune, "prune", false, "also delete the jobs of the file's groups that the file does not list")
	f.BoolVar(&opts.pruneAllGroups, "prune-all-groups", false, "with --prune, delete the jobs the file does not list in every group, not only the file's")
	return cmd
}

// addApplyFlags adds -f, --yes and --dry-run.
func addApplyFlags(cmd *cobra.Command, opts *applyOptions) {
	f := cmd.Flags()
	f.StringVarP(&opts.file, "file", "f", "", "YAML file to apply; - reads standard input (then --yes or --dry-run is needed)")
	f.BoolVarP(&opts.yes, "yes", "y", false, "apply without asking")
	f.BoolVar(&opts.dryRun, "dry-run", false, "show the diff and change nothing")
	_ = cmd.MarkFlagRequired("file") // the flag exists
}

// runApply reads the manifest, shows the plan and applies it.
func runApply(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, opts applyOptions) error {
	m, err := openManifest(cmd, opts)
	if err != nil {
		return err
	}
	for _, w := range m.warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
	}
	if opts.only == "calendars" && (len(m.Jobs) > 0 || len(m.Pools) > 0 || len(m.Workflows) > 0) {
		return fmt.Errorf("%s lists jobs, pools or workflows: apply it with chime apply", opts.file)
	}
	if opts.pruneAllGroups && !opts.prune {
		return errors.New("--prune-all-groups widens --prune: add --prune")
	}
	changes, err := plan(ctx, c, m)
	if err != nil {
		return err
	}
	if opts.prune {
		if len(m.Jobs) == 0 && (opts.pruneAllGroups || len(m.Workflows) == 0) {
			return fmt.Errorf("refusing to prune: %s lists no jobs, and pruning it would delete every job of the scope; list the jobs to keep", opts.file)
		}
		deletes, err := planPrune(ctx, c, m, opts.pruneAllGroups)
		if err != nil {
			return err
		}
		wfDeletes, err := planPruneWorkflows(ctx, c, m)
		if err != nil {
			return err
		}
		changes = append(append(changes, deletes...), wfDeletes...)
	}
	out := cmd.OutOrStdout()
	pending := writePlan(out, changes)
	if pending == 0 || opts.dryRun {
		return nil
	}
	if !opts.yes {
		ok, err := confirm(cmd, fmt.Sprintf("Apply %d change%s to %s? [y/N] ", pending, plural(pending), c.BaseURL()))
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("cancelled: nothing applied")
		}
	}
	return execute(ctx, out, c, changes)
}

// openManifest reads the file of -f, or standard input for "-".
func openManifest(cmd *cobra.Command, opts applyOptions) (*manifest, error) {
	if opts.file == "-" {
		if !opts.yes && !opts.dryRun {
			return nil, errors.New("-f - reads the file from standard input, so apply cannot ask there: add --yes or --dry-run")
		}
		return readManifest(cmd.InOrStdin(), "standard input")
	}
	f, err := os.Open(opts.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readManifest(f, opts.file)
}

// plan compares each entry of m with the server's.
func plan(ctx context.Context, c *apiclient.Client, m *manifest) ([]change, error) {
	changes, err := planPools(ctx, c, m)
	if err != nil {
		return nil, err
	}
	for _, cal := range m.Calendars {
		ch := change{kind: "calendar", key: cal.Name, cal: cal}
		var current *api.Calendar
		server, err := c.GetCalendar(ctx, cal.Name)
		switch {
		case apiclient.IsCode(err, api.CodeNotFound):
		case err != nil:
			return nil, fmt.Errorf("calendar %s: %w", cal.Name, err)
		default:
			canon, _, err := canonicalCalendar(*server)
			if err != nil {
				return nil, fmt.Errorf("calendar %s: the server's copy: %w", cal.Name, err)
			}
			current = &canon
		}
		if err := compare(&ch, current, cal, 0); err != nil {
			return nil, err
		}
		changes = append(changes, ch)
	}
	for _, job := range m.Jobs {
		ch := change{kind: "job", key: job.Group + "/" + job.Name, job: job}
		var current *api.Job
		server, err := c.GetJob(ctx, job.Group, job.Name)
		switch {
		case apiclient.IsCode(err, api.CodeNotFound):
		case err != nil:
			return nil, fmt.Errorf("job %s: %w", ch.key, err)
		default:
			canon, _, err := canonicalJob(*server)
			if err != nil {
				return nil, fmt.Errorf("job %s: the server's copy: %w", ch.key, err)
			}
			current = &canon
			ch.version = server.Version
		}
		want := job
		if current != nil {
			want = adoptServerDefaults(job, *current)
		}
		if err := compare(&ch, current, want, ch.version); err != nil {
			return nil, err
		}
		changes = append(changes, ch)
	}
	workflows, err := planWorkflows(ctx, c, m)
	if err != nil {
		return nil, err
	}
	return append(changes, workflows...), nil
}

// planPrune lists the jobs on the server that m does not list, in the
// groups m lists jobs of (every group with allGroups), as deletions with
// the diff of what goes.
func planPrune(ctx context.Context, c *apiclient.Client, m *manifest, allGroups bool) ([]change, error) {
	listed := make(map[string]bool, len(m.Jobs))
	var groups []string
	for _, j := range m.Jobs {
		listed[j.Group+"/"+j.Name] = true
		if !slices.Contains(groups, j.Group) {
			groups = append(groups, j.Group)
		}
	}
	slices.Sort(groups)
	if allGroups {
		groups = []string{""} // the API's "every group"
	}
	var changes []change
	for _, g := range groups {
		for job, err := range c.Jobs(ctx, api.JobQuery{Group: g}) {
			if err != nil {
				return nil, fmt.Errorf("listing the jobs to prune: %w", err)
			}
			key := job.Group + "/" + job.Name
			if listed[key] || workflowOwned(job.Group) {
				continue
			}
			canon, _, err := canonicalJob(job)
			if err != nil {
				return nil, fmt.Errorf("job %s: the server's copy: %w", key, err)
			}
			y, err := marshalYAML(canon)
			if err != nil {
				return nil, fmt.Errorf("job %s: the server's copy: %w", key, err)
			}
			changes = append(changes, change{
				kind: "job", key: key, action: actionDelete, version: job.Version, job: job,
				diff: udiff.Unified(fmt.Sprintf("server: job %s (version %d)", key, job.Version), "/dev/null", string(y), ""),
			})
		}
	}
	return changes, nil
}

// adoptServerDefaults returns the file's job as the server would have it
// for comparison: a trigger the file gives no start time gets the server's
// trigger's, which the server set when it scheduled the trigger. The job
// sent stays the file's, so that a changed trigger starts when it is saved.
func adoptServerDefaults(file, server api.Job) api.Job {
	starts := make(map[string]*time.Time, len(server.Triggers))
	for _, t := range server.Triggers {
		starts[t.Name] = t.StartTime
	}
	triggers := slices.Clone(file.Triggers)
	for i, t := range triggers {
		if t.StartTime == nil {
			triggers[i].StartTime = starts[t.Name]
		}
	}
	file.Triggers = triggers
	return file
}

// compare sets the change's action and diff from the server's entry
// (nil when it has none) and the file's.
func compare[T any](ch *change, current *T, want T, version int64) error {
	wantYAML, err := marshalYAML(want)
	if err != nil {
		return fmt.Errorf("%s %s: %w", ch.kind, ch.key, err)
	}
	from, fromLabel := "", "/dev/null"
	if current != nil {
		currentYAML, err := marshalYAML(*current)
		if err != nil {
			return fmt.Errorf("%s %s: the server's copy: %w", ch.kind, ch.key, err)
		}
		from = string(currentYAML)
		fromLabel = "server: " + ch.kind + " " + ch.key
		if version != 0 {
			fromLabel += fmt.Sprintf(" (version %d)", version)
		}
	}
	switch {
	case current == nil:
		ch.action = actionCreate
	case from == string(wantYAML):
		ch.action = actionUnchanged
		return nil
	default:
		ch.action = actionUpdate
	}
	ch.diff = udiff.Unified(fromLabel, "file: "+ch.kind+" "+ch.key, from, string(wantYAML))
	return nil
}

// writePlan prints the diff of every entry that changes and a summary, and
// returns how many entries change.
func writePlan(w io.Writer, changes []change) int {
	var created, updated, deleted, unchanged int
	afterDiff := false // a diff ends with a blank line already
	for _, ch := range changes {
		switch ch.action {
		case actionCreate, actionUpdate, actionDelete:
			switch ch.action {
			case actionCreate:
				created++
			case actionUpdate:
				updated++
			default:
				deleted++
			}
			fmt.Fprintf(w, "%s %s: %s\n%s\n", ch.kind, ch.key, ch.action, ch.diff)
			afterDiff = true
		case actionUnchanged:
			unchanged++
			fmt.Fprintf(w, "%s %s: unchanged\n", ch.kind, ch.key)
			afterDiff = false
		}
	}
	if !afterDiff {
		fmt.Fprintln(w)
	}
	if deleted > 0 {
		fmt.Fprintf(w, "%d to create, %d to update, %d to delete, %d unchanged.\n", created, updated, deleted, unchanged)
	} else {
		fmt.Fprintf(w, "%d to create, %d to update, %d unchanged.\n", created, updated, unchanged)
	}
	return created + updated + deleted
}

// confirm asks question on standard error and reads the answer from
// standard input: yes for "y" or "yes".
func confirm(cmd *cobra.Command, question string) (bool, error) {
	fmt.Fprint(cmd.ErrOrStderr(), question)
	answer, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("reading the answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// execute applies the changes: calendars first (jobs name them), then
// the new jobs, created together with one request per api.MaxJobBatch
// jobs (all of a request or none of it), then the updated jobs one by
// one, then the workflows, then the pruned workflows and jobs are
// deleted. It stops at the first failure, saying what was applied before
// it.
func execute(ctx context.Context, w io.Writer, c *apiclient.Client, changes []change) error {
	applied := 0
	failed := func(err error, what string) error {
		return fmt.Errorf("%w\n(%d change%s applied before %s)", err, applied, plural(applied), what)
	}
	var creates []change
	for _, ch := range changes {
		if ch.kind == "job" && ch.action == actionCreate {
			creates = append(creates, ch)
		}
	}
	for _, ch := range changes {
		// Pools and calendars first: jobs name them.
		if ch.kind == "job" || ch.kind == "workflow" || ch.action == actionUnchanged {
			continue
		}
		msg, err := ch.apply(ctx, c)
		if err != nil {
			return failed(err, "this one; nothing after it")
		}
		applied++
		fmt.Fprintln(w, msg)
	}
	for batch := range slices.Chunk(creates, api.MaxJobBatch) {
		if err := createJobs(ctx, c, batch); err != nil {
			return failed(err, "these; nothing after them")
		}
		for _, ch := range batch {
			applied++
			fmt.Fprintf(w, "created job %s\n", ch.key)
		}
	}
	for _, ch := range changes {
		if ch.kind != "job" || ch.action != actionUpdate {
			continue
		}
		msg, err := ch.apply(ctx, c)
		if err != nil {
			return failed(err, "this one; nothing after it")
		}
		applied++
		fmt.Fprintln(w, msg)
	}
	for _, ch := range changes {
		// Workflows after the jobs, the order the server's checks allow.
		if ch.kind != "workflow" || (ch.action != actionCreate && ch.action != actionUpdate) {
			continue
		}
		msg, err := ch.applyWorkflow(ctx, c)
		if err != nil {
			return failed(err, "this one; nothing after it")
		}
		applied++
		fmt.Fprintln(w, msg)
	}
	for _, ch := range changes {
		if ch.kind != "workflow" || ch.action != actionDelete {
			continue
		}
		deleted, err := ch.deleteWorkflow(ctx, c)
		if err != nil {
			return failed(err, "this one; nothing after it")
		}
		if deleted {
			applied++
			fmt.Fprintf(w, "deleted workflow %s\n", ch.key)
		}
	}
	for _, ch := range changes {
		if ch.kind != "job" || ch.action != actionDelete {
			continue
		}
		// The API's delete has no If-Match: check the version the diff
		// showed first, so that a job changed since is not deleted unseen.
		cur, err := c.GetJob(ctx, ch.job.Group, ch.job.Name)
		switch {
		case apiclient.IsCode(err, api.CodeNotFound):
			continue // gone already
		case err != nil:
			return failed(fmt.Errorf("job %s: %w", ch.key, err), "this one; nothing after it")
		case cur.Version != ch.version:
			return failed(fmt.Errorf("job %s changed on the server after the diff was made against version %d; run apply again to see the new diff", ch.key, ch.version),
				"this one; nothing after it")
		}
		if err := c.DeleteJob(ctx, ch.job.Group, ch.job.Name); err != nil && !apiclient.IsCode(err, api.CodeNotFound) {
			return failed(fmt.Errorf("deleting job %s: %w", ch.key, err), "this one; nothing after it")
		}
		applied++
		fmt.Fprintf(w, "deleted job %s\n", ch.key)
	}
	_, err := fmt.Fprintf(w, "Applied %d change%s.\n", applied, plural(applied))
	return err
}

// createJobs creates the jobs of creates with one request. An error the
// server places at one job (field "jobs[i]…") names that job.
func createJobs(ctx context.Context, c *apiclient.Client, creates []change) error {
	jobs := make([]api.Job, len(creates))
	for i, ch := range creates {
		jobs[i] = ch.job
	}
	_, err := c.CreateJobs(ctx, jobs)
	if err == nil {
		return nil
	}
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		var i int
		if _, scanErr := fmt.Sscanf(apiErr.Field, "jobs[%d]", &i); scanErr == nil && i >= 0 && i < len(creates) {
			return fmt.Errorf("creating %d job%s: job %s: %w", len(creates), plural(len(creates)), creates[i].key, err)
		}
	}
	if apiclient.IsCode(err, api.CodeConflict) {
		return fmt.Errorf("creating %d job%s: a key was taken on the server after the diff was made; run apply again to see the new diff: %w", len(creates), plural(len(creates)), err)
	}
	return fmt.Errorf("creating %d job%s: %w", len(creates), plural(len(creates)), err)
}

// apply makes one change on the server and describes what it did.
func (ch *change) apply(ctx context.Context, c *apiclient.Client) (string, error) {
	if ch.kind == "pool" {
		return ch.applyPool(ctx, c)
	}
	if ch.kind == "calendar" {
		if _, err := c.PutCalendar(ctx, ch.cal); err != nil {
			return "", fmt.Errorf("calendar %s: %w", ch.key, err)
		}
		if ch.action == actionCreate {
			return "created calendar " + ch.key, nil
		}
		return "updated calendar " + ch.key, nil
	}
	if ch.action == actionCreate {
		saved, err := c.CreateJob(ctx, ch.job)
		if apiclient.IsCode(err, api.CodeConflict) {
			return "", fmt.Errorf("job %s was created on the server after the diff was made; run apply again to see the new diff: %w", ch.key, err)
		}
		if err != nil {
			return "", fmt.Errorf("job %s: %w", ch.key, err)
		}
		return fmt.Sprintf("created job %s (version %d)", ch.key, saved.Version), nil
	}
	saved, _, err := c.PutJob(ctx, ch.job, ch.version)
	if apiclient.IsCode(err, api.CodeVersionMismatch) {
		return "", fmt.Errorf("job %s changed on the server after the diff was made against version %d; run apply again to see the new diff: %w", ch.key, ch.version, err)
	}
	if err != nil {
		return "", fmt.Errorf("job %s: %w", ch.key, err)
	}
	return fmt.Sprintf("updated job %s (version %d)", ch.key, saved.Version), nil
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
