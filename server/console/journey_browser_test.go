package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp/kb"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestOperatorJourney is the console's story end to end, through the
// browser only: log in with the keyboard, create a job in the form, watch
// it run and fail, pause it, open the failure, retry it once the target
// is fixed and see the retry succeed; then check that a viewer can read
// all of it and change nothing.
func TestOperatorJourney(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vic", Role: api.RoleViewer, Password: "viewer-password-2"}); err != nil {
		t.Fatal(err)
	}
	// The job's target fails until it is fixed.
	var status atomic.Int32
	status.Store(http.StatusInternalServerError)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := int(status.Load())
		w.WriteHeader(code)
		fmt.Fprintf(w, "export answered %d\n", code)
	}))
	t.Cleanup(target.Close)

	b := browsertest.New(t)
	p := b.NewPage(t)

	// Log in with the keyboard alone: the login page focuses the user
	// name, Tab moves to the password, Enter submits.
	p.Navigate(srv.URL + "/")
	p.WaitText("main h1", "Log in")
	if f := p.Focused(); f != "input username" {
		t.Errorf("the login page focuses %q, want the user name", f)
	}
	p.Keys("typing the user name", servertest.AdminName)
	p.Keys("tabbing to the password", kb.Tab)
	if f := p.Focused(); f != "input password" {
		t.Errorf("Tab from the user name focuses %q, want the password", f)
	}
	p.Keys("typing the password", srv.AdminPassword+kb.Enter)
	p.WaitText(`[data-testid="whoami"]`, "admin (admin)")
	p.WaitText("main h1", "Dashboard")

	// Create the job in the form.
	p.ClickText("#nav a", "Jobs")
	p.WaitText("main h1", "Jobs")
	p.ClickText("a", "New job")
	p.WaitText("main h1", "New job")
	p.Fill(`input[name="group"]`, "journey")
	p.Fill(`input[name="name"]`, "export")
	p.Fill(`input[name="description"]`, "exports the orders")
	p.Fill(`input[name="http.url"]`, target.URL+"/export")
	p.Fill(`input[name="triggers[0].schedule.expression"]`, "*/2 * * * * ?")
	p.Fill(`input[name="triggers[0].schedule.time_zone"]`, "UTC")
	p.WaitText(`[data-testid="cron-explain-0"]`, "Every 2 seconds")
	p.ClickText("button", "Create job")
	p.WaitText("main h1", "journey/export")

	// Watch it run: the failures show on the job's page.
	p.WaitText(`[data-testid="execution-row"]`, "failed")
	p.Screenshot("journey-job-failing")
	p.Click(`[data-testid="pause"]`)
	p.WaitText(".job-sub", "paused")

	// Open a failed execution: its error names the status.
	js := `(() => { const row = [...document.querySelectorAll('[data-testid="execution-row"]')].find(r => r.innerText.includes('failed'));
		const a = row && row.querySelector('a[href^="#/executions/"]'); if (!a) return false; a.click(); return true; })()`
	waitJS(p, "a failed execution to open", js)
	p.WaitText("main h1", "Execution of")
	p.WaitText("main", "500")

	// Fix the target and retry: the console follows the new attempt,
	// which succeeds.
	status.Store(http.StatusOK)
	p.Click(`[data-testid="retry"]`)
	p.WaitText("main h1", "succeeded")
	p.WaitText("main", "attempt")
	p.Screenshot("journey-retry-succeeded")
	list, err := srv.Client.ListExecutions(ctx, api.ExecutionQuery{JobGroup: "journey", JobName: "export", Outcomes: []string{"succeeded"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Executions) != 1 || list.Executions[0].Attempt < 2 {
		t.Fatalf("after the retry the history holds %d successes (%+v), want 1 retried attempt", len(list.Executions), list.Executions)
	}
	retried := list.Executions[0]

	// A viewer reads the same pages and finds nothing to change.
	v := b.NewPage(t)
	v.Login(srv.URL, "/jobs/journey/export", "vic", "viewer-password-2")
	v.WaitText("main h1", "journey/export")
	v.WaitText(`[data-testid="execution-row"]`, "succeeded")
	if n := v.Count(".page-head .actions button, .page-head .actions a"); n != 0 {
		t.Errorf("a viewer's job page offers %d actions: %q", n, v.Text(".page-head"))
	}
	v.Route("/executions/" + retried.ID)
	v.WaitText("main h1", "Execution of")
	if n := v.Count(`[data-testid="retry"]`); n != 0 {
		t.Errorf("a viewer sees %d Retry buttons", n)
	}
	v.Route("/jobs/journey/export/edit")
	v.WaitText("main", "needs the operator role")
	v.Route("/jobs")
	v.WaitText("main h1", "Jobs")
	if strings.Contains(v.Text(".page-head"), "New job") {
		t.Errorf("a viewer's jobs list offers New job")
	}
	v.Screenshot("journey-viewer-job")
}
