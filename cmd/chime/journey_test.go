package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/mailtest"
)

// endpoint is an HTTP endpoint for http jobs to call: it answers every
// request with one status and body, and counts the requests by the value
// of their "at" query parameter.
type endpoint struct {
	*httptest.Server
	mu    sync.Mutex
	total int
	at    map[string]int
}

func newEndpoint(t *testing.T, status int, body string) *endpoint {
	t.Helper()
	e := &endpoint{at: make(map[string]int)}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.total++
		if at := r.URL.Query().Get("at"); at != "" {
			e.at[at]++
		}
		e.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(e.Close)
	return e
}

// count returns how many requests the endpoint answered.
func (e *endpoint) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.total
}

// hitsAt returns the requests counted by their "at" parameter.
func (e *endpoint) hitsAt() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.at)
}

// executions returns the job's executions (up to a page of 500), newest
// first, as GET /api/v1/executions?job= lists them.
func (p *serverProcess) executions(t *testing.T, token, job string) []api.Execution {
	t.Helper()
	var list api.ExecutionList
	if status := p.call(t, http.MethodGet, "/api/v1/executions?limit=500&job="+job, token, nil, &list); status != http.StatusOK {
		t.Fatalf("GET /api/v1/executions?job=%s = %d", job, status)
	}
	return list.Executions
}

// finished returns the executions that are no longer running.
func finished(execs []api.Execution) []api.Execution {
	return slices.DeleteFunc(slices.Clone(execs), func(e api.Execution) bool { return e.Outcome == "running" })
}

// onDatabases runs test in a parallel subtest on a fresh database of each
// of the dialects ("sqlite", "postgres", "mysql") dbtest provides.
func onDatabases(t *testing.T, dialects []string, test func(t *testing.T, databaseURL string)) {
	t.Helper()
	for _, db := range dbtest.Databases() {
		if !slices.Contains(dialects, db.Dialect) {
			continue
		}
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			test(t, db.URL(t))
		})
	}
}

// everySecond is a cron schedule firing every second.
var everySecond = map[string]any{"kind": "cron", "expression": "* * * * * ?", "time_zone": "UTC"}

// cliJobsYAML is a jobs file for chime apply; %s is the endpoint's URL.
const cliJobsYAML = `jobs:
  - group: demo
    name: cli
    type: http
    http: {url: "%s/cli"}
    triggers: [{schedule: {kind: cron, expression: "* * * * * ?"}}]
`

// TestJourney is a new user's first hour with chime server, on the real
// process: start it (with an SMTP server for alerts), log in with the
// printed password, create an HTTP job with the requests README's curl
// commands send, watch it run, read its history, get one e-mail when a
// job fails after its retries, and do the same with the CLI (chime login,
// apply -f, executions list).
func TestJourney(t *testing.T) {
	t.Parallel()
	onDatabases(t, []string{"sqlite", "postgres"}, journey)
}

