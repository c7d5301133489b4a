package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runMainEnv makes the test binary run chime's main instead of the tests,
// so that a test can start `chime server` as a real process without
// building the command first.
const runMainEnv = "CHIME_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestServerConfigPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "server.yaml")
	yaml := "workers: 4\nnode_id: from-file\nlisten: ':9000'\nsmtp:\n  host: mail.example.com\nalerts:\n  webhooks: [https://hooks.example.com/a]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CHIME_WORKERS": "6", "CHIME_NODE_ID": "from-env", "CHIME_ALERTS_RATE_LIMIT": "30s"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	cmd := newServerCmd()
	if err := cmd.Flags().Parse([]string{"--node-id", "from-flag", "--alert-email", "a@example.com,b@example.com"}); err != nil {
		t.Fatal(err)
	}
	cfg, sources, err := loadServerConfig(cmd.Flags(), serverSettings(), file, lookup)
	if err != nil {
		t.Fatalf("loadServerConfig: %v", err)
	}
	checks := []struct {
		key, got, want, from string
	}{
		{"node_id", cfg.NodeID, "from-flag", sourceFlag},
		{"workers", fmt.Sprint(cfg.Workers), "6", sourceEnv},
		{"listen", cfg.Listen, ":9000", sourceFile},
		{"smtp.host", cfg.SMTP.Host, "mail.example.com", sourceFile},
		{"alerts.webhooks", strings.Join(cfg.Alerts.Webhooks, " "), "https://hooks.example.com/a", sourceFile},
		{"alerts.emails", strings.Join(cfg.Alerts.Emails, " "), "a@example.com b@example.com", sourceFlag},
		{"alerts.rate_limit", cfg.Alerts.RateLimit.String(), "30s", sourceEnv},
		{"database_url", cfg.DatabaseURL, "sqlite:chime.db", sourceDefault},
		{"retention.max_age", cfg.Retention.MaxAge.String(), "720h0m0s", sourceDefault},
	}
	for _, c := range checks {
		if c.got != c.want || sources[c.key] != c.from {
			t.Errorf("%s = %q from %s, want %q from %s", c.key, c.got, sources[c.key], c.want, c.from)
		}
	}
	if got := len(effectiveValues(cfg)); got != len(serverSettings()) {
		t.Errorf("effectiveValues has %d settings, want all %d", got, len(serverSettings()))
	}
}

func TestServerConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noEnv := func(string) (string, bool) { return "", false }
	tests := []struct {
		name string
		file string
		env  map[string]string
		args []string
		want string
	}{
		{name: "unknown file key", file: write("typo.yaml", "wrokers: 3\n"), want: `unknown setting "wrokers"`},
		{name: "missing file", file: filepath.Join(dir, "missing.yaml"), want: "missing.yaml"},
		{name: "bad duration in env", env: map[string]string{"CHIME_SHUTDOWN_TIMEOUT": "soon"}, want: "shutdown_timeout"},
		{name: "bad number in file", file: write("bad.yaml", "workers: many\n"), want: "workers"},
		{name: "bad log level", args: []string{"--log-level", "loud"}, want: "log.level"},
		{name: "no workers", args: []string{"--workers", "0"}, want: "workers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := noEnv
			if tt.env != nil {
				lookup = func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			}
			cmd := newServerCmd()
			if err := cmd.Flags().Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			_, _, err := loadServerConfig(cmd.Flags(), serverSettings(), tt.file, lookup)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("loadServerConfig error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestMasks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mask func(string) string
		in   string
		want string
	}{
		{maskURL, "postgres://chime:s3cret@db:5432/chime?sslmode=disable", "postgres://chime:xxxxx@db:5432/chime?sslmode=disable"},
		{maskURL, "sqlite:chime.db", "sqlite:chime.db"},
		{maskURL, "mysql://root:pw@tcp(db:3306)/chime", "********"},
		{maskSecret, "hunter2", "********"},
		{maskSecret, "", ""},
		{maskWebhooks, "https://hooks.slack.com/services/T0/B0/abc,https://x.example/h?token=1", "https://hooks.slack.com/********,https://x.example/********"},
	}
	for _, tt := range tests {
		if got := tt.mask(tt.in); got != tt.want {
			t.Errorf("mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// serverProcess is `chime server` running as a child process.
type serverProcess struct {
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	logs bytes.Buffer
	done chan error
}

// startServerProcess starts `chime server` on a fresh SQLite file and a
// free port, with extra args and environment.
func startServerProcess(t *testing.T, env []string, args ...string) *serverProcess {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the server listens on it; another process taking it meanwhile is unlikely
	db := "sqlite:" + filepath.Join(t.TempDir(), "chime.db")
	cmd := exec.Command(os.Args[0], append([]string{"server", "--listen", addr, "--database-url", db}, args...)...)
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serverProcess{cmd: cmd, addr: addr, done: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting chime server: %v", err)
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
	}()
	go func() {
		<-copied
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("chime server's output:\n%s", p.output())
		}
	})
	return p
}

func (p *serverProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// url returns the server's URL for path.
func (p *serverProcess) url(path string) string { return "http://" + p.addr + path }

// call sends a JSON request with a bearer token and decodes the answer
// into out; it returns the status.
func (p *serverProcess) call(t *testing.T, method, path, token string, body, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.url(path), r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

// waitUntil polls cond every 50ms for up to 30s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestServerProcess(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "pong %s", r.URL.Query().Get("n"))
	}))
	defer target.Close()
	p := startServerProcess(t, []string{"CHIME_WORKERS=3", "CHIME_SMTP_PASSWORD=hunter2", "CHIME_SMTP_USERNAME=chime"},
		"--log-format", "json", "--node-id", "proc-1")

	waitUntil(t, "/readyz", func() bool {
		resp, err := http.Get(p.url("/readyz"))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	// The effective configuration is logged once, masked.
	logs := p.output()
	if strings.Contains(logs, "hunter2") {
		t.Error("the SMTP password appears in the log")
	}
	var effective map[string]any
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"effective configuration"`) {
			if err := json.Unmarshal([]byte(line), &effective); err != nil {
				t.Fatalf("config log line %q: %v", line, err)
			}
		}
	}
	for key, want := range map[string]string{"workers": "3 env", "node_id": "proc-1 flag", "smtp.password": "******** env", "listen": p.addr + " flag"} {
		g, _ := effective[key].(map[string]any)
		if got := fmt.Sprintf("%v %v", g["value"], g["from"]); got != want {
			t.Errorf("logged %s = %q, want %q", key, got, want)
		}
	}

	// The first start printed the admin's password, once.
	_, after, found := strings.Cut(logs, "created the user \"admin\" with the password")
	if !found {
		t.Fatalf("no admin password printed:\n%s", logs)
	}
	password := strings.Fields(after)[0]

	var session struct{ Token string }
	if status := p.call(t, http.MethodPost, "/api/v1/auth/login", "", map[string]string{"username": "admin", "password": password}, &session); status != http.StatusOK || session.Token == "" {
		t.Fatalf("login = %d, want 200 and a token", status)
	}
	job := map[string]any{
		"type":     "http",
		"http":     map[string]any{"url": target.URL + "/ping?n={{.Attempt}}"},
		"triggers": []any{map[string]any{"schedule": map[string]any{"kind": "cron", "expression": "* * * * * ?", "time_zone": "UTC"}}},
	}
	var created map[string]any
	if status := p.call(t, http.MethodPut, "/api/v1/jobs/demo/ping", session.Token, job, &created); status != http.StatusCreated {
		t.Fatalf("PUT job = %d %v, want 201", status, created)
	}
	var bad map[string]any
	job["triggers"] = []any{map[string]any{"schedule": map[string]any{"kind": "cron", "expression": "0 0 25 * * ?"}}}
	if status := p.call(t, http.MethodPut, "/api/v1/jobs/demo/bad", session.Token, job, &bad); status != http.StatusBadRequest || bad["field"] != "triggers[0].schedule.expression" {
		t.Errorf("PUT of a bad cron = %d %v, want 400 naming triggers[0].schedule.expression", status, bad)
	}

	var runs struct {
		Executions []struct {
			Outcome string `json:"outcome"`
			ID      string `json:"id"`
		} `json:"executions"`
	}
	waitUntil(t, "a run of demo/ping in the history", func() bool {
		p.call(t, http.MethodGet, "/api/v1/executions?job=demo/ping", session.Token, nil, &runs)
		return len(runs.Executions) > 0 && runs.Executions[len(runs.Executions)-1].Outcome == "succeeded"
	})
	var run struct{ Output string }
	p.call(t, http.MethodGet, "/api/v1/executions/"+runs.Executions[len(runs.Executions)-1].ID, session.Token, nil, &run)
	if !strings.Contains(run.Output, "pong 1") {
		t.Errorf("execution output = %q, want the endpoint's answer", run.Output)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("chime server exited with %v after SIGTERM, want a clean exit", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("chime server did not exit within 30s of SIGTERM")
	}
	if !strings.Contains(p.output(), "chime server stopped") {
		t.Error("no \"chime server stopped\" in the log")
	}
}
