package apiclient_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server/servertest"
)

// newHangingTarget returns the URL of an endpoint that answers a request
// only once the request is cancelled. Call it before starting the server,
// so that it outlives the server's runs.
func newHangingTarget(t *testing.T) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// startHanging creates the http job group/name calling url, runs it, and
// returns its execution's ID once it runs.
func startHanging(t *testing.T, c *apiclient.Client, group, name, url string) string {
	t.Helper()
	ctx := t.Context()
	if _, err := c.CreateJob(ctx, roleJob(group, name, url, "")); err != nil {
		t.Fatalf("CreateJob(%s/%s): %v", group, name, err)
	}
	acc, err := c.RunJob(ctx, group, name, api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob(%s/%s): %v", group, name, err)
	}
	id := acc.ExecutionIDs[0]
	deadline := time.Now().Add(20 * time.Second)
	for {
		e, err := c.GetExecution(ctx, id)
		if err == nil && e.Outcome == "running" {
			return id
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s of %s/%s is not running after 20s: %+v, %v", id, group, name, e, err)
		}
		time.Sleep(20 * time.Millisecond) // the server runs it in the background
	}
}

// TestKillExecution kills a running http job through the API: a viewer
// may not (403), an admin may; the request
// is answered with the execution still running, killed_by the caller;
// the execution then ends killed. Killing it again is a conflict naming
// its outcome, and killing an unknown execution is not found.
func TestKillExecution(t *testing.T) {
	t.Parallel()
	url := newHangingTarget(t)
	srv := servertest.Start(t, nil)
	c := srv.Client
	ctx := t.Context()
	id := startHanging(t, c, "g", "hang", url)

	viewer := api.User{Name: "vera", Role: api.RoleViewer, Password: "vera's long password"}
	if _, err := c.CreateUser(ctx, viewer); err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	session, err := c.WithToken("").Login(ctx, viewer.Name, viewer.Password)
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	_, err = c.WithToken(session.Token).KillExecution(ctx, id)
	wantCode(t, err, api.CodePermissionDenied, "")
	if e, err := c.GetExecution(ctx, id); err != nil || e.Outcome != "running" || e.KilledBy != "" {
		t.Fatalf("after a viewer's kill: %+v, %v; want it running, not killed", e, err)
	}

	got, err := c.KillExecution(ctx, id)
	if err != nil {
		t.Fatalf("KillExecution: %v", err)
	}
	if got.ID != id || got.KilledBy != servertest.AdminName {
		t.Errorf("KillExecution = %+v, want execution %s killed by %s", got, id, servertest.AdminName)
	}
	e := waitExecution(t, c, api.ExecutionQuery{JobGroup: "g", JobName: "hang"}, func(e api.Execution) bool { return e.ID == id })
	if e.Outcome != "killed" || e.KilledBy != servertest.AdminName || !strings.Contains(e.Error, "killed by "+servertest.AdminName) {
		t.Errorf("killed execution = %+v, want outcome killed by %s", e, servertest.AdminName)
	}
	killed, err := c.ListExecutions(ctx, api.ExecutionQuery{Outcomes: []string{"killed"}})
	if err != nil || len(killed.Executions) != 1 || killed.Executions[0].ID != id {
		t.Errorf("ListExecutions(outcome=killed) = %+v, %v; want %s", killed, err, id)
	}

	_, err = c.KillExecution(ctx, id)
	wantCode(t, err, api.CodeConflict, "")
	if err != nil && !strings.Contains(err.Error(), "killed") {
		t.Errorf("second kill: %v, want the conflict to name the outcome", err)
	}
	_, err = c.KillExecution(ctx, strings.Repeat("f", 32))
	wantCode(t, err, api.CodeNotFound, "")
}
