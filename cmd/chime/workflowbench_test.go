package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// TestWorkflowBenchD1 is benchmark D1 of issue 17, run by hand:
//
//	CHIME_BENCH_D1=1 go test -run TestWorkflowBenchD1 -v ./cmd/chime/
//
// 1,000 instances of a 10-task diamond (start -> 8 tasks -> end) started
// within about one second through the API, on two `chime server`
// processes on PostgreSQL; each task is an http task answered at once.
// It prints instances per second (instances divided by the time from the
// first start to the last end), the task-start lag after the task's last
// upstream task ended (p50, p99, max; from the instances' recorded
// times), dup (tasks whose endpoint was called more than once) and miss
// (tasks that did not succeed within 120 s).
func TestWorkflowBenchD1(t *testing.T) {
	if os.Getenv("CHIME_BENCH_D1") == "" {
		t.Skip("set CHIME_BENCH_D1=1 to run benchmark D1")
	}
	onDatabases(t, []string{"postgres"}, benchD1)
}

func benchD1(t *testing.T, databaseURL string) {
	const instances, tasks = 1000, 10
	var calls sync.Map // "instance/task" -> *atomic.Int64
	var total atomic.Int64
	end := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := calls.LoadOrStore(r.URL.Query().Get("i")+"/"+r.URL.Query().Get("task"), new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		total.Add(1)
	}))
	t.Cleanup(end.Close)
	a := startServerProcess(t, processOptions{databaseURL: databaseURL, args: []string{"--node-id", "d1-a"}})
	a.waitReady(t)
	b := startServerProcess(t, processOptions{databaseURL: databaseURL, args: []string{"--node-id", "d1-b"}})
	b.waitReady(t)
	token := a.login(t, a.adminPassword(t))

	wf := api.Workflow{Name: "d1"}
	names := []string{"start", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "end"}
	for _, n := range names {
		wf.Tasks = append(wf.Tasks, api.WorkflowTask{Name: n, Type: "http",
			HTTP: []byte(fmt.Sprintf(`{"url": %q}`, end.URL+"/?task={{.JobName}}&i={{.Params.i}}"))})
	}
	for _, m := range names[1 : tasks-1] {
		wf.Edges = append(wf.Edges, api.WorkflowEdge{From: "start", To: m}, api.WorkflowEdge{From: m, To: "end"})
	}
	if status := a.call(t, http.MethodPut, "/api/v1/workflows/d1", token, wf, nil); status != http.StatusCreated {
		t.Fatalf("PUT /api/v1/workflows/d1 = %d", status)
	}

	ids := make([]string, instances)
	began := time.Now()
	var wg sync.WaitGroup
	for w := range 50 {
		node := []*serverProcess{a, b}[w%2]
		wg.Go(func() {
			for i := w; i < instances; i += 50 {
				var in api.WorkflowInstance
				body := api.WorkflowRunRequest{Params: map[string]any{"i": fmt.Sprint(i)}}
				if status := node.call(t, http.MethodPost, "/api/v1/workflows/d1/run", token, body, &in); status != http.StatusCreated {
					t.Errorf("POST run = %d", status)
					return
				}
				ids[i] = in.ID
			}
		})
	}
	wg.Wait()
	started := time.Since(began)
	deadline := time.Now().Add(120 * time.Second)
	for total.Load() < instances*tasks && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // the nodes run the tasks; the endpoint counts them
	}

	var lags []time.Duration
	miss, dup := 0, 0
	var first, last time.Time
	for i, id := range ids {
		var in api.WorkflowInstance
		a.call(t, http.MethodGet, "/api/v1/workflow-instances/"+id, token, nil, &in)
		if first.IsZero() || in.Created.Before(first) {
			first = in.Created
		}
		finished := map[string]time.Time{}
		for _, task := range in.Tasks {
			if task.State != "succeeded" || task.Finished == nil {
				miss++
				continue
			}
			finished[task.Task] = *task.Finished
			if task.Finished.After(last) {
				last = *task.Finished
			}
			if n, ok := calls.Load(fmt.Sprint(i) + "/" + task.Task); !ok || n.(*atomic.Int64).Load() > 1 {
				dup++
			}
		}
		for _, task := range in.Tasks {
			if task.Started == nil {
				continue
			}
			var after time.Time
			for _, e := range in.Edges {
				if e.To == task.Task && finished[e.From].After(after) {
					after = finished[e.From]
				}
			}
			if !after.IsZero() {
				lags = append(lags, task.Started.Sub(after))
			}
		}
	}
	slices.Sort(lags)
	pct := func(p float64) time.Duration {
		if len(lags) == 0 {
			return 0
		}
		return lags[min(len(lags)-1, int(float64(len(lags))*p))]
	}
	span := last.Sub(first)
	line := fmt.Sprintf("D1 instances=%d tasks=%d started_in=%s span=%s inst/s=%.0f lag_p50=%s lag_p99=%s lag_max=%s dup=%d miss=%d",
		instances, instances*tasks, started.Round(time.Millisecond), span.Round(time.Millisecond), float64(instances)/span.Seconds(),
		pct(0.50).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), pct(1).Round(time.Millisecond), dup, miss)
	t.Log(line)
	fmt.Println(line)
	if dup != 0 || miss != 0 {
		t.Errorf("dup %d, miss %d; want none", dup, miss)
	}
}
