package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// The page checks of the readability tests: each is a JavaScript
// expression that returns a list of problems found in main (empty when
// there is none), so a failure says what is wrong.
const (
	// checkTimes lists the <time> elements not in the console's one
	// format: 24-hour with seconds, ending with the zone's label.
	checkTimes = `(() => {
		const zone = new Intl.DateTimeFormat('en-GB', { timeZoneName: 'short' }).formatToParts(new Date()).find(p => p.type === 'timeZoneName').value;
		const bad = [...document.querySelectorAll('main time')].map(e => e.innerText.trim())
			.filter(t => !/^(\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}(\.\d{3})? /.test(t) || !t.endsWith(' ' + zone));
		if (/\b\d{1,2}:\d{2}(:\d{2})? ?[AP]M\b/.test(document.querySelector('main').innerText)) bad.push('a 12-hour time');
		return bad;
	})()`
	// checkNoMinusZero lists the negative zeros main shows.
	checkNoMinusZero = `[...document.querySelector('main').innerText.matchAll(/[−-]0(\.0+)? ?(ms|s|µs)\b/g)].map(m => m[0])`
	// checkNames lists the words of names (job keys, node IDs, headings)
	// that the layout broke across two lines: the characters of one
	// word must all sit on one line.
	checkNames = `(() => {
		const bad = [];
		for (const el of document.querySelectorAll('main h1, main .job-link, main td a, main td .mono, main .name')) {
			const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
			for (let n = walker.nextNode(); n; n = walker.nextNode()) {
				for (const m of n.data.matchAll(/[A-Za-z0-9]{2,}/g)) {
					const r = document.createRange();
					r.setStart(n, m.index);
					r.setEnd(n, m.index + m[0].length);
					const tops = new Set([...r.getClientRects()].filter(c => c.width > 0).map(c => Math.round(c.top)));
					if (tops.size > 1) bad.push(m[0]);
				}
			}
		}
		return bad;
	})()`
	// checkCharts lists chart labels smaller than 11 px, and x-axis
	// labels of one chart that overlap.
	checkCharts = `(() => {
		const bad = [];
		for (const svg of document.querySelectorAll('main svg.chart')) {
			for (const t of svg.querySelectorAll('text')) {
				const r = t.getBoundingClientRect();
				if (t.textContent && r.height < 11) bad.push('label "' + t.textContent + '" is ' + r.height.toFixed(1) + ' px high');
			}
			const xs = [...svg.querySelectorAll('text.x-label')].map(t => t.getBoundingClientRect());
			for (let i = 1; i < xs.length; i++) {
				if (xs[i].left < xs[i - 1].right + 4) bad.push('x labels ' + (i - 1) + ' and ' + i + ' overlap or touch');
			}
		}
		return bad;
	})()`
)

// wantNone runs a check and fails the test with its problems, if any.
func wantNone(t *testing.T, p *browsertest.Page, what, check string) {
	t.Helper()
	if bad := browsertest.Get(p, "checking "+what, chromedp.Evaluate[[]string](check)); len(bad) > 0 {
		t.Errorf("%s: %q", what, bad)
	}
}