func journey(t *testing.T, databaseURL string) {
	mail := mailtest.Start(t, &mailtest.Options{TLS: mailtest.StartTLS, User: "chime", Password: "mail-secret"})
	ok := newEndpoint(t, http.StatusOK, "pong")
	broken := newEndpoint(t, http.StatusInternalServerError, "upstream down")
	p := startServerProcess(t, processOptions{
		databaseURL: databaseURL,
		// The server trusts the mail server's self-signed certificate as
		// it would a real one: through its system roots, which
		// SSL_CERT_FILE replaces. Nothing in chime skips verification.
		env: []string{"SSL_CERT_FILE=" + mail.CAFile, "CHIME_SMTP_PASSWORD=mail-secret"},
		args: []string{
			"--smtp-host", mail.Host, "--smtp-port", strconv.Itoa(mail.Port), "--smtp-tls", "starttls",
			"--smtp-username", "chime", "--smtp-from", "chime <chime@example.com>", "--alert-email", "ops@example.com",
			// As README says: the endpoints listen on 127.0.0.1, which
			// HTTP jobs may not reach unless allowed.
			"--egress-allow", "127.0.0.1",
		},
	})
	p.waitReady(t)
	password := p.adminPassword(t)
	token := p.login(t, password)

	// Create a job calling the endpoint every second. PUT is an upsert:
	// sending it again changes nothing.
	ping := map[string]any{
		"type":     "http",
		"http":     map[string]any{"url": ok.URL + "/ping", "timeout": "5s"},
		"triggers": []any{map[string]any{"schedule": everySecond}},
		"retry":    map[string]any{"max_attempts": 3, "delay": "2s"},
	}
	var created, again api.Job
	if status := p.call(t, http.MethodPut, "/api/v1/jobs/demo/ping", token, ping, &created); status != http.StatusCreated || created.Version == 0 {
		t.Fatalf("PUT /api/v1/jobs/demo/ping = %d %+v, want 201 and a version", status, created)
	}
	if status := p.call(t, http.MethodPut, "/api/v1/jobs/demo/ping", token, ping, &again); status != http.StatusOK || again.Version != created.Version {
		t.Errorf("the same PUT again = %d, version %d; want 200 and version %d", status, again.Version, created.Version)
	}

	// Watch it run, then read its history and one execution's output.
	var job api.Job
	waitUntil(t, "demo/ping's status to show a success", func() bool {
		p.call(t, http.MethodGet, "/api/v1/jobs/demo/ping", token, nil, &job)
		return job.Status != nil && job.Status.LastSuccess != nil
	})
	if job.Status.NextFireTime == nil || job.Status.Failing || job.Status.LastRun == nil {
		t.Errorf("status of demo/ping = %+v, want a last run, a next fire time and not failing", job.Status)
	}
	runs := finished(p.executions(t, token, "demo/ping"))
	if len(runs) == 0 {
		t.Fatal("the history has no finished run of demo/ping")
	}
	run := runs[0]
	if run.Outcome != "succeeded" || run.Attempt != 1 || run.FirstID != run.ID || run.TriggerName != "ping-0" ||
		run.ScheduledTime.Nanosecond() != 0 || run.Manual {
		t.Errorf("latest run = %+v, want a scheduled first attempt of trigger ping-0 at a whole second that succeeded", run)
	}
	var full api.Execution
	if status := p.call(t, http.MethodGet, "/api/v1/executions/"+run.ID, token, nil, &full); status != http.StatusOK || !strings.Contains(full.Output, "\npong") {
		t.Errorf("GET /api/v1/executions/%s = %d, output %q; want the endpoint's answer", run.ID, status, full.Output)
	}

	// A job that fires once, now, and whose endpoint fails: two attempts
	// a second apart, linked in the history, then one e-mail.
	reportJob := map[string]any{
		"type":     "http",
		"http":     map[string]any{"url": broken.URL + "/report"},
		"triggers": []any{map[string]any{"schedule": map[string]any{"kind": "once"}}},
		"retry":    map[string]any{"max_attempts": 2, "backoff": "fixed", "delay": "1s", "jitter": 0},
	}
	var refused api.Error
	if status := p.call(t, http.MethodPut, "/api/v1/jobs/demo/report", token, reportJob, &refused); status != http.StatusCreated {
		t.Fatalf("PUT /api/v1/jobs/demo/report = %d %+v, want 201", status, refused)
	}
	var attempts []api.Execution
	waitUntil(t, "two finished attempts of demo/report", func() bool {
		attempts = finished(p.executions(t, token, "demo/report"))
		return len(attempts) >= 2
	})
	slices.Reverse(attempts) // oldest first
	first := attempts[0]
	for i, a := range attempts {
		if a.Attempt != i+1 || a.FirstID != first.ID || a.Outcome != "failed" || !strings.Contains(a.Error, "500") {
			t.Errorf("attempt %d = %+v, want attempt %d of %s, failed with the 500", i, a, i+1, first.ID)
		}
	}
	if len(attempts) != 2 || broken.count() != 2 {
		t.Errorf("%d attempts recorded, %d requests made; want 2 of each", len(attempts), broken.count())
	}
	var linked []api.Execution
	p.call(t, http.MethodGet, "/api/v1/executions/"+attempts[len(attempts)-1].ID+"/attempts", token, nil, &linked)
	if len(linked) != 2 || linked[0].ID != first.ID || linked[1].ID != attempts[1].ID {
		t.Errorf("attempts of the last attempt = %+v, want both, first first", linked)
	}
	waitUntil(t, "the failure e-mail", func() bool { return len(mail.Messages()) > 0 })

	// The same with the CLI: log in, apply a file, read the history.
	cliToken := cliLogin(t, p.url(""), password)
	flags := []string{"--server", p.url(""), "--token", cliToken}
	file := writeFile(t, "jobs.yaml", fmt.Sprintf(cliJobsYAML, ok.URL))
	out, _, err := execChime(t, "", append([]string{"apply", "-f", file, "--yes"}, flags...)...)
	if err != nil || !strings.Contains(out, "created job demo/cli\n") {
		t.Fatalf("chime apply = %v:\n%s", err, out)
	}
	var cliRun api.Execution
	waitUntil(t, "a run of demo/cli", func() bool {
		runs := finished(p.executions(t, token, "demo/cli"))
		if len(runs) > 0 {
			cliRun = runs[len(runs)-1]
		}
		return len(runs) > 0
	})
	out, _, err = execChime(t, "", append([]string{"executions", "list", "--job", "demo/cli"}, flags...)...)
	if row := `(?m)^` + regexp.QuoteMeta(cliRun.ID) + ` +demo/cli +1 +succeeded +`; err != nil || !regexp.MustCompile(row).MatchString(out) {
		t.Errorf("chime executions list = %v, want a row matching %s:\n%s", err, row, out)
	}

	// Pause the schedules and stop the node, which delivers the alerts
	// still queued: the mail server then has every e-mail it will get.
	for _, name := range []string{"ping", "cli"} {
		if status := p.call(t, http.MethodPost, "/api/v1/jobs/demo/"+name+"/pause", token, nil, nil); status/100 != 2 {
			t.Errorf("pausing demo/%s = %d", name, status)
		}
	}
	p.stop(t)
	msgs := mail.Messages()
	if len(msgs) != 1 {
		t.Fatalf("the mail server received %d e-mails, want 1: %+v", len(msgs), msgs)
	}
	m := msgs[0]
	if !slices.Equal(m.EnvelopeTo, []string{"ops@example.com"}) || !m.OverTLS || m.User != "chime" {
		t.Errorf("e-mail to %v, over TLS %v, as %q; want to ops@example.com over TLS as chime", m.EnvelopeTo, m.OverTLS, m.User)
	}
	if !strings.Contains(m.Subject, "demo.report") || !strings.Contains(m.Body, "500") || !strings.Contains(m.Body, attempts[1].ID) {
		t.Errorf("e-mail %q:\n%s\nwant the job, the last attempt %s and its error", m.Subject, m.Body, attempts[1].ID)
	}
}

