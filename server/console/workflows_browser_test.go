package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// httpTask is a workflow task that GETs url.
func httpTask(t *testing.T, name, url string) api.WorkflowTask {
	t.Helper()
	spec, err := json.Marshal(map[string]any{"url": url})
	if err != nil {
		t.Fatal(err)
	}
	return api.WorkflowTask{Name: name, Type: "http", HTTP: spec}
}

// TestWorkflowPages shows the workflows list, then an instance's page
// drawing its DAG with each task coloured by its state, live: load runs
// while index has failed, report waits; once load ends the instance fails
// with index named as what failed and report skipped. The editor refuses
// a cycle, showing the error at the edge that closes it, and shows the
// workflow as YAML.
func TestWorkflowPages(t *testing.T) {
	srv := servertest.Start(t, nil)
	ok, failing := targetServer(t, 200), targetServer(t, 500)
	slow, release := slowServer(t)
	ctx := context.Background()
	wf := api.Workflow{
		Name: "etl", Description: "nightly load",
		Tasks: []api.WorkflowTask{
			httpTask(t, "extract", ok.URL), httpTask(t, "load", slow.URL), httpTask(t, "index", failing.URL),
			httpTask(t, "report", ok.URL), httpTask(t, "notify", ok.URL),
		},
		Edges: []api.WorkflowEdge{
			{From: "extract", To: "load"}, {From: "extract", To: "index"},
			{From: "load", To: "report"}, {From: "index", To: "report"},
			{From: "index", To: "notify", On: api.OnFailure},
		},
	}
	if _, _, err := srv.Client.PutWorkflow(ctx, wf, 0); err != nil {
		t.Fatalf("PutWorkflow: %v", err)
	}
	in, err := srv.Client.RunWorkflow(ctx, "etl", map[string]any{"day": "mon"})
	if err != nil {
		t.Fatalf("RunWorkflow: %v", err)
	}

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/workflows", servertest.AdminName, srv.AdminPassword)
	if row := p.WaitText(`[data-testid="workflow"][data-workflow="etl"]`, "etl"); !strings.Contains(row, "nightly load") {
		t.Errorf("the workflow's row = %q, want its description", row)
	}
	p.WaitText(`[data-testid="instances"] [data-instance="`+in.ID+`"]`, "running")
	p.Screenshot("workflows")

	p.Route("/workflow-instances/" + in.ID)
	node := func(task, state string) string {
		return `[data-testid="dag"] g[data-task="` + task + `"][data-state="` + state + `"]`
	}
	// An SVG node has no innerText: wait for it to be drawn in its state.
	drawn := func(task, state string) {
		t.Helper()
		waitJS(p, task+" drawn "+state, fmt.Sprintf(`document.querySelector(%q) !== null`, node(task, state)))
	}
	drawn("index", "failed")
	drawn("load", "running")
	drawn("notify", "succeeded")
	if n := p.Count(node("report", "pending")); n != 1 {
		t.Errorf("report drawn pending %d times, want once", n)
	}
	p.Screenshot("workflow-instance-running")

	release()
	p.WaitText(`[data-testid="instance-state"]`, "failed")
	drawn("report", "skipped")
	drawn("load", "succeeded")
	if got := p.WaitText(`[data-testid="failures"]`, "index"); !strings.Contains(got, "500") {
		t.Errorf("what failed = %q, want index and its error", got)
	}
	if n := p.Count(`[data-testid="rerun"]`); n != 1 {
		t.Errorf("%d re-run buttons on a failed instance, want 1", n)
	}
	p.Screenshot("workflow-instance-failed")

	// The editor: a cycle is refused at the edge that closes it.
	p.Route("/workflows/etl/edit")
	p.Click(`[data-testid="add-edge"]`)
	setValue(p, `select[name="edges[5].from"]`, "report")
	setValue(p, `select[name="edges[5].to"]`, "extract")
	p.Click(`[data-testid="save"]`)
	if got := p.WaitText(`.field[data-field="edges[5]"] .error`, "cycle"); !strings.Contains(got, "extract -> load -> report -> extract") {
		t.Errorf("the cycle's error = %q, want the path of tasks", got)
	}
	p.Screenshot("workflow-editor-cycle")
	if got, err := srv.Client.GetWorkflow(ctx, "etl"); err != nil || got.Version != 1 || len(got.Edges) != 5 {
		t.Errorf("after the refused save the workflow is %+v, %v; want version 1 with 5 edges", got, err)
	}
	p.Click(`[data-testid="mode-yaml"]`)
	if got := p.WaitText(`[data-testid="yaml"]`, "workflows:"); !strings.Contains(got, `name: "etl"`) || !strings.Contains(got, `from: "index"`) {
		t.Errorf("the YAML = %q, want the workflow", got)
	}
}

// TestChildJobCause shows, on a child job's execution, the parent's
// execution that ran it, linked.
func TestChildJobCause(t *testing.T) {
	srv := servertest.Start(t, nil)
	ok := targetServer(t, 200)
	ctx := context.Background()
	parent := cronJob(t, "etl", "extract", ok.URL, "")
	parent.Children = []api.ChildJob{{Job: "etl/load"}}
	createJobs(t, srv, cronJob(t, "etl", "load", ok.URL, ""), parent)
	acc, err := srv.Client.RunJob(ctx, "etl", "extract", api.RunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	child := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "etl", JobName: "load"})
	if child.Cause != acc.ExecutionIDs[0] {
		t.Fatalf("the child's cause = %q, want the parent's execution %s", child.Cause, acc.ExecutionIDs[0])
	}
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/executions/"+child.ID, servertest.AdminName, srv.AdminPassword)
	p.WaitText(`[data-testid="cause"]`, child.Cause[:12])
	p.Click(`[data-testid="cause"] a`)
	p.WaitText(`[data-testid="execution-id"]`, child.Cause[:12])
	p.Screenshot("execution-parent")
}