// checkPage opens route, waits for want in main, and checks the page's
// times, durations, names and charts; at phone width also that it fits.
func checkPage(t *testing.T, p *browsertest.Page, route, want, shot string, phone bool) {
	t.Helper()
	p.Route(route)
	p.WaitText("main", want)
	waitJS(p, "the charts drawn at their width", `[...document.querySelectorAll('main svg.chart')].every(s => s.viewBox.baseVal.width > 1)`)
	where := route
	if phone {
		where += " on a phone"
		if w := browsertest.Get(p, "measuring the page", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 392 {
			t.Errorf("%s: the page is %d px wide on a 390 px phone", where, w)
		}
	}
	wantNone(t, p, where+": times", checkTimes)
	wantNone(t, p, where+": negative zeros", checkNoMinusZero)
	wantNone(t, p, where+": names broken inside a word", checkNames)
	wantNone(t, p, where+": chart labels", checkCharts)
	p.Screenshot(shot)
}

// longGroup and longName make a job key longer than a phone's screen.
const (
	longGroup = "reporting-and-analytics"
	longName  = "daily-sales-summary-for-the-european-region"
)

// TestListsTimesNamesAndCharts checks the jobs list's schedule column,
// the executions list's error column and full IDs, and on every page at
// desktop and phone width: one clock format with the zone's label, no
// negative zero, names not broken inside a word, and chart labels that
// are readable and do not overlap.
func TestListsTimesNamesAndCharts(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	ok := targetServer(t, http.StatusOK)
	failing := targetServer(t, http.StatusInternalServerError)
	createJobs(t, srv,
		cronJob(t, "web", "heartbeat", ok.URL, "*/2 * * * * ?"),
		cronJob(t, "etl", "export", failing.URL, "*/3 * * * * ?"),
		cronJob(t, longGroup, longName, ok.URL, "0 0 6 ? * MON-FRI"),
		cronJob(t, "ops", "on-demand", ok.URL, ""))
	if _, err := srv.Client.RunJob(ctx, longGroup, longName, api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	waitRuns(t, srv, longGroup, longName, "succeeded")
	waitRuns(t, srv, "web", "heartbeat", "succeeded")
	failed := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "etl", JobName: "export", Outcomes: []string{"failed"}})

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/jobs", servertest.AdminName, srv.AdminPassword)

	// The jobs list says each job's schedule: the cron expression and
	// its meaning from the API; a job without triggers runs on demand.
	p.WaitText("main thead", "Schedule")
	p.WaitText(`tr[data-job="etl/export"] [data-testid="schedule"]`, "*/3 * * * * ?")
	p.WaitText(`tr[data-job="etl/export"] [data-testid="schedule"] .muted`, "3 seconds")
	p.WaitText(fmt.Sprintf(`tr[data-job="%s/%s"] [data-testid="schedule"] .muted`, longGroup, longName), "Monday")
	p.WaitText(`tr[data-job="ops/on-demand"]`, "on demand")
	checkPage(t, p, "/jobs", "etl/export", "jobs-list", false)

	// The executions list shows each failure's error, cut to one line
	// with the whole text on hover, and each full ID on hover and to copy.
	p.Route("/executions?outcome=failed")
	row := fmt.Sprintf(`tr[data-id=%q]`, failed.ID)
	// At 1280 px every column is in sight, the error's included.
	if inSight := browsertest.Get(p, "measuring the Error column", chromedp.Evaluate[bool](`(() => {
		const th = [...document.querySelectorAll('main thead th')].find(th => th.innerText.trim() === 'Error');
		return !!th && th.getBoundingClientRect().right <= th.closest('.table-wrap').getBoundingClientRect().right + 1;
	})()`)); !inSight {
		t.Error("the executions' Error column is out of sight at 1280 px")
	}
	if len(failed.Error) < 50 {
		t.Fatalf("the failure's error %q is too short to be cut", failed.Error)
	}
	p.WaitText(row+` [data-testid="exec-error"]`, failed.Error)
	if got := browsertest.Get(p, "reading the error's title", chromedp.Evaluate[string](fmt.Sprintf(
		`document.querySelector(%q).title`, row+` [data-testid="exec-error"]`))); got != failed.Error {
		t.Errorf("the error's title is %q, want the whole error %q", got, failed.Error)
	}
	if cut := browsertest.Get(p, "measuring the error", chromedp.Evaluate[bool](fmt.Sprintf(
		`(() => { const e = document.querySelector(%q); return e.scrollWidth > e.clientWidth && e.getClientRects().length === 1; })()`,
		row+` [data-testid="exec-error"]`))); !cut {
		t.Error("the long error is not cut to one line")
	}
	for _, attr := range []string{".clip.id@title", "button.copy@data-copy"} {
		sel, name, _ := strings.Cut(attr, "@")
		if got := browsertest.Get(p, "reading "+attr, chromedp.Evaluate[string](fmt.Sprintf(
			`document.querySelector(%q).getAttribute(%q)`, row+" "+sel, name))); got != failed.ID {
			t.Errorf("%s of the execution's row is %q, want its full ID %q", attr, got, failed.ID)
		}
	}
	p.ClickText(row+" button.copy", "Copy")
	p.WaitText("#toasts", "Copied the execution ID")
	checkPage(t, p, "/executions", "etl/export", "executions-list", false)

	// The other pages, at desktop width, then all of them on a phone.
	jobRoute := "/jobs/" + url.PathEscape(longGroup) + "/" + url.PathEscape(longName)
	pages := []struct{ route, want, shot string }{
		{"/", "times in", "dashboard-readable"},
		{"/jobs", "etl/export", "jobs-list"},
		{"/executions", "etl/export", "executions-list"},
		{"/executions/" + url.PathEscape(failed.ID), "Attempts of this firing", "execution-readable"},
		{jobRoute, "Recent executions", "job-long-name"},
		{"/jobs/etl/export", "Recent executions", "job-failing"},
		{"/cluster", "Nodes", "cluster"},
		{"/executors", "Recent failures", "executors-readable"},
		{"/explain?job=etl%2Fexport&at=" + url.QueryEscape(failed.ScheduledTime.Format("2006-01-02T15:04:05.000Z07:00")), "Verdict", "explain-readable"},
	}
	for _, pg := range pages[3:] {
		checkPage(t, p, pg.route, pg.want, pg.shot, false)
	}
	checkPage(t, p, "/", "times in", "dashboard-readable", false)
	waitJS(p, "the dashboard's charts", `document.querySelectorAll('main svg.chart text.x-label').length >= 3`)
	wantNone(t, p, "the dashboard's chart labels", checkCharts)
	p.Screenshot("dashboard-readable")

	p.SetViewport(390, 844, true)
	waitJS(p, "the phone layout", `window.innerWidth <= 400`)
	for _, pg := range pages {
		checkPage(t, p, pg.route, pg.want, pg.shot+"-phone", true)
	}
	// Charts are redrawn at the phone's width: their labels stay readable.
	p.Route("/")
	waitJS(p, "the dashboard's charts at phone width", `document.querySelectorAll('main svg.chart text.x-label').length >= 3 && document.querySelector('main svg.chart').viewBox.baseVal.width < 400`)
	wantNone(t, p, "the dashboard's chart labels on a phone", checkCharts)
	p.Screenshot("dashboard-readable-phone")
}

