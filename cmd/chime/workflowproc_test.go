package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// taskEndpoint is the HTTP endpoint the tasks of TestWorkflowNodeKilled
// call: each call takes taskDuration, and is recorded with the task, the
// node that made it, the execution and when it began and ended, on the
// test's one clock.
type taskEndpoint struct {
	*httptest.Server
	mu    sync.Mutex
	calls []taskCall
}

type taskCall struct {
	instance, task, node, execution string
	begin, end                      time.Time
}

// taskDuration is how long each task's call lasts: long enough that a
// kill lands while tasks run.
const taskDuration = 400 * time.Millisecond

func newTaskEndpoint(t *testing.T) *taskEndpoint {
	e := &taskEndpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		c := taskCall{instance: q.Get("instance"), task: q.Get("task"), node: q.Get("node"), execution: q.Get("exec"), begin: time.Now()}
		e.mu.Lock()
		i := len(e.calls)
		e.calls = append(e.calls, c)
		e.mu.Unlock()
		time.Sleep(taskDuration) // the task's work
		e.mu.Lock()
		e.calls[i].end = time.Now()
		e.mu.Unlock()
	}))
	t.Cleanup(e.Close)
	return e
}

// inFlight counts the calls under way, by node.
func (e *taskEndpoint) inFlight() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := map[string]int{}
	for _, c := range e.calls {
		if c.end.IsZero() {
			n[c.node]++
		}
	}
	return n
}

func (e *taskEndpoint) all() []taskCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]taskCall(nil), e.calls...)
}

// fanWorkflow is a 20-task workflow with fan-outs and fan-ins:
// start -> a1..a6 -> mid -> b1..b6 -> join -> c1..c4 -> end.
func fanWorkflow(url string) api.Workflow {
	wf := api.Workflow{Name: "fan"}
	layers := [][]string{{"start"}, {"a1", "a2", "a3", "a4", "a5", "a6"}, {"mid"}, {"b1", "b2", "b3", "b4", "b5", "b6"}, {"join"}, {"c1", "c2", "c3", "c4"}, {"end"}}
	for i, layer := range layers {
		for _, name := range layer {
			wf.Tasks = append(wf.Tasks, api.WorkflowTask{
				Name: name, Type: "http",
				HTTP: []byte(fmt.Sprintf(`{"url": %q}`, url+"/task?task={{.JobName}}&node={{.NodeID}}&exec={{.ExecutionID}}&instance={{.Params.instance}}")),
			})
			if i > 0 {
				for _, up := range layers[i-1] {
					wf.Edges = append(wf.Edges, api.WorkflowEdge{From: up, To: name})
				}
			}
		}
	}
	return wf
}

// TestWorkflowNodeKilled runs two instances of a 20-task workflow on
// three `chime server` processes on PostgreSQL or MariaDB, and kills
// (SIGKILL) the node with the most tasks under way twice: while the first
// fan-out runs and while the second does. On SQLite, two processes share
// the database file, and the busiest is killed once, while the first
// fan-out runs. Both instances succeed; every task ran to
// success exactly once (a task whose node died ran again, recovering, and
// its lost try is in the history as node_lost), and each task's
// successful call began after every upstream task's successful call had
// ended, on the endpoint's clock and on the instance's recorded times.
func TestWorkflowNodeKilled(t *testing.T) {
	t.Parallel()
	onDatabases(t, []string{"postgres", "mysql", "sqlite"}, workflowNodeKilled)
}

