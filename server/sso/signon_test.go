package sso_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
	"github.com/chime-scheduler/chime/server/sso"
)

// provider is a local OpenID Connect provider (mockoidc) that can forge
// its ID tokens: while forge is set, the token endpoint's ID token is
// re-signed with a key the provider does not publish.
type provider struct {
	*mockoidc.MockOIDC
	forge atomic.Bool
}

// startProvider starts a provider on 127.0.0.1 for the test.
func startProvider(t *testing.T) *provider {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	forger, err := mockoidc.RandomKeypair(2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{MockOIDC: m}
	// mockoidc's sessions and key ID are not safe for concurrent use.
	var serial sync.Mutex
	err = m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			serial.Lock()
			defer serial.Unlock()
			if r.URL.Path != mockoidc.TokenEndpoint || !p.forge.Load() {
				next.ServeHTTP(w, r)
				return
			}
			rec := &recorder{header: make(http.Header)}
			next.ServeHTTP(rec, r)
			var body map[string]any
			if err := json.Unmarshal(rec.body.Bytes(), &body); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			raw, _ := body["id_token"].(string)
			claims := jwt.MapClaims{}
			if _, _, err := jwt.NewParser().ParseUnverified(raw, claims); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if body["id_token"], err = forger.SignJWT(claims); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(body)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return p
}

// recorder keeps a handler's answer.
type recorder struct {
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(int)             {}

// rules are the role mapping of the tests.
func rules(t *testing.T) []sso.Rule {
	t.Helper()
	var out []sso.Rule
	for _, s := range []string{
		`group "ops" -> admin`,
		`group "billing-team" -> operator of billing.*`,
		`group "readers" -> viewer`,
	} {
		r, err := sso.ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// skew is a clock the server checks ID tokens against: now plus an
// offset the test sets.
type skew struct{ offset atomic.Int64 }

func (s *skew) Now() time.Time { return time.Now().Add(time.Duration(s.offset.Load())) }

// startServer runs a chime server on dbURL with single sign-on through p.
func startServer(t *testing.T, p *provider, dbURL string, clock *skew) *servertest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Config()
	return servertest.Start(t, &servertest.Options{
		Listener: ln,
		Config: server.Config{
			DatabaseURL: dbURL,
			SSO: &sso.Config{
				Issuer:       cfg.Issuer,
				ClientID:     cfg.ClientID,
				ClientSecret: cfg.ClientSecret,
				RedirectURL:  "http://" + ln.Addr().String() + sso.CallbackPath,
				Scopes:       []string{"openid", "email", "groups"},
				Name:         "Mock IdP",
				Rules:        rules(t),
				Now:          clock.Now,
			},
		},
	})
}

// browser is an HTTP client with a cookie jar that follows redirects, as
// a browser does.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// get GETs u with c and returns the status and body.
func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// send makes a request with a JSON body (empty for none) and returns the
// status and body.
func send(t *testing.T, c *http.Client, method, u, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// signIn queues user at the provider and goes through the whole sign-on
// in c; it returns the callback's status and body.
func signIn(t *testing.T, p *provider, c *http.Client, base string, user mockoidc.User) (int, string) {
	t.Helper()
	p.QueueUser(user)
	return get(t, c, base+sso.LoginPath)
}

// me returns the caller c's session acts for.
func me(t *testing.T, c *http.Client, base string) api.User {
	t.Helper()
	status, body := get(t, c, base+"/api/v1/auth/me")
	if status != http.StatusOK {
		t.Fatalf("GET /api/v1/auth/me: %d %s", status, body)
	}
	var u api.User
	if err := json.Unmarshal([]byte(body), &u); err != nil {
		t.Fatal(err)
	}
	return u
}

// unverified is a user whose ID token says its e-mail address is not
// verified (MockUser leaves a false email_verified out).
type unverified struct{ *mockoidc.MockUser }

func (u unverified) Claims(scope []string, claims *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	return unverifiedClaims{IDTokenClaims: claims, Email: u.Email, Groups: u.Groups}, nil
}

type unverifiedClaims struct {
	*mockoidc.IDTokenClaims
	Email         string   `json:"email"`
	EmailVerified bool     `json:"email_verified"`
	Groups        []string `json:"groups"`
}

func user(name string, groups ...string) *mockoidc.MockUser {
	return &mockoidc.MockUser{Subject: "sub-" + name, Email: name + "@example.com", EmailVerified: true, Groups: groups}
}

// TestSignOn drives the authorization code flow of a real server against a
// local OpenID Connect provider over HTTP, on each database.
func TestSignOn(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			// A provider of its own: the forged-token case must not touch
			// the other databases' sign-ons, and mockoidc serves one
			// request at a time (see startProvider).
			p := startProvider(t)
			clock := &skew{}
			srv := startServer(t, p, db.URL(t), clock)
			ctx := t.Context()
			base := srv.URL
			for _, key := range [][2]string{{"billing.eu", "report"}, {"payroll", "report"}} {
				if _, err := srv.Client.CreateJob(ctx, api.Job{Group: key[0], Name: key[1], Type: "http",
					HTTP: []byte(`{"url":"http://127.0.0.1:9/"}`)}); err != nil {
					t.Fatal(err)
				}
			}

			// The login page learns of the provider.
			status, body := get(t, browser(t), base+"/api/v1/auth/methods")
			if status != http.StatusOK || !strings.Contains(body, `"name":"Mock IdP"`) || !strings.Contains(body, `"login_url":"/auth/oidc/login"`) {
				t.Errorf("GET /api/v1/auth/methods: %d %s", status, body)
			}

			t.Run("admin from the ops group", func(t *testing.T) {
				c := browser(t)
				if status, body := signIn(t, p, c, base, user("alice", "ops", "readers")); status != http.StatusOK {
					t.Fatalf("sign-on: %d %s", status, body)
				}
				if u := me(t, c, base); u.Name != "alice@example.com" || u.Role != api.RoleAdmin || len(u.Scopes) != 0 {
					t.Errorf("me = %+v, want alice@example.com, admin, unscoped", u)
				}
			})

			t.Run("scoped operator", func(t *testing.T) {
				c := browser(t)
				if status, body := signIn(t, p, c, base, user("Carol", "billing-team", "readers")); status != http.StatusOK {
					t.Fatalf("sign-on: %d %s", status, body)
				}
				u := me(t, c, base)
				if u.Name != "carol@example.com" || u.Role != api.RoleOperator || u.ScopeList() != "billing.*" {
					t.Errorf("me = %+v, want carol@example.com, operator of billing.*", u)
				}
				for _, tc := range []struct {
					name, method, path, body string
					want                     int
				}{
					{"pause in scope", "POST", "/api/v1/jobs/billing.eu/report/pause", "", http.StatusNoContent},
					{"resume in scope", "POST", "/api/v1/jobs/billing.eu/report/resume", "", http.StatusNoContent},
					{"create in scope", "POST", "/api/v1/jobs", `{"group":"billing.us","name":"new","type":"http","http":{"url":"http://127.0.0.1:9/"}}`, http.StatusCreated},
					{"pause out of scope", "POST", "/api/v1/jobs/payroll/report/pause", "", http.StatusForbidden},
					{"delete out of scope", "DELETE", "/api/v1/jobs/payroll/report", "", http.StatusForbidden},
					{"create out of scope", "POST", "/api/v1/jobs", `{"group":"payroll","name":"new","type":"http","http":{"url":"http://127.0.0.1:9/"}}`, http.StatusForbidden},
					{"batch half out of scope", "POST", "/api/v1/jobs/batch", `{"jobs":[{"group":"billing.x","name":"a","type":"http","http":{"url":"http://127.0.0.1:9/"}},{"group":"payroll","name":"a","type":"http","http":{"url":"http://127.0.0.1:9/"}}]}`, http.StatusForbidden},
					{"maintenance of every job", "POST", "/api/v1/maintenance", `{"reason":"upgrade"}`, http.StatusForbidden},
					{"calendar", "PUT", "/api/v1/calendars/holidays", `{"type":"annual","days":["12-25"]}`, http.StatusForbidden},
					{"read out of scope", "GET", "/api/v1/jobs/payroll/report", "", http.StatusOK},
				} {
					status, body := send(t, c, tc.method, base+tc.path, tc.body)
					if status != tc.want {
						t.Errorf("%s: %s %s = %d %s, want %d", tc.name, tc.method, tc.path, status, body, tc.want)
					}
					if tc.want == http.StatusForbidden && !strings.Contains(body, "only of job groups billing.*") {
						t.Errorf("%s: the refusal does not name the scope: %s", tc.name, body)
					}
				}
				status, body := send(t, c, "POST", base+"/api/v1/jobs/payroll/report/pause", "")
				if status != http.StatusForbidden || !strings.Contains(body, `job group \"payroll\" matches none of them`) {
					t.Errorf("pause out of scope: %d %s", status, body)
				}
				// The refused requests changed nothing.
				if j, err := srv.Client.GetJob(ctx, "payroll", "report"); err != nil || j.Paused {
					t.Errorf("payroll/report after refused requests: %+v, %v", j, err)
				}
				if _, err := srv.Client.GetJob(ctx, "payroll", "new"); err == nil {
					t.Errorf("payroll/new exists after a refused create")
				}
			})

			t.Run("scoped operator and executions and maintenance", func(t *testing.T) {
				c := browser(t)
				if status, body := signIn(t, p, c, base, user("Carol", "billing-team")); status != http.StatusOK {
					t.Fatalf("sign-on: %d %s", status, body)
				}
				ids := map[string]string{}
				for _, g := range []string{"billing.eu", "payroll"} {
					if _, err := srv.Client.RunJob(ctx, g, "report", api.RunRequest{}); err != nil {
						t.Fatal(err)
					}
					ids[g] = finishedExecution(t, srv, g)
				}
				if status, body := send(t, c, "POST", base+"/api/v1/executions/"+ids["billing.eu"]+"/retry", ""); status != http.StatusAccepted {
					t.Errorf("retrying an execution in scope: %d %s", status, body)
				}
				status, body := send(t, c, "POST", base+"/api/v1/executions/"+ids["payroll"]+"/retry", "")
				if status != http.StatusForbidden || !strings.Contains(body, `job group \"payroll\" matches none of them`) {
					t.Errorf("retrying an execution out of scope: %d %s", status, body)
				}
				if status, body := send(t, c, "POST", base+"/api/v1/maintenance", `{"group":"payroll","reason":"x"}`); status != http.StatusForbidden {
					t.Errorf("maintenance out of scope: %d %s", status, body)
				}
				if status, body := send(t, c, "POST", base+"/api/v1/maintenance", `{"group":"billing.eu","reason":"x"}`); status != http.StatusCreated {
					t.Errorf("maintenance in scope: %d %s", status, body)
				}
				if status, body := send(t, c, "DELETE", base+"/api/v1/maintenance", ""); status != http.StatusNoContent {
					t.Errorf("ending maintenance in scope: %d %s", status, body)
				}
				if _, err := srv.Client.StartMaintenance(ctx, api.MaintenanceRequest{Reason: "upgrade"}); err != nil {
					t.Fatal(err)
				}
				if status, body := send(t, c, "DELETE", base+"/api/v1/maintenance", ""); status != http.StatusForbidden {
					t.Errorf("ending a maintenance of every job: %d %s", status, body)
				}
				if err := srv.Client.EndMaintenance(ctx); err != nil {
					t.Fatal(err)
				}
			})

			t.Run("no matching group", func(t *testing.T) {
				c := browser(t)
				status, body := signIn(t, p, c, base, user("dave", "marketing"))
				if status != http.StatusForbidden || !strings.Contains(body, "dave@example.com (groups marketing) has no role in chime") {
					t.Errorf("sign-on: %d %s, want 403 saying no role mapping matches", status, body)
				}
				if status, _ := get(t, c, base+"/api/v1/auth/me"); status != http.StatusUnauthorized {
					t.Errorf("GET /api/v1/auth/me after a refused sign-on: %d, want 401", status)
				}
			})

			t.Run("unverified e-mail", func(t *testing.T) {
				status, body := signIn(t, p, browser(t), base, unverified{user("mallory", "ops")})
				if status != http.StatusForbidden || !strings.Contains(body, "has not verified the e-mail address mallory@example.com") {
					t.Errorf("sign-on with an unverified e-mail: %d %s", status, body)
				}
			})

			t.Run("bad state", func(t *testing.T) {
				c, authorize := startFlow(t, base)
				q := authorize.Query()
				q.Set("state", "forged")
				authorize.RawQuery = q.Encode()
				p.QueueUser(user("erin", "ops"))
				status, body := get(t, c, authorize.String())
				if status != http.StatusBadRequest || !strings.Contains(body, "state does not match") {
					t.Errorf("callback with a forged state: %d %s", status, body)
				}
			})

			t.Run("bad nonce", func(t *testing.T) {
				c, authorize := startFlow(t, base)
				q := authorize.Query()
				q.Set("nonce", "forged")
				authorize.RawQuery = q.Encode()
				p.QueueUser(user("erin", "ops"))
				status, body := get(t, c, authorize.String())
				if status != http.StatusUnauthorized || !strings.Contains(body, "nonce does not match") {
					t.Errorf("callback with an ID token of another nonce: %d %s", status, body)
				}
			})

			t.Run("expired ID token", func(t *testing.T) {
				clock.offset.Store(int64(time.Hour))
				defer clock.offset.Store(0)
				c := browser(t)
				status, body := signIn(t, p, c, base, user("erin", "ops"))
				if status != http.StatusUnauthorized || !strings.Contains(body, "ID token is not valid") {
					t.Errorf("sign-on with an expired ID token: %d %s", status, body)
				}
			})

			t.Run("forged ID token", func(t *testing.T) {
				p.forge.Store(true)
				defer p.forge.Store(false)
				c := browser(t)
				status, body := signIn(t, p, c, base, user("erin", "ops"))
				if status != http.StatusUnauthorized || !strings.Contains(body, "ID token is not valid") {
					t.Errorf("sign-on with a forged ID token: %d %s", status, body)
				}
			})

			t.Run("audit log", func(t *testing.T) {
				list, err := srv.Client.ListAudit(ctx, api.AuditQuery{Limit: 500})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, e := range list.Entries {
					if e.Action != "user.sso_login" {
						continue
					}
					got = append(got, e.Actor+" "+e.Detail["subject"].(string)+" "+e.Detail["email"].(string)+" "+e.Detail["role"].(string))
				}
				want := "carol@example.com sub-Carol Carol@example.com operator"
				if !strings.Contains(strings.Join(got, "\n"), want) || len(got) != 3 {
					t.Errorf("sign-on audit entries:\n%s\nwant 3 with %q", strings.Join(got, "\n"), want)
				}
			})
		})
	}
}

// finishedExecution waits for the execution of job group/report to end
// and returns its ID.
func finishedExecution(t *testing.T, srv *servertest.Server, group string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := srv.Client.ListExecutions(t.Context(), api.ExecutionQuery{JobGroup: group, JobName: "report"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Executions {
			if e.Outcome != "running" && e.Outcome != "" {
				return e.ID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no execution of %s/report ended in 30s: %+v", group, list.Executions)
		}
		time.Sleep(50 * time.Millisecond) // the run happens on the server's workers
	}
}

// startFlow starts a sign-on in a new browser and returns it with the
// provider's authorization URL, not yet visited.
func startFlow(t *testing.T, base string) (*http.Client, *url.URL) {
	t.Helper()
	c := browser(t)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Get(base + sso.LoginPath)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusFound {
		t.Fatalf("GET %s: %d, want 302", sso.LoginPath, res.StatusCode)
	}
	u, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	c.CheckRedirect = nil
	return c, u
}
