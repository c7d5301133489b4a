package apiclient_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// roleWorkflow is a workflow of one http task calling url.
func roleWorkflow(name, url string) api.Workflow {
	return api.Workflow{Name: name, Tasks: []api.WorkflowTask{{Name: "call", Type: "http", HTTP: json.RawMessage(`{"url":"` + url + `"}`)}}}
}

// startInstance saves roleWorkflow(name, url), starts an instance and
// returns its ID once the instance is in state.
func startInstance(t *testing.T, c *apiclient.Client, name, url, state string) string {
	t.Helper()
	ctx := t.Context()
	if _, _, err := c.PutWorkflow(ctx, roleWorkflow(name, url), 0); err != nil {
		t.Fatalf("PutWorkflow(%s): %v", name, err)
	}
	in, err := c.RunWorkflow(ctx, name, nil)
	if err != nil {
		t.Fatalf("RunWorkflow(%s): %v", name, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := c.GetWorkflowInstance(ctx, in.ID)
		if err == nil && got.State == state && (state != "running" || got.Tasks[0].State == "running" && taskInHistory(t, c, name)) {
			return in.ID
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %s of %s is not %s after 20s: %+v, %v", in.ID, name, state, got, err)
		}
		time.Sleep(20 * time.Millisecond) // the server runs it in the background
	}
}

// taskInHistory reports whether the history shows the running execution
// of workflow name's task, which its node writes up to a quarter of a
// second after it starts.
func taskInHistory(t *testing.T, c *apiclient.Client, name string) bool {
	t.Helper()
	page, err := c.ListExecutions(t.Context(), api.ExecutionQuery{JobGroup: "workflow." + name, JobName: "call", Outcomes: []string{"running"}})
	if err != nil {
		t.Fatalf("ListExecutions: %v", err)
	}
	return len(page.Executions) > 0
}

// TestWorkflowClient saves, reads, runs and kills a workflow through the
// client, and sees a refused save name its field.
func TestWorkflowClient(t *testing.T) {
	t.Parallel()
	f := newRoleFixture(t)
	c, ctx := f.srv.Client, t.Context()
	bad := roleWorkflow("bad", f.targetURL)
	bad.Edges = []api.WorkflowEdge{{From: "call", To: "missing"}}
	_, _, err := c.PutWorkflow(ctx, bad, 0)
	wantCode(t, err, api.CodeInvalidArgument, "edges[0].to")
	wf, err := c.GetWorkflow(ctx, "hangs")
	if err != nil || wf.Version != 1 || len(wf.Tasks) != 1 {
		t.Fatalf("GetWorkflow = %+v, %v", wf, err)
	}
	_, _, err = c.PutWorkflow(ctx, *wf, 7)
	wantCode(t, err, api.CodeConflict, "")
	in, err := c.ChangeWorkflowInstance(ctx, f.runningInstance, apiclient.InstanceKill)
	if err != nil || in.State != "killed" {
		t.Fatalf("kill = %+v, %v; want killed", in, err)
	}
	_, err = c.ChangeWorkflowInstance(ctx, f.runningInstance, apiclient.InstancePause)
	wantCode(t, err, api.CodeConflict, "")
	// The fixture's hanging job too, so that the server stops in time.
	if _, err := c.KillExecution(ctx, f.runningID); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListWorkflowInstances(ctx, "fails", 0)
	if err != nil || len(list) != 1 || list[0].ID != f.failedInstance || list[0].State != "failed" {
		t.Errorf("ListWorkflowInstances(fails) = %+v, %v", list, err)
	}
}
