package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

// TestWorkflowViewMasks checks that a viewer reads a workflow's task
// settings masked as a job's, and an operator whole.
func TestWorkflowViewMasks(t *testing.T) {
	t.Parallel()
	wf := api.Workflow{Name: "etl", Tasks: []api.WorkflowTask{{
		Name: "load", Type: "http",
		HTTP: json.RawMessage(`{"url":"https://etl.example.com/load","headers":{"Authorization":"Bearer s3cret"}}`),
	}}}
	viewer := &call{user: &api.User{Name: "vera", Role: api.RoleViewer}}
	if got := string(viewer.viewOfWorkflow(wf).Tasks[0].HTTP); strings.Contains(got, "s3cret") {
		t.Errorf("a viewer reads the task's HTTP settings as %s, with the header's value", got)
	}
	if string(wf.Tasks[0].HTTP) != `{"url":"https://etl.example.com/load","headers":{"Authorization":"Bearer s3cret"}}` {
		t.Errorf("masking changed the workflow it was given: %s", wf.Tasks[0].HTTP)
	}
	operator := &call{user: &api.User{Name: "otto", Role: api.RoleOperator}}
	if got := string(operator.viewOfWorkflow(wf).Tasks[0].HTTP); !strings.Contains(got, "s3cret") {
		t.Errorf("an operator reads the task's HTTP settings as %s, masked", got)
	}
}