// TestServerCluster runs two `chime server` processes on one database: a
// job created through one node's API fires once per scheduled time across
// both, both APIs see it and its history, both nodes are listed alive, and
// when one node stops the other goes on firing.
func TestServerCluster(t *testing.T) {
	t.Parallel()
	onDatabases(t, []string{"postgres", "mysql"}, clusterOfTwo)
}

func clusterOfTwo(t *testing.T, databaseURL string) {
	tick := newEndpoint(t, http.StatusOK, "tock")
	node := func(id string) *serverProcess {
		return startServerProcess(t, processOptions{databaseURL: databaseURL, args: []string{"--node-id", id, "--check-in-interval", "500ms"}})
	}
	// Both start at once on the empty database: exactly one creates the
	// admin and prints its password.
	a, b := node("node-a"), node("node-b")
	a.waitReady(t)
	b.waitReady(t)
	var password string
	waitUntil(t, "both nodes to log their start", func() bool {
		return strings.Contains(a.output(), "chime server started") && strings.Contains(b.output(), "chime server started")
	})
	for _, p := range []*serverProcess{a, b} {
		if _, after, found := strings.Cut(p.output(), firstStartLine); found {
			if password != "" {
				t.Fatal("both nodes created an admin")
			}
			password = strings.Fields(after)[0]
		}
	}
	if password == "" {
		t.Fatal("neither node printed the admin's password")
	}
	tokenA, tokenB := a.login(t, password), b.login(t, password)

	job := map[string]any{
		"type":     "http",
		"http":     map[string]any{"url": tick.URL + "/tick?at={{.ScheduledTime.Unix}}&node={{.NodeID}}"},
		"triggers": []any{map[string]any{"schedule": everySecond}},
	}
	var created, seen api.Job
	if status := a.call(t, http.MethodPut, "/api/v1/jobs/cluster/tick", tokenA, job, &created); status != http.StatusCreated {
		t.Fatalf("PUT through node-a = %d, want 201", status)
	}
	if status := b.call(t, http.MethodGet, "/api/v1/jobs/cluster/tick", tokenB, nil, &seen); status != http.StatusOK || seen.Version != created.Version {
		t.Errorf("GET through node-b = %d, version %d; want 200 and version %d", status, seen.Version, created.Version)
	}

	waitUntil(t, "5 firings", func() bool { return len(finished(b.executions(t, tokenB, "cluster/tick"))) >= 5 })
	viaB := finished(b.executions(t, tokenB, "cluster/tick"))
	viaA := a.executions(t, tokenA, "cluster/tick")
	for _, e := range viaB {
		if !slices.ContainsFunc(viaA, func(o api.Execution) bool { return o.ID == e.ID }) {
			t.Errorf("node-a's history lacks execution %s that node-b lists", e.ID)
		}
	}
	checkOncePerSecond(t, viaB, tick.hitsAt())
	var nodes []api.Node
	b.call(t, http.MethodGet, "/api/v1/nodes", tokenB, nil, &nodes)
	for _, id := range []string{"node-a", "node-b"} {
		if !slices.ContainsFunc(nodes, func(n api.Node) bool { return n.ID == id && n.Alive }) {
			t.Errorf("GET /api/v1/nodes = %+v, want %s alive", nodes, id)
		}
	}

	// Node A stops; node B fires on alone.
	a.stop(t)
	stopped := time.Now()
	waitUntil(t, "3 firings by node-b after node-a stopped", func() bool {
		n := 0
		for _, e := range finished(b.executions(t, tokenB, "cluster/tick")) {
			if e.NodeID == "node-b" && e.ScheduledTime.After(stopped) {
				n++
			}
		}
		return n >= 3
	})
	if status := b.call(t, http.MethodPost, "/api/v1/jobs/cluster/tick/pause", tokenB, nil, nil); status/100 != 2 {
		t.Fatalf("pausing through node-b = %d", status)
	}
	// Once paused, every request the endpoint got has its execution
	// recorded (the runner records it before it runs the job) and
	// finished.
	var all []api.Execution
	var hits map[string]int
	waitUntil(t, "the last firings to finish", func() bool {
		hits = tick.hitsAt()
		all = b.executions(t, tokenB, "cluster/tick")
		return len(finished(all)) == len(all) && len(all) >= len(hits)
	})
	checkOncePerSecond(t, all, hits)
	if len(hits) != len(all) {
		t.Errorf("the endpoint was called for %d scheduled times, the history has %d executions", len(hits), len(all))
	}
}

