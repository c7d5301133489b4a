package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
)

// The fuzz tests send every request type of the API, mutated, to a real
// server: on PostgreSQL when CHIME_TEST_POSTGRES_URL is set (the strictest
// of the databases about text), else on SQLite. Whatever the input, the
// answer is never a 5xx, an error is a well-formed api.Error, and a refused
// write leaves nothing behind. go test runs the seeds; to fuzz one for a
// while:
//
//	go test -run '^$' -fuzz '^FuzzPutJob$' -fuzztime 5m ./server/

// fuzzServer starts the server a fuzz test sends its inputs to, with a job
// fuzz/base whose HTTP target answers 200.
func fuzzServer(f *testing.F) *servertest.Server {
	f.Helper()
	cfg := server.Config{}
	if os.Getenv(dbtest.PostgresEnv) != "" {
		cfg.DatabaseURL = dbtest.PostgresURL(f)
	}
	srv := servertest.Start(f, &servertest.Options{Config: cfg})
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	f.Cleanup(target.Close)
	spec, err := json.Marshal(map[string]any{"url": target.URL})
	if err != nil {
		f.Fatal(err)
	}
	sched, err := json.Marshal(map[string]any{"kind": "cron", "expression": "0 0 3 * * ?", "time_zone": "UTC"})
	if err != nil {
		f.Fatal(err)
	}
	base := api.Job{Group: "fuzz", Name: "base", Type: "http", HTTP: spec, Triggers: []api.Trigger{{Schedule: sched}}}
	if _, err := srv.Client.CreateJob(f.Context(), base); err != nil {
		f.Fatal(err)
	}
	return srv
}

// fuzzSend sends one request as the admin and checks the answer: no 5xx,
// and an error that is an api.Error with a code and a message. It returns
// the status.
func fuzzSend(t *testing.T, srv *servertest.Server, method, path, rawQuery, body string) int {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path, u.RawPath, u.RawQuery = path, escapedPath(path), sendableQuery(rawQuery)
	req, err := http.NewRequestWithContext(t.Context(), method, u.String(), strings.NewReader(body))
	if err != nil {
		return 0 // not a request a client could send
	}
	req.Header.Set("Authorization", "Bearer "+srv.AdminToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 500 {
		t.Fatalf("%s %s with %q: status %d: %s", method, u, body, resp.StatusCode, raw)
	}
	if resp.StatusCode >= 400 {
		var e api.Error
		if err := json.Unmarshal(raw, &e); err != nil || e.Code == "" || e.Message == "" {
			t.Fatalf("%s %s: status %d with a body that is no api.Error: %s", method, u, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode
}

// sendableQuery percent-encodes the bytes of a raw query that cannot stand
// in a request line (spaces, control characters, non-ASCII), as any client
// would; the query means what it meant.
func sendableQuery(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if c := q[i]; c <= ' ' || c >= 0x7f || c == '#' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// fuzzPut PUTs body to path, where nothing is stored, and checks that the
// write is whole or nothing: a refused PUT leaves nothing to GET, an
// accepted one can be read back (and is deleted again for the next input).
func fuzzPut(t *testing.T, srv *servertest.Server, path, body string) {
	t.Helper()
	status := fuzzSend(t, srv, http.MethodPut, path, "", body)
	got := fuzzSend(t, srv, http.MethodGet, path, "", "")
	switch {
	case status >= 400 && got != http.StatusNotFound:
		t.Fatalf("PUT %s %q was refused (%d) but left something behind (GET: %d)", path, body, status, got)
	case status < 300 && got != http.StatusOK:
		t.Fatalf("PUT %s %q was accepted (%d) but cannot be read (GET: %d)", path, body, status, got)
	case status < 300:
		fuzzSend(t, srv, http.MethodDelete, path, "", "")
	}
}

// escapedPath escapes each segment of a path whose segments may hold
// anything, slashes included.
func escapedPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// segment joins fuzzed path segments into an API path, each escaped whole.
func segment(s string) string { return strings.ReplaceAll(s, "/", "%2F") }

// FuzzPutJob sends job bodies: one either is stored whole or leaves no
// trace.
func FuzzPutJob(f *testing.F) {
	for _, seed := range []string{
		`{"type":"http","http":{"url":"http://127.0.0.1:1/"},"triggers":[{"schedule":{"kind":"cron","expression":"*/5 * * * * ?","time_zone":"UTC"}}]}`,
		`{"type":"http","http":{"url":"http://127.0.0.1:1/"},"description":"a\u0000b"}`,
		`{"type":"http","http":{"url":"http://127.0.0.1:1/","body":"{{range 200000000}}{{end}}","timeout":"1s"}}`,
		`{"type":"http","http":{"url":"http://127.0.0.1:1/"},"triggers":[{"priority":3000000000,"schedule":{"kind":"cron","expression":"0 0 * * * ?"}}]}`,
		`{"type":"http","http":{"url":"http://127.0.0.1:1/"},"triggers":[{"schedule":{"kind":"cron","expression":"0 0 * * * ?","time_zone":"Local"}}]}`,
		`{"type":"http","http":{"url":"http://127.0.0.1:1/"},"triggers":[{"start_time":"0001-01-01T00:00:00Z","schedule":{"kind":"cron","expression":"0 0 25 * * ?"}}]}`,
		`{"type":"shell","shell":{"argv":["true"]}}`,
		`{"type":"http","retry":{"max_attempts":1000000000,"delay":"-5s"},"http":{"url":"http://127.0.0.1:1/"}}`,
	} {
		f.Add(seed)
	}
	srv := fuzzServer(f)
	const path = "/api/v1/jobs/fuzz/put"
	f.Fuzz(func(t *testing.T, body string) { fuzzPut(t, srv, path, body) })
}

// FuzzJobPaths sends the job routes that take no body with fuzzed keys and
// query strings.
func FuzzJobPaths(f *testing.F) {
	f.Add("fuzz", "base", "at=2025-06-01T02:00:00Z")
	f.Add("fuzz", "base", "at=0000-01-01T00:00:00Z")
	f.Add("fuzz", "base", "at=9999-12-31T23:59:59.999999999Z")
	f.Add("fuzz", "base", "count=1000")
	f.Add("fu\x00zz", "ba\xffse", "")
	f.Add("trail ", " lead", "count=-1")
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, group, name, query string) {
		base := "/api/v1/jobs/" + segment(group) + "/" + segment(name)
		for _, route := range []string{"", "/explain", "/upcoming"} {
			fuzzSend(t, srv, http.MethodGet, base+route, query, "")
		}
	})
}

// FuzzRunAndBackfill sends run and backfill bodies to an existing job.
func FuzzRunAndBackfill(f *testing.F) {
	f.Add(`{"params":{"reason":"manual check"}}`)
	f.Add(`{"params":{"reason":"\u0000"}}`)
	f.Add(`{"from":"2025-01-01T00:00:00Z","to":"2025-01-02T00:00:00Z"}`)
	f.Add(`{"from":"0001-01-01T00:00:00Z","to":"9999-12-31T23:59:59Z"}`)
	f.Add(`{"from":"2025-01-02T00:00:00Z","to":"2025-01-01T00:00:00Z"}`)
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		fuzzSend(t, srv, http.MethodPost, "/api/v1/jobs/fuzz/base/run", "", body)
		fuzzSend(t, srv, http.MethodPost, "/api/v1/jobs/fuzz/base/backfill", "", body)
	})
}

// FuzzListQueries sends the list routes' query strings.
func FuzzListQueries(f *testing.F) {
	for _, q := range []string{
		"job=fuzz/base&outcome=failed&from=2025-01-01T00:00:00Z&limit=10",
		"cursor=%00%ff&limit=99999999999999999999",
		"from=9999-12-31T23:59:59Z&to=0000-01-01T00:00:00Z",
		"q=%25&group=x&failing=maybe",
		"window=24h&bucket=-1s",
		"actor=%00&action=x",
	} {
		f.Add(q)
	}
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, query string) {
		for _, path := range []string{"/api/v1/jobs", "/api/v1/executions", "/api/v1/activity", "/api/v1/upcoming", "/api/v1/audit", "/api/v1/cron/explain"} {
			fuzzSend(t, srv, http.MethodGet, path, query, "")
		}
	})
}

