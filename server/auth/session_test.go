package auth_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/auth"
)

// TestLogin logs in with a good password, a bad one and an unknown user,
// and authenticates with the session by header and by cookie.
func TestLogin(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newEnv(t, url, nil)
		ctx := t.Context()
		e.createUser(t, "ann", api.RoleOperator)

		sess := e.login(t, "ann")
		if sess.User != "ann" || sess.Role != api.RoleOperator || len(sess.Token) != 43 {
			t.Errorf("Login = user %s, role %s, token of %d characters; want ann, operator, 43 characters",
				sess.User, sess.Role, len(sess.Token))
		}
		if want := e.clock.Now().Add(auth.DefaultSessionTTL); !sess.Expires.Equal(want) {
			t.Errorf("Login: Expires = %v, want %v", sess.Expires, want)
		}
		e.wantUser(t, sess.Token, "ann", api.RoleOperator)

		r := httptest.NewRequest(http.MethodGet, "/api/v1/jobs", nil)
		r.AddCookie(&http.Cookie{Name: "chime_session", Value: sess.Token})
		if u, err := e.svc.Authenticate(ctx, r); err != nil || u.Name != "ann" {
			t.Errorf("Authenticate with the session cookie = %v, %v; want ann", u, err)
		}

		_, err := e.svc.Login(ctx, "ann", "not the password", "192.0.2.1")
		bad := wantAPIError(t, "Login with a wrong password", err, api.CodeUnauthenticated, "")
		_, err = e.svc.Login(ctx, "bob", testPassword, "192.0.2.1")
		unknown := wantAPIError(t, "Login as an unknown user", err, api.CodeUnauthenticated, "")
		if bad.Message != unknown.Message {
			t.Errorf("a wrong password answers %q, an unknown user %q: want one answer that reveals nothing",
				bad.Message, unknown.Message)
		}
		_, err = e.svc.Login(ctx, "ann", "", "192.0.2.1")
		wantAPIError(t, "Login without a password", err, api.CodeInvalidArgument, "password")

		// Every attempt is logged, the password never.
		if got := len(e.logs.Messages("login")); got != 1 {
			t.Errorf("%d records %q, want 1", got, "login")
		}
		if got := len(e.logs.Messages("login failed")); got != 2 {
			t.Errorf("%d records %q, want 2", got, "login failed")
		}
		for _, rec := range e.logs.Records() {
			for k, v := range rec.Attrs {
				if s := v.String(); strings.Contains(s, testPassword) || strings.Contains(s, "not the password") {
					t.Errorf("record %q logs a password in %s", rec.Message, k)
				}
			}
		}

		if err := e.svc.Logout(ctx, sess.Token); err != nil {
			t.Fatalf("Logout: %v", err)
		}
		e.wantRefused(t, "Authenticate after Logout", sess.Token)
		if err := e.svc.Logout(ctx, sess.Token); err != nil {
			t.Errorf("Logout of an ended session: %v, want nil", err)
		}
	})
}

