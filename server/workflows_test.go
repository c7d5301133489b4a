package server

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
)

// taskLog is a Go job type for workflow tasks: it records which task ran,
// in order, and fails the tasks whose data says fail_first on their first
// run.
type taskLog struct {
	mu    sync.Mutex
	order []string
	runs  map[string]int
}

func (l *taskLog) Execute(_ context.Context, jc *chime.JobContext) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	task := jc.Job.Key.Name
	l.order = append(l.order, task)
	l.runs[task]++
	if jc.MergedData["fail_first"] == true && l.runs[task] == 1 {
		return fmt.Errorf("task %s fails its first run", task)
	}
	if jc.MergedData["day"] != "mon" {
		return fmt.Errorf("task %s: param day = %v, want mon", task, jc.MergedData["day"])
	}
	return nil
}

func (l *taskLog) ran() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.order...)
}

// etl is extract -> (load, index) -> report, with notify after index
// only when index fails, and audit on its own.
func etl() api.Workflow {
	task := func(name string, data map[string]any) api.WorkflowTask {
		return api.WorkflowTask{Name: name, Type: "tasklog", Data: data}
	}
	return api.Workflow{
		Name: "etl",
		Tasks: []api.WorkflowTask{
			task("extract", nil), task("load", nil), task("index", map[string]any{"fail_first": true}),
			task("report", nil), task("notify", nil), task("audit", nil),
		},
		Edges: []api.WorkflowEdge{
			{From: "extract", To: "load"}, {From: "extract", To: "index"},
			{From: "load", To: "report"}, {From: "index", To: "report"},
			{From: "index", To: "notify", On: api.OnFailure},
		},
	}
}

func TestWorkflowSaveRefusesBadGraphs(t *testing.T) {
	t.Parallel()
	s := newServer(t, dbtest.SQLiteURL(t))
	if err := s.RegisterJobType("tasklog", &taskLog{runs: map[string]int{}}); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tests := []struct {
		name  string
		edit  func(*api.Workflow)
		field string
	}{
		{name: "cycle", edit: func(w *api.Workflow) { w.Edges = append(w.Edges, api.WorkflowEdge{From: "report", To: "extract"}) }, field: "edges[5]"},
		{name: "unknown type", edit: func(w *api.Workflow) { w.Tasks[3].Type = "nope" }, field: "tasks[3].type"},
		{name: "edge to a missing task", edit: func(w *api.Workflow) { w.Edges[2].To = "reprot" }, field: "edges[2].to"},
		{name: "bad task setting", edit: func(w *api.Workflow) { w.Tasks[1].Timeout = "soon" }, field: "tasks[1].timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wf := etl()
			tt.edit(&wf)
			_, _, err := s.PutWorkflow(ctx, "alice", wf, 0)
			wantAPIError(t, err, api.CodeInvalidArgument, tt.field)
			if _, err := s.GetWorkflow(ctx, "etl"); !isNotFound(err) {
				t.Fatalf("GetWorkflow after a refused save = %v, want not_found", err)
			}
			if jobs, err := s.sched.Jobs(ctx, workflowGroup("etl")); err != nil || len(jobs) != 0 {
				t.Fatalf("jobs of the refused workflow = %v, %v; want none", jobs, err)
			}
		})
	}
}

func TestWorkflowRuns(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url)
		log := &taskLog{runs: map[string]int{}}
		if err := s.RegisterJobType("tasklog", log); err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if _, created, err := s.PutWorkflow(ctx, "alice", etl(), 0); err != nil || !created {
			t.Fatalf("PutWorkflow = %v, %v", created, err)
		}
		start(t, s)
		in, err := s.RunWorkflow(ctx, "alice", "etl", api.WorkflowRunRequest{Params: map[string]any{"day": "mon"}})
		if err != nil {
			t.Fatalf("RunWorkflow: %v", err)
		}
		ended := func() bool {
			got, err := s.GetWorkflowInstance(ctx, in.ID)
			if err != nil {
				t.Fatalf("GetWorkflowInstance: %v", err)
			}
			in = got
			return in.State != "running"
		}
		waitFor(t, "the instance to end", ended)
		want := map[string]string{"extract": "succeeded", "load": "succeeded", "index": "failed", "report": "skipped", "notify": "succeeded", "audit": "succeeded"}
		checkTasks(t, in, "failed", want)

		// A re-run runs index again (it succeeds now), then report; notify
		// is skipped, as index did not fail this time.
		if _, err := s.ChangeWorkflowInstance(ctx, "alice", in.ID, InstanceRerun); err != nil {
			t.Fatalf("rerun: %v", err)
		}
		waitFor(t, "the re-run to end", ended)
		want["index"], want["report"], want["notify"] = "succeeded", "succeeded", "skipped"
		checkTasks(t, in, "succeeded", want)

		counts := map[string]int{}
		pos := map[string]int{}
		for i, task := range log.ran() {
			counts[task]++
			pos[task] = i
		}
		if fmt.Sprint(counts) != fmt.Sprint(map[string]int{"extract": 1, "load": 1, "index": 2, "report": 1, "notify": 1, "audit": 1}) {
			t.Errorf("runs per task = %v", counts)
		}
		if pos["report"] < pos["load"] || pos["report"] < pos["index"] || pos["load"] < pos["extract"] {
			t.Errorf("tasks ran out of order: %v", log.ran())
		}
	})
}

func checkTasks(t *testing.T, in *api.WorkflowInstance, state string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, task := range in.Tasks {
		got[task.Task] = task.State
		if (task.State == "succeeded" || task.State == "failed") && task.ExecutionID == "" {
			t.Errorf("task %s ended with no execution", task.Task)
		}
	}
	if in.State != state || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("instance %s with tasks %v, want %s with %v", in.State, got, state, want)
	}
}
