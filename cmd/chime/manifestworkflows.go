package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/api/wire"
	"github.com/chime-scheduler/chime/apiclient"
)

// workflowStarterJob is the name of the job that carries a workflow's
// triggers on the server, which names the triggers it is given none
// for ("_start-0").
const workflowStarterJob = "_start"

// canonicalWorkflow returns wf as chime apply compares it: without its
// version and update time, its tasks' settings in the form canonicalJob
// gives a job's, and its triggers as the server keeps them on the
// workflow's starter job. It reports the deprecated spellings wf used.
func canonicalWorkflow(wf api.Workflow) (api.Workflow, []wire.Warning, error) {
	wf.Version, wf.Updated = 0, nil
	starter, warnings, err := canonicalJob(api.Job{Name: workflowStarterJob, Triggers: wf.Triggers})
	if err != nil {
		return wf, nil, err
	}
	wf.Triggers = starter.Triggers
	if len(wf.Triggers) == 0 {
		wf.Triggers = nil
	}
	if len(wf.Edges) == 0 {
		wf.Edges = nil
	}
	tasks := make([]api.WorkflowTask, len(wf.Tasks))
	for i, t := range wf.Tasks {
		job, _, err := canonicalJob(api.Job{Name: t.Name, HTTP: t.HTTP, Shell: t.Shell, Data: t.Data, Timeout: t.Timeout, Retry: t.Retry})
		if err != nil {
			return wf, nil, fmt.Errorf("tasks[%d].%w", i, err)
		}
		t.HTTP, t.Shell, t.Data, t.Timeout, t.Retry = job.HTTP, job.Shell, job.Data, job.Timeout, job.Retry
		tasks[i] = t
	}
	wf.Tasks = tasks
	for i, e := range wf.Edges {
		if e.On == api.OnSuccess {
			wf.Edges[i].On = ""
		}
	}
	return wf, warnings, nil
}

// checkManifestWorkflows checks the workflows of a manifest read from
// name: each named once, with tasks and valid triggers; the server checks
// the graph and the tasks' settings. They come back canonical.
func checkManifestWorkflows(m *manifest, name string) error {
	seen := map[string]int{}
	for i, wf := range m.Workflows {
		where := fmt.Sprintf("%s: workflows[%d]", name, i)
		if wf.Name == "" {
			return fmt.Errorf("%s.name: required", where)
		}
		if prev, dup := seen[wf.Name]; dup {
			return fmt.Errorf("%s.name: workflow %q is also workflows[%d]", where, wf.Name, prev)
		}
		seen[wf.Name] = i
		if len(wf.Tasks) == 0 {
			return fmt.Errorf("%s.tasks (%s): at least one task is required", where, wf.Name)
		}
		canon, warnings, err := canonicalWorkflow(wf)
		if err != nil {
			return fmt.Errorf("%s (%s): %w", where, wf.Name, err)
		}
		m.Workflows[i] = canon
		for _, w := range warnings {
			m.warnings = append(m.warnings, fmt.Sprintf("%s (%s): %s", where, wf.Name, w))
		}
	}
	return nil
}

