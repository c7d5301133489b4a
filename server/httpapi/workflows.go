package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/secret"
)

// Workflows is the workflows' side of the server: what the workflow
// routes call. A Service that also implements it serves them; otherwise
// they answer 503.
type Workflows interface {
	// ListWorkflows lists the workflows, by name.
	ListWorkflows(ctx context.Context) (*api.WorkflowList, error)
	// GetWorkflow returns one; not_found when absent.
	GetWorkflow(ctx context.Context, name string) (*api.Workflow, error)
	// PutWorkflow creates (created true) or replaces a workflow; with
	// ifMatch above 0, only at that version (conflict otherwise).
	PutWorkflow(ctx context.Context, actor string, wf api.Workflow, ifMatch int64) (*api.Workflow, bool, error)
	// CheckWorkflow refuses a workflow PutWorkflow would refuse for its
	// content, naming the field, and changes nothing.
	CheckWorkflow(ctx context.Context, actor string, wf api.Workflow) error
	// DeleteWorkflow deletes a workflow and its tasks' jobs.
	DeleteWorkflow(ctx context.Context, actor, name string) error
	// RunWorkflow starts an instance now.
	RunWorkflow(ctx context.Context, actor, name string, req api.WorkflowRunRequest) (*api.WorkflowInstance, error)
	// ListWorkflowInstances lists the newest instances of a workflow (of
	// all when name is empty), without their tasks.
	ListWorkflowInstances(ctx context.Context, name string, limit int) (*api.WorkflowInstanceList, error)
	// GetWorkflowInstance returns an instance with its tasks.
	GetWorkflowInstance(ctx context.Context, id string) (*api.WorkflowInstance, error)
	// ChangeWorkflowInstance pauses, resumes, kills or re-runs an
	// instance (action is the last step of the route's path).
	ChangeWorkflowInstance(ctx context.Context, actor, id, action string) (*api.WorkflowInstance, error)
}