// TestAuthenticateRefuses checks the answers to requests without usable
// credentials.
func TestAuthenticateRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.SQLiteURL(t), nil)
	missing := httptest.NewRequest(http.MethodGet, "/api/v1/jobs", nil)
	_, err := e.svc.Authenticate(t.Context(), missing)
	ae := wantAPIError(t, "Authenticate without credentials", err, api.CodeUnauthenticated, "")
	if want := "missing credentials: send Authorization: Bearer <token>"; ae.Message != want {
		t.Errorf("Authenticate without credentials: message %q, want %q", ae.Message, want)
	}

	_, err = e.svc.Authenticate(t.Context(), bearer(""))
	ae = wantAPIError(t, "Authenticate with an empty bearer token", err, api.CodeUnauthenticated, "")
	if !strings.HasPrefix(ae.Message, "missing credentials") {
		t.Errorf("Authenticate with an empty bearer token: message %q, want missing credentials", ae.Message)
	}

	basic := httptest.NewRequest(http.MethodGet, "/api/v1/jobs", nil)
	basic.SetBasicAuth("admin", testPassword)
	_, err = e.svc.Authenticate(t.Context(), basic)
	ae = wantAPIError(t, "Authenticate with basic auth", err, api.CodeUnauthenticated, "")
	if !strings.Contains(ae.Message, "Bearer") {
		t.Errorf("Authenticate with basic auth: message %q, want it to name the Bearer scheme", ae.Message)
	}

	for name, token := range map[string]string{
		"unknown session": "c2Vzc2lvbiB0aGF0IGRvZXMgbm90IGV4aXN0IGF0IGFsbA",
		"unknown token":   auth.TokenPrefix + "dG9rZW4gdGhhdCBkb2VzIG5vdCBleGlzdCBhdCBhbGw",
		"too long":        strings.Repeat("a", 1000),
	} {
		e.wantRefused(t, name, token)
	}
}

// TestLoginThrottle checks the back-off after failed logins: counted in
// the database, so that two nodes share the counts; per user name and per
// client address; doubling from a second; never a lock-out; cleared by a
// success for the user name, and forgotten after the window.
func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		opts := &auth.Options{LoginFailuresPerUser: 3, LoginFailuresPerAddress: 5}
		a := newEnv(t, url, opts)
		// A second node: its own store and service on the same database.
		bOpts := *opts
		bOpts.BcryptCost, bOpts.Now = bcrypt.MinCost, a.clock.Now
		b, err := auth.New(t.Context(), openStore(t, url, nil), &bOpts)
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		a.createUser(t, "ann", api.RoleAdmin)
		wrong := func(svc *auth.Service, user, addr string) {
			t.Helper()
			_, err := svc.Login(ctx, user, "a wrong password", addr)
			wantAPIError(t, "a wrong password for "+user+" from "+addr, err, api.CodeUnauthenticated, "")
		}
		throttled := func(svc *auth.Service, user, addr, wait string) {
			t.Helper()
			_, err := svc.Login(ctx, user, testPassword, addr)
			ae := wantAPIError(t, "a login as "+user+" from "+addr, err, api.CodeRateLimited, "")
			if !strings.HasSuffix(ae.Message, "try again in "+wait) {
				t.Errorf("message %q, want it to end in %q", ae.Message, "try again in "+wait)
			}
		}
		succeeds := func(svc *auth.Service, user, addr string) {
			t.Helper()
			if _, err := svc.Login(ctx, user, testPassword, addr); err != nil {
				t.Errorf("login as %s from %s: %v, want a session", user, addr, err)
			}
		}

		// Three free failures on node a; node b sees them: the user name
		// must wait a second, whatever the address.
		for i := range 3 {
			wrong(a.svc, "ann", fmt.Sprintf("192.0.2.%d", i+1))
		}
		throttled(b, "ann", "198.51.100.7:4000", "1s")
		if got := len(a.logs.Messages("login refused: too many failed logins")); got != 0 {
			t.Errorf("node a logged %d refusals, want none (node b refused)", got)
		}
		// The wait doubles with each failure; a refused attempt counts nothing.
		a.clock.Advance(time.Second)
		wrong(b, "ann", "198.51.100.7")
		throttled(a.svc, "ann", "198.51.100.7", "2s")
		a.clock.Advance(1500 * time.Millisecond)
		throttled(a.svc, "ann", "198.51.100.7", "1s")
		a.clock.Advance(500 * time.Millisecond)
		wrong(a.svc, "ann", "198.51.100.8")
		throttled(a.svc, "ann", "198.51.100.8", "4s")
		// However many failures, the real user waits at most MaxLoginBackoff:
		// a back-off, never a lock-out.
		for range 10 {
			a.clock.Advance(auth.MaxLoginBackoff)
			wrong(a.svc, "ann", "203.0.113.9")
		}
		throttled(b, "ann", "198.51.100.7", "1m0s")
		a.clock.Advance(auth.MaxLoginBackoff)
		succeeds(b, "ann", "198.51.100.7")
		// The success cleared the user name's count.
		wrong(a.svc, "ann", "198.51.100.7")
		succeeds(a.svc, "ann", "198.51.100.7")

		// One address trying many names: 5 free failures, then a wait, on
		// either node; IPv6 addresses count per /64.
		for i := range 5 {
			wrong(a.svc, fmt.Sprintf("guess%d", i), fmt.Sprintf("[2001:db8:1:2::%x]:443", i))
		}
		throttled(b, "ann", "[2001:db8:1:2:ffff::1]:443", "1s")
		succeeds(b, "ann", "[2001:db8:1:3::1]:443")
		// Counts lapse after the window.
		a.clock.Advance(auth.LoginFailureWindow)
		succeeds(a.svc, "ann", "[2001:db8:1:2::1]:443")
	})
}

