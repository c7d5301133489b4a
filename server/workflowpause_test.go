package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
)

// gateLog is a Go job type for workflow tasks that records the tasks that
// ran and blocks the task named hold until release is closed. A task may
// run twice when its node's lease lapsed on a loaded machine and a
// recovery re-ran it; tasks lists each task once.
type gateLog struct {
	hold    string
	entered chan struct{}
	release chan struct{}
	once    sync.Once

	mu  sync.Mutex
	ran []string
}

func (g *gateLog) Execute(ctx context.Context, jc *chime.JobContext) error {
	task := jc.Job.Key.Name
	g.mu.Lock()
	g.ran = append(g.ran, task)
	g.mu.Unlock()
	if task == g.hold {
		// A recovery of the task (its node's lease lapsed on a loaded
		// machine) blocks too.
		g.once.Do(func() { close(g.entered) })
		select {
		case <-g.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (g *gateLog) tasks() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Compact(slices.Sorted(slices.Values(g.ran)))
}

// pausedServer returns a server with the job type gate and workflow w:
// a -> b, and c on its own.
func pausedServer(t *testing.T, hold string) (*Server, *gateLog) {
	t.Helper()
	s := newServer(t, dbtest.SQLiteURL(t))
	g := &gateLog{hold: hold, entered: make(chan struct{}), release: make(chan struct{})}
	if err := s.RegisterJobType("gate", g); err != nil {
		t.Fatal(err)
	}
	wf := api.Workflow{
		Name:  "w",
		Tasks: []api.WorkflowTask{{Name: "a", Type: "gate"}, {Name: "b", Type: "gate"}, {Name: "c", Type: "gate"}},
		Edges: []api.WorkflowEdge{{From: "a", To: "b"}},
	}
	if _, _, err := s.PutWorkflow(t.Context(), "alice", wf, 0); err != nil {
		t.Fatal(err)
	}
	return s, g
}

func taskStates(in *api.WorkflowInstance) string {
	var out []string
	for _, t := range in.Tasks {
		out = append(out, t.Task+"="+t.State)
	}
	return strings.Join(out, " ")
}

// TestWorkflowPauseHoldsTriggeredTasks pauses an instance whose first
// tasks' triggers exist already: they fire, but do not start (their
// firings are recorded as skipped, naming the pause), and the tasks stay
// ready. Resuming runs them, each once.
func TestWorkflowPauseHoldsTriggeredTasks(t *testing.T) {
	t.Parallel()
	s, g := pausedServer(t, "")
	ctx := t.Context()
	// The server is not running yet: the triggers of a and c are made
	// and wait to fire.
	in, err := s.RunWorkflow(ctx, "alice", "w", api.WorkflowRunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if in, err = s.ChangeWorkflowInstance(ctx, "alice", in.ID, InstancePause); err != nil || in.State != "paused" {
		t.Fatalf("pause = %+v, %v", in, err)
	}
	start(t, s)
	for _, task := range []string{"a", "c"} {
		waitFor(t, "the skipped firing of task "+task, func() bool {
			list, err := s.ListExecutions(ctx, api.ExecutionQuery{JobGroup: workflowGroup("w"), JobName: task, Outcomes: []string{"skipped"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range list.Executions {
				if !strings.Contains(e.Error, "is paused") {
					t.Fatalf("task %s skipped with %q, want the pause named", task, e.Error)
				}
			}
			return len(list.Executions) > 0
		})
	}
	got, err := s.GetWorkflowInstance(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a=ready b=pending c=ready"; got.State != "paused" || taskStates(got) != want {
		t.Fatalf("paused instance is %s with %s, want paused with %s", got.State, taskStates(got), want)
	}
	if ran := g.tasks(); len(ran) != 0 {
		t.Fatalf("tasks %v ran while their instance was paused", ran)
	}

	if _, err := s.ChangeWorkflowInstance(ctx, "alice", in.ID, InstanceResume); err != nil {
		t.Fatalf("resume: %v", err)
	}
	waitFor(t, "the resumed instance to succeed", func() bool {
		got, err = s.GetWorkflowInstance(ctx, in.ID)
		return err == nil && got.State == "succeeded"
	})
	if ran := fmt.Sprint(g.tasks()); ran != "[a b c]" {
		t.Errorf("tasks ran %s, want [a b c]", ran)
	}
}

// TestWorkflowPauseLetsRunningTasksFinish pauses an instance while task a
// runs: a finishes, b (after a) becomes ready but does not start until
// the instance is resumed.
func TestWorkflowPauseLetsRunningTasksFinish(t *testing.T) {
	t.Parallel()
	s, g := pausedServer(t, "a")
	ctx := t.Context()
	start(t, s)
	in, err := s.RunWorkflow(ctx, "alice", "w", api.WorkflowRunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	<-g.entered
	waitFor(t, "task c to succeed", func() bool {
		in, err = s.GetWorkflowInstance(ctx, in.ID)
		return err == nil && in.Tasks[2].State == "succeeded"
	})
	if _, err := s.ChangeWorkflowInstance(ctx, "alice", in.ID, InstancePause); err != nil {
		in, _ = s.GetWorkflowInstance(ctx, in.ID)
		t.Fatalf("pause: %v (instance: %+v)", err, in)
	}
	close(g.release)
	waitFor(t, "the running task a to succeed", func() bool {
		in, err = s.GetWorkflowInstance(ctx, in.ID)
		return err == nil && in.Tasks[0].State == "succeeded"
	})
	if want := "a=succeeded b=ready c=succeeded"; in.State != "paused" || taskStates(in) != want || in.Tasks[1].ExecutionID != "" {
		t.Fatalf("paused instance is %s with %s (b's execution %q), want paused with %s and no execution of b",
			in.State, taskStates(in), in.Tasks[1].ExecutionID, want)
	}
	if _, err := s.ChangeWorkflowInstance(ctx, "alice", in.ID, InstanceResume); err != nil {
		t.Fatalf("resume: %v", err)
	}
	waitFor(t, "the resumed instance to succeed", func() bool {
		in, err = s.GetWorkflowInstance(ctx, in.ID)
		return err == nil && in.State == "succeeded"
	})
	if ran := fmt.Sprint(g.tasks()); ran != "[a b c]" {
		t.Errorf("tasks ran %s, want [a b c]", ran)
	}
}
