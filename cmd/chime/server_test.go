package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/secret"
	"github.com/chime-scheduler/chime/server/sso"
)

// chimeBinary is the chime command, built (without -race) into a
// directory TestMain removes, for the tests that run `chime server` as a
// real process.
var chimeBinary *nodeproc.Binary

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

// runTests runs the tests with chimeBinary building into a temporary
// directory, removed when they end.
func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "chime-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// chime login saves tokens under XDG_CONFIG_HOME: no test may write
	// to the configuration of whoever runs the tests.
	if err := os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	chimeBinary = nodeproc.NewBinary("github.com/chime-scheduler/chime/cmd/chime", dir)
	return m.Run()
}

func TestServerConfigPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "server.yaml")
	yaml := "workers: 4\nnode_id: from-file\nlisten: ':9000'\nsmtp:\n  host: mail.example.com\nalerts:\n  webhooks: [https://hooks.example.com/a]\n" +
		"retention:\n  per_job: 200\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CHIME_WORKERS": "6", "CHIME_NODE_ID": "from-env", "CHIME_ALERTS_RATE_LIMIT": "30s", "CHIME_RETENTION_MAX_PER_JOB": "5000"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	cmd := newServerCmd()
	env["CHIME_EGRESS_DENY"] = "*.evil.example,192.0.2.0/24"
	if err := cmd.Flags().Parse([]string{"--node-id", "from-flag", "--alert-email", "a@example.com,b@example.com",
		"--egress-allow", "127.0.0.1/32,10.0.0.0/8", "--egress-allow", "*.corp.example"}); err != nil {
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
		{"retention.per_job", fmt.Sprint(cfg.Retention.PerJob), "200", sourceFile},
		{"retention.max_per_job", fmt.Sprint(cfg.Retention.MaxPerJob), "5000", sourceEnv},
		{"egress_allow", strings.Join(cfg.EgressAllow, " "), "127.0.0.1/32 10.0.0.0/8 *.corp.example", sourceFlag},
		{"egress_deny", strings.Join(cfg.EgressDeny, " "), "*.evil.example 192.0.2.0/24", sourceEnv},
	}
	for _, c := range checks {
		if c.got != c.want || sources[c.key] != c.from {
			t.Errorf("%s = %q from %s, want %q from %s", c.key, c.got, sources[c.key], c.want, c.from)
		}
	}
	if got := len(effectiveValues(cfg, cfg.toServer(nil))); got != len(serverSettings()) {
		t.Errorf("effectiveValues has %d settings, want all %d", got, len(serverSettings()))
	}
	if got := cfg.toServer(nil).Egress; !slices.Equal(got.Allow, cfg.EgressAllow) || !slices.Equal(got.Deny, cfg.EgressDeny) {
		t.Errorf("toServer().Egress = %+v, want the egress_allow and egress_deny settings", got)
	}
	want := server.Retention{MaxAge: 720 * time.Hour, PerJob: 200, MaxPerJob: 5000}
	if got := cfg.toServer(nil).Retention; got != want {
		t.Errorf("toServer().Retention = %+v, want %+v", got, want)
	}
}

