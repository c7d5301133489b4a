package server

import (
	"fmt"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
)

func TestChildJobsRefusedAtSave(t *testing.T) {
	t.Parallel()
	s, _ := newTaskServer(t, dbtest.SQLiteURL(t))
	ctx := t.Context()
	if _, _, err := s.PutJob(ctx, "alice", api.Job{Group: "etl", Name: "load", Type: "tasklog"}, 0, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		children []api.ChildJob
		field    string
	}{
		{"unknown job", []api.ChildJob{{Job: "etl/load"}, {Job: "etl/nope"}}, "children[1].job"},
		{"not group/name", []api.ChildJob{{Job: "load"}}, "children[0].job"},
		{"itself", []api.ChildJob{{Job: "etl/extract"}}, "children[0].job"},
		{"bad condition", []api.ChildJob{{Job: "etl/load", On: "later"}}, "children[0].on"},
		{"twice", []api.ChildJob{{Job: "etl/load"}, {Job: "etl/load", On: api.OnFailure}}, "children[1].job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := s.PutJob(ctx, "alice", api.Job{Group: "etl", Name: "extract", Type: "tasklog", Children: tt.children}, 0, nil)
			wantAPIError(t, err, api.CodeInvalidArgument, tt.field)
			if _, err := s.GetJob(ctx, "etl", "extract"); !isNotFound(err) {
				t.Fatalf("GetJob after a refused save = %v, want not_found", err)
			}
		})
	}
}

func TestChildJobsRun(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s, _ := newTaskServer(t, url)
		ctx := t.Context()
		put := func(j api.Job) {
			t.Helper()
			j.Group, j.Type = "etl", "tasklog"
			if _, _, err := s.PutJob(ctx, "alice", j, 0, nil); err != nil {
				t.Fatalf("PutJob %s: %v", j.Name, err)
			}
		}
		put(api.Job{Name: "load"})
		put(api.Job{Name: "cleanup"})
		put(api.Job{Name: "page"})
		// extract fails its first run: then page (on failure) and cleanup
		// (always) run; on its second, load (on success) and cleanup.
		put(api.Job{Name: "extract", Data: map[string]any{"fail_first": true}, Children: []api.ChildJob{
			{Job: "etl/load"}, {Job: "etl/page", On: api.OnFailure}, {Job: "etl/cleanup", On: api.OnAlways},
		}})
		got, err := s.GetJob(ctx, "etl", "extract")
		if err != nil || len(got.Children) != 3 {
			t.Fatalf("GetJob = %+v, %v; want its 3 children", got, err)
		}
		start(t, s)
		params := map[string]any{"day": "mon"}
		children := func(parent string) map[string]string {
			t.Helper()
			out := map[string]string{}
			for _, job := range []string{"load", "page", "cleanup"} {
				list, err := s.ListExecutions(ctx, api.ExecutionQuery{JobGroup: "etl", JobName: job})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range list.Executions {
					if e.Cause == parent {
						out[job] = e.Outcome
					}
				}
			}
			return out
		}
		for _, want := range []map[string]string{{"page": "failed", "cleanup": "failed"}, {"load": "failed", "cleanup": "failed"}} {
			acc, err := s.RunJob(ctx, "alice", "etl", "extract", api.RunRequest{Params: params})
			if err != nil {
				t.Fatal(err)
			}
			parent := acc.ExecutionIDs[0]
			waitExecution(t, s, parent)
			// The children fail: they run without the parent's params.
			waitFor(t, "the children of "+parent, func() bool { return len(children(parent)) == len(want) })
			if got := children(parent); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("children of %s = %v, want %v", parent, got, want)
			}
		}
	})
}
