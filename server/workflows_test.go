package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/workflow"
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

// newTaskServer returns a server on url with the Go job type tasklog,
// and the taskLog that records its runs.
func newTaskServer(t *testing.T, url string) (*Server, *taskLog) {
	t.Helper()
	s := newServer(t, url)
	log := &taskLog{runs: map[string]int{}}
	if err := s.RegisterJobType("tasklog", log); err != nil {
		t.Fatal(err)
	}
	return s, log
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
	s, _ := newTaskServer(t, dbtest.SQLiteURL(t))
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
		s, log := newTaskServer(t, url)
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

func TestWorkflowTriggers(t *testing.T) {
	t.Parallel()
	s, _ := newTaskServer(t, dbtest.SQLiteURL(t))
	ctx := t.Context()
	wf := api.Workflow{
		Name:  "nightly",
		Tasks: []api.WorkflowTask{{Name: "only", Type: "tasklog"}},
		Triggers: []api.Trigger{{
			Schedule: []byte(`{"kind":"simple","interval":"1h"}`),
			Data:     map[string]any{"day": "mon"},
		}},
	}
	bad := wf
	bad.Triggers = []api.Trigger{{Schedule: []byte(`{"kind":"cron","expression":"not cron"}`)}}
	_, _, err := s.PutWorkflow(ctx, "alice", bad, 0)
	wantAPIError(t, err, api.CodeInvalidArgument, "triggers[0].schedule.expression")

	if _, _, err := s.PutWorkflow(ctx, "alice", wf, 0); err != nil {
		t.Fatalf("PutWorkflow: %v", err)
	}
	got, err := s.GetWorkflow(ctx, "nightly")
	if err != nil || len(got.Triggers) != 1 || got.Triggers[0].NextFireTime == nil {
		t.Fatalf("GetWorkflow = %+v, %v; want its trigger with a next fire time", got, err)
	}
	start(t, s)
	var list *api.WorkflowInstanceList
	waitFor(t, "the trigger's instance to succeed", func() bool {
		list, err = s.ListWorkflowInstances(ctx, "nightly", 10)
		return err == nil && len(list.Instances) == 1 && list.Instances[0].State == "succeeded"
	})
	if list.Instances[0].Params["day"] != "mon" {
		t.Errorf("instance params = %v, want the trigger's data", list.Instances[0].Params)
	}

	// Without triggers, the starter job goes.
	wf.Triggers = nil
	if _, _, err := s.PutWorkflow(ctx, "alice", wf, 0); err != nil {
		t.Fatalf("PutWorkflow: %v", err)
	}
	if _, err := s.GetJob(ctx, workflowGroup("nightly"), startJob); !isNotFound(err) {
		t.Errorf("the starter job after the triggers were removed: %v, want not_found", err)
	}
}

// TestWorkflowStarterOncePerFiring runs the starter twice for one firing,
// as a recovery does after its node died: one instance.
func TestWorkflowStarterOncePerFiring(t *testing.T) {
	t.Parallel()
	s, _ := newTaskServer(t, dbtest.SQLiteURL(t))
	ctx := t.Context()
	if _, _, err := s.PutWorkflow(ctx, "alice", api.Workflow{Name: "w", Tasks: []api.WorkflowTask{{Name: "t", Type: "tasklog"}}}, 0); err != nil {
		t.Fatal(err)
	}
	jc := &chime.JobContext{
		Job:               &chime.JobDetail{Key: chime.NewJobKey(workflowGroup("w"), startJob)},
		Trigger:           &chime.Trigger{Key: chime.NewTriggerKey("g", "t")},
		ScheduledFireTime: s.now(),
		Logger:            quietLogger,
	}
	for range 2 {
		if err := (workflowStarter{s: s}).Execute(ctx, jc); err != nil {
			t.Fatalf("Execute: %v", err)
		}
	}
	list, err := s.ListWorkflowInstances(ctx, "w", 10)
	if err != nil || len(list.Instances) != 1 {
		t.Fatalf("instances = %+v, %v; want one", list, err)
	}
}

// TestWorkflowSweepMakesLostTriggers starts an instance as a node that
// died right after its transaction would leave it: its first task ready,
// with no trigger. Another node's sweep makes the trigger, and the
// instance runs to its end.
func TestWorkflowSweepMakesLostTriggers(t *testing.T) {
	t.Parallel()
	s, log := newTaskServer(t, dbtest.SQLiteURL(t))
	ctx := t.Context()
	wf, _, err := s.PutWorkflow(ctx, "alice", api.Workflow{Name: "w", Tasks: []api.WorkflowTask{{Name: "a", Type: "tasklog"}, {Name: "b", Type: "tasklog"}},
		Edges: []api.WorkflowEdge{{From: "a", To: "b"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.workflows.Start(ctx, workflow.StartParams{ID: "lost", Workflow: "w", Graph: graphOf(wf), Params: map[string]any{"day": "mon"}, Now: s.now()}); err != nil {
		t.Fatal(err)
	}
	start(t, s)
	waitFor(t, "the instance to succeed", func() bool {
		in, err := s.GetWorkflowInstance(ctx, "lost")
		return err == nil && in.State == "succeeded"
	})
	if got := fmt.Sprint(log.ran()); got != "[a b]" {
		t.Errorf("tasks ran %s, want [a b]", got)
	}
}

// TestWorkflowJobsRefusedThroughJobsAPI changes and deletes the jobs of a
// workflow's tasks through the jobs API: refused, naming the workflow,
// and nothing changes. The workflow's own writes still change them, and
// once it is deleted its group is an ordinary one.
func TestWorkflowJobsRefusedThroughJobsAPI(t *testing.T) {
	t.Parallel()
	s, _ := newTaskServer(t, dbtest.SQLiteURL(t))
	ctx := t.Context()
	wf := etl()
	wf.Triggers = []api.Trigger{{Schedule: []byte(`{"kind":"simple","interval":"1h"}`)}}
	if _, _, err := s.PutWorkflow(ctx, "alice", wf, 0); err != nil {
		t.Fatal(err)
	}
	group := workflowGroup("etl")
	before, err := s.GetJob(ctx, group, "load")
	if err != nil {
		t.Fatal(err)
	}
	edited := *before
	edited.Timeout = "1m"
	tests := []struct {
		name  string
		write func() error
		want  string
	}{
		{name: "put a task", write: func() error { _, _, err := s.PutJob(ctx, "alice", edited, 0, nil); return err },
			want: `job workflow.etl/load is task "load" of workflow "etl" and cannot be changed through the jobs API`},
		{name: "create a job in the group", write: func() error {
			_, err := s.CreateJob(ctx, "alice", api.Job{Group: group, Name: "extra", Type: "tasklog"})
			return err
		}, want: `job workflow.etl/extra is in the group of workflow "etl", which keeps its tasks' jobs, and cannot be created`},
		{name: "delete a task", write: func() error { return s.DeleteJob(ctx, "alice", group, "load") },
			want: `job workflow.etl/load is task "load" of workflow "etl" and cannot be deleted`},
		{name: "delete the triggers' job", write: func() error { return s.DeleteJob(ctx, "alice", group, startJob) },
			want: `carries the triggers of workflow "etl" and cannot be deleted`},
		{name: "roll back a task", write: func() error { _, err := s.RollbackJob(ctx, "alice", group, "load", 1, 0); return err },
			want: `job workflow.etl/load is task "load" of workflow "etl" and cannot be rolled back`},
		{name: "pause a task", write: func() error { return s.PauseJob(ctx, "alice", group, "load") },
			want: `job workflow.etl/load is task "load" of workflow "etl" and cannot be paused`},
		{name: "resume the triggers' job", write: func() error { return s.ResumeJob(ctx, "alice", group, startJob) },
			want: `carries the triggers of workflow "etl" and cannot be resumed`},
		{name: "run a task by hand", write: func() error { _, err := s.RunJob(ctx, "alice", group, "load", api.RunRequest{}); return err },
			want: `job workflow.etl/load is task "load" of workflow "etl" and cannot be run by hand`},
		{name: "backfill the triggers' job", write: func() error {
			_, err := s.Backfill(ctx, "alice", group, startJob, api.BackfillRequest{From: time.Now().Add(-time.Hour), To: time.Now()})
			return err
		}, want: `carries the triggers of workflow "etl" and cannot be backfilled`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.write()
			wantAPIError(t, err, api.CodeConflict, "group")
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
		})
	}
	after, err := s.GetJob(ctx, group, "load")
	if err != nil || after.Version != before.Version || after.Timeout != before.Timeout {
		t.Fatalf("task job after refused writes = %+v, %v; want it unchanged", after, err)
	}
	if _, err := s.GetJob(ctx, group, "extra"); !isNotFound(err) {
		t.Errorf("refused create made the job: %v", err)
	}

	// The workflow's own writes change its jobs.
	wf.Tasks[1].Timeout = "1m"
	if _, _, err := s.PutWorkflow(ctx, "alice", wf, 0); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetJob(ctx, group, "load"); err != nil || got.Timeout != "1m0s" {
		t.Errorf("task job after the workflow's write = %+v, %v; want timeout 1m", got, err)
	}
	if err := s.DeleteWorkflow(ctx, "alice", "etl"); err != nil {
		t.Fatal(err)
	}
	if jobs, err := s.sched.Jobs(ctx, group); err != nil || len(jobs) != 0 {
		t.Fatalf("jobs of the deleted workflow = %v, %v; want none", jobs, err)
	}
	if _, err := s.CreateJob(ctx, "alice", api.Job{Group: group, Name: "extra", Type: "tasklog"}); err != nil {
		t.Errorf("CreateJob in the group of a deleted workflow: %v", err)
	}
}
