package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// waitExecution polls the history until an execution matching q exists
// and returns the newest.
func waitExecution(t *testing.T, srv *servertest.Server, q api.ExecutionQuery) api.Execution {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		q.Limit = 1
		list, err := srv.Client.ListExecutions(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Executions) > 0 {
			return list.Executions[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no execution matching %+v after 45s", q)
		}
		time.Sleep(200 * time.Millisecond) // the scheduler fires in the background
	}
}

// poll waits until the JavaScript expression js is true in the page.
func poll(p *browsertest.Page, doing, js string) {
	browsertest.Get(p, "waiting for "+doing, chromedp.Poll[bool](js, chromedp.WithPollingInterval(100*time.Millisecond)))
}

// TestExecutionsFailureRetryAndExplain watches a failing HTTP job's
// executions in the list (filtered by outcome), opens a failure, retries
// it, explains its firing, and checks that a viewer gets no Retry button.
func TestExecutionsFailureRetryAndExplain(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the export database is down", http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	}))
	t.Cleanup(healthy.Close)

	if _, err := srv.Client.CreateJob(ctx, cronJob(t, "etl", "export", failing.URL, "0/5 * * * * ?")); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.CreateJob(ctx, cronJob(t, "etl", "ping", healthy.URL, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.RunJob(ctx, "etl", "ping", api.RunRequest{Params: map[string]any{"reason": "smoke test"}}); err != nil {
		t.Fatal(err)
	}
	slow, release := slowServer(t)
	if _, err := srv.Client.CreateJob(ctx, cronJob(t, "etl", "slow", slow.URL, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "viewer-password-1"}); err != nil {
		t.Fatal(err)
	}
	failed := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "etl", JobName: "export", Outcomes: []string{"failed"}})
	ping := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "etl", JobName: "ping", Outcomes: []string{"succeeded"}})

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/executions", servertest.AdminName, srv.AdminPassword)
	p.WaitText("main h1", "Executions")
	p.WaitText(`tr[data-outcome="succeeded"]`, "etl/ping")
	p.WaitText(`tr[data-outcome="failed"]`, "etl/export")
	p.Screenshot("executions-list")

	// The newest page refreshes itself: the next firing shows up unasked.
	first := browsertest.Get(p, "reading the newest row", chromedp.Evaluate[string](`document.querySelector('tr[data-id]').dataset.id`))
	poll(p, "a newer execution to appear", fmt.Sprintf(`(() => { const r = document.querySelector('tr[data-id]'); return !!r && r.dataset.id !== %q; })()`, first))

	// A start time range after every execution matches none.
	p.Route("/executions?from=" + url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)))
	p.WaitText("main .empty", "No execution matches")
	if v := browsertest.Get(p, "reading the from field", chromedp.Evaluate[string](`document.querySelector('input[name="from"]').value`)); v == "" {
		t.Error("the from filter of the URL is not shown in its field")
	}
	p.Route("/executions")

	// Filtering by outcome keeps the failures only, and says so in the URL.
	// (SetValue fires the select's change event, which applies the filter.)
	p.Do("choosing outcome failed", chromedp.SetValue(chromedp.CSS(`select[name="outcome"]`), "failed"))
	poll(p, "the list to keep failures only", `location.hash.includes('outcome=failed') && document.querySelectorAll('tr[data-outcome]').length > 0 && document.querySelectorAll('tr[data-outcome]:not([data-outcome="failed"])').length === 0`)
	if n := p.Count(fmt.Sprintf(`a[href="#/executions/%s"]`, url.PathEscape(failed.ID))); n != 1 {
		t.Errorf("the failed execution %s has %d links in the filtered list, want 1", failed.ID, n)
	}
	// A job filter with no match says so.
	p.Route("/executions?job=etl/ping&outcome=failed")
	p.WaitText("main .empty", "No execution matches")

	// The detail page shows the error and the timings.
	p.Route("/executions/" + url.PathEscape(failed.ID))
	p.WaitText(`[data-testid="error"]`, "500")
	p.WaitText(`[data-testid="outcome"]`, "failed")
	p.WaitText("main", "Scheduled")
	p.WaitText("main h1", "etl/export")
	p.Screenshot("execution-detail")

	// Retry: the page waits for the new attempt and opens it.
	p.Click(`[data-testid="retry"]`)
	poll(p, "the retry's page", `(() => { const r = document.querySelector('tr[aria-current="true"]'); return !!r && r.innerText.includes('#2'); })()`)
	if n := p.Count(`tr[data-testid="attempt"]`); n != 2 {
		t.Errorf("%d attempts listed after the retry, want 2", n)
	}
	attempts, err := srv.Client.Attempts(ctx, failed.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) != 2 || attempts[1].Attempt != 2 {
		t.Fatalf("attempts after the retry: %+v", attempts)
	}
	if loc := browsertest.Get(p, "reading the location", chromedp.Evaluate[string](`location.hash`)); loc != "#/executions/"+url.PathEscape(attempts[1].ID) {
		t.Errorf("after the retry the page is %s, want attempt 2 (%s)", loc, attempts[1].ID)
	}

	// The explanation of the firing says it fired.
	p.Route("/executions/" + url.PathEscape(failed.ID))
	p.ClickText("main a", "Why did it fire?")
	p.WaitText(`[data-testid="verdict"]`, "Fired at")
	p.WaitText("main", "What the scheduler decided")
	p.Screenshot("explain")

	// The form asks about another instant: two seconds after the fire
	// time, when the job was not due.
	p.Do("setting the instant", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const d = new Date(%d), p = n => String(n).padStart(2, '0');
		const e = document.querySelector('input[name="at"]');
		e.value = d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds());
	})()`, failed.ScheduledTime.Add(2*time.Second).UnixMilli())))
	p.ClickText("button", "Explain")
	p.WaitText(`[data-testid="verdict"]`, "Not due")
	poll(p, "the question in the URL", `location.hash.includes('job=etl%2Fexport') && location.hash.includes('at=')`)

	// The form refuses an unknown job next to the field.
	setText(p, `input[name="job"]`, "etl/nope")
	p.ClickText("button", "Explain")
	p.WaitText(`.field[data-field="job"] .error`, "nope")

	// A running execution's page has no Retry button and updates itself
	// when the run ends.
	if _, err := srv.Client.RunJob(ctx, "etl", "slow", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	running := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "etl", JobName: "slow", Outcomes: []string{"running"}})
	p.Route("/executions/" + url.PathEscape(running.ID))
	p.WaitText(`[data-testid="outcome"]`, "running")
	if n := p.Count(`[data-testid="retry"]`); n != 0 {
		t.Errorf("a running execution offers %d Retry buttons", n)
	}
	release()
	p.WaitText(`[data-testid="outcome"]`, "succeeded")
	p.WaitText(`[data-testid="retry"]`, "Retry")

	// A manual run shows the parameters it ran with.
	p.Route("/executions/" + url.PathEscape(ping.ID))
	p.WaitText("main", "smoke test")
	p.WaitText("main", "manual run")

	// On a phone the detail page fits the screen.
	p.SetViewport(390, 844, true)
	p.Route("/executions/" + url.PathEscape(failed.ID))
	p.WaitText(`[data-testid="error"]`, "500")
	if w := browsertest.Get(p, "measuring the page", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 390 {
		t.Errorf("the execution page is %d px wide on a 390 px phone", w)
	}
	p.Screenshot("execution-detail-phone")

	// A viewer sees the failure but no Retry button.
	v := b.NewPage(t)
	v.Login(srv.URL, "/executions/"+url.PathEscape(failed.ID), "vera", "viewer-password-1")
	v.WaitText(`[data-testid="error"]`, "500")
	if n := v.Count(`[data-testid="retry"]`); n != 0 {
		t.Errorf("a viewer sees %d Retry buttons", n)
	}
	// The one button a viewer has copies the execution's ID.
	if n := v.Count("main button:not(.copy)"); n != 0 {
		t.Errorf("a viewer sees %d buttons other than Copy on an execution page", n)
	}
	if n := v.Count("main button.copy"); n != 1 {
		t.Errorf("a viewer sees %d Copy buttons on an execution page, want 1", n)
	}
	if !strings.Contains(v.Text("main"), "Attempts of this firing") {
		t.Error("the viewer's page lacks the attempts")
	}
}
