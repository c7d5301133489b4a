package main

import (
	"testing"

	"github.com/chime-scheduler/chime/api"
)

// TestCanonicalWorkflow checks that two spellings of one workflow, as a
// file writes it and as the server answers it, compare equal.
func TestCanonicalWorkflow(t *testing.T) {
	t.Parallel()
	written := api.Workflow{
		Name: "etl",
		Tasks: []api.WorkflowTask{{
			Name: "extract", Type: "http", Timeout: "90s",
			HTTP:  []byte(`{"url": "https://example.com", "method": "POST"}`),
			Retry: &api.RetryPolicy{MaxAttempts: 3, Delay: "60s"},
			Data:  map[string]any{},
		}, {Name: "load", Type: "http"}},
		Edges:    []api.WorkflowEdge{{From: "extract", To: "load", On: api.OnSuccess}},
		Triggers: []api.Trigger{{Schedule: []byte(`{"time_zone":"UTC","expression":"@daily","kind":"cron"}`)}},
	}
	served := api.Workflow{
		Name: "etl", Version: 3,
		Tasks: []api.WorkflowTask{{
			Name: "extract", Type: "http", Timeout: "1m30s",
			HTTP:  []byte(`{"method":"POST","url":"https://example.com"}`),
			Retry: &api.RetryPolicy{MaxAttempts: 3, Delay: "1m"},
		}, {Name: "load", Type: "http"}},
		Edges:    []api.WorkflowEdge{{From: "extract", To: "load"}},
		Triggers: []api.Trigger{{Name: "_start-0", Schedule: []byte(`{"kind":"cron","expression":"@daily"}`), State: "WAITING"}},
	}
	a, _, err := canonicalWorkflow(written)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := canonicalWorkflow(served)
	if err != nil {
		t.Fatal(err)
	}
	ya, _ := marshalYAML(a)
	yb, _ := marshalYAML(b)
	if string(ya) != string(yb) {
		t.Errorf("canonical forms differ:\n%s\nand\n%s", ya, yb)
	}
}
