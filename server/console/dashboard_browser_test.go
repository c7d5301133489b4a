package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestDashboard runs a healthy and a failing job for a few seconds and
// checks that the dashboard charts them: fires and failures per bucket,
// the lag figures, the next firings, the failing job, the live node; that
// the window can be changed; and that the page fits a phone.
func TestDashboard(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	ok := targetServer(t, http.StatusOK)
	broken := targetServer(t, http.StatusInternalServerError)
	if _, err := srv.Client.CreateJob(ctx, cronJob(t, "web", "heartbeat", ok.URL, "*/2 * * * * ?")); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.CreateJob(ctx, cronJob(t, "etl", "export", broken.URL, "*/3 * * * * ?")); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.CreateJob(ctx, cronJob(t, "reports", "daily", ok.URL, "0 0 6 * * ?")); err != nil {
		t.Fatal(err)
	}
	// A slow job runs until the test ends: its call is answered only then.
	slow, _ := slowServer(t)
	slowJob := cronJob(t, "batch", "slow", slow.URL, "*/5 * * * * ?")
	slowJob.Overlap = api.OverlapSkip
	if _, err := srv.Client.CreateJob(ctx, slowJob); err != nil {
		t.Fatal(err)
	}
	waitRuns(t, srv, "batch", "slow", "running")
	waitRuns(t, srv, "web", "heartbeat", "succeeded")
	waitRuns(t, srv, "etl", "export", "failed")

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/", servertest.AdminName, srv.AdminPassword)
	p.WaitText("main h1", "Dashboard")
	// Two bar charts and the lag line, with bars for the runs.
	waitJS(p, "the activity charts", `document.querySelectorAll('[data-testid="activity"] svg.chart').length === 3`)
	waitJS(p, "bars of succeeded and failed runs", `!!document.querySelector('[data-testid="activity"] svg.chart rect.s2') && !!document.querySelector('[data-testid="activity"] svg.chart rect.s1')`)
	waitJS(p, "fires counted", `Number(document.querySelector('[data-testid="stat-fires"] .value').textContent) >= 2`)
	waitJS(p, "failures counted", `Number(document.querySelector('[data-testid="stat-failed"] .value').textContent) >= 1`)
	waitJS(p, "a lag figure", `/\d/.test(document.querySelector('[data-testid="lag-p50"] .value').textContent) && /\d/.test(document.querySelector('[data-testid="lag-p99"] .value').textContent)`)
	p.WaitText(`[data-testid="stat-nodes"] .value`, "1")
	p.WaitText(`[data-testid="failing"]`, "etl/export")
	if txt := p.Text(`[data-testid="failing"]`); strings.Contains(txt, "web/heartbeat") {
		t.Errorf("the failing jobs list a healthy job: %q", txt)
	}
	p.WaitText(`[data-testid="upcoming"]`, "web/heartbeat")
	p.WaitText(`[data-testid="upcoming"]`, "etl/export")
	p.WaitText("main", "alive")
	p.WaitText(`[data-testid="running"]`, "batch/slow")
	waitJS(p, "the running count", `Number(document.querySelector('[data-testid="stat-running"] .value').textContent) >= 1`)

	// Another window: the URL keeps it, the charts follow.
	p.ClickText(".segmented button", "1h")
	waitJS(p, "the 1h window", `location.hash === '#/?window=1h' && document.querySelector('[data-testid="activity"] h3').textContent === 'Fires per 1 min'`)
	waitJS(p, "the 1h window's bars", `!!document.querySelector('[data-testid="activity"] svg.chart rect.s2')`)
	waitJS(p, "toasts gone", `document.getElementById('toasts').children.length === 0`)
	p.Screenshot("dashboard")

	p.SetViewport(390, 844, true)
	waitJS(p, "the phone layout", `window.innerWidth <= 400`)
	p.Screenshot("dashboard-phone")
	if w := browsertest.Get(p, "measuring the page", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 392 {
		t.Errorf("the dashboard is %d px wide on a 390 px phone", w)
	}
}
