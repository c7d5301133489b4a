package console_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestExecutionKill kills a running HTTP job from its execution page: a
// viewer has no Kill button; an admin's Kill asks first (Cancel keeps the
// run), then the page shows the run killed, by the admin.
func TestExecutionKill(t *testing.T) {
	slow, _ := slowServer(t)
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	if _, err := srv.Client.CreateJob(ctx, cronJob(t, "etl", "slow", slow.URL, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "viewer-password-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.RunJob(ctx, "etl", "slow", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	running := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "etl", JobName: "slow", Outcomes: []string{"running"}})
	route := "/executions/" + url.PathEscape(running.ID)

	b := browsertest.New(t)
	v := b.NewPage(t)
	v.Login(srv.URL, route, "vera", "viewer-password-1")
	v.WaitText(`[data-testid="outcome"]`, "running")
	if n := v.Count(`[data-testid="kill"]`); n != 0 {
		t.Errorf("a viewer sees %d Kill buttons", n)
	}

	p := b.NewPage(t)
	p.Login(srv.URL, route, servertest.AdminName, srv.AdminPassword)
	p.WaitText(`[data-testid="outcome"]`, "running")
	p.Click(`[data-testid="kill"]`)
	p.WaitText("dialog h2", "Kill this execution of etl/slow?")
	p.Screenshot("execution-kill-confirm")
	p.ClickText("dialog button", "Cancel")
	if e, err := srv.Client.GetExecution(ctx, running.ID); err != nil || e.Outcome != "running" || e.KilledBy != "" {
		t.Fatalf("after Cancel: %+v, %v; want the run still running, not killed", e, err)
	}

	p.Click(`[data-testid="kill"]`)
	p.ClickText("dialog button", "Kill")
	p.WaitText(`[data-testid="outcome"]`, "killed")
	p.WaitText(`[data-testid="killed-by"]`, servertest.AdminName)
	p.WaitText(`[data-testid="error"]`, "killed by "+servertest.AdminName)
	p.Screenshot("execution-killed")
	if n := p.Count(`[data-testid="kill"]`); n != 0 {
		t.Errorf("a killed execution offers %d Kill buttons", n)
	}
	e, err := srv.Client.GetExecution(ctx, running.ID)
	if err != nil || e.Outcome != "killed" || e.KilledBy != servertest.AdminName {
		t.Errorf("after Kill: %+v, %v; want killed by %s", e, err, servertest.AdminName)
	}
}
