package auth_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/logtest"
	"github.com/chime-scheduler/chime/server/auth"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// testPassword is long enough for the password rule.
const testPassword = "correct horse battery"

// clock is a settable clock for Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	return &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// auditLog records the service's audit entries in the server's real
// audit log, as the server does.
type auditLog struct {
	h   *history.History
	now func() time.Time
}

// RecordAudit implements auth.AuditRecorder.
func (a *auditLog) RecordAudit(ctx context.Context, actor, action, target string, detail map[string]any) error {
	return a.h.RecordAudit(ctx, &history.AuditEntry{Time: a.now(), Actor: actor, Action: history.AuditAction(action), Target: target, Detail: detail})
}

// Entries returns the entries recorded so far, each as "actor action
// target detail", sorted: entries at one instant have no order.
func (a *auditLog) Entries(t *testing.T) []string {
	t.Helper()
	page, err := a.h.ListAudit(t.Context(), &history.AuditQuery{Limit: history.MaxLimit})
	if err != nil {
		t.Fatalf("ListAudit: %v", err)
	}
	var out []string
	for _, e := range page.Entries {
		out = append(out, fmt.Sprintf("%s %s %s %v", e.Actor, e.Action, e.Target, e.Detail))
	}
	slices.Sort(out)
	return out
}

// env is a service under test with what it was built with.
type env struct {
	svc   *auth.Service
	st    *sqlstore.Store
	clock *clock
	audit *auditLog
	logs  *logtest.Recorder
}

// forEachDatabase runs test in parallel subtests, once per database.
func forEachDatabase(t *testing.T, test func(t *testing.T, url string)) {
	t.Helper()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			test(t, db.URL(t))
		})
	}
}

// openStore opens a store on url, closed when the test ends.
func openStore(t *testing.T, url string, opts *sqlstore.Options) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.Open(t.Context(), url, opts)
	if err != nil {
		t.Fatalf("sqlstore.Open(%s): %v", url, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// newEnv opens a store on url and a service on it with a fake clock, the
// cheapest bcrypt cost, an audit log and a log recorder. opts, if not nil,
// sets the other options.
func newEnv(t *testing.T, url string, opts *auth.Options) *env {
	t.Helper()
	e := &env{st: openStore(t, url, nil), clock: newClock()}
	h, err := history.New(t.Context(), e.st, nil)
	if err != nil {
		t.Fatalf("history.New: %v", err)
	}
	e.audit = &auditLog{h: h, now: e.clock.Now}
	var o auth.Options
	if opts != nil {
		o = *opts
	}
	var log *slog.Logger
	e.logs, log = logtest.New(slog.LevelInfo)
	o.BcryptCost, o.Now, o.Audit, o.Logger = bcrypt.MinCost, e.clock.Now, e.audit, log
	svc, err := auth.New(t.Context(), e.st, &o)
	if err != nil {
		t.Fatalf("auth.New: %v", err)
	}
	e.svc = svc
	return e
}

// createUser creates a user with testPassword.
func (e *env) createUser(t *testing.T, name string, role api.Role) {
	t.Helper()
	if _, err := e.svc.CreateUser(t.Context(), "test", api.User{Name: name, Role: role, Password: testPassword}); err != nil {
		t.Fatalf("CreateUser(%s, %s): %v", name, role, err)
	}
}

// login logs name in with testPassword.
func (e *env) login(t *testing.T, name string) *api.Session {
	t.Helper()
	sess, err := e.svc.Login(t.Context(), name, testPassword, "192.0.2.1:5000")
	if err != nil {
		t.Fatalf("Login(%s): %v", name, err)
	}
	return sess
}

// bearer returns a request carrying token in an Authorization header.
func bearer(token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/auth/me", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

// authAs authenticates a request carrying token and returns the user.
func (e *env) authAs(t *testing.T, token string) (*api.User, error) {
	t.Helper()
	return e.svc.Authenticate(t.Context(), bearer(token))
}

// wantUser checks that token authenticates as name with role.
func (e *env) wantUser(t *testing.T, token, name string, role api.Role) {
	t.Helper()
	u, err := e.authAs(t, token)
	if err != nil {
		t.Fatalf("Authenticate: %v, want user %s (%s)", err, name, role)
	}
	if u.Name != name || u.Role != role {
		t.Errorf("Authenticate = %s (%s), want %s (%s)", u.Name, u.Role, name, role)
	}
}

// wantAPIError checks that err is an *api.Error with code and field.
func wantAPIError(t *testing.T, what string, err error, code api.ErrorCode, field string) *api.Error {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) {
		t.Fatalf("%s: error %v, want an *api.Error %s", what, err, code)
	}
	if ae.Code != code || ae.Field != field {
		t.Errorf("%s: error %q (code %s, field %q), want code %s, field %q", what, ae, ae.Code, ae.Field, code, field)
	}
	return ae
}

// wantRefused checks that token does not authenticate and that the answer
// says nothing about why.
func (e *env) wantRefused(t *testing.T, what, token string) {
	t.Helper()
	_, err := e.authAs(t, token)
	ae := wantAPIError(t, what, err, api.CodeUnauthenticated, "")
	if ae.Message != "invalid or expired credentials" {
		t.Errorf("%s: message %q, want the one answer for every bad credential", what, ae.Message)
	}
}