// checkOncePerSecond checks a history of an every-second job: one
// succeeded execution per second from the first scheduled time to the
// last, each of which called the endpoint exactly once (hits counts the
// calls by scheduled time in Unix seconds).
func checkOncePerSecond(t *testing.T, execs []api.Execution, hits map[string]int) {
	t.Helper()
	bySecond := make(map[int64]api.Execution, len(execs))
	var lo, hi int64
	for i, e := range execs {
		sec := e.ScheduledTime.Unix()
		if prev, dup := bySecond[sec]; dup {
			t.Errorf("scheduled time %s ran twice: on %s (%s) and %s (%s)", e.ScheduledTime, prev.NodeID, prev.ID, e.NodeID, e.ID)
		}
		bySecond[sec] = e
		if e.Outcome != "succeeded" {
			t.Errorf("execution %+v did not succeed", e)
		}
		if n := hits[strconv.FormatInt(sec, 10)]; n != 1 {
			t.Errorf("the endpoint was called %d times for scheduled time %s, want once", n, e.ScheduledTime)
		}
		if i == 0 || sec < lo {
			lo = sec
		}
		if i == 0 || sec > hi {
			hi = sec
		}
	}
	if want := hi - lo + 1; int64(len(bySecond)) != want {
		t.Errorf("%d scheduled times from %s to %s, want one for each of the %d seconds",
			len(bySecond), time.Unix(lo, 0).UTC(), time.Unix(hi, 0).UTC(), want)
	}
}

