package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"golang.org/x/oauth2"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// ssoLoginTimeout bounds how long chime login --sso waits for the
// browser.
const ssoLoginTimeout = 5 * time.Minute

// loginSSO signs in through the server's single sign-on provider: it
// listens on 127.0.0.1, prints the URL that starts the sign-on with the
// loopback port, a state and a PKCE challenge, waits for the browser to
// bring the one-time code back, and exchanges it, with the verifier, for
// a session.
func loginSSO(ctx context.Context, stderr io.Writer, c *apiclient.Client) (*api.Session, error) {
	methods, err := c.AuthMethods(ctx)
	if err != nil {
		return nil, err
	}
	if methods.SSO == nil {
		return nil, fmt.Errorf("%s has no single sign-on provider: log in with a user name and password", c.BaseURL())
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1 for the browser's return: %w", err)
	}
	state, verifier := oauth2.GenerateVerifier(), oauth2.GenerateVerifier()
	type result struct {
		code string
		err  error
	}
	got := make(chan result, 1)
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/callback" {
				http.NotFound(w, r)
				return
			}
			q := r.URL.Query()
			res := result{code: q.Get("code")}
			switch {
			case q.Get("state") != state:
				http.Error(w, "This sign-in was not started by this chime login.", http.StatusBadRequest)
				return // not ours: keep waiting
			case res.code == "":
				res.err = errors.New("the server sent no code back")
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			msg := "Signed in to chime. You may close this window and go back to the terminal."
			if res.err != nil {
				msg = "The sign-in failed: " + res.err.Error()
			}
			fmt.Fprintf(w, "<!doctype html><title>chime login</title><p>%s</p>", html.EscapeString(msg))
			select {
			case got <- res:
			default:
			}
		}),
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln) // http.ErrServerClosed once Close below runs
	}()
	defer func() {
		// Shutdown lets the callback's page reach the browser first:
		// Close cut the connection of a handler that had signalled the
		// code but not yet sent its answer, and the browser saw an EOF.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
		<-served
	}()

	base, err := url.Parse(c.BaseURL())
	if err != nil {
		return nil, fmt.Errorf("the server URL: %w", err)
	}
	login, err := base.Parse(methods.SSO.LoginURL)
	if err != nil {
		return nil, fmt.Errorf("the server's sign-on URL %q: %w", methods.SSO.LoginURL, err)
	}
	login.RawQuery = url.Values{
		"cli_port":      {strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)},
		"cli_state":     {state},
		"cli_challenge": {oauth2.S256ChallengeFromVerifier(verifier)},
	}.Encode()
	fmt.Fprintf(stderr, "Open this URL in your browser to sign in with %s:\n\n  %s\n\nWaiting for the browser (%s at most)...\n",
		methods.SSO.Name, login, ssoLoginTimeout)

	wait, cancel := context.WithTimeout(ctx, ssoLoginTimeout)
	defer cancel()
	select {
	case res := <-got:
		if res.err != nil {
			return nil, res.err
		}
		return c.ExchangeSSOCode(ctx, res.code, verifier)
	case <-wait.Done():
		if errors.Is(wait.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no sign-in came back within %s: run chime login --sso again", ssoLoginTimeout)
		}
		return nil, wait.Err()
	}
}
