package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestExecutionsKill kills a running http job with `chime executions
// kill`, then shows it killed with `chime executions get`; a second kill
// fails with the conflict.
func TestExecutionsKill(t *testing.T) {
	t.Parallel()
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(hang.Close) // after the server stops, which cancels the request
	srv := servertest.Start(t, nil)
	token := cliLogin(t, srv.URL, srv.AdminPassword)
	c := srv.Client
	ctx := t.Context()
	flags := []string{"--server", srv.URL, "--token", token}
	job := api.Job{
		Group: "ops", Name: "hang", Type: "http",
		HTTP:     json.RawMessage(`{"url":"` + hang.URL + `"}`),
		Triggers: []api.Trigger{{Schedule: json.RawMessage(`{"kind":"cron","expression":"0 0 3 1 1 ?","time_zone":"UTC"}`)}},
	}
	if _, err := c.CreateJob(ctx, job); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := c.RunJob(ctx, "ops", "hang", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	id := acc.ExecutionIDs[0]
	waitOutcome := func(running bool) *api.Execution {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			e, err := c.GetExecution(ctx, id)
			if err == nil && (e.Outcome == "running") == running {
				return e
			}
			if time.Now().After(deadline) {
				t.Fatalf("execution %s: %+v, %v after 20s; want running %v", id, e, err, running)
			}
			time.Sleep(20 * time.Millisecond) // polling the real history; nothing to wait on
		}
	}
	waitOutcome(true)

	out, _, err := execChime(t, "", append([]string{"executions", "kill", id}, flags...)...)
	if err != nil {
		t.Fatalf("chime executions kill: %v", err)
	}
	if want := "Execution " + id + " of ops/hang on node " + srv.Server.NodeID() + ": kill requested by admin.\n"; out != want {
		t.Errorf("chime executions kill = %q, want %q", out, want)
	}
	if e := waitOutcome(false); e.Outcome != "killed" || e.KilledBy != "admin" {
		t.Errorf("after chime executions kill: %+v, want killed by admin", e)
	}
	out, _, err = execChime(t, "", append([]string{"executions", "get", id}, flags...)...)
	if err != nil {
		t.Fatalf("chime executions get: %v", err)
	}
	for _, want := range []string{"Outcome:    killed\n", "Killed by:  admin\n", "Error:      killed by admin"} {
		if !strings.Contains(out, want) {
			t.Errorf("chime executions get lacks %q:\n%s", want, out)
		}
	}
	_, _, err = execChime(t, "", append([]string{"executions", "kill", id}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "conflict: execution "+id+" is not running: it ended killed") {
		t.Errorf("second chime executions kill: %v, want the conflict", err)
	}
}