// TestSessionExpiry checks that use slides a session's expiry, that an
// idle session expires after SessionTTL, and that no session outlives
// SessionMaxAge.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newEnv(t, url, &auth.Options{SessionTTL: time.Hour, SessionMaxAge: 3 * time.Hour})
		e.createUser(t, "ann", api.RoleViewer)

		idle := e.login(t, "ann")
		busy := e.login(t, "ann")
		for range 3 {
			e.clock.Advance(50 * time.Minute)
			e.wantUser(t, busy.Token, "ann", api.RoleViewer)
		}
		e.wantRefused(t, "a session idle for 2h30m", idle.Token)
		e.clock.Advance(25 * time.Minute) // 2h55m after the login
		e.wantUser(t, busy.Token, "ann", api.RoleViewer)
		e.clock.Advance(5 * time.Minute) // 3h after the login
		e.wantRefused(t, "a session at its maximum age", busy.Token)

		// A use within a minute of the last recorded one is not recorded: the
		// expiry slides from the recorded one.
		s := e.login(t, "ann")
		e.clock.Advance(59*time.Minute + 30*time.Second)
		e.wantUser(t, s.Token, "ann", api.RoleViewer) // recorded: expires 1h later
		e.clock.Advance(30 * time.Second)
		e.wantUser(t, s.Token, "ann", api.RoleViewer) // not recorded
		e.clock.Advance(59*time.Minute + 30*time.Second)
		e.wantRefused(t, "a session an hour after its last recorded use", s.Token)
	})
}

// TestPasswordChangeEndsSessions checks that a new password ends the
// user's sessions but not their tokens, and that the old password stops
// working.
func TestPasswordChangeEndsSessions(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newEnv(t, url, nil)
		ctx := t.Context()
		e.createUser(t, "ann", api.RoleOperator)
		e.createUser(t, "bob", api.RoleOperator)
		s1, s2, other := e.login(t, "ann"), e.login(t, "ann"), e.login(t, "bob")
		tok, err := e.svc.CreateToken(ctx, "ann", api.Token{Name: "ci"})
		if err != nil {
			t.Fatalf("CreateToken: %v", err)
		}

		const newPassword = "another long password"
		if _, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "ann", Password: newPassword}); err != nil {
			t.Fatalf("UpdateUser(password): %v", err)
		}
		e.wantRefused(t, "ann's first session", s1.Token)
		e.wantRefused(t, "ann's second session", s2.Token)
		e.wantUser(t, other.Token, "bob", api.RoleOperator)
		e.wantUser(t, tok.Secret, "ann", api.RoleOperator)

		_, err = e.svc.Login(ctx, "ann", testPassword, "192.0.2.1")
		wantAPIError(t, "Login with the old password", err, api.CodeUnauthenticated, "")
		if _, err := e.svc.Login(ctx, "ann", newPassword, "192.0.2.1"); err != nil {
			t.Errorf("Login with the new password: %v", err)
		}
	})
}
