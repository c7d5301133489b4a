package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

// The browser tests' shared fixtures: HTTP targets for the server's jobs
// to call, and the jobs that call them.

// targetServer is an HTTP job's target: it answers status to every request.
func targetServer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		fmt.Fprintln(w, "answered", status)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// cronJob is an "http" job that GETs url on a cron schedule in UTC (no
// trigger when expr is empty).
func cronJob(t *testing.T, group, name, url, expr string) api.Job {
	t.Helper()
	spec, err := json.Marshal(map[string]any{"url": url})
	if err != nil {
		t.Fatal(err)
	}
	j := api.Job{Group: group, Name: name, Type: "http", HTTP: spec, Description: "calls " + name}
	if expr != "" {
		sched, err := json.Marshal(map[string]any{"kind": "cron", "expression": expr, "time_zone": "UTC"})
		if err != nil {
			t.Fatal(err)
		}
		j.Triggers = []api.Trigger{{Schedule: sched}}
	}
	return j
}

// createJobs creates jobs on srv, failing the test on an error.
func createJobs(t *testing.T, srv *servertest.Server, jobs ...api.Job) {
	t.Helper()
	for _, j := range jobs {
		if _, err := srv.Client.CreateJob(context.Background(), j); err != nil {
			t.Fatalf("creating job %s/%s: %v", j.Group, j.Name, err)
		}
	}
}

// slowServer is an HTTP target whose answers wait until release is
// called (or the test ends), for jobs that must stay running for a while.
func slowServer(t *testing.T) (srv *httptest.Server, release func()) {
	t.Helper()
	done := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(done) }) }
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-done:
		case <-r.Context().Done():
		}
		fmt.Fprintln(w, "done")
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(release) // runs first: answers what waits, then closes
	return srv, release
}