// TestServerSSO reads the single sign-on settings from flags, the client
// secret from a file, and hands the server its configuration.
func TestServerSSO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "oidc")
	if err := os.WriteFile(secretFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := newServerCmd()
	err := cmd.Flags().Parse([]string{
		"--sso-issuer", "https://keycloak.example.com/realms/acme", "--sso-client-id", "chime",
		"--sso-client-secret-file", secretFile, "--sso-redirect-url", "https://chime.example.com/auth/oidc/callback",
		"--sso-scope", "openid,email,groups", "--sso-name", "Acme SSO",
		"--sso-role", `group "ops" -> admin`, "--sso-role", `group "billing-team" -> operator of billing.* payroll`,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := loadServerConfig(cmd.Flags(), serverSettings(), "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("loadServerConfig: %v", err)
	}
	got := cfg.toServer(nil).SSO
	if got == nil {
		t.Fatal("toServer().SSO is nil")
	}
	want := &sso.Config{
		Issuer: "https://keycloak.example.com/realms/acme", ClientID: "chime", ClientSecret: "s3cret",
		RedirectURL: "https://chime.example.com/auth/oidc/callback", Scopes: []string{"openid", "email", "groups"},
		GroupsClaim: "groups", UserClaim: "email", Name: "Acme SSO",
		Rules: []sso.Rule{
			{Group: "ops", Role: api.RoleAdmin},
			{Group: "billing-team", Role: api.RoleOperator, Scopes: []string{"billing.*", "payroll"}},
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(sso.Config{}, "HTTPClient", "Logger", "Now")); diff != "" {
		t.Errorf("toServer().SSO (-want +got):\n%s", diff)
	}
	none, _, err := loadServerConfig(newServerCmd().Flags(), serverSettings(), "", func(string) (string, bool) { return "", false })
	if err != nil || none.toServer(nil).SSO != nil {
		t.Errorf("without sso.issuer: SSO = %+v, %v; want nil", none.toServer(nil).SSO, err)
	}
}

// TestServerSecretKeyFile reads the secret key from the file the config
// file names, its final newline dropped, and hands it to the server.
func TestServerSecretKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := secret.GenerateKey()
	keyFile := filepath.Join(dir, "secret.key")
	file := filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("secret_key_file: "+keyFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, sources, err := loadServerConfig(newServerCmd().Flags(), serverSettings(), file, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("loadServerConfig: %v", err)
	}
	if got := cfg.toServer(nil).SecretKey; got != key || sources["secret_key_file"] != sourceFile {
		t.Errorf("SecretKey = %q (secret_key_file from %s), want the file's key from the file", got, sources["secret_key_file"])
	}
	for _, st := range serverSettings() {
		if st.key != "secret_key" {
			continue
		}
		if st.mask == nil || maskValue(effectiveValues(cfg, cfg.toServer(nil))[st.key], st.mask).String() == key {
			t.Error("the effective configuration would show secret_key unmasked")
		}
	}
}

func TestServerConfigRetention(t *testing.T) {
	t.Parallel()
	noEnv := func(string) (string, bool) { return "", false }
	tests := []struct {
		name string
		args []string
		want server.Retention
	}{
		{"defaults", nil, server.Retention{MaxAge: 720 * time.Hour, PerJob: 1000, MaxPerJob: 10000}},
		{"lower cap lowers the default floor", []string{"--retention-max-per-job", "50"}, server.Retention{MaxAge: 720 * time.Hour, PerJob: 50, MaxPerJob: 50}},
		{"no cap", []string{"--retention-max-per-job=-1", "--retention-per-job", "20000"}, server.Retention{MaxAge: 720 * time.Hour, PerJob: 20000, MaxPerJob: -1}},
		{"both set", []string{"--retention-max-age", "24h", "--retention-per-job", "5", "--retention-max-per-job", "5"}, server.Retention{MaxAge: 24 * time.Hour, PerJob: 5, MaxPerJob: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := newServerCmd()
			if err := cmd.Flags().Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg, _, err := loadServerConfig(cmd.Flags(), serverSettings(), "", noEnv)
			if err != nil {
				t.Fatalf("loadServerConfig: %v", err)
			}
			if got := cfg.toServer(nil).Retention; got != tt.want {
				t.Errorf("Retention = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestServerConfigLeases checks executors.lease and alerts.lease: the
// server's defaults, and what a flag, a variable or the file says.
func TestServerConfigLeases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "leases.yaml")
	if err := os.WriteFile(file, []byte("executors:\n  lease: 40s\nalerts:\n  lease: 3m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		file          string
		env           map[string]string
		args          []string
		executor, alr time.Duration
	}{
		{name: "defaults", executor: 15 * time.Second, alr: time.Minute},
		{name: "flags", args: []string{"--executor-lease", "5s", "--alert-lease", "90s"}, executor: 5 * time.Second, alr: 90 * time.Second},
		{name: "env", env: map[string]string{"CHIME_EXECUTORS_LEASE": "1s", "CHIME_ALERTS_LEASE": "21s"}, executor: time.Second, alr: 21 * time.Second},
		{name: "file", file: file, executor: 40 * time.Second, alr: 3 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			cmd := newServerCmd()
			if err := cmd.Flags().Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg, _, err := loadServerConfig(cmd.Flags(), serverSettings(), tt.file, lookup)
			if err != nil {
				t.Fatalf("loadServerConfig: %v", err)
			}
			if run := cfg.toServer(nil); run.ExecutorLease != tt.executor || run.AlertLease != tt.alr {
				t.Errorf("ExecutorLease, AlertLease = %s, %s; want %s, %s", run.ExecutorLease, run.AlertLease, tt.executor, tt.alr)
			}
		})
	}
}

// TestServerConfigJobVersions checks job_versions: 50 by default, and
// what the flag says.
func TestServerConfigJobVersions(t *testing.T) {
	t.Parallel()
	noEnv := func(string) (string, bool) { return "", false }
	for args, want := range map[string]int{"": server.DefaultJobVersions, "--job-versions=7": 7} {
		cmd := newServerCmd()
		if args != "" {
			if err := cmd.Flags().Parse([]string{args}); err != nil {
				t.Fatal(err)
			}
		}
		cfg, _, err := loadServerConfig(cmd.Flags(), serverSettings(), "", noEnv)
		if err != nil {
			t.Fatalf("loadServerConfig(%q): %v", args, err)
		}
		if got := cfg.toServer(nil).JobVersions; got != want {
			t.Errorf("JobVersions with %q = %d, want %d", args, got, want)
		}
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
		{name: "floor above the cap", file: write("retention.yaml", "retention:\n  per_job: 300\n  max_per_job: 200\n"),
			want: "retention.per_job 300 is more than retention.max_per_job 200"},
		{name: "floor above the default cap", env: map[string]string{"CHIME_RETENTION_PER_JOB": "20000"},
			want: "retention.per_job 20000 is more than retention.max_per_job 10000"},
		{name: "zero cap", args: []string{"--retention-max-per-job", "0"}, want: "retention.max_per_job 0"},
		{name: "negative floor", args: []string{"--retention-per-job=-5"}, want: "retention.per_job -5 is negative"},
		{name: "short executor lease", args: []string{"--executor-lease", "500ms"}, want: "executors.lease 500ms: want at least 1s"},
		{name: "negative executor lease in file", file: write("executors.yaml", "executors:\n  lease: -5s\n"), want: "executors.lease -5s: want at least 1s"},
		{name: "short alert lease", env: map[string]string{"CHIME_ALERTS_LEASE": "20s"},
			want: "alerts.lease 20s: want more than twice the alert timeout (10s)"},
		{name: "bad alert lease in file", file: write("alerts.yaml", "alerts:\n  lease: soon\n"), want: "alerts.lease"},
		{name: "no job versions", args: []string{"--job-versions", "0"}, want: "job_versions 0: want at least 1"},
		{name: "egress rule with a port", args: []string{"--egress-allow", "10.0.0.0/8,db.corp.example:5432"},
			want: `egress_allow[1] "db.corp.example:5432": not an IP address, and a host name has no colon`},
		{name: "bad egress network in file", file: write("egress.yaml", "egress_deny: [10.0.0.0/99]\n"),
			want: `egress_deny[0] "10.0.0.0/99": not a CIDR network`},
		{name: "short admin password", env: map[string]string{"CHIME_ADMIN_PASSWORD": "hunter2"},
			want: "admin_password: the password must be at least 12 characters"},
		{name: "both admin passwords", env: map[string]string{"CHIME_ADMIN_PASSWORD": "correct horse battery"},
			args: []string{"--admin-password-file", write("pw", "correct horse battery")}, want: "admin_password and admin_password_file are both set"},
		{name: "empty admin password file", args: []string{"--admin-password-file", write("empty", "\n")}, want: "admin_password_file " + filepath.Join(dir, "empty") + " is empty"},
		{name: "missing admin password file", args: []string{"--admin-password-file", filepath.Join(dir, "nope")}, want: "admin_password_file: open " + filepath.Join(dir, "nope")},
		{name: "short secret key", env: map[string]string{"CHIME_SECRET_KEY": "c2hvcnQ="},
			want: "secret_key: invalid secret key: decodes to 5 bytes, want 32"},
		{name: "secret key file not base64", args: []string{"--secret-key-file", write("key", "not a key\n")},
			want: "secret_key_file " + filepath.Join(dir, "key") + ": invalid secret key: not base64"},
		{name: "both secret keys", env: map[string]string{"CHIME_SECRET_KEY": secret.GenerateKey()},
			args: []string{"--secret-key-file", write("key2", secret.GenerateKey())}, want: "secret_key and secret_key_file are both set"},
		{name: "empty secret key file", args: []string{"--secret-key-file", write("key3", "\n")}, want: "secret_key_file " + filepath.Join(dir, "key3") + " is empty"},
		{name: "bad role mapping", args: []string{"--sso-issuer", "https://idp.example.com", "--sso-role", `group "ops" -> root`},
			want: `sso.roles[0]: role mapping "group \"ops\" -> root": unknown role "root"`},
		{name: "scoped admin mapping", file: write("sso.yaml", "sso:\n  issuer: https://idp.example.com\n  roles: ['group \"*\" -> viewer', 'group ops -> admin of billing.*']\n"),
			want: "sso.roles[1]: role mapping \"group ops -> admin of billing.*\": only an operator can be limited to job groups"},
		{name: "sso without issuer", args: []string{"--sso-client-id", "chime"}, want: "sso.client_id or sso.roles is set without sso.issuer"},
		{name: "both client secrets", env: map[string]string{"CHIME_SSO_CLIENT_SECRET": "s3cret"},
			args: []string{"--sso-client-secret-file", write("oidc", "s3cret")}, want: "sso.client_secret and sso.client_secret_file are both set"},
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

// TestServerFatalErrorAsJSON checks that with --log-format json an error
// that stops `chime server`, even in its configuration, is written as one
// JSON log record, and not printed again.
func TestServerFatalErrorAsJSON(t *testing.T) {
	t.Parallel()
	_, stderr, err := execChime(t, "", "server", "--log-format", "json", "--workers", "0")
	var reported *fatalError
	if !errors.As(err, &reported) {
		t.Fatalf("chime server --workers 0 = %v, want a *fatalError", err)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(stderr), &rec); err != nil {
		t.Fatalf("stderr %q is not one JSON record: %v", stderr, err)
	}
	if want := "chime server: workers 0: want at least 1"; rec["level"] != "ERROR" || rec["error"] != want {
		t.Errorf("record = %v, want level ERROR and error %q", rec, want)
	}

	_, stderr, err = execChime(t, "", "server", "--workers", "0")
	if err == nil || errors.As(err, &reported) || stderr != "" {
		t.Errorf("chime server --workers 0 (text) = %v, stderr %q; want a plain error for main to print", err, stderr)
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
		{maskWebhook, "https://hooks.slack.com/services/T0/B0/abc", "https://hooks.slack.com/********"},
		{maskWebhook, "https://x.example/h?token=1", "https://x.example/********"},
		{maskWebhook, "not a URL", "********"},
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

// processOptions configure startServerProcess.
type processOptions struct {
	// databaseURL is the server's --database-url. Defaults to a fresh
	// SQLite file.
	databaseURL string
	// env is added to the test's environment, after
	// CHIME_EGRESS_ALLOW=127.0.0.0/8,::1: the endpoints of the tests
	// listen on loopback, which the server refuses to call by default.
	env []string
	// args follow --listen and --database-url.
	args []string
	// addr is the server's --listen. Defaults to a free port.
	addr string
}

// startServerProcess starts `chime server` on a free port. It kills the
// process when the test ends, unless the test stopped it.
func startServerProcess(t *testing.T, opts processOptions) *serverProcess {
	t.Helper()
	addr := opts.addr
	if addr == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr = ln.Addr().String()
		ln.Close() // the server listens on it; another process taking it meanwhile is unlikely
	}
	db := opts.databaseURL
	if db == "" {
		db = dbtest.SQLiteURL(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	chime, err := chimeBinary.Path(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chime, append([]string{"server", "--listen", addr, "--database-url", db}, opts.args...)...)
	cmd.Env = append(append(os.Environ(), "CHIME_EGRESS_ALLOW=127.0.0.0/8,::1"), opts.env...)
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

// call sends a request with a bearer token (none if "") and decodes the
// answer into out; it returns the status. A body of type []byte is sent
// as it is, any other is encoded as JSON.
func (p *serverProcess) call(t *testing.T, method, path, token string, body, out any) int {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
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

// waitReady waits until the node answers /readyz with 200.
func (p *serverProcess) waitReady(t *testing.T) {
	t.Helper()
	waitUntil(t, "chime server at "+p.addr+" to be ready", func() bool {
		resp, err := http.Get(p.url("/readyz"))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// firstStartLine precedes the admin's password in the output of a first
// start.
const firstStartLine = "created the user \"admin\" with the password"

// adminPassword returns the password the first start printed. Call it
// once the node is ready: the password is printed before it serves.
func (p *serverProcess) adminPassword(t *testing.T) string {
	t.Helper()
	var password string
	waitUntil(t, "the first start's admin password", func() bool {
		_, after, found := strings.Cut(p.output(), firstStartLine)
		if fields := strings.Fields(after); found && len(fields) > 0 {
			password = fields[0]
		}
		return password != ""
	})
	return password
}

// login logs in as the admin, as README's curl command does, and returns
// the session token.
func (p *serverProcess) login(t *testing.T, password string) string {
	t.Helper()
	var session api.Session
	status := p.call(t, http.MethodPost, "/api/v1/auth/login", "", map[string]string{"username": "admin", "password": password}, &session)
	if status != http.StatusOK || session.Token == "" {
		t.Fatalf("POST /api/v1/auth/login = %d %+v, want 200 and a token", status, session)
	}
	return session.Token
}

// stop sends SIGTERM and waits for a clean exit and the last log line.
func (p *serverProcess) stop(t *testing.T) {
	t.Helper()
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

// exit waits for the process to exit by itself and returns how it did.
func (p *serverProcess) exit(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("chime server did not exit within 30s")
		return nil
	}
}

// waitUntil polls cond every 50ms for up to 30s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond) // another process's work shows only through its API
	}
}

// TestServerProcess checks what `chime server` does as a process: the
// effective configuration logged with secrets masked, the first admin's
// password printed once, and a graceful stop on SIGTERM. What it serves is
// the journey tests' (journey_test.go).
func TestServerProcess(t *testing.T) {
	t.Parallel()
	p := startServerProcess(t, processOptions{
		env:  []string{"CHIME_WORKERS=3", "CHIME_SMTP_PASSWORD=hunter2", "CHIME_SMTP_USERNAME=chime"},
		args: []string{"--log-format", "json", "--node-id", "proc-1"},
	})
	p.waitReady(t)

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

	// The first start printed the admin's password, once, and it logs in.
	password := p.adminPassword(t)
	if n := strings.Count(p.output(), password); n != 1 {
		t.Errorf("the admin's password appears %d times in the output, want once", n)
	}
	p.login(t, password)

	p.stop(t)
}

// effectiveConfig returns the attributes of the "effective configuration"
// record of a JSON log.
func effectiveConfig(t *testing.T, logs string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"effective configuration"`) {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("config log line %q: %v", line, err)
			}
			return rec
		}
	}
	t.Fatal("no \"effective configuration\" record in the log")
	return nil
}

// TestServerPortTaken checks that `chime server` listens before it
// touches the database: with its port taken it exits non-zero with a JSON
// error record naming the address, creates no admin and prints no
// password, and the next start, with the port free, prints the password.
func TestServerPortTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := taken.Addr().String()
	db := dbtest.SQLiteURL(t)
	p := startServerProcess(t, processOptions{addr: addr, databaseURL: db, args: []string{"--log-format", "json"}})
	var exitErr *exec.ExitError
	if err := p.exit(t); !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Fatalf("chime server with its port taken exited with %v, want exit status 1", err)
	}
	out := p.output()
	if strings.Contains(out, firstStartLine) {
		t.Errorf("chime server printed an admin password although it could not listen:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last map[string]any
	for _, line := range lines {
		if err := json.Unmarshal([]byte(line), &last); err != nil {
			t.Errorf("output line %q is not a JSON record: %v", line, err)
		}
	}
	wantErr := "server: cannot listen on " + addr + ": "
	if last["level"] != "ERROR" || !strings.HasPrefix(fmt.Sprint(last["error"]), wantErr) {
		t.Errorf("last record = %v, want level ERROR and an error starting %q", last, wantErr)
	}
	path, _ := strings.CutPrefix(db, "sqlite:")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database file exists after a start that could not listen (%v), want it untouched", err)
	}

	taken.Close()
	p = startServerProcess(t, processOptions{addr: addr, databaseURL: db, args: []string{"--log-format", "json"}})
	p.waitReady(t)
	p.login(t, p.adminPassword(t))
	effective := effectiveConfig(t, p.output())
	for key, want := range map[string]string{
		"cluster.dead_after": "6s default", "cluster.check_in_interval": "2s default", "smtp.port": "587 default",
		"workers": "10 default", "admin_password": " default",
	} {
		g, _ := effective[key].(map[string]any)
		if got := fmt.Sprintf("%v %v", g["value"], g["from"]); got != want {
			t.Errorf("logged %s = %q, want %q", key, got, want)
		}
	}
	if g, _ := effective["node_id"].(map[string]any); g["value"] == "" || g["from"] != sourceDefault {
		t.Errorf("logged node_id = %v, want the ID the node chose, from default", g)
	}
	p.stop(t)
}

// TestServerAdminPassword checks that the first admin gets the password of
// CHIME_ADMIN_PASSWORD or --admin-password-file, that nothing is printed,
// and that a password the server would refuse stops it before it starts.
func TestServerAdminPassword(t *testing.T) {
	t.Parallel()
	const password = "correct horse battery"
	file := filepath.Join(t.TempDir(), "admin-password")
	if err := os.WriteFile(file, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts processOptions
		from string
	}{
		{"variable", processOptions{env: []string{"CHIME_ADMIN_PASSWORD=" + password}, args: []string{"--log-format", "json"}}, sourceEnv},
		{"file", processOptions{args: []string{"--log-format", "json", "--admin-password-file", file}}, sourceDefault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startServerProcess(t, tt.opts)
			p.waitReady(t)
			p.login(t, password)
			out := p.output()
			if strings.Contains(out, password) || strings.Contains(out, firstStartLine) {
				t.Errorf("the output shows the admin's password:\n%s", out)
			}
			g, _ := effectiveConfig(t, out)["admin_password"].(map[string]any)
			if got := fmt.Sprintf("%v %v", g["value"], g["from"]); got != "******** "+tt.from {
				t.Errorf("logged admin_password = %q, want %q", got, "******** "+tt.from)
			}
			p.stop(t)
		})
	}

	t.Run("too short", func(t *testing.T) {
		t.Parallel()
		db := dbtest.SQLiteURL(t)
		p := startServerProcess(t, processOptions{databaseURL: db, env: []string{"CHIME_ADMIN_PASSWORD=short"}})
		if err := p.exit(t); err == nil {
			t.Fatal("chime server with a short admin_password exited cleanly, want an error")
		}
		if want := "chime: chime server: admin_password: the password must be at least 12 characters"; !strings.Contains(p.output(), want) {
			t.Errorf("output = %q, want it to say %q", p.output(), want)
		}
		path, _ := strings.CutPrefix(db, "sqlite:")
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the database file exists after a refused start (%v), want it untouched", err)
		}
	})
}
