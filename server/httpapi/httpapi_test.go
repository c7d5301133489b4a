package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func TestNewPanicsWithoutDependencies(t *testing.T) {
	t.Parallel()
	for name, build := range map[string]func(){
		"no service":       func() { New(nil, newRecordingAuthenticator(), nil) },
		"no authenticator": func() { New(newRecordingService(), nil, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: New did not panic", name)
				}
			}()
			build()
		}()
	}
}

func TestContentTypes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name, method, path, token, body string
		status                          int
		contentType                     string
	}{
		{"JSON answer", "GET", "/api/v1/jobs/g/n", "viewer-token", "", 200, "application/json"},
		{"JSON error", "GET", "/api/v1/jobs/g/missing", "viewer-token", "", 404, "application/json"},
		{"JSON list", "GET", "/api/v1/calendars", "viewer-token", "", 200, "application/json"},
		{"OpenAPI document", "GET", "/api/openapi.json", "", "", 200, "application/json"},
		{"health", "GET", "/healthz", "", "", 200, "text/plain; charset=utf-8"},
		{"readiness", "GET", "/readyz", "", "", 200, "text/plain; charset=utf-8"},
		{"no content", "DELETE", "/api/v1/calendars/c", "operator-token", "", 204, ""},
		{"JSON with charset accepted", "PUT", "/api/v1/alerts", "admin-token", `{"rate_limit":"5m"}`, 204, ""},
	}
	for _, tt := range tests {
		header := []string{}
		if tt.body != "" {
			header = []string{"Content-Type", "application/json; charset=utf-8"}
		}
		resp, raw := f.do(t, tt.method, tt.path, tt.token, tt.body, header...)
		if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != tt.contentType {
			t.Errorf("%s: status %d, Content-Type %q; want %d, %q; body %s",
				tt.name, resp.StatusCode, resp.Header.Get("Content-Type"), tt.status, tt.contentType, raw)
		}
	}
}

// TestEmptyListsAreArrays checks that a list the service returns as nil
// is encoded as [], not null.
func TestEmptyListsAreArrays(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for path, want := range map[string]string{
		"/api/v1/calendars":            "[]\n",
		"/api/v1/jobs/g/n/upcoming":    "[]\n",
		"/api/v1/jobs":                 `{"jobs":[]}` + "\n",
		"/api/v1/executions?node=none": `{"executions":[]}` + "\n",
	} {
		if _, raw := f.do(t, "GET", path, "viewer-token", ""); string(raw) != want {
			t.Errorf("GET %s = %q, want %q", path, raw, want)
		}
	}
}

// TestSecretsNotReturned checks that passwords never leave the API and
// token secrets leave it only on creation.
func TestSecretsNotReturned(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, raw := f.do(t, "GET", "/api/v1/users", "admin-token", ""); strings.Contains(string(raw), "password") || strings.Contains(string(raw), "-pw") {
		t.Errorf("user list shows passwords: %s", raw)
	}
	if _, raw := f.do(t, "POST", "/api/v1/users", "admin-token", `{"name":"u","role":"viewer","password":"s3cret"}`); strings.Contains(string(raw), "s3cret") {
		t.Errorf("created user shows its password: %s", raw)
	}
	if _, raw := f.do(t, "POST", "/api/v1/tokens", "admin-token", `{"name":"ci","role":"operator"}`); !strings.Contains(string(raw), "secret-shown-once") {
		t.Errorf("created token lacks its secret: %s", raw)
	}
}

func TestProbes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		readyErr error
		status   int
		message  string
	}{
		{"ready", nil, http.StatusOK, ""},
		{"not ready, said by the service", httpjson.Errorf(api.CodeUnavailable, "", "no lease yet"), http.StatusServiceUnavailable, "no lease yet"},
		{"not ready, internal error", errors.New("dial tcp 10.0.0.7:5432: connection refused"), http.StatusServiceUnavailable, "not ready; the server log has the details"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svc := newRecordingService()
			svc.readyErr = tt.readyErr
			f := newFixtureWith(t, svc, nil, false)
			if resp, raw := f.do(t, "GET", "/healthz", "", ""); resp.StatusCode != http.StatusOK || string(raw) != "ok\n" {
				t.Errorf("healthz: %d %q", resp.StatusCode, raw)
			}
			resp, raw := f.do(t, "GET", "/readyz", "", "")
			if resp.StatusCode != tt.status {
				t.Fatalf("readyz: status %d, want %d; body %s", resp.StatusCode, tt.status, raw)
			}
			if tt.status != http.StatusOK {
				if e := decodeError(t, resp, raw); e.Code != api.CodeUnavailable || e.Message != tt.message {
					t.Errorf("readyz error = %+v, want unavailable %q", e, tt.message)
				}
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		resp, raw := f.do(t, "GET", "/metrics", "", "")
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d, want 404", resp.StatusCode)
		}
		if e := decodeError(t, resp, raw); e.Code != api.CodeNotFound {
			t.Errorf("code = %s", e.Code)
		}
	})
	t.Run("handler", func(t *testing.T) {
		t.Parallel()
		metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write([]byte("chime_fires_total 7\n"))
		})
		f := newFixtureWith(t, newRecordingService(), &Options{Metrics: metrics}, false)
		resp, raw := f.do(t, "GET", "/metrics", "", "")
		if resp.StatusCode != http.StatusOK || string(raw) != "chime_fires_total 7\n" || resp.Header.Get("Content-Type") != "text/plain; version=0.0.4" {
			t.Errorf("status %d, Content-Type %q, body %q", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
		}
	})
}