// FuzzPutCalendar sends calendar bodies: one either is stored or leaves no
// trace.
func FuzzPutCalendar(f *testing.F) {
	f.Add(`{"name":"fz","calendar":{"type":"holiday","tz":"UTC","excluded_dates":["2025-12-25"]}}`)
	f.Add(`{"name":"fz","calendar":{"type":"daily","tz":"Local","range_start":"09:00:00.000","range_end":"08:00:00.000"}}`)
	f.Add(`{"name":"fz","description":"\u0000","calendar":{"type":"weekly","tz":"UTC"}}`)
	srv := fuzzServer(f)
	const path = "/api/v1/calendars/fz"
	f.Fuzz(func(t *testing.T, body string) { fuzzPut(t, srv, path, body) })
}

// FuzzAdminBodies sends the admin routes' bodies: users, tokens, alert
// settings, a calendar import and a login.
func FuzzAdminBodies(f *testing.F) {
	f.Add(`{"name":"fz","role":"viewer","password":"a long enough password"}`)
	f.Add(`{"name":"fz ","role":"superuser","password":"x"}`)
	f.Add(`{"name":"fz","role":"viewer","expires":"0001-01-01T00:00:00Z"}`)
	f.Add(`{"default_emails":["ops@example.com"],"default_webhooks":["http://127.0.0.1:1/"],"rate_limit":"-1s"}`)
	f.Add(`{"ics":"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n","dry_run":true}`)
	f.Add(`{"username":"admin","password":"\u0000"}`)
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		if fuzzSend(t, srv, http.MethodPost, "/api/v1/users", "", body) < 300 {
			fuzzSend(t, srv, http.MethodDelete, "/api/v1/users/fz", "", "")
		}
		fuzzSend(t, srv, http.MethodPost, "/api/v1/tokens", "", body)
		fuzzSend(t, srv, http.MethodPut, "/api/v1/alerts", "", body)
		fuzzSend(t, srv, http.MethodPost, "/api/v1/calendars/fzimport/import", "", body)
		fuzzSend(t, srv, http.MethodPost, "/api/v1/auth/login", "", body)
	})
}