// workflowRoutes are the routes of workflows and their instances.
func (h *handler) workflowRoutes() []route {
	const v1 = api.Version
	ok := func(body any) []response { return []response{{status: http.StatusOK, body: body}} }
	instance := ok(api.WorkflowInstance{})
	routes := []route{
		{
			method: http.MethodGet, path: v1 + "/workflows", role: api.RoleViewer, operationID: "listWorkflows",
			summary: "List the workflows, by name.", responses: ok(api.WorkflowList{}),
			handle: h.listWorkflows,
		},
		{
			method: http.MethodGet, path: v1 + "/workflows/{name}", role: api.RoleViewer, operationID: "getWorkflow",
			summary:   "One workflow: its tasks and edges; the ETag header carries its version.",
			responses: []response{{status: http.StatusOK, body: api.Workflow{}, etag: true}},
			handle:    h.getWorkflow,
		},
		{
			method: http.MethodPut, path: v1 + "/workflows/{name}", role: api.RoleOperator, operationID: "putWorkflow", groups: workflowPathGroup,
			summary: "Create (201) or replace (200) a workflow, and the jobs of its tasks (group workflow.NAME). A cycle, an unknown task type, " +
				"an edge to a missing task or a bad task setting is refused naming the field (edges[3], tasks[1].type), and nothing changes. " +
				"With If-Match, refused (409) unless it names the current version.",
			ifMatch: true, body: api.Workflow{},
			responses: []response{
				{status: http.StatusOK, body: api.Workflow{}, etag: true},
				{status: http.StatusCreated, body: api.Workflow{}, etag: true},
			},
			errors: []int{http.StatusConflict},
			handle: h.putWorkflow,
		},
		{
			method: http.MethodPost, path: v1 + "/workflows/{name}/check", role: api.RoleOperator, operationID: "checkWorkflow", groups: workflowPathGroup,
			summary: "Check a workflow as PUT would, and change nothing: 204 when PUT would take it, and otherwise the error PUT would answer " +
				"for its content, naming the field (edges[3], tasks[1].type). chime apply checks every workflow of a file this way before changing anything.",
			body: api.Workflow{}, responses: []response{{status: http.StatusNoContent}},
			handle: h.checkWorkflow,
		},
		{
			method: http.MethodDelete, path: v1 + "/workflows/{name}", role: api.RoleOperator, operationID: "deleteWorkflow", groups: workflowPathGroup,
			summary: "Delete a workflow and the jobs of its tasks; its instances stay in the record.", responses: []response{{status: http.StatusNoContent}},
			handle: h.deleteWorkflow,
		},
		{
			method: http.MethodPost, path: v1 + "/workflows/{name}/run", role: api.RoleOperator, operationID: "runWorkflow", groups: workflowPathGroup,
			summary: "Start an instance of the workflow now, with parameters its tasks see (merged over each task's data).",
			body:    api.WorkflowRunRequest{}, optionalBody: true,
			responses: []response{{status: http.StatusCreated, body: api.WorkflowInstance{}}},
			handle:    h.runWorkflow,
		},
		{
			method: http.MethodGet, path: v1 + "/workflow-instances", role: api.RoleViewer, operationID: "listWorkflowInstances",
			summary: "The newest instances, of one workflow or of all, without their tasks.",
			query: []param{
				{name: "workflow", description: "Keeps the instances of one workflow."},
				{name: "limit", typ: paramInt, min: 1, max: 500, description: "How many; defaults to 50."},
			},
			responses: ok(api.WorkflowInstanceList{}),
			handle:    h.listWorkflowInstances,
		},
		{
			method: http.MethodGet, path: v1 + "/workflow-instances/{id}", role: api.RoleViewer, operationID: "getWorkflowInstance",
			summary:   "One instance with the state, execution, attempts and times of each task, and the edges it runs by.",
			responses: instance,
			handle:    h.getWorkflowInstance,
		},
	}
	for _, a := range []struct{ action, summary string }{
		{"pause", "Pause a running instance: no further task starts; those running finish."},
		{"resume", "Resume a paused instance: its ready tasks start."},
		{"kill", "Kill an instance: its tasks not started are cancelled, and those running are killed on their nodes."},
		{"rerun", "Re-run an ended instance from its failed tasks: they, the tasks skipped or cancelled, and every task downstream of them run again; the others keep their result."},
	} {
		routes = append(routes, route{
			method: http.MethodPost, path: v1 + "/workflow-instances/{id}/" + a.action, role: api.RoleOperator,
			operationID: a.action + "WorkflowInstance", groups: instanceGroup,
			summary: a.summary + " Answers the instance; 409 when its state does not allow it.", responses: instance,
			errors: []int{http.StatusConflict},
			handle: h.changeWorkflowInstance,
		})
	}
	return routes
}

// workflows returns the Service's workflow side, or the error the
// workflow routes answer without one.
func (h *handler) workflows() (Workflows, error) {
	wf, ok := h.svc.(Workflows)
	if !ok {
		return nil, httpjson.Errorf(api.CodeUnavailable, "", "this server keeps no workflows")
	}
	return wf, nil
}

// viewOfWorkflow returns wf as the caller may read it: each task's HTTP
// and shell settings masked as viewOf masks a job's, unless the caller
// may change the jobs of the workflow's tasks.
func (c *call) viewOfWorkflow(wf api.Workflow) api.Workflow {
	if c.user != nil && c.user.Role.Includes(api.RoleOperator) && c.user.MayChangeGroup(workflowGroupOf(wf.Name)) {
		return wf
	}
	tasks := make([]api.WorkflowTask, len(wf.Tasks))
	for i, t := range wf.Tasks {
		masked := secret.MaskJob(api.Job{HTTP: t.HTTP, Shell: t.Shell})
		t.HTTP, t.Shell = masked.HTTP, masked.Shell
		tasks[i] = t
	}
	wf.Tasks = tasks
	return wf
}

// workflowGroupOf is the job group of workflow name's tasks.
func workflowGroupOf(name string) string { return "workflow." + name }

// workflowPathGroup is the job group of the tasks of the workflow {name}
// of the path.
func workflowPathGroup(_ *handler, r *http.Request) ([]string, bool, error) {
	return []string{workflowGroupOf(r.PathValue("name"))}, false, nil
}

