package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// TestShardedJobSurvivesKill9 runs three `chime server` processes on one
// PostgreSQL or MariaDB database (two on one SQLite file) and a shell job of 64 items firing every 5 seconds, which
// requests recovery. One node is killed with SIGKILL while it runs items
// of a firing. Every firing from the first to the last then has its
// parent execution, succeeded, and every item of every firing succeeded
// exactly once in the history: the items the dead node ran were
// recorded node_lost and re-run, marked recovering, on the others. Each
// item's command appends a line when it is done; every item has one from
// its succeeded execution, and none is missing.
func TestShardedJobSurvivesKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs three server processes for about 40s")
	}
	onDatabases(t, []string{"postgres", "mysql", "sqlite"}, shardedKill9)
}

func shardedKill9(t *testing.T, databaseURL string) {
	ids := []string{"shard-a", "shard-b", "shard-c"}
	if strings.HasPrefix(databaseURL, "sqlite:") {
		ids = ids[:2]
	}
	const items = 64
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	node := func(id string) *serverProcess {
		return startServerProcess(t, processOptions{databaseURL: databaseURL, args: []string{
			// --dead-after: see workflowNodeKilled.
			"--node-id", id, "--check-in-interval", "300ms", "--dead-after", "3s", "--workers", "12",
			"--enable-shell-jobs", "--shell-allow", "*",
		}})
	}
	var nodes []*serverProcess
	for _, id := range ids {
		nodes = append(nodes, node(id))
	}
	var password string
	for _, p := range nodes {
		p.waitReady(t)
	}
	waitUntil(t, "the first start's admin password", func() bool {
		for _, p := range nodes {
			if _, after, found := strings.Cut(p.output(), firstStartLine); found {
				if f := strings.Fields(after); len(f) > 0 {
					password = f[0]
				}
			}
		}
		return password != ""
	})
	keep := nodes[0]
	token := keep.login(t, password)
	if status := keep.call(t, http.MethodPut, "/api/v1/users/admin", token, map[string]any{"shell": true}, nil); status != http.StatusOK {
		t.Fatalf("PUT /api/v1/users/admin shell = %d", status)
	}
	// An item takes 0.8s, so that a firing's 64 items keep the three
	// nodes' 36 workers busy for a second or two, each seen running in
	// the history (a node writes a start after 250 ms, see
	// server.historyStartDelay).
	script := `sleep 0.8 && echo "$CHIME_SCHEDULED_TIME $CHIME_SHARD_INDEX $CHIME_SHARD_TOTAL $CHIME_EXECUTION_ID" >> "` + done + `"`
	job := map[string]any{
		"type": "shell", "shell": map[string]any{"shell": script},
		"shards": items, "requests_recovery": true,
		"triggers": []any{map[string]any{"schedule": map[string]any{"kind": "cron", "expression": "*/5 * * * * ?", "time_zone": "UTC"}}},
	}
	if status := keep.call(t, http.MethodPut, "/api/v1/jobs/shards/split", token, job, nil); status != http.StatusCreated {
		t.Fatalf("PUT /api/v1/jobs/shards/split = %d", status)
	}

	// The victim is the node running the most items of the second
	// firing, killed while it runs them.
	// A parent runs on no node; neither does an item its node lost
	// before recording it, but that one has no items.
	isParent := map[string]bool{}
	parents := func() []api.Execution {
		var out []api.Execution
		for _, e := range keep.executions(t, token, "shards/split") {
			if e.NodeID != "" {
				continue
			}
			known, ok := isParent[e.ID]
			if !ok {
				known = keep.call(t, http.MethodGet, "/api/v1/executions/"+e.ID+"/items", token, nil, nil) == http.StatusOK
				isParent[e.ID] = known
			}
			if known {
				out = append(out, e)
			}
		}
		return out
	}
	var victim string
	var victimIdx int
	waitUntil(t, "a node running items of the second firing", func() bool {
		if len(parents()) < 2 {
			return false
		}
		count := map[string]int{}
		for _, e := range keep.executions(t, token, "shards/split") {
			if e.Outcome == "running" && e.NodeID != "" && e.NodeID != "shard-a" {
				count[e.NodeID]++
			}
		}
		for n, c := range count {
			if c >= 3 {
				victim = n
			}
		}
		return victim != ""
	})
	for i, id := range ids {
		if id == victim {
			victimIdx = i
		}
	}
	killed := time.Now()
	if err := nodes[victimIdx].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed %s while it ran items", victim)

	// Two more firings after the kill, then the job is paused and the
	// last firing allowed to end.
	waitUntil(t, "two firings after the kill", func() bool {
		n := 0
		for _, e := range parents() {
			if e.ScheduledTime.After(killed) {
				n++
			}
		}
		return n >= 2
	})
	// The schedule goes; the items' one-shot triggers stay.
	delete(job, "triggers")
	job["triggers"] = []any{}
	if status := keep.call(t, http.MethodPut, "/api/v1/jobs/shards/split", token, job, nil); status != http.StatusOK {
		t.Fatalf("PUT without triggers = %d", status)
	}
	var all []api.Execution
	deadline := time.Now().Add(30 * time.Second)
	for {
		all = parents()
		running := slices.IndexFunc(all, func(e api.Execution) bool { return e.Outcome == "running" })
		if running < 0 {
			break
		}
		if time.Now().After(deadline) {
			var si api.ShardItems
			keep.call(t, http.MethodGet, "/api/v1/executions/"+all[running].ID+"/items", token, nil, &si)
			t.Fatalf("firing %s still running after 30s: %+v", all[running].FirstID, si)
		}
		time.Sleep(100 * time.Millisecond) // another process's work shows only through its API
	}

	// Every firing, 5s apart, one parent each (the latest attempt of its
	// firing), succeeded.
	byFiring := map[string]api.Execution{}
	for _, e := range all {
		if cur, ok := byFiring[e.FirstID]; !ok || e.Attempt > cur.Attempt {
			byFiring[e.FirstID] = e
		}
	}
	var scheduled []time.Time
	for _, e := range byFiring {
		scheduled = append(scheduled, e.ScheduledTime)
		if e.Outcome != "succeeded" {
			t.Errorf("firing %s scheduled %s: %s %q; want succeeded", e.FirstID, e.ScheduledTime, e.Outcome, e.Error)
		}
	}
	sort.Slice(scheduled, func(i, j int) bool { return scheduled[i].Before(scheduled[j]) })
	for i := 1; i < len(scheduled); i++ {
		if d := scheduled[i].Sub(scheduled[i-1]); d != 5*time.Second {
			t.Errorf("firings at %s and %s: %s apart; want 5s (none lost, none twice)", scheduled[i-1], scheduled[i], d)
		}
	}

	// Every item of every firing: succeeded once in the history, and its
	// succeeded execution's line is there.
	raw, err := os.ReadFile(done)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(l)
		if len(f) == 4 {
			lines[f[3]] = true
			if f[2] != fmt.Sprint(items) {
				t.Errorf("line %q: want the total %d", l, items)
			}
		}
	}
	recoveries, lost := 0, 0
	for _, parent := range byFiring {
		var si api.ShardItems
		if status := keep.call(t, http.MethodGet, "/api/v1/executions/"+parent.ID+"/items", token, nil, &si); status != http.StatusOK {
			t.Fatalf("GET items of %s = %d", parent.ID, status)
		}
		if si.Total != items || len(si.Items) != items {
			t.Fatalf("firing %s has %d items; want %d", parent.FirstID, len(si.Items), items)
		}
		if si.State != "succeeded" {
			var pa []api.Execution
			keep.call(t, http.MethodGet, "/api/v1/executions/"+parent.ID+"/attempts", token, nil, &pa)
			t.Errorf("firing %s: %+v\nattempts of the parent: %+v", parent.FirstID, si, pa)
			continue
		}
		for _, it := range si.Items {
			var attempts []api.Execution
			if status := keep.call(t, http.MethodGet, "/api/v1/executions/"+it.ExecutionID+"/attempts", token, nil, &attempts); status != http.StatusOK {
				t.Fatalf("GET attempts of %s = %d", it.ExecutionID, status)
			}
			succeeded := 0
			for _, a := range attempts {
				switch a.Outcome {
				case "succeeded":
					succeeded++
					if !lines[a.ID] {
						t.Errorf("item %d of firing %s: no line from its succeeded execution %s", it.Index, parent.FirstID, a.ID)
					}
				case "node_lost":
					lost++
				}
				if a.Recovering {
					recoveries++
				}
			}
			if succeeded != 1 || it.State != "succeeded" {
				t.Errorf("item %d of firing %s: %s, %d succeeded attempts of %d; want exactly one", it.Index, parent.FirstID, it.State, succeeded, len(attempts))
			}
		}
	}
	if lost == 0 || recoveries < lost {
		t.Errorf("%d attempts node_lost, %d recovery re-runs; want the killed node's items lost and each re-run", lost, recoveries)
	}
	t.Logf("shards: firings=%d items=%d node_lost=%d recovery_reruns=%d lines=%d", len(byFiring), len(byFiring)*items, lost, recoveries, len(lines))
}
