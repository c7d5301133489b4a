package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/chime-scheduler/chime/api"
)

// ListWorkflows lists the workflows, by name.
func (c *Client) ListWorkflows(ctx context.Context) ([]api.Workflow, error) {
	var out api.WorkflowList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("workflows")}, &out); err != nil {
		return nil, err
	}
	return out.Workflows, nil
}

// GetWorkflow returns one workflow.
func (c *Client) GetWorkflow(ctx context.Context, name string) (*api.Workflow, error) {
	var out api.Workflow
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("workflows", name)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutWorkflow creates or replaces a workflow and the jobs of its tasks
// (operator or admin); created reports a new one. With ifMatch above 0
// it is refused (Code conflict) unless the stored version is ifMatch. A
// refused workflow fails with an *api.Error whose Field names the
// offending field (edges[3], tasks[1].type).
func (c *Client) PutWorkflow(ctx context.Context, wf api.Workflow, ifMatch int64) (saved *api.Workflow, created bool, err error) {
	req := request{method: http.MethodPut, path: path("workflows", wf.Name), body: wf}
	if ifMatch != 0 {
		req.header = http.Header{"If-Match": {formatETag(ifMatch)}}
	}
	var out api.Workflow
	resp, err := c.do(ctx, req, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, resp.status == http.StatusCreated, nil
}

// CheckWorkflow asks the server whether PutWorkflow would take wf, and
// changes nothing: nil when it would, and otherwise the *api.Error PutWorkflow
// would give for wf's content, whose Field names the offending field.
func (c *Client) CheckWorkflow(ctx context.Context, wf api.Workflow) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: path("workflows", wf.Name, "check"), body: wf}, nil)
	return err
}

// DeleteWorkflow deletes a workflow and the jobs of its tasks; its
// instances stay.
func (c *Client) DeleteWorkflow(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: path("workflows", name)}, nil)
	return err
}

// RunWorkflow starts an instance of a workflow now, with params its tasks
// see.
func (c *Client) RunWorkflow(ctx context.Context, name string, params map[string]any) (*api.WorkflowInstance, error) {
	var out api.WorkflowInstance
	req := request{method: http.MethodPost, path: path("workflows", name, "run"), body: api.WorkflowRunRequest{Params: params}}
	if _, err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListWorkflowInstances lists the newest instances of a workflow (of all
// when workflow is empty), without their tasks; limit 0 means the
// server's default (50).
func (c *Client) ListWorkflowInstances(ctx context.Context, workflow string, limit int) ([]api.WorkflowInstance, error) {
	q := url.Values{}
	if workflow != "" {
		q.Set("workflow", workflow)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out api.WorkflowInstanceList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("workflow-instances"), query: q}, &out); err != nil {
		return nil, err
	}
	return out.Instances, nil
}

// GetWorkflowInstance returns an instance with the state of each task.
func (c *Client) GetWorkflowInstance(ctx context.Context, id string) (*api.WorkflowInstance, error) {
	var out api.WorkflowInstance
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("workflow-instances", id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Actions on a workflow instance, for ChangeWorkflowInstance.
const (
	InstancePause  = "pause"
	InstanceResume = "resume"
	InstanceKill   = "kill"
	InstanceRerun  = "rerun"
)

// ChangeWorkflowInstance pauses, resumes, kills or re-runs (from its
// failed tasks) an instance, and returns it. A change its state does not
// allow fails with Code conflict.
func (c *Client) ChangeWorkflowInstance(ctx context.Context, id, action string) (*api.WorkflowInstance, error) {
	var out api.WorkflowInstance
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("workflow-instances", id, action)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
