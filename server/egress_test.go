package server_test

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/jobs/egress"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/servertest"
)

// counter is a real HTTP server on addr that counts its requests and
// answers with handler.
type counter struct {
	*httptest.Server
	hits atomic.Int64
}

func newCounter(t *testing.T, addr string, handler http.HandlerFunc) *counter {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	c := &counter{}
	c.Server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		handler(w, r)
	})}}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "chime_fires_total 7") }

// redirectTo answers every request with a 307 to target, which keeps a
// POST a POST.
func redirectTo(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}
}

// startEgressServer starts a server on SQLite with the egress rules cfg,
// servertest's loopback default left out.
func startEgressServer(t *testing.T, cfg egress.Config) *servertest.Server {
	t.Helper()
	if len(cfg.Allow) == 0 && len(cfg.Deny) == 0 {
		cfg.Deny = []string{"*.nothing.invalid"} // keeps servertest from allowing loopback
	}
	return servertest.Start(t, &servertest.Options{Config: server.Config{DatabaseURL: dbtest.SQLiteURL(t), Egress: cfg}})
}

// runOnce creates job and runs it once, returning its finished execution.
func runOnce(t *testing.T, srv *servertest.Server, job api.Job) *api.Execution {
	t.Helper()
	ctx := t.Context()
	if _, err := srv.Client.CreateJob(ctx, job); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := srv.Client.RunJob(ctx, job.Group, job.Name, api.RunRequest{})
	if err != nil || len(acc.ExecutionIDs) != 1 {
		t.Fatalf("RunJob = %+v, %v", acc, err)
	}
	return waitFinished(t, srv, acc.ExecutionIDs[0])
}

// waitFinished polls an execution until it finishes.
func waitFinished(t *testing.T, srv *servertest.Server, id string) *api.Execution {
	t.Helper()
	var e *api.Execution
	waitUntil(t, "execution "+id+" to finish", func() bool {
		got, err := srv.Server.GetExecution(t.Context(), id)
		if err != nil {
			return false
		}
		e = got
		return got.Outcome != "running"
	})
	return e
}

// waitUntil polls cond until it holds, failing the test after 20s.
// Polling is how a test sees the node's work in the background.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// scrape returns the node's /metrics page.
func scrape(t *testing.T, srv *servertest.Server) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func rawJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEgressRefusesLoopbackByDefault(t *testing.T) {
	t.Parallel()
	metrics := newCounter(t, "127.0.0.1:0", ok)
	srv := startEgressServer(t, egress.Config{})
	// The host is a template, so saving cannot check it: the connection
	// is refused when the job runs.
	e := runOnce(t, srv, api.Job{
		Group: "ssrf", Name: "metrics", Type: "http",
		HTTP: rawJSON(t, map[string]any{"url": "http://{{.Params.target}}/metrics"}),
		Data: map[string]any{"target": metrics.Listener.Addr().String()},
	})
	want := "egress to " + metrics.Listener.Addr().String() +
		" refused: loopback addresses are denied by default; allow with egress_allow"
	if e.Outcome != "failed" || !strings.Contains(e.Error, want) {
		t.Errorf("execution %s: %q, want failed with %q", e.Outcome, e.Error, want)
	}
	if n := metrics.hits.Load(); n != 0 {
		t.Errorf("the server's endpoint saw %d requests, want none", n)
	}
}

func TestEgressAllowedExplicitly(t *testing.T) {
	t.Parallel()
	metrics := newCounter(t, "127.0.0.1:0", ok)
	srv := startEgressServer(t, egress.Config{Allow: []string{"127.0.0.1/32"}})
	e := runOnce(t, srv, api.Job{
		Group: "ops", Name: "metrics", Type: "http",
		HTTP: rawJSON(t, map[string]any{"url": metrics.URL + "/metrics"}),
	})
	if e.Outcome != "succeeded" || !strings.Contains(e.Output, "chime_fires_total 7") {
		t.Errorf("execution %s (%s), output %q; want succeeded with the page", e.Outcome, e.Error, e.Output)
	}
}

// TestEgressRefusesRedirects has an allowed address redirect HTTP jobs and
// webhooks to a refused one, 127.0.0.2, loopback too.
func TestEgressRefusesRedirects(t *testing.T) {
	t.Parallel()
	hidden := newCounter(t, "127.0.0.2:0", ok)
	redirector := newCounter(t, "127.0.0.1:0", redirectTo(hidden.URL+"/metrics"))
	srv := startEgressServer(t, egress.Config{Allow: []string{"127.0.0.1"}})

	e := runOnce(t, srv, api.Job{
		Group: "ops", Name: "redirected", Type: "http",
		HTTP: rawJSON(t, map[string]any{"url": redirector.URL + "/"}),
	})
	want := "following a redirect: egress to " + hidden.Listener.Addr().String() +
		" refused: loopback addresses are denied by default; allow with egress_allow"
	if e.Outcome != "failed" || !strings.Contains(e.Error, want) {
		t.Errorf("execution %s: %q, want failed with %q", e.Outcome, e.Error, want)
	}

	ctx := t.Context()
	if err := srv.Client.PutAlertSettings(ctx, api.AlertSettings{DefaultWebhooks: []string{redirector.URL + "/hook"}}); err != nil {
		t.Fatalf("PutAlertSettings: %v", err)
	}
	before := redirector.hits.Load()
	if err := srv.Client.TestAlert(ctx); err != nil {
		t.Fatalf("TestAlert: %v", err)
	}
	waitUntil(t, "the test alert to fail", func() bool {
		return strings.Contains(scrape(t, srv), "\nchime_alerts_failed_total 1\n")
	})
	if redirector.hits.Load() != before+1 || hidden.hits.Load() != 0 {
		t.Errorf("redirector saw %d new requests and the hidden server %d; want 1 and 0",
			redirector.hits.Load()-before, hidden.hits.Load())
	}
}