// planWorkflows compares each workflow of m with the server's, and has
// the server check each one that changes, so that a file with a workflow
// the server would refuse is refused before anything of it is applied.
// The error names the workflow's field (workflows[1].edges[2]).
func planWorkflows(ctx context.Context, c *apiclient.Client, m *manifest) ([]change, error) {
	var changes []change
	for i, wf := range m.Workflows {
		ch := change{kind: "workflow", key: wf.Name, wf: wf}
		var current *api.Workflow
		server, err := c.GetWorkflow(ctx, wf.Name)
		switch {
		case apiclient.IsCode(err, api.CodeNotFound):
		case err != nil:
			return nil, fmt.Errorf("workflow %s: %w", wf.Name, err)
		default:
			canon, _, err := canonicalWorkflow(*server)
			if err != nil {
				return nil, fmt.Errorf("workflow %s: the server's copy: %w", wf.Name, err)
			}
			current = &canon
			ch.version = server.Version
		}
		want := wf
		if current != nil {
			want.Triggers = adoptServerDefaults(api.Job{Triggers: wf.Triggers}, api.Job{Triggers: current.Triggers}).Triggers
		}
		if err := compare(&ch, current, want, ch.version); err != nil {
			return nil, err
		}
		if ch.action != actionUnchanged {
			if err := c.CheckWorkflow(ctx, wf); err != nil {
				return nil, workflowFieldError(i, wf.Name, err)
			}
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// workflowFieldError words the server's refusal of workflows[i] with the
// field under the workflow's path: "workflows[1].edges[2] (etl): cycle …".
func workflowFieldError(i int, name string, err error) error {
	var apiErr *api.Error
	if errors.As(err, &apiErr) && apiErr.Field != "" {
		return fmt.Errorf("workflows[%d].%s (%s): %s", i, apiErr.Field, name, apiErr.Message)
	}
	return fmt.Errorf("workflows[%d] (%s): %w", i, name, err)
}

// planPruneWorkflows lists the workflows on the server that m does not
// list, as deletions with the diff of what goes. Workflows have no
// groups: a file that lists workflows is the whole list of them, and a
// file that lists none leaves them alone.
func planPruneWorkflows(ctx context.Context, c *apiclient.Client, m *manifest) ([]change, error) {
	if len(m.Workflows) == 0 {
		return nil, nil
	}
	listed := make(map[string]bool, len(m.Workflows))
	for _, wf := range m.Workflows {
		listed[wf.Name] = true
	}
	all, err := c.ListWorkflows(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the workflows to prune: %w", err)
	}
	var changes []change
	for _, wf := range all {
		if listed[wf.Name] {
			continue
		}
		canon, _, err := canonicalWorkflow(wf)
		if err != nil {
			return nil, fmt.Errorf("workflow %s: the server's copy: %w", wf.Name, err)
		}
		y, err := marshalYAML(canon)
		if err != nil {
			return nil, fmt.Errorf("workflow %s: the server's copy: %w", wf.Name, err)
		}
		changes = append(changes, change{
			kind: "workflow", key: wf.Name, action: actionDelete, version: wf.Version, wf: wf,
			diff: udiff.Unified(fmt.Sprintf("server: workflow %s (version %d)", wf.Name, wf.Version), "/dev/null", string(y), ""),
		})
	}
	return changes, nil
}

// applyWorkflow creates or updates the workflow of ch, refused when it
// changed on the server since the diff.
func (ch *change) applyWorkflow(ctx context.Context, c *apiclient.Client) (string, error) {
	if ch.action == actionCreate {
		// The API's PUT has no create-only form: check that the
		// workflow is still absent first.
		if _, err := c.GetWorkflow(ctx, ch.key); err == nil {
			return "", fmt.Errorf("workflow %s was created on the server after the diff was made; run apply again to see the new diff", ch.key)
		}
	}
	saved, _, err := c.PutWorkflow(ctx, ch.wf, ch.version)
	if apiclient.IsCode(err, api.CodeConflict) {
		return "", fmt.Errorf("workflow %s changed on the server after the diff was made against version %d; run apply again to see the new diff: %w", ch.key, ch.version, err)
	}
	if err != nil {
		return "", fmt.Errorf("workflow %s: %w", ch.key, err)
	}
	if ch.action == actionCreate {
		return fmt.Sprintf("created workflow %s (version %d)", ch.key, saved.Version), nil
	}
	return fmt.Sprintf("updated workflow %s (version %d)", ch.key, saved.Version), nil
}

// deleteWorkflow deletes the pruned workflow of ch, unless it changed on
// the server since the diff; one gone already is no error.
func (ch *change) deleteWorkflow(ctx context.Context, c *apiclient.Client) (deleted bool, err error) {
	cur, err := c.GetWorkflow(ctx, ch.key)
	switch {
	case apiclient.IsCode(err, api.CodeNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("workflow %s: %w", ch.key, err)
	case cur.Version != ch.version:
		return false, fmt.Errorf("workflow %s changed on the server after the diff was made against version %d; run apply again to see the new diff", ch.key, ch.version)
	}
	if err := c.DeleteWorkflow(ctx, ch.key); err != nil && !apiclient.IsCode(err, api.CodeNotFound) {
		return false, fmt.Errorf("deleting workflow %s: %w", ch.key, err)
	}
	return true, nil
}

// exportWorkflows adds to m the server's workflows, with the start times
// of their cron triggers that have passed left out (see
// dropPastCronStarts).
func exportWorkflows(ctx context.Context, c *apiclient.Client, m *manifest, now time.Time) error {
	list, err := c.ListWorkflows(ctx)
	if err != nil {
		return fmt.Errorf("listing the workflows: %w", err)
	}
	for _, item := range list {
		wf, err := c.GetWorkflow(ctx, item.Name) // the list has no trigger state
		if err != nil {
			return fmt.Errorf("workflow %s: %w", item.Name, err)
		}
		canon, _, err := canonicalWorkflow(*wf)
		if err != nil {
			return fmt.Errorf("workflow %s: %w", wf.Name, err)
		}
		starter := api.Job{Triggers: canon.Triggers}
		dropPastCronStarts(&starter, now)
		canon.Triggers = starter.Triggers
		m.Workflows = append(m.Workflows, canon)
	}
	return nil
}