// TestPanicRecovered checks that a panic below the API is answered 500
// with an api.Error, logged with its stack, and leaves the server serving.
func TestPanicRecovered(t *testing.T) {
	t.Parallel()
	svc := newRecordingService()
	svc.panicOn = "ListJobs"
	f := newFixtureWith(t, svc, nil, false)
	resp, raw := f.do(t, "GET", "/api/v1/jobs", "viewer-token", "")
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500; body %s", resp.StatusCode, raw)
	}
	if e := decodeError(t, resp, raw); e.Code != api.CodeInternal || strings.Contains(e.Message, "panics") {
		t.Errorf("error = %+v, want internal without the panic's text", e)
	}
	recs := f.logs.Messages("request panicked")
	if len(recs) != 1 || !strings.Contains(recs[0].Attrs["stack"].String(), "ListJobs") ||
		!strings.Contains(recs[0].Attrs["panic"].String(), "ListJobs panics") {
		t.Errorf("panic log = %+v", recs)
	}
	if resp, raw := f.do(t, "GET", "/api/v1/nodes", "viewer-token", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("after the panic: status %d; body %s", resp.StatusCode, raw)
	}
}

// TestRequestLog checks the one record per request, and that credentials
// never reach the log.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.do(t, "GET", "/api/v1/jobs", "operator-token", "")
	f.do(t, "DELETE", "/api/v1/jobs/g/n", "viewer-token", "")
	f.do(t, "POST", "/api/v1/auth/login", "", `{"username":"ada","password":"ada-pw"}`)
	f.do(t, "GET", "/healthz", "", "")
	// The executor protocol's requests are quiet, unless they fail.
	f.do(t, "POST", "/api/v1/executors/x1/poll", "executor-token", `{}`)
	f.do(t, "POST", "/api/v1/executors/x1/poll", "executor-token", `{"max": "ten"}`)

	recs := f.logs.Messages("http request")
	if len(recs) != 6 {
		t.Fatalf("%d request records, want 6: %+v", len(recs), recs)
	}
	want := []struct {
		level  slog.Level
		method string
		path   string
		status int64
		user   string
	}{
		{slog.LevelInfo, "GET", "/api/v1/jobs", 200, "otto"},
		{slog.LevelInfo, "DELETE", "/api/v1/jobs/g/n", 403, "vera"},
		{slog.LevelInfo, "POST", "/api/v1/auth/login", 200, "ada"},
		{slog.LevelDebug, "GET", "/healthz", 200, ""},
		{slog.LevelDebug, "POST", "/api/v1/executors/x1/poll", 200, "exa"},
		{slog.LevelInfo, "POST", "/api/v1/executors/x1/poll", 400, "exa"},
	}
	for i, w := range want {
		r := recs[i]
		if r.Level != w.level || r.Attrs["method"].String() != w.method || r.Attrs["path"].String() != w.path ||
			r.Attrs["status"].Int64() != w.status || r.Attrs["user"].String() != w.user {
			t.Errorf("record %d = %v %v, want %+v", i, r.Level, r.Attrs, w)
		}
		if d, ok := r.Attrs["duration"]; !ok || d.Kind() != slog.KindDuration {
			t.Errorf("record %d has no duration: %v", i, r.Attrs)
		}
	}
	for _, r := range f.logs.Records() {
		for k, v := range r.Attrs {
			s := v.String()
			if strings.Contains(s, "-token") || strings.Contains(s, "ada-pw") || strings.Contains(s, "session-") {
				t.Errorf("record %q logs a credential in %s: %s", r.Message, k, s)
			}
		}
	}
}

// TestUnknownRoutes checks that the mux's own answers are api.Errors too.
func TestUnknownRoutes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	resp, raw := f.do(t, "GET", "/api/v1/nope", "admin-token", "")
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: status %d; body %s", resp.StatusCode, raw)
	}
	if e := decodeError(t, resp, raw); e.Code != api.CodeNotFound || !strings.Contains(e.Message, "/api/v1/nope") {
		t.Errorf("unknown path: %+v", e)
	}

	resp, raw = f.do(t, "PATCH", "/api/v1/jobs/g/n", "admin-token", `{}`)
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("wrong method: status %d; body %s", resp.StatusCode, raw)
	}
	allow := resp.Header.Get("Allow")
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		if !strings.Contains(allow, m) {
			t.Errorf("Allow = %q, lacks %s", allow, m)
		}
	}
	if e := decodeError(t, resp, raw); !strings.Contains(e.Message, "PATCH") {
		t.Errorf("wrong method: %+v", e)
	}
	if calls := f.calls(); len(calls) != 0 {
		t.Errorf("calls = %+v, want none", calls)
	}
}
