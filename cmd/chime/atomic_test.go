package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
)

// TestPutBurstKilledLeavesWholeJobs kills `chime server` with SIGKILL in
// the middle of a burst of PUTs, each of a job with three triggers and a
// paused state that change on every PUT, then audits the jobs with a new
// process on the same database: every job holds its three triggers, all
// paused exactly when the job says it is. A job write that took several
// transactions left jobs with some of their triggers, or WAITING although
// the PUT said paused.
func TestPutBurstKilledLeavesWholeJobs(t *testing.T) {
	t.Parallel()
	db := dbtest.PostgresURL(t)
	p := startServerProcess(t, processOptions{databaseURL: db})
	p.waitReady(t)
	token := p.login(t, p.adminPassword(t))

	const jobs, writers = 20, 4
	body := func(job, round int) []byte {
		triggers := make([]map[string]any, 3)
		for i := range triggers {
			triggers[i] = map[string]any{
				"name":     fmt.Sprintf("j%d-t%d", job, i),
				"schedule": map[string]any{"kind": "cron", "expression": fmt.Sprintf("0 %d %d * * ?", round%60, i), "time_zone": "UTC"},
			}
		}
		b, err := json.Marshal(map[string]any{
			"type": "http", "http": map[string]any{"url": "http://127.0.0.1:9/"},
			"triggers": triggers, "paused": round%2 == 1,
		})
		if err != nil {
			panic(err) // a map of strings and numbers always encodes
		}
		return b
	}
	put := func(job, round int) error {
		req, err := http.NewRequest(http.MethodPut, p.url(fmt.Sprintf("/api/v1/jobs/burst/j%d", job)), bytes.NewReader(body(job, round)))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 300 {
			var e bytes.Buffer
			_, _ = e.ReadFrom(resp.Body)
			return fmt.Errorf("PUT job %d: status %d: %s", job, resp.StatusCode, e.String())
		}
		return nil
	}

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		puts     int
		firstErr error
	)
	stop := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for round := 0; ; round++ {
				for job := w; job < jobs; job += writers {
					select {
					case <-stop:
						return
					default:
					}
					err := put(job, round)
					mu.Lock()
					if err != nil && firstErr == nil {
						firstErr = err
					}
					if err == nil {
						puts++
					}
					mu.Unlock()
					if err != nil {
						return // the server is gone
					}
				}
			}
		})
	}
	waitUntil(t, "a few hundred PUTs", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if firstErr != nil {
			t.Fatalf("a PUT failed before the kill: %v", firstErr)
		}
		return puts >= 300
	})
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	close(stop)
	wg.Wait()
	<-p.done

	q := startServerProcess(t, processOptions{databaseURL: db})
	q.waitReady(t)
	var list api.JobList
	if status := q.call(t, http.MethodGet, "/api/v1/jobs?group=burst&limit=500", token, nil, &list); status != http.StatusOK {
		t.Fatalf("GET /api/v1/jobs = %d", status)
	}
	if len(list.Jobs) == 0 {
		t.Fatal("no job survived the burst")
	}
	for _, j := range list.Jobs {
		if len(j.Triggers) != 3 {
			t.Errorf("job %s has %d triggers, want 3", j.Name, len(j.Triggers))
		}
		// Every PUT gives all three triggers the minute of its round: a
		// job whose triggers disagree mixes two PUTs.
		minutes := make(map[string]bool)
		for _, tr := range j.Triggers {
			if paused := tr.State == "PAUSED"; paused != j.Paused {
				t.Errorf("job %s (paused %v): trigger %s is %s", j.Name, j.Paused, tr.Name, tr.State)
			}
			var sched struct{ Expression string }
			if err := json.Unmarshal(tr.Schedule, &sched); err != nil {
				t.Fatalf("job %s trigger %s: schedule %s: %v", j.Name, tr.Name, tr.Schedule, err)
			}
			minutes[strings.Fields(sched.Expression)[1]] = true
		}
		if len(minutes) != 1 {
			t.Errorf("job %s: its triggers come from different PUTs (minutes %v)", j.Name, minutes)
		}
	}
	t.Logf("%d PUTs before SIGKILL, %d jobs audited", puts, len(list.Jobs))
}
