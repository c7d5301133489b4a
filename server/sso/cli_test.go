package sso_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/sso"
)

// TestCLISignOn drives the command line's sign-on (chime login --sso)
// against a local provider: the server sends the browser to the CLI's
// loopback address with a one-time code, which only the PKCE verifier of
// the sign-on exchanges for a session, once.
func TestCLISignOn(t *testing.T) {
	t.Parallel()
	p := startProvider(t)
	srv := startServer(t, p, dbtest.SQLiteURL(t), &skew{})

	// The CLI's loopback address: it records what the browser brings.
	codes := make(chan url.Values, 4)
	cli, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query()
	})}
	go func() { _ = hs.Serve(cli) }()
	t.Cleanup(func() { _ = hs.Close() })
	port := cli.Addr().(*net.TCPAddr).Port

	signIn := func(verifier string) string {
		t.Helper()
		p.QueueUser(user("carol", "ops"))
		q := url.Values{"cli_port": {strconv.Itoa(port)}, "cli_state": {"state-of-this-cli-run"}, "cli_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}}
		if status, body := get(t, browser(t), srv.URL+sso.LoginPath+"?"+q.Encode()); status != http.StatusOK {
			t.Fatalf("sign-on: %d %s", status, body)
		}
		back := <-codes
		if back.Get("state") != "state-of-this-cli-run" || back.Get("code") == "" {
			t.Fatalf("the loopback address got %v, want the CLI's state and a code", back)
		}
		return back.Get("code")
	}
	exchange := func(code, verifier string) (int, string) {
		t.Helper()
		b, _ := json.Marshal(api.SSOCodeExchange{Code: code, Verifier: verifier})
		return send(t, browser(t), http.MethodPost, srv.URL+sso.TokenPath, string(b))
	}

	right := oauth2.GenerateVerifier()
	code := signIn(right)
	if status, body := exchange(code, oauth2.GenerateVerifier()); status != http.StatusUnauthorized {
		t.Errorf("exchange with another verifier: %d %s, want 401", status, body)
	}
	if status, body := exchange(code, right); status != http.StatusUnauthorized {
		t.Errorf("exchange of a code a wrong verifier used up: %d %s, want 401", status, body)
	}
	code = signIn(right)
	status, body := exchange(code, right)
	var s api.Session
	if status != http.StatusOK || json.Unmarshal([]byte(body), &s) != nil || s.Token == "" || s.User != "carol@example.com" || s.Role != api.RoleAdmin {
		t.Fatalf("exchange: %d %s, want carol@example.com's admin session", status, body)
	}
	if status, body := exchange(code, right); status != http.StatusUnauthorized {
		t.Errorf("exchange of the code again: %d %s, want 401", status, body)
	}
	// A login whose CLI parameters cannot be used is refused before the
	// provider sees it.
	status, body = get(t, browser(t), srv.URL+sso.LoginPath+"?cli_port=0&cli_state=x&cli_challenge=y")
	if status != http.StatusBadRequest || !strings.Contains(body, "cli_port") {
		t.Errorf("login with a bad cli_port: %d %s, want 400 naming cli_port", status, body)
	}
}