// instanceGroup is the job group of the tasks of the instance {id} of the
// path.
func instanceGroup(h *handler, r *http.Request) ([]string, bool, error) {
	wf, err := h.workflows()
	if err != nil {
		return nil, false, err
	}
	in, err := wf.GetWorkflowInstance(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, false, err
	}
	return []string{workflowGroupOf(in.Workflow)}, false, nil
}

func (h *handler) listWorkflows(w http.ResponseWriter, r *http.Request, c *call) error {
	wf, err := h.workflows()
	if err != nil {
		return err
	}
	list, err := wf.ListWorkflows(r.Context())
	if err != nil {
		return err
	}
	for i := range list.Workflows {
		list.Workflows[i] = c.viewOfWorkflow(list.Workflows[i])
	}
	httpjson.Write(w, http.StatusOK, list)
	return nil
}

func (h *handler) getWorkflow(w http.ResponseWriter, r *http.Request, c *call) error {
	wf, err := h.workflows()
	if err != nil {
		return err
	}
	got, err := wf.GetWorkflow(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(got.Version))
	httpjson.Write(w, http.StatusOK, c.viewOfWorkflow(*got))
	return nil
}

func (h *handler) putWorkflow(w http.ResponseWriter, r *http.Request, c *call) error {
	wf, err := h.workflows()
	if err != nil {
		return err
	}
	ifMatch, err := parseIfMatch(r.Header.Values("If-Match"))
	if err != nil {
		return err
	}
	body, err := h.decodeWorkflow(w, r)
	if err != nil {
		return err
	}
	stored, created, err := wf.PutWorkflow(r.Context(), c.actor(), body, ifMatch)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", api.Version+"/workflows/"+url.PathEscape(stored.Name))
	}
	w.Header().Set("ETag", etag(stored.Version))
	httpjson.Write(w, status, stored)
	return nil
}

// decodeWorkflow reads the workflow of a request's body, named by its
// path.
func (h *handler) decodeWorkflow(w http.ResponseWriter, r *http.Request) (api.Workflow, error) {
	var body api.Workflow
	if err := h.decode(w, r, &body); err != nil {
		return body, err
	}
	var err error
	body.Name, err = fromPath(r, "name", body.Name)
	return body, err
}

func (h *handler) checkWorkflow(w http.ResponseWriter, r *http.Request, c *call) error {
	wf, err := h.workflows()
	if err != nil {
		return err
	}
	body, err := h.decodeWorkflow(w, r)
	if err != nil {
		return err
	}
	if err := wf.CheckWorkflow(r.Context(), c.actor(), body); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) deleteWorkflow(w http.ResponseWriter, r *http.Request, c *call) error {
	wf, err := h.workflows()
	if err != nil {
		return err
	}
	if err := wf.DeleteWorkflow(r.Context(), c.actor(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) runWorkflow(w http.ResponseWriter, r *http.Request, c *call) error {
	wf, err := h.workflows()
	if err != nil {
		return err
	}
	var req api.WorkflowRunRequest
	if r.ContentLength != 0 {
		if err := h.decode(w, r, &req); err != nil {
			return err
		}
	}
	in, err := wf.RunWorkflow(r.Context(), c.actor(), r.PathValue("name"), req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", api.Version+"/workflow-instances/"+in.ID)
	httpjson.Write(w, http.StatusCreated, in)
	return nil
}

func (h *handler) listWorkflowInstances(w http.ResponseWriter, r *http.Request, c *call) error {
	wf, err := h.workflows()
	if err != nil {
		return err
	}
	list, err := wf.ListWorkflowInstances(r.Context(), c.query.str("workflow"), c.query.int("limit"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, list)
	return nil
}

func (h *handler) getWorkflowInstance(w http.ResponseWriter, r *http.Request, _ *call) error {
	wf, err := h.workflows()
	if err != nil {
		return err
	}
	in, err := wf.GetWorkflowInstance(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, in)
	return nil
}

func (h *handler) changeWorkflowInstance(w http.ResponseWriter, r *http.Request, c *call) error {
	wf, err := h.workflows()
	if err != nil {
		return err
	}
	action := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	in, err := wf.ChangeWorkflowInstance(r.Context(), c.actor(), r.PathValue("id"), action)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, in)
	return nil
}
