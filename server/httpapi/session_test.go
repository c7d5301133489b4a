package httpapi

import (
	"net/http"
	"net/http/cookiejar"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

// TestLoginCookieFlow logs in over HTTP, uses the session cookie alone,
// logs out and finds the cookie cleared and the session ended.
func TestLoginCookieFlow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	resp, raw := f.do(t, "POST", "/api/v1/auth/login", "", `{"username":"otto","password":"otto-pw"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: status %d; body %s", resp.StatusCode, raw)
	}
	var session api.Session
	decodeJSON(t, raw, &session)
	if session.Token == "" || session.User != "otto" || session.Role != api.RoleOperator {
		t.Fatalf("session = %+v", session)
	}
	cookie := sessionCookie(t, resp)
	if cookie.Value != session.Token || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Secure || cookie.Path != "/" {
		t.Errorf("cookie = %+v; want the token, HttpOnly, SameSite=Strict, not Secure over plain HTTP, Path /", cookie)
	}
	if calls := f.authn.Calls(); len(calls) != 1 || calls[0].Args[1] != "127.0.0.1" {
		t.Errorf("Login calls = %+v, want one from client address 127.0.0.1", calls)
	}

	// The cookie alone authenticates.
	me := func() (*http.Response, []byte) {
		return f.do(t, "GET", "/api/v1/auth/me", "", "", "Cookie", cookie.Name+"="+cookie.Value)
	}
	resp, raw = me()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("me with the cookie: status %d; body %s", resp.StatusCode, raw)
	}
	var user api.User
	decodeJSON(t, raw, &user)
	if user.Name != "otto" || user.Role != api.RoleOperator {
		t.Errorf("me = %+v", user)
	}

	resp, raw = f.do(t, "POST", "/api/v1/auth/logout", "", "", "Cookie", cookie.Name+"="+cookie.Value, "Content-Type", "application/json")
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("logout: status %d; body %s", resp.StatusCode, raw)
	}
	if cleared := sessionCookie(t, resp); cleared.Value != "" || cleared.MaxAge >= 0 {
		t.Errorf("logout cookie = %+v, want it cleared", cleared)
	}
	if calls := f.authn.Calls(); calls[len(calls)-1].Method != "Logout" || calls[len(calls)-1].Args[0] != session.Token {
		t.Errorf("last call = %+v, want Logout of the session token", calls[len(calls)-1])
	}
	if resp, raw := me(); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("me after logout: status %d, want 401; body %s", resp.StatusCode, raw)
	}
}

// TestLoginRefused checks that bad credentials get 401 and no cookie.
func TestLoginRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	resp, raw := f.do(t, "POST", "/api/v1/auth/login", "", `{"username":"otto","password":"guess"}`)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401; body %s", resp.StatusCode, raw)
	}
	if e := decodeError(t, resp, raw); e.Code != api.CodeUnauthenticated {
		t.Errorf("code = %s", e.Code)
	}
	if len(resp.Cookies()) != 0 {
		t.Errorf("a refused login set cookies %v", resp.Cookies())
	}
}

// TestLoginOverTLS checks that the session cookie is Secure over TLS, and
// that a browser-like client, with a cookie jar, stays logged in with it.
func TestLoginOverTLS(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, newRecordingService(), nil, true)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Client().Jar = jar

	resp, raw := f.do(t, "POST", "/api/v1/auth/login", "", `{"username":"vera","password":"vera-pw"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: status %d; body %s", resp.StatusCode, raw)
	}
	if c := sessionCookie(t, resp); !c.Secure || !c.HttpOnly {
		t.Errorf("cookie over TLS = %+v, want Secure and HttpOnly", c)
	}
	if resp, raw := f.do(t, "GET", "/api/v1/jobs", "", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET with the jar's cookie: status %d, want 200; body %s", resp.StatusCode, raw)
	}
}

func sessionCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if c.Name == SessionCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", SessionCookie, resp.Header.Values("Set-Cookie"))
	return nil
}

// TestForgedRequestsRefused sends the requests another web site could make
// a logged-in browser send, and the ones the console and the CLI send: only
// the forged ones are refused, before they reach the service.
func TestForgedRequestsRefused(t *testing.T) {
	t.Parallel()
	const pause = "/api/v1/jobs/g/n/pause"
	cookie := "Cookie"
	session := SessionCookie + "=operator-token"
	tests := []struct {
		name    string
		method  string
		path    string
		token   string
		body    string
		header  []string
		refused bool
	}{
		{"cross-site form POST with the cookie", "POST", pause, "", "x=1",
			[]string{cookie, session, "Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, true},
		{"cross-origin POST, Origin only (no fetch metadata)", "POST", pause, "", "",
			[]string{cookie, session, "Content-Type", "application/json", "Origin", "https://evil.example"}, true},
		{"same-site but other origin", "POST", pause, "", "",
			[]string{cookie, session, "Content-Type", "application/json", "Sec-Fetch-Site", "same-site"}, true},
		{"cookie without JSON, no origin headers (old browser form)", "POST", pause, "", "x=1",
			[]string{cookie, session, "Content-Type", "text/plain"}, true},
		{"cookie, same origin, but no Content-Type", "POST", pause, "", "",
			[]string{cookie, session, "Sec-Fetch-Site", "same-origin"}, true},
		{"cross-site DELETE with the cookie", "DELETE", "/api/v1/jobs/g/n", "", "",
			[]string{cookie, session, "Sec-Fetch-Site", "cross-site"}, true},
		{"cross-site login", "POST", "/api/v1/auth/login", "", `{"username":"otto","password":"otto-pw"}`,
			[]string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, true},
		{"the console: cookie, same origin, JSON", "POST", pause, "", "",
			[]string{cookie, session, "Content-Type", "application/json", "Sec-Fetch-Site", "same-origin", "Origin", "http://127.0.0.1"}, false},
		{"the CLI: bearer token, no browser headers", "POST", pause, "operator-token", "", nil, false},
		{"a bearer token from another origin cannot be forged", "POST", pause, "operator-token", "",
			[]string{"Sec-Fetch-Site", "cross-site", "Origin", "https://dashboard.example"}, false},
		{"a cross-site read is harmless", "GET", "/api/v1/jobs/g/n", "", "",
			[]string{cookie, session, "Sec-Fetch-Site", "cross-site"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			resp, raw := f.do(t, tt.method, tt.path, tt.token, tt.body, tt.header...)
			if !tt.refused {
				if resp.StatusCode >= 400 {
					t.Fatalf("status %d, want success; body %s", resp.StatusCode, raw)
				}
				return
			}
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("status %d, want 403; body %s", resp.StatusCode, raw)
			}
			if e := decodeError(t, resp, raw); e.Code != api.CodePermissionDenied {
				t.Errorf("code = %s, want %s", e.Code, api.CodePermissionDenied)
			}
			if calls := f.calls(); len(calls) != 0 {
				t.Errorf("a refused request reached %+v", calls)
			}
		})
	}
}
