package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// waitRuns polls the history until it holds an execution of the job
// with one of the outcomes (any outcome if none is given).
func waitRuns(t *testing.T, srv *servertest.Server, group, name string, outcomes ...string) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		list, err := srv.Client.ListExecutions(context.Background(), api.ExecutionQuery{JobGroup: group, JobName: name, Outcomes: outcomes, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Executions) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no execution of %s/%s with outcome %v after 45s", group, name, outcomes)
		}
		time.Sleep(200 * time.Millisecond) // the scheduler fires in the background
	}
}

// waitJS waits until the JavaScript expression js is true in the page.
func waitJS(p *browsertest.Page, doing, js string) {
	browsertest.Get(p, "waiting for "+doing, chromedp.Poll[bool](js, chromedp.WithPollingInterval(100*time.Millisecond)))
}

// setValue sets a control's value as the user would (input and change
// events fire): for selects, checkboxes and datetime-local inputs, which
// typing does not fill reliably.
func setValue(p *browsertest.Page, sel, v string) {
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false;
		if (e.type === 'checkbox') e.checked = %q === 'true'; else e.value = %q;
		e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, sel, v, v)
	waitJS(p, "setting "+sel, js)
}

// typeIn empties the input matching sel and types v into it. Not
// browsertest's Page.Fill: chromedp.Clear empties the value attribute,
// which no longer changes what an input shows once someone typed in it.
func typeIn(p *browsertest.Page, sel, v string) {
	setValue(p, sel, "")
	if v != "" {
		p.Do("typing into "+sel, chromedp.SendKeys(chromedp.CSS(sel), v))
	}
}

// rowsJS counts the rows of the jobs list.
const rowsJS = `document.querySelectorAll('[data-testid="jobs-results"] tbody tr').length`