// TestServerProcessBadInput sends bad requests to the real process: each
// is answered with a 4xx naming the problem, and nothing changes.
func TestServerProcessBadInput(t *testing.T) {
	t.Parallel()
	p := startServerProcess(t, processOptions{})
	p.waitReady(t)
	token := p.login(t, p.adminPassword(t))

	// A job whose trigger never fires in practice, so its state is still.
	job := func(edit func(j map[string]any, sc map[string]any)) map[string]any {
		sc := map[string]any{"kind": "cron", "expression": "0 0 0 1 1 ? 2199", "time_zone": "Europe/Berlin"}
		j := map[string]any{
			"type":        "http",
			"description": "kept as it is",
			"http":        map[string]any{"url": "http://127.0.0.1:9/"},
			"triggers":    []any{map[string]any{"schedule": sc}},
		}
		if edit != nil {
			edit(j, sc)
		}
		return j
	}
	if status := p.call(t, http.MethodPut, "/api/v1/jobs/demo/nightly", token, job(nil), nil); status != http.StatusCreated {
		t.Fatalf("PUT of a good job = %d, want 201", status)
	}
	get := func(path string) (int, string) {
		t.Helper()
		var raw json.RawMessage
		status := p.call(t, http.MethodGet, path, token, nil, &raw)
		return status, string(raw)
	}
	_, before := get("/api/v1/jobs/demo/nightly")

	tests := []struct {
		name   string
		method string
		path   string
		token  string
		body   any
		status int
		code   api.ErrorCode
		field  string
	}{
		{
			name: "invalid cron", method: http.MethodPut, path: "/api/v1/jobs/demo/nightly", token: token,
			body:   job(func(_, sc map[string]any) { sc["expression"] = "0 0 25 * * ?" }),
			status: http.StatusBadRequest, code: api.CodeInvalidArgument, field: "triggers[0].schedule.expression",
		},
		{
			name: "unknown time zone", method: http.MethodPut, path: "/api/v1/jobs/demo/nightly", token: token,
			body:   job(func(_, sc map[string]any) { sc["time_zone"] = "Mars/Olympus_Mons" }),
			status: http.StatusBadRequest, code: api.CodeInvalidArgument, field: "triggers[0].schedule.time_zone",
		},
		{
			name: "wrong JSON type", method: http.MethodPut, path: "/api/v1/jobs/demo/nightly", token: token,
			body:   job(func(j, _ map[string]any) { j["retry"] = map[string]any{"max_attempts": "two"} }),
			status: http.StatusBadRequest, code: api.CodeInvalidArgument, field: "retry.max_attempts",
		},
		{
			name: "oversized body", method: http.MethodPut, path: "/api/v1/jobs/demo/nightly", token: token,
			body:   job(func(j, _ map[string]any) { j["description"] = strings.Repeat("x", 2<<20) }),
			status: http.StatusRequestEntityTooLarge, code: api.CodeTooLarge,
		},
		{
			name: "missing auth", method: http.MethodPut, path: "/api/v1/jobs/demo/nightly",
			body:   job(func(j, _ map[string]any) { j["description"] = "changed without a login" }),
			status: http.StatusUnauthorized, code: api.CodeUnauthenticated,
		},
		{
			name: "unknown token", method: http.MethodDelete, path: "/api/v1/jobs/demo/nightly", token: "not-a-token",
			status: http.StatusUnauthorized, code: api.CodeUnauthenticated,
		},
		{
			name: "invalid cron in a new job", method: http.MethodPut, path: "/api/v1/jobs/demo/other", token: token,
			body:   job(func(_, sc map[string]any) { sc["expression"] = "every day" }),
			status: http.StatusBadRequest, code: api.CodeInvalidArgument, field: "triggers[0].schedule.expression",
		},
		{
			// The harness allows loopback only; this is link-local.
			name: "cloud metadata URL", method: http.MethodPut, path: "/api/v1/jobs/demo/nightly", token: token,
			body: job(func(j, _ map[string]any) {
				j["http"] = map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}
			}),
			status: http.StatusBadRequest, code: api.CodeInvalidArgument, field: "http.url",
		},
		{
			name: "not JSON", method: http.MethodPost, path: "/api/v1/jobs", token: token,
			body:   []byte(`{"group": "demo", "name": "other",`),
			status: http.StatusBadRequest, code: api.CodeInvalidArgument,
		},
	}
	for _, tt := range tests {
		var e api.Error
		status := p.call(t, tt.method, tt.path, tt.token, tt.body, &e)
		if status != tt.status || e.Code != tt.code || e.Field != tt.field || e.Message == "" {
			t.Errorf("%s: %s %s = %d %+v, want %d, code %s, field %q and a message",
				tt.name, tt.method, tt.path, status, e, tt.status, tt.code, tt.field)
		}
	}

	if _, after := get("/api/v1/jobs/demo/nightly"); after != before {
		t.Errorf("the job changed after refused requests:\nbefore %s\nafter  %s", before, after)
	}
	if status, body := get("/api/v1/jobs/demo/other"); status != http.StatusNotFound {
		t.Errorf("GET of the job never created = %d %s, want 404", status, body)
	}
	var list api.JobList
	if p.call(t, http.MethodGet, "/api/v1/jobs", token, nil, &list); len(list.Jobs) != 1 {
		t.Errorf("GET /api/v1/jobs lists %d jobs, want 1", len(list.Jobs))
	}
}
