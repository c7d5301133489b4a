package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server/servertest"
	"github.com/chime-scheduler/chime/server/sso"
)

// lockedBuffer is a stderr the test reads while the command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestLoginSSO signs in with chime login --sso against a local OpenID
// Connect provider (mockoidc): a browser (an HTTP client that follows
// redirects) opens the URL the command prints, the provider vouches for
// the user, the server sends the browser back to the command's loopback
// address with a one-time code, and the command exchanges it with its
// PKCE verifier for a session, which it saves as a password login does.
// The code serves once.
func TestLoginSSO(t *testing.T) {
	t.Parallel()
	idp, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	idpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := idp.Start(idpLn, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	cfg := idp.Config()
	srv := servertest.StartSSO(t, servertest.Provider{Issuer: cfg.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret},
		`group "ops" -> operator of billing.*`)
	idp.QueueUser(&mockoidc.MockUser{Subject: "sub-carol", Email: "carol@example.com", EmailVerified: true, Groups: []string{"ops"}})

	configHome := t.TempDir()
	stderr := &lockedBuffer{}
	var stdout bytes.Buffer
	root := newRootCmdEnv(testEnv(map[string]string{"XDG_CONFIG_HOME": configHome}))
	root.SetArgs([]string{"login", "--sso", "--server", srv.URL})
	root.SetIn(strings.NewReader(""))
	root.SetOut(&stdout)
	root.SetErr(stderr)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(context.Background()) }()

	var start string
	printed := regexp.MustCompile(`(?m)^  (http://\S+)$`)
	deadline := time.Now().Add(30 * time.Second)
	for start == "" {
		if m := printed.FindStringSubmatch(stderr.String()); m != nil {
			start = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("chime login --sso printed no URL to open: %q", stderr.String())
		} else {
			time.Sleep(10 * time.Millisecond) // the command runs in its goroutine; nothing to wait on
		}
	}
	if !strings.HasPrefix(start, srv.URL+sso.LoginPath+"?") || !strings.Contains(start, "cli_challenge=") {
		t.Errorf("URL to open %q: want the server's %s with the loopback port, state and PKCE challenge", start, sso.LoginPath)
	}

	// The browser.
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	var loopback *url.URL
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if r.URL.Hostname() == "127.0.0.1" && r.URL.Path == "/callback" {
			loopback = r.URL
		}
		return nil
	}}
	res, err := browser.Get(start)
	if err != nil {
		t.Fatalf("the browser's sign-in: %v", err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK || loopback == nil {
		t.Fatalf("the browser ended at %s with %d, having been sent to %v; want the command's loopback page", res.Request.URL, res.StatusCode, loopback)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chime login --sso: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("chime login --sso did not return after the browser came back")
	}
	if !strings.Contains(stderr.String(), "Logged in to "+srv.URL+" as carol@example.com (operator)") {
		t.Errorf("stderr %q: want the login message for carol@example.com", stderr.String())
	}

	// The session is saved and used as a password login's is.
	creds, err := loadCredentials(filepath.Join(configHome, "chime", "credentials.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	saved := creds.Servers[srv.URL]
	if saved.Token == "" || saved.User != "carol@example.com" {
		t.Fatalf("saved session %+v: want carol@example.com's token", saved)
	}
	c, err := apiclient.New(srv.URL, &apiclient.Options{Token: saved.Token})
	if err != nil {
		t.Fatal(err)
	}
	me, err := c.Me(t.Context())
	if err != nil || me.Name != "carol@example.com" || me.Role != api.RoleOperator || strings.Join(me.Scopes, " ") != "billing.*" {
		t.Errorf("Me with the saved token = %+v, %v; want carol@example.com, operator of billing.*", me, err)
	}

	// The code served once.
	_, err = c.ExchangeSSOCode(t.Context(), loopback.Query().Get("code"), "any-verifier-will-not-do-now-000000000000")
	if !apiclient.IsCode(err, api.CodeUnauthenticated) {
		t.Errorf("exchanging the code again: %v, want unauthenticated", err)
	}
}