// listed returns the jobs the list shows, as "group/name".
func listed(p *browsertest.Page) []string {
	return browsertest.Get(p, "reading the jobs listed", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[data-testid="jobs-results"] tbody tr')].map(r => r.dataset.job)`))
}

// waitListed waits until the list shows exactly want, in any order.
func waitListed(t *testing.T, p *browsertest.Page, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	js := fmt.Sprintf(`(() => { const want = %s; const got = [...document.querySelectorAll('[data-testid="jobs-results"] tbody tr')].map(r => r.dataset.job).sort();
		return JSON.stringify(got) === JSON.stringify([...want].sort()); })()`, mustJSON(t, want))
	ctx, cancel := context.WithTimeout(p.Context(), 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("the list shows %v, want %v (%v)", listed(p), want, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestJobsListSearchAndFilter searches as it types, filters by group,
// state and failing, pages with Load more, and keeps the filters in the
// URL so that a link shows the same list. A viewer gets no "New job".
func TestJobsListSearchAndFilter(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	ok := targetServer(t, http.StatusOK)
	broken := targetServer(t, http.StatusBadGateway)
	createJobs(t, srv,
		cronJob(t, "etl", "nightly", ok.URL, "0 0 2 * * ?"),
		cronJob(t, "etl", "hourly", ok.URL, "0 0 * * * ?"),
		cronJob(t, "reports", "weekly", ok.URL, "0 0 8 ? * MON"),
		cronJob(t, "reports", "flaky", broken.URL, "*/2 * * * * ?"))
	if err := srv.Client.PauseJob(ctx, "reports", "weekly"); err != nil {
		t.Fatal(err)
	}
	for i := range 55 {
		if _, err := srv.Client.CreateJob(ctx, cronJob(t, "bulk", fmt.Sprintf("job-%02d", i), ok.URL, "")); err != nil {
			t.Fatal(err)
		}
	}
	waitRuns(t, srv, "reports", "flaky", "failed")
	// Stop it failing on: the filter must find it by its last outcome.
	if err := srv.Client.PauseJob(ctx, "reports", "flaky"); err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/jobs?group=etl", servertest.AdminName, srv.AdminPassword)
	p.WaitText("main h1", "Jobs")
	// The filter from the link is applied and shown.
	waitListed(t, p, "etl/nightly", "etl/hourly")
	if v := browsertest.Get(p, "reading the group filter", chromedp.Evaluate[string](`document.querySelector('input[name="group"]').value`)); v != "etl" {
		t.Errorf("group filter shows %q, want etl", v)
	}
	p.WaitText(`[data-job="etl/hourly"]`, "active")
	p.WaitText(`[data-job="etl/hourly"]`, "never run")

	// Search as you type, over every group.
	typeIn(p, `input[name="group"]`, "")
	typeIn(p, `input[name="q"]`, "NIGHT")
	waitListed(t, p, "etl/nightly")
	waitJS(p, "the search in the URL", `location.hash === '#/jobs?q=NIGHT'`)

	// Group and state.
	typeIn(p, `input[name="q"]`, "")
	typeIn(p, `input[name="group"]`, "reports")
	waitListed(t, p, "reports/weekly", "reports/flaky")
	setValue(p, `select[name="state"]`, "paused")
	waitListed(t, p, "reports/weekly", "reports/flaky")
	p.WaitText(`[data-job="reports/weekly"]`, "paused")
	setValue(p, `select[name="state"]`, "active")
	waitListed(t, p)
	p.WaitText(`[data-testid="jobs-results"]`, "No job matches")

	// Failing only, whatever the group.
	setValue(p, `select[name="state"]`, "")
	typeIn(p, `input[name="group"]`, "")
	setValue(p, `input[name="failing"]`, "true")
	waitListed(t, p, "reports/flaky")
	p.WaitText(`[data-job="reports/flaky"]`, "failing")
	p.WaitText(`[data-job="reports/flaky"]`, "failed")
	waitJS(p, "the failing filter in the URL", `location.hash === '#/jobs?failing=true'`)
	p.Screenshot("jobs-list-failing")

	// A fresh page opened on that URL shows the same list.
	p2 := b.NewPage(t)
	p2.Login(srv.URL, "/jobs?failing=true", servertest.AdminName, srv.AdminPassword)
	waitListed(t, p2, "reports/flaky")
	if !browsertest.Get(p2, "reading the failing filter", chromedp.Evaluate[bool](`document.querySelector('input[name="failing"]').checked`)) {
		t.Error("the failing filter from the URL is not checked")
	}

	// Cursor paging: 50 jobs, then the 5 more.
	setValue(p, `input[name="failing"]`, "false")
	typeIn(p, `input[name="group"]`, "bulk")
	waitJS(p, "a page of 50 bulk jobs", rowsJS+` === 50 && !!document.querySelector('[data-job="bulk/job-00"]')`)
	// The list may still be redrawn by the last keystroke's search when
	// the button is first clicked, which drops that click: click again,
	// at most every 3 s, until the rest is there.
	waitJS(p, "all 55 bulk jobs", `(() => {
		if (`+rowsJS+` === 55) return true;
		const b = document.querySelector('[data-testid="jobs-results"] .more button');
		const now = Date.now();
		if (b && !b.disabled && !(window.__loadMoreAt > now - 3000)) { window.__loadMoreAt = now; b.click(); }
		return false;
	})()`)
	if n := p.Count(`[data-testid="jobs-results"] .more button`); n != 0 {
		t.Errorf("Load more still shown after the last page (%d)", n)
	}

	typeIn(p, `input[name="group"]`, "")
	waitJS(p, "the first page of every job", rowsJS+` === 50`)
	typeIn(p, `input[name="q"]`, "e")
	typeIn(p, `input[name="group"]`, "etl")
	waitListed(t, p, "etl/nightly", "etl/hourly")
	p.Screenshot("jobs-list")

	// A viewer sees the list without "New job".
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "viewer-password-1"}); err != nil {
		t.Fatal(err)
	}
	v := b.NewPage(t)
	v.Login(srv.URL, "/jobs?group=etl", "vera", "viewer-password-1")
	waitListed(t, v, "etl/nightly", "etl/hourly")
	if n := v.Count(`.page-head .actions a, .page-head .actions button`); n != 0 {
		t.Errorf("a viewer's jobs list shows %d actions", n)
	}
	if strings.Contains(v.Text("main"), "New job") {
		t.Error(`a viewer's jobs list offers "New job"`)
	}
}

// TestJobLifecycle creates a job through the form (a bad cron refused
// under its field as typed and on saving, then a good one explained live),
// sees it on its page with 10 next fire times and the DST change marked,
// edits it (as JSON too, and after someone else changed it: 412; adding a
// one-shot trigger with a calendar), pauses
// and resumes it, runs it now with a parameter, backfills a range and
// deletes it after typing its name. A viewer's job page has no action.
func TestJobLifecycle(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	target := targetServer(t, http.StatusOK)
	if _, err := srv.Client.PutCalendar(ctx, api.Calendar{Name: "holidays", Calendar: json.RawMessage(`{"type":"holiday","time_zone":"UTC","excluded_dates":["2030-12-25"],"base":null}`)}); err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/jobs", servertest.AdminName, srv.AdminPassword)
	p.ClickText("a", "New job")
	p.WaitText("main h1", "New job")

	const expr = `input[name="triggers[0].schedule.expression"]`
	const exprError = `.field[data-field="triggers[0].schedule.expression"] .error`
	typeIn(p, `input[name="group"]`, "demo")
	typeIn(p, `input[name="name"]`, "ping")
	typeIn(p, `input[name="description"]`, "pings the test server")
	typeIn(p, `input[name="http.url"]`, target.URL+"/ping")
	typeIn(p, `input[name="triggers[0].schedule.time_zone"]`, "Europe/Berlin")

	// The API's refusal of a field shows under that field: this server
	// runs no shell jobs.
	setValue(p, `select[name="type"]`, "shell")
	typeIn(p, `textarea[name="shell.shell"]`, "echo hello")
	p.ClickText("button", "Create job")
	p.WaitText(`.field[data-field="type"] .error`, "shell jobs are disabled")
	setValue(p, `select[name="type"]`, "http")
	waitJS(p, "the HTTP settings back", `document.querySelector('input[name="http.url"]').value === '`+target.URL+`/ping' && document.querySelector('input[name="http.url"]').offsetParent !== null`)

	// A bad expression is refused under its field as it is typed…
	typeIn(p, expr, "61 * * * * ?")
	p.WaitText(exprError, "61")
	if n := p.Count(`[data-testid="cron-explain-0"] li`); n != 0 {
		t.Errorf("a bad expression still shows %d fire times", n)
	}
	// …and by the API on saving, the form keeping every value.
	p.ClickText("button", "Create job")
	p.WaitText(`[data-testid="form-error"]`, "61")
	p.WaitText(exprError, "61")
	if got := browsertest.Get(p, "reading the form", chromedp.Evaluate[string](
		`['group','name','description','http.url'].map(n => document.querySelector('[name="' + n + '"]').value).join('|')`)); got != "demo|ping|pings the test server|"+target.URL+"/ping" {
		t.Errorf("after a refused save the form holds %q", got)
	}

	// A good one is explained live, with its next fire times and the
	// daylight-saving change marked.
	typeIn(p, expr, "0 0 12 1 * ?")
	p.WaitText(`[data-testid="cron-explain-0"]`, "At 12:00")
	p.WaitText(`[data-testid="cron-explain-0"]`, "Europe/Berlin")
	waitJS(p, "the field's error cleared", `document.querySelector('`+exprError+`').hidden`)
	if n := p.Count(`[data-testid="cron-explain-0"] li`); n != 5 {
		t.Errorf("the explanation lists %d fire times, want 5", n)
	}
	typeIn(p, `input[name="http.url"]`, "not a url")
	p.WaitText(`.field[data-field="http.url"] .error`, "URL")
	typeIn(p, `input[name="http.url"]`, target.URL+"/ping")
	waitJS(p, "the URL's error cleared", `document.querySelector('.field[data-field="http.url"] .error').hidden`)
	p.Screenshot("job-edit")
	p.ClickText("button", "Create job")

	// The job's page: the schedule in words, 10 fire times, a DST mark.
	p.WaitText("main h1", "demo/ping")
	p.WaitText(`[data-testid="schedule-words"]`, "At 12:00")
	waitJS(p, "10 next fire times", `document.querySelectorAll('[data-testid="next-fire-times"] li').length === 10`)
	if n := p.Count(`[data-testid="next-fire-times"] li.dst .dst-note`); n < 1 {
		t.Errorf("10 monthly fire times in Berlin show %d DST marks, want at least 1", n)
	}
	if !strings.Contains(p.Text(".job-sub"), "active") {
		t.Errorf("a new job is not shown active: %q", p.Text(".job-sub"))
	}
	job, err := srv.Client.GetJob(ctx, "demo", "ping")
	if err != nil {
		t.Fatal(err)
	}
	if job.Description != "pings the test server" || len(job.Triggers) != 1 || !strings.Contains(string(job.Triggers[0].Schedule), "Europe/Berlin") {
		t.Errorf("the form created %+v", job)
	}

	// Edit, through the JSON editor and back.
	p.ClickText(".page-head a", "Edit")
	p.WaitText("main h1", "Edit demo/ping")
	typeIn(p, `input[name="description"]`, "pings it daily")
	p.Click(`[data-testid="json-toggle"]`)
	p.WaitText(`[data-testid="json-toggle"]`, "Back to the form")
	js := browsertest.Get(p, "reading the JSON", chromedp.Evaluate[string](`document.querySelector('textarea[name="job_json"]').value`))
	var asJSON api.Job
	if err := json.Unmarshal([]byte(js), &asJSON); err != nil || asJSON.Description != "pings it daily" || asJSON.Name != "ping" {
		t.Errorf("the JSON editor holds %s (%v)", js, err)
	}
	p.Click(`[data-testid="json-toggle"]`)
	p.WaitText(`[data-testid="json-toggle"]`, "edit as JSON")

	// Meanwhile someone else changes the job: saving is refused (412)
	// and the form keeps what was typed.
	other := *job
	other.Status = nil
	other.Description = "changed by someone else"
	if _, _, err := srv.Client.PutJob(ctx, other, job.Version); err != nil {
		t.Fatal(err)
	}
	p.ClickText("button", "Save")
	p.WaitText(`[data-testid="conflict"]`, "Someone changed this job")
	if v := browsertest.Get(p, "reading the description", chromedp.Evaluate[string](`document.querySelector('input[name="description"]').value`)); v != "pings it daily" {
		t.Errorf("after the 412 the description field holds %q", v)
	}
	p.ClickText("button", "Reload the job")
	waitJS(p, "the form reloaded", `(() => { const e = document.querySelector('input[name="description"]'); return !!e && e.value === 'changed by someone else'; })()`)
	typeIn(p, `input[name="description"]`, "pings it daily")
	// A second trigger: once, at a time, except on the days of a calendar.
	p.ClickText("button", "Add trigger")
	setValue(p, `select[name="triggers[1].kind"]`, "once")
	setValue(p, `input[name="triggers[1].start_time"]`, "2030-06-03T09:00:00")
	typeIn(p, `input[name="triggers[1].calendar"]`, "holidays")
	// A third: every 15 minutes, four firings in all.
	p.ClickText("button", "Add trigger")
	setValue(p, `select[name="triggers[2].kind"]`, "interval")
	typeIn(p, `input[name="triggers[2].schedule.interval"]`, "15")
	setValue(p, `select[name="triggers[2].interval_unit"]`, "60000")
	setValue(p, `input[name="triggers[2].start_time"]`, "2030-06-03T09:00:00")
	typeIn(p, `input[name="triggers[2].schedule.repeat_count"]`, "4")
	p.ClickText("button", "Save")
	p.WaitText("main h1", "demo/ping")
	p.WaitText(".job-sub", "pings it daily")
	p.WaitText(`[data-testid="schedule-words"]`, "Once, at 2030-06-03 09:00:00")
	p.WaitText(`[data-testid="schedule-words"]`, "Every 15 min, from 2030-06-03 09:00:00 UTC, 4 times in all")
	if n := p.Count(`[data-testid="schedule-words"] a[href="#/calendars/holidays"]`); n != 1 {
		t.Errorf("the schedule links the calendar %d times, want 1", n)
	}
	saved, err := srv.Client.GetJob(ctx, "demo", "ping")
	if err != nil || len(saved.Triggers) != 3 {
		t.Fatalf("after saving three triggers: %+v, %v", saved, err)
	}
	for i, want := range map[int]string{1: `{"kind":"once"}`, 2: `{"kind":"simple","interval":"15m","repeat_count":3}`} {
		if got := string(saved.Triggers[i].Schedule); got != want {
			t.Errorf("trigger %d saved with schedule %s, want %s", i, got, want)
		}
	}
	waitJS(p, "10 next fire times of both triggers", `document.querySelectorAll('[data-testid="next-fire-times"] li').length === 10`)

	// Pause and resume.
	p.Click(`[data-testid="pause"]`)
	p.WaitText(".job-sub", "paused")
	p.Click(`[data-testid="resume"]`)
	p.WaitText(".job-sub", "active")
	if j, err := srv.Client.GetJob(ctx, "demo", "ping"); err != nil || j.Paused {
		t.Fatalf("after Resume: %+v, %v", j, err)
	}

	// Run now with a parameter: an execution appears.
	p.ClickText(".page-head button", "Run now")
	typeIn(p, `dialog input[name="param-key"]`, "day")
	typeIn(p, `dialog input[name="param-value"]`, "2026-11-20")
	p.Click(`dialog button[type="submit"]`)
	p.WaitText(`[data-testid="job-notice"]`, "Run accepted: 1 run")
	p.WaitText(`[data-testid="execution-row"]`, "succeeded")
	p.WaitText(`[data-testid="success-rate"]`, "100%")
	list, err := srv.Client.ListExecutions(ctx, api.ExecutionQuery{JobGroup: "demo", JobName: "ping"})
	if err != nil || len(list.Executions) != 1 || !list.Executions[0].Manual || list.Executions[0].Params["day"] != "2026-11-20" {
		t.Errorf("run now recorded %+v, %v", list, err)
	}

	// Backfill January to March: the 1st of each month at 12:00 Berlin.
	p.ClickText(".page-head button", "Backfill")
	setValue(p, `dialog input[name="from"]`, "2026-01-01T00:00:00")
	setValue(p, `dialog input[name="to"]`, "2026-04-01T00:00:00")
	p.Click(`dialog button[type="submit"]`)
	p.WaitText(`[data-testid="job-notice"]`, "Backfill accepted: 3 runs")
	waitJS(p, "4 executions listed", `document.querySelectorAll('[data-testid="execution-row"]').length === 4`)
	p.Screenshot("job-detail")
	p.SetViewport(390, 844, true)
	p.Screenshot("job-detail-phone")
	if w := browsertest.Get(p, "measuring the page", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 392 {
		t.Errorf("the job page is %d px wide on a 390 px phone", w)
	}
	p.SetViewport(1280, 900, false)

	// A viewer sees the page with no action at all.
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "viewer-password-1"}); err != nil {
		t.Fatal(err)
	}
	v := b.NewPage(t)
	v.Login(srv.URL, "/jobs/demo/ping", "vera", "viewer-password-1")
	v.WaitText("main h1", "demo/ping")
	v.WaitText(`[data-testid="execution-row"]`, "succeeded")
	if n := v.Count(`.page-head .actions button, .page-head .actions a`); n != 0 {
		t.Errorf("a viewer's job page shows %d actions", n)
	}
	// The Overview and History tabs are the only buttons: they act on
	// nothing.
	if n := v.Count(`main button:not([role="tab"])`); n != 0 {
		t.Errorf("a viewer's job page shows %d buttons besides its tabs", n)
	}
	v.Route("/jobs/demo/ping/edit")
	v.WaitText("main", "needs the operator role")

	// Delete, once the name is typed.
	p.ClickText(".page-head button", "Delete")
	p.WaitText("dialog", "Type \"ping\" to confirm")
	if !browsertest.Get(p, "reading the confirm button", chromedp.Evaluate[bool](`document.querySelector('dialog button.btn-danger').disabled`)) {
		t.Error("Delete is enabled before the name is typed")
	}
	typeIn(p, `dialog input[type="text"]`, "ping")
	p.Click(`dialog button.btn-danger`)
	p.WaitText("main h1", "Jobs")
	if _, err := srv.Client.GetJob(ctx, "demo", "ping"); !apiclient.IsCode(err, api.CodeNotFound) {
		t.Errorf("after Delete, GetJob = %v, want not found", err)
	}
}
