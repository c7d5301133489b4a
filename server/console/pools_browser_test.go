package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestPoolsPage shows the Pools page: a pool of 1 whose slot one job's
// run holds while another job's run waits, with its limit, running,
// waiting and jobs; the admin then creates a pool with the page's form,
// sees a limit of 0 refused in the form, and deletes the new pool.
func TestPoolsPage(t *testing.T) {
	step := servertest.NewStepJob()
	srv := servertest.Start(t, &servertest.Options{JobTypes: map[string]chime.Job{"step": step}})
	ctx := context.Background()
	if _, _, err := srv.Client.PutPool(ctx, api.Pool{Name: "reports", Limit: 1, Description: "report jobs"}); err != nil {
		t.Fatalf("PutPool: %v", err)
	}
	for _, name := range []string{"first", "second"} {
		if _, err := srv.Client.CreateJob(ctx, api.Job{Group: "rep", Name: name, Type: "step", Pool: "reports"}); err != nil {
			t.Fatalf("CreateJob(%s): %v", name, err)
		}
	}
	if _, err := srv.Client.RunJob(ctx, "rep", "first", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	waitExecution(t, srv, api.ExecutionQuery{JobGroup: "rep", JobName: "first", Outcomes: []string{"running"}})
	if _, err := srv.Client.RunJob(ctx, "rep", "second", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/pools", servertest.AdminName, srv.AdminPassword)
	p.WaitText(`tr[data-pool="reports"] [data-testid="pool-waiting"]`, "1")
	row := p.Text(`tr[data-pool="reports"]`)
	for _, want := range []string{"reports", "report jobs", "rep/first", "rep/second"} {
		if !strings.Contains(row, want) {
			t.Errorf("the pool's row %q lacks %q", row, want)
		}
	}
	if got := p.Text(`tr[data-pool="reports"] [data-testid="pool-running"]`); got != "1" {
		t.Errorf("running = %q, want 1", got)
	}
	p.Screenshot("pools")

	// The first run ends: the waiting one takes the slot.
	step.Step()
	step.Step()
	p.WaitText(`tr[data-pool="reports"] [data-testid="pool-waiting"]`, "0")
	waitExecution(t, srv, api.ExecutionQuery{JobGroup: "rep", JobName: "second", Outcomes: []string{"running"}})
	step.Step()
	step.Step()

	p.ClickText("button", "New pool")
	p.Fill(`dialog input[name="name"]`, "exports")
	p.Fill(`dialog input[name="limit"]`, "0")
	p.ClickText("dialog button", "Create pool")
	p.WaitText(`dialog [data-field="limit"] .error`, "want 1 to")
	p.Fill(`dialog input[name="limit"]`, "3")
	p.ClickText("dialog button", "Create pool")
	if got := p.WaitText(`tr[data-pool="exports"]`, "exports"); !strings.Contains(got, "3") {
		t.Errorf("the new pool's row = %q, want limit 3", got)
	}
	if _, err := srv.Client.GetPool(ctx, "exports"); err != nil {
		t.Errorf("GetPool(exports) after the form: %v", err)
	}
	p.Click(`button[aria-label="Delete pool exports"]`)
	p.ClickText("dialog button", "Delete")
	p.WaitText(`[data-testid="pools-count"]`, "1")

	// A job's page names its pool; its form changes the wait.
	p.Route("/jobs/rep/first")
	p.WaitText(`[data-testid="job-pool"]`, "reports (waits up to 1m)")
	p.Route("/jobs/rep/first/edit")
	p.Fill(`input[name="pool_max_wait"]`, "45s")
	p.ClickText("button", "Save")
	p.WaitText(`[data-testid="job-pool"]`, "reports (waits up to 45s)")
	if j, err := srv.Client.GetJob(ctx, "rep", "first"); err != nil || j.Pool != "reports" || j.PoolMaxWait != "45s" {
		t.Errorf("the job after the form = %+v, %v; want pool reports, pool_max_wait 45s", j, err)
	}
}
