package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// TestPoolCluster runs three `chime server` processes on one database
// with a pool of 4 and 50 jobs that name it, each firing every second and
// running 150ms, so that the pool is full and firings wait. Sampled every
// 10ms over the history, no more than 4 executions ever run at once, and
// every firing ends in the history: it ran, or it was skipped with the
// pool's reason, or it was lost with the node that is killed (SIGKILL)
// half-way, whose slots the others take back.
func TestPoolCluster(t *testing.T) {
	t.Parallel()
	onDatabases(t, []string{"postgres", "mysql"}, poolCluster)
}

func poolCluster(t *testing.T, databaseURL string) {
	const (
		limit   = 4
		jobs    = 50
		runFor  = 150 * time.Millisecond
		fireFor = 8 * time.Second
	)
	// The target counts the requests it serves at once: the ground truth
	// of how many runs held a slot together, on one clock. A run's request
	// starts after its slot was granted and is answered before the slot
	// is released.
	var inFlight, mostInFlight atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for m := mostInFlight.Load(); n > m && !mostInFlight.CompareAndSwap(m, n); m = mostInFlight.Load() {
		}
		time.Sleep(runFor) // the job's work: long enough for the firings to contend
		inFlight.Add(-1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(slow.Close)
	node := func(id string) *serverProcess {
		return startServerProcess(t, processOptions{databaseURL: databaseURL, env: []string{"CHIME_WORKERS=100"},
			args: []string{"--node-id", id, "--check-in-interval", "1s"}})
	}
	nodes := []*serverProcess{node("pool-a")}
	nodes[0].waitReady(t) // it creates the admin alone
	password := nodes[0].adminPassword(t)
	nodes = append(nodes, node("pool-b"), node("pool-c"))
	for _, p := range nodes[1:] {
		p.waitReady(t)
	}
	a := nodes[0]
	token := a.login(t, password)

	var p api.Pool
	if status := a.call(t, http.MethodPut, "/api/v1/pools/reports", token, api.Pool{Limit: limit}, &p); status != http.StatusCreated {
		t.Fatalf("PUT /api/v1/pools/reports = %d %+v, want 201", status, p)
	}
	batch := make([]map[string]any, jobs)
	for i := range batch {
		batch[i] = map[string]any{
			"group": "reports", "name": fmt.Sprintf("r%02d", i), "type": "http",
			"http":     map[string]any{"url": slow.URL + "/run"},
			"triggers": []any{map[string]any{"schedule": everySecond}},
			"pool":     "reports", "pool_max_wait": "2s",
		}
	}
	// A job naming a pool that does not exist is refused, naming the field.
	var refused api.Error
	bad := map[string]any{"jobs": []any{batch[0], map[string]any{"group": "reports", "name": "bad", "type": "http",
		"http": map[string]any{"url": slow.URL}, "pool": "nope"}}}
	if status := a.call(t, http.MethodPost, "/api/v1/jobs/batch", token, bad, &refused); status != http.StatusBadRequest || refused.Field != "jobs[1].pool" {
		t.Fatalf("a batch naming pool nope = %d %+v, want 400 naming jobs[1].pool", status, refused)
	}
	if status := a.call(t, http.MethodPost, "/api/v1/jobs/batch", token, map[string]any{"jobs": batch}, nil); status != http.StatusCreated {
		t.Fatalf("POST /api/v1/jobs/batch = %d, want 201", status)
	}
	time.Sleep(fireFor / 2) // the jobs fire and contend meanwhile
	// A node dies mid-run: its slots come back once their lease lapses.
	if err := nodes[2].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	time.Sleep(fireFor / 2)
	if status := a.call(t, http.MethodPost, "/api/v1/maintenance", token, api.MaintenanceRequest{Reason: "end of the test"}, nil); status != http.StatusCreated {
		t.Fatalf("POST /api/v1/maintenance = %d, want 201", status)
	}
	waitUntil(t, "the pool to drain", func() bool {
		var p api.Pool
		a.call(t, http.MethodGet, "/api/v1/pools/reports", token, nil, &p)
		return p.Running == 0 && p.Waiting == 0
	})

	all := allExecutions(t, a, token)
	waitUntil(t, "every execution to be recorded as ended", func() bool {
		all = allExecutions(t, a, token)
		return !slices.ContainsFunc(all, func(e api.Execution) bool { return e.Outcome == "running" })
	})
	var (
		ran, skipped, lost int
		byNode             = make(map[string]int)
		perJob             = make(map[string][]time.Time)
	)
	for _, e := range all {
		perJob[e.JobName] = append(perJob[e.JobName], e.ScheduledTime)
		switch {
		case e.Outcome == "succeeded":
			ran++
			byNode[e.NodeID]++
		case e.Outcome == "skipped" && strings.Contains(e.Error, "pool reports full for"):
			skipped++
		case e.Outcome == "node_lost" && e.NodeID == "pool-c":
			lost++
		default:
			t.Errorf("execution %s of %s: %s %q, want succeeded or skipped for the pool", e.ID, e.JobName, e.Outcome, e.Error)
		}
	}
	// No firing is lost: each job's fire times follow each other second
	// by second, each once.
	for name, times := range perJob {
		slices.SortFunc(times, func(x, y time.Time) int { return x.Compare(y) })
		for i := 1; i < len(times); i++ {
			if d := times[i].Sub(times[i-1]); d != time.Second {
				t.Errorf("job %s: firings at %s then %s, want one every second", name, times[i-1].Format(time.StampMilli), times[i].Format(time.StampMilli))
			}
		}
	}
	if len(perJob) != jobs {
		t.Errorf("%d jobs fired, want %d", len(perJob), jobs)
	}
	if n := int(mostInFlight.Load()); n > limit {
		t.Errorf("the target served %d runs at once, want at most the pool's %d", n, limit)
	}
	// The history tells the same within the nodes' clock estimates (see
	// mostRunning): the pool was full at some instant.
	most, _ := mostRunning(all, killed, 10*time.Millisecond)
	if most < limit {
		t.Errorf("at most %d executions ran at once, want the pool full (%d) at some instant", most, limit)
	}
	if len(byNode) < 2 {
		t.Errorf("executions ran on nodes %v, want the pool shared by several", byNode)
	}
	t.Logf("%d firings: %d ran (by node %v), %d skipped for the pool, %d lost with node pool-c; at most %d served at once, %d in the history",
		len(all), ran, byNode, skipped, lost, mostInFlight.Load(), most)
}

// allExecutions reads every execution of the history, page by page.
func allExecutions(t *testing.T, p *serverProcess, token string) []api.Execution {
	t.Helper()
	var out []api.Execution
	cursor := ""
	for {
		var page api.ExecutionList
		path := "/api/v1/executions?limit=500"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if status := p.call(t, http.MethodGet, path, token, nil, &page); status != http.StatusOK {
			t.Fatalf("GET %s = %d", path, status)
		}
		out = append(out, page.Executions...)
		if page.Next == "" {
			return out
		}
		cursor = page.Next
	}
}

// mostRunning samples the executions that ran (started and finished),
// every step from the first start to the last end, and returns the most
// running at one instant. An execution lost with its node ran until the
// node was killed, at killed; the history's end of it is when the others
// found it lost. A firing lost before its node recorded it (it waited
// for a slot) did not run.
//
// The history's times are each node's estimate of the database's clock
// (its own clock corrected by the offset it measures at each check-in),
// and two nodes' estimates differ by up to the round trip of a check-in:
// tens of milliseconds on a loaded machine. So an execution counts as
// running from clockSlack after its recorded start to clockSlack before
// its recorded end. Two runs of runFor that really overlapped still
// overlap for runFor-2*clockSlack; one that followed another on another
// node may seem to overlap it by less.
// clockSlack is how far apart two nodes' estimates of the database's clock
// may be; see mostRunning.
const clockSlack = 25 * time.Millisecond

func mostRunning(execs []api.Execution, killed time.Time, step time.Duration) (int, []api.Execution) {
	var from, to time.Time
	var ran []api.Execution
	for _, e := range execs {
		if e.Outcome == "skipped" || e.StartedTime == nil || e.FinishedTime == nil {
			continue
		}
		if e.Outcome == "node_lost" && strings.Contains(e.Error, "before it recorded it") {
			continue // it waited for the pool on the killed node and did not run
		}
		if e.Outcome == "node_lost" && e.FinishedTime.After(killed) {
			end := killed
			e.FinishedTime = &end
		}
		ran = append(ran, e)
		if from.IsZero() || e.StartedTime.Before(from) {
			from = *e.StartedTime
		}
		if e.FinishedTime.After(to) {
			to = *e.FinishedTime
		}
	}
	var most []api.Execution
	for at := from; at.Before(to); at = at.Add(step) {
		var now []api.Execution
		for _, e := range ran {
			if !at.Before(e.StartedTime.Add(clockSlack)) && at.Before(e.FinishedTime.Add(-clockSlack)) {
				now = append(now, e)
			}
		}
		if len(now) > len(most) {
			most = now
		}
	}
	return len(most), most
}