func TestEgressRefusedWhenSaved(t *testing.T) {
	t.Parallel()
	srv := startEgressServer(t, egress.Config{Allow: []string{"10.1.0.0/16"}, Deny: []string{"*.corp.example"}})
	ctx := t.Context()
	tests := []struct {
		name  string
		job   api.Job
		field string
		msg   string
	}{
		{
			name:  "loopback URL",
			job:   api.Job{Type: "http", HTTP: rawJSON(t, map[string]any{"url": "http://127.0.0.1:8080/metrics"})},
			field: "http.url",
			msg:   "egress to 127.0.0.1 refused: loopback addresses are denied by default; allow with egress_allow",
		},
		{
			name:  "metadata service",
			job:   api.Job{Type: "http", HTTP: rawJSON(t, map[string]any{"url": "http://169.254.169.254/latest/meta-data/{{.JobName}}"})},
			field: "http.url",
			msg:   "link-local addresses are denied by default",
		},
		{
			name:  "localhost",
			job:   api.Job{Type: "http", HTTP: rawJSON(t, map[string]any{"url": "http://localhost:8080/"})},
			field: "http.url",
			msg:   "egress to localhost refused",
		},
		{
			name:  "denied name",
			job:   api.Job{Type: "http", HTTP: rawJSON(t, map[string]any{"url": "https://vault.corp.example/v1/secret"})},
			field: "http.url",
			msg:   `denied by the rule "*.corp.example"`,
		},
		{
			name: "private webhook",
			job: api.Job{Type: "http", HTTP: rawJSON(t, map[string]any{"url": "https://example.com/"}),
				Alerts: &api.JobAlerts{Webhooks: []string{"https://hooks.example.com/x", "http://10.2.0.1/hook"}}},
			field: "alerts.webhooks[1]",
			msg:   "private addresses are denied by default",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.job.Group, tt.job.Name = "egress", "job"+string(rune('a'+i))
			_, err := srv.Client.CreateJob(ctx, tt.job)
			var ae *api.Error
			if !errors.As(err, &ae) || ae.Code != api.CodeInvalidArgument || ae.Field != tt.field || !strings.Contains(ae.Message, tt.msg) {
				t.Fatalf("CreateJob: %v, want invalid_argument on %s saying %q", err, tt.field, tt.msg)
			}
			if _, err := srv.Client.GetJob(ctx, tt.job.Group, tt.job.Name); !errors.As(err, &ae) || ae.Code != api.CodeNotFound {
				t.Errorf("GetJob after the refusal: %v, want not_found", err)
			}
		})
	}

	// Allowed: an allowed network, a public name, a name left for the
	// connection to judge.
	for i, u := range []string{"http://10.1.2.3:9000/", "https://example.com/", "http://{{.Params.host}}/"} {
		j := api.Job{Group: "egress", Name: "fine" + string(rune('a'+i)), Type: "http", HTTP: rawJSON(t, map[string]any{"url": u})}
		if _, err := srv.Client.CreateJob(ctx, j); err != nil {
			t.Errorf("CreateJob with %s: %v", u, err)
		}
	}

	err := srv.Client.PutAlertSettings(ctx, api.AlertSettings{DefaultWebhooks: []string{"http://[::1]:9000/hook"}})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeInvalidArgument || ae.Field != "default_webhooks[0]" {
		t.Errorf("PutAlertSettings: %v, want invalid_argument on default_webhooks[0]", err)
	}

	// The API answers 400, naming the field.
	status, answer, _ := rawCall(t, srv, http.MethodPost, api.Version+"/jobs", map[string]any{
		"group": "egress", "name": "raw", "type": "http", "http": map[string]any{"url": "http://0.0.0.0:8080/"},
	})
	if msg, _ := answer["message"].(string); status != http.StatusBadRequest || answer["field"] != "http.url" ||
		!strings.Contains(msg, "egress to 0.0.0.0 refused") {
		t.Errorf("POST /jobs: %d %v, want 400 on http.url", status, answer)
	}
}

func TestEgressConfigRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		cfg  server.Config
		want string
	}{
		{"bad rule", server.Config{Egress: egress.Config{Allow: []string{"10.0.0.0/8", "10.0.0.0/40"}}},
			`Egress.Allow[1] "10.0.0.0/40": not a CIDR network`},
		{"refused default webhook", server.Config{Alert: alert.Config{DefaultWebhooks: []string{"http://127.0.0.1:9/hook"}}},
			"Alert.DefaultWebhooks[0]: egress to 127.0.0.1 refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.cfg.DatabaseURL = dbtest.SQLiteURL(t)
			s, err := server.New(t.Context(), tt.cfg)
			if err == nil {
				_ = s.Close()
			}
			if !errors.Is(err, server.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want ErrInvalidConfig saying %q", err, tt.want)
			}
		})
	}
}