// TestClusterAndExplainPicker checks that the cluster page shows each
// node's version, workers and running executions as the API reports
// them, and that the explain page's job picker finds a job by a part of
// its name and chooses it with the keyboard or the mouse.
func TestClusterAndExplainPicker(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	slow, release := slowServer(t)
	failing := targetServer(t, http.StatusInternalServerError)
	createJobs(t, srv,
		cronJob(t, "batch", "slow", slow.URL, ""),
		cronJob(t, "etl", "export", failing.URL, "*/3 * * * * ?"),
		cronJob(t, longGroup, longName, slow.URL, ""))
	if _, err := srv.Client.RunJob(ctx, "batch", "slow", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	running := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "batch", JobName: "slow", Outcomes: []string{"running"}})
	failed := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "etl", JobName: "export", Outcomes: []string{"failed"}})
	nodes, err := srv.Client.Nodes(ctx)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("Nodes = %+v, %v; want one node", nodes, err)
	}
	node := nodes[0]
	if node.Version == "" || node.Workers < 1 || node.Running != 1 || node.ID != running.NodeID {
		t.Fatalf("the API lists node %+v; want its version, workers and the one running execution", node)
	}

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/cluster", servertest.AdminName, srv.AdminPassword)
	row := fmt.Sprintf(`tr[data-node=%q]`, node.ID)
	p.WaitText(row, node.Version)
	cells := browsertest.Get(p, "reading the node's row", chromedp.Evaluate[map[string]string](fmt.Sprintf(`(() => {
		const heads = [...document.querySelectorAll('main thead th')].map(th => th.innerText.trim());
		const cells = [...document.querySelector(%q).querySelectorAll('td')].map(td => td.innerText.trim());
		return Object.fromEntries(heads.map((h, i) => [h, cells[i]]));
	})()`, row)))
	for col, want := range map[string]string{"Version": node.Version, "Workers": fmt.Sprint(node.Workers), "Running": "1"} {
		if cells[col] != want {
			t.Errorf("the cluster page's %s column shows %q, want %q (row %v)", col, cells[col], want, cells)
		}
	}
	p.WaitText(`[data-testid="nodes-running"] .value`, "1")
	p.Screenshot("cluster-nodes")
	// The running count opens the node's running executions.
	p.ClickText(row+" td a", "1")
	p.WaitText(fmt.Sprintf(`tr[data-id=%q]`, running.ID), "batch/slow")
	release()

	// The picker lists the jobs matching what is typed; the keyboard
	// chooses one, and the instant is next.
	p.Route("/explain")
	p.Click(`input[name="job"]`)
	p.WaitText(`.picker-list`, "batch/slow")
	p.Fill(`input[name="job"]`, "expo")
	waitJS(p, "the list to keep the matching job", `(() => { const o = [...document.querySelectorAll('.picker-list [role="option"]')]; return o.length === 1 && o[0].dataset.key === 'etl/export'; })()`)
	p.Screenshot("explain-picker")
	p.Keys("moving down the list", kb.ArrowDown)
	waitJS(p, "the job highlighted", `document.querySelector('.picker-list [aria-selected="true"]')?.dataset.key === 'etl/export'`)
	p.Keys("choosing the job with the keyboard", kb.Enter)
	waitJS(p, "the job chosen", `document.querySelector('input[name="job"]').value === 'etl/export' && document.querySelector('.picker-list').hidden`)
	setValue(p, `input[name="at"]`, browsertest.Get(p, "formatting the fire time", chromedp.Evaluate[string](fmt.Sprintf(`(() => {
		const d = new Date(%d), p = n => String(n).padStart(2, '0');
		return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds());
	})()`, failed.ScheduledTime.UnixMilli()))))
	// The browser draws the instant's input in its locale's format; the
	// hint under it repeats the instant in the console's. The input's
	// value drops whole-minute seconds ("…T15:20", not "…T15:20:00"),
	// which the console's format keeps.
	waitJS(p, "the instant repeated in the console's format", `(() => {
		let at = document.querySelector('input[name="at"]').value;
		if (at.length === 16) at += ':00';
		const zone = new Intl.DateTimeFormat('en-GB', { timeZoneName: 'short' }).formatToParts(new Date(at)).find(p => p.type === 'timeZoneName').value;
		return document.querySelector('[data-testid="instant-echo"]').textContent === '= ' + at.replace('T', ' ') + ' ' + zone;
	})()`)
	p.ClickText("button", "Explain")
	p.WaitText(`[data-testid="verdict"]`, "Fired at")
	// A search that matches nothing says so; the mouse chooses too.
	p.Fill(`input[name="job"]`, "no-such-job")
	p.WaitText(`.picker-list`, "No job matches.")
	p.Fill(`input[name="job"]`, "european")
	p.WaitText(`.picker-list`, longName)
	p.Click(fmt.Sprintf(`.picker-list [data-key="%s/%s"]`, longGroup, longName))
	waitJS(p, "the job chosen with the mouse", fmt.Sprintf(`document.querySelector('input[name="job"]').value === '%s/%s'`, longGroup, longName))
	p.SetViewport(390, 844, true)
	p.Click(`input[name="job"]`)
	p.Fill(`input[name="job"]`, "a")
	p.WaitText(`.picker-list`, longName)
	p.Screenshot("explain-picker-phone")
}
