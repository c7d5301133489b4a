package server

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// TestWorkflowInstancesPrunedUnderRetention checks that pruneWorkflows
// deletes the instances that ended longer ago than the history's
// retention, and keeps the newer ones.
func TestWorkflowInstancesPrunedUnderRetention(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url, func(c *Config) { c.Retention.MaxAge = time.Hour })
		if err := s.RegisterJobType("tasklog", &taskLog{runs: map[string]int{}}); err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		wf := api.Workflow{Name: "one", Tasks: []api.WorkflowTask{{Name: "a", Type: "tasklog"}}}
		if _, _, err := s.PutWorkflow(ctx, "alice", wf, 0); err != nil {
			t.Fatalf("PutWorkflow: %v", err)
		}
		start(t, s)
		in, err := s.RunWorkflow(ctx, "alice", "one", api.WorkflowRunRequest{Params: map[string]any{"day": "mon"}})
		if err != nil {
			t.Fatalf("RunWorkflow: %v", err)
		}
		waitFor(t, "the instance to end", func() bool {
			got, err := s.GetWorkflowInstance(ctx, in.ID)
			if err != nil {
				t.Fatalf("GetWorkflowInstance: %v", err)
			}
			return got.State == "succeeded"
		})
		s.pruneWorkflows(ctx, s.now().Add(59*time.Minute))
		if _, err := s.GetWorkflowInstance(ctx, in.ID); err != nil {
			t.Fatalf("an instance younger than the retention after the prune: %v, want it kept", err)
		}
		s.pruneWorkflows(ctx, s.now().Add(61*time.Minute))
		if _, err := s.GetWorkflowInstance(ctx, in.ID); !isNotFound(err) {
			t.Fatalf("an instance older than the retention after the prune: %v, want not_found", err)
		}
	})
}