func workflowNodeKilled(t *testing.T, databaseURL string) {
	end := newTaskEndpoint(t)
	nodeIDs, layers := []string{"n1", "n2", "n3"}, []string{"a", "b"}
	if strings.HasPrefix(databaseURL, "sqlite:") {
		nodeIDs, layers = nodeIDs[:2], layers[:1]
	}
	nodes := map[string]*serverProcess{}
	for _, id := range nodeIDs {
		// A dead node is found within 3 s: a node that only paused
		// (the race detector on a loaded CI machine) keeps its lease, so
		// that the deaths the test sees are its kills.
		nodes[id] = startServerProcess(t, processOptions{databaseURL: databaseURL, args: []string{"--node-id", id, "--check-in-interval", "300ms", "--dead-after", "3s"}})
	}
	var password string
	for _, p := range nodes {
		p.waitReady(t)
	}
	waitUntil(t, "the admin's password", func() bool {
		for _, p := range nodes {
			if _, after, found := strings.Cut(p.output(), firstStartLine); found && len(strings.Fields(after)) > 0 {
				password = strings.Fields(after)[0]
			}
		}
		return password != ""
	})
	live := func() *serverProcess {
		for _, id := range nodeIDs {
			if p, ok := nodes[id]; ok {
				return p
			}
		}
		return nil
	}
	token := live().login(t, password)

	wf := fanWorkflow(end.URL)
	if status := live().call(t, http.MethodPut, "/api/v1/workflows/fan", token, wf, nil); status != http.StatusCreated {
		t.Fatalf("PUT /api/v1/workflows/fan = %d", status)
	}
	var ids []string
	for i := range 2 {
		var in api.WorkflowInstance
		body := api.WorkflowRunRequest{Params: map[string]any{"instance": fmt.Sprint(i)}}
		if status := live().call(t, http.MethodPost, "/api/v1/workflows/fan/run", token, body, &in); status != http.StatusCreated {
			t.Fatalf("POST /api/v1/workflows/fan/run = %d", status)
		}
		ids = append(ids, in.ID)
	}

	// Kill the busiest node while a fan-out runs (twice, with three
	// nodes).
	for _, layer := range layers {
		var victim string
		waitUntil(t, "3 tasks of layer "+layer+" under way", func() bool {
			n := 0
			for _, c := range end.all() {
				if c.end.IsZero() && strings.HasPrefix(c.task, layer) {
					n++
				}
			}
			if n < 3 {
				return false
			}
			most := -1
			for node, k := range end.inFlight() {
				if _, alive := nodes[node]; alive && k > most {
					victim, most = node, k
				}
			}
			return victim != ""
		})
		t.Logf("killing %s with %v tasks under way", victim, end.inFlight())
		if err := nodes[victim].cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-nodes[victim].done
		delete(nodes, victim)
	}

	instances := make([]api.WorkflowInstance, len(ids))
	for i, id := range ids {
		waitUntil(t, "instance "+id+" to end", func() bool {
			live().call(t, http.MethodGet, "/api/v1/workflow-instances/"+id, token, nil, &instances[i])
			return instances[i].State != "running"
		})
	}
	calls := end.all()
	for i, in := range instances {
		if in.State != "succeeded" {
			t.Errorf("instance %s = %s, want succeeded: %+v", in.ID, in.State, in.Tasks)
		}
		checkInstanceOrder(t, wf, in, calls, fmt.Sprint(i))
	}
	// Every call of a task is an attempt in its history, called once:
	// one succeeded per instance, the others lost with their node (a node
	// may die after it claimed a task and before it called) and re-run, or
	// recoveries of a task already ended, which run nothing.
	called := map[string]int{}
	for _, c := range calls {
		called[c.execution]++
	}
	for _, task := range wf.Tasks {
		execs := live().executions(t, token, "workflow.fan/"+task.Name)
		succeeded := 0
		known := map[string]bool{}
		for _, e := range execs {
			known[e.ID] = true
			switch e.Outcome {
			case "succeeded":
				succeeded++
				if called[e.ID] != 1 {
					t.Errorf("task %s: succeeded execution %s called the endpoint %d times, want once", task.Name, e.ID, called[e.ID])
				}
			case "node_lost":
				if called[e.ID] > 1 {
					t.Errorf("task %s: lost execution %s called the endpoint %d times", task.Name, e.ID, called[e.ID])
				}
			case "skipped":
				// A node that died after its task's end was recorded but
				// before its store knew leaves the execution to recovery,
				// which finds the task ended and runs nothing.
				if !e.Recovering || called[e.ID] != 0 {
					t.Errorf("task %s: execution %s on %s is skipped (recovering %t, called %d times), want only a recovery that called nothing",
						task.Name, e.ID, e.NodeID, e.Recovering, called[e.ID])
				}
			default:
				t.Errorf("task %s: execution %s on %s is %s", task.Name, e.ID, e.NodeID, e.Outcome)
			}
		}
		if succeeded != len(ids) {
			t.Errorf("task %s: %d succeeded executions, want one per instance (%d)", task.Name, succeeded, len(ids))
		}
		for _, c := range calls {
			if c.task == task.Name && !known[c.execution] {
				t.Errorf("task %s: the endpoint was called by execution %s, which its history lacks", task.Name, c.execution)
			}
		}
	}
}

// checkInstanceOrder checks that each task of an instance ended with one
// successful execution that began after its upstream tasks' ended: on the
// endpoint's clock, from the calls of the executions the instance
// records, and on the instance's own recorded times.
func checkInstanceOrder(t *testing.T, wf api.Workflow, in api.WorkflowInstance, calls []taskCall, instance string) {
	t.Helper()
	byTask := map[string]api.WorkflowTaskRun{}
	for _, task := range in.Tasks {
		byTask[task.Task] = task
	}
	call := map[string]taskCall{}
	for _, c := range calls {
		if c.instance != instance {
			continue
		}
		if c.execution == byTask[c.task].ExecutionID {
			if prev, dup := call[c.task]; dup {
				t.Errorf("instance %s: task %s's execution %s called twice (%s and %s)", in.ID, c.task, c.execution, prev.node, c.node)
			}
			call[c.task] = c
		}
	}
	for _, task := range in.Tasks {
		if task.State != "succeeded" || task.Started == nil || task.Finished == nil {
			t.Errorf("instance %s: task %+v, want succeeded with its times", in.ID, task)
		}
		if _, ok := call[task.Task]; !ok {
			t.Errorf("instance %s: no call of task %s by its execution %s", in.ID, task.Task, task.ExecutionID)
		}
	}
	for _, e := range wf.Edges {
		up, down := call[e.From], call[e.To]
		if down.begin.Before(up.end) {
			t.Errorf("instance %s: %s began at %s, before %s ended at %s", in.ID, e.To, down.begin.Format(time.StampMicro), e.From, up.end.Format(time.StampMicro))
		}
		if u, d := byTask[e.From].Finished, byTask[e.To].Started; u != nil && d != nil && d.Before(*u) {
			t.Errorf("instance %s: %s started at %s, before %s finished at %s (recorded)", in.ID, e.To, d, e.From, u)
		}
	}
}
