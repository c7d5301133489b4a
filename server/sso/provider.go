package sso

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/auth"
	"github.com/chime-scheduler/chime/server/httpapi"
)

// flowCookie carries a sign-on's state, nonce and PKCE verifier from the
// login to the callback.
const flowCookie = "chime_oidc"

// flowTTL bounds the time between the login and the callback.
const flowTTL = 10 * time.Minute

// Sessions starts chime sessions for users the provider vouched for;
// *auth.Service is one.
type Sessions interface {
	StartSSOSession(ctx context.Context, l auth.SSOLogin) (*api.Session, error)
}

// Provider signs users in through an OpenID Connect provider. It is safe
// for concurrent use.
type Provider struct {
	cfg      Config
	sessions Sessions
	log      *slog.Logger
	secure   bool // the redirect URL is https: cookies are Secure
	mux      *http.ServeMux

	// mu guards op, the provider's discovered configuration, fetched on
	// the first sign-on and kept after: a provider that is down when the
	// server starts delays sign-ons, not the server.
	mu sync.Mutex
	op *oidc.Provider
	// cli keeps the CLI's sign-ons (see EnableCLI); nil refuses them.
	cli *cliGrants
}

// New returns a Provider for cfg that starts sessions with sessions. It
// contacts the identity provider only when the first user signs in.
func New(cfg Config, sessions Sessions) (*Provider, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if sessions == nil {
		return nil, errors.New("sso: New: nil Sessions")
	}
	p := &Provider{
		cfg:      c,
		sessions: sessions,
		log:      c.Logger,
		secure:   strings.HasPrefix(c.RedirectURL, "https:"),
		mux:      http.NewServeMux(),
	}
	p.mux.HandleFunc("GET "+LoginPath, p.login)
	p.mux.HandleFunc("GET "+CallbackPath, p.callback)
	p.mux.HandleFunc("POST "+TokenPath, p.token)
	return p, nil
}

// Info describes the provider for the login page.
func (p *Provider) Info() *api.SSOProvider {
	return &api.SSOProvider{Name: p.cfg.Name, LoginURL: LoginPath}
}

// ServeHTTP serves GET /auth/oidc/login, GET /auth/oidc/callback and
// POST /auth/oidc/token.
func (p *Provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mux.ServeHTTP(w, r)
}

// discover returns the provider's configuration, fetching it the first
// time.
func (p *Provider) discover(ctx context.Context) (*oidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.op != nil {
		return p.op, nil
	}
	// The key set go-oidc builds keeps this context for fetching the
	// provider's keys later: it must outlive the request.
	ctx = oidc.ClientContext(context.WithoutCancel(ctx), p.cfg.HTTPClient)
	op, err := oidc.NewProvider(ctx, p.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("reading the identity provider's configuration from %s: %w", p.cfg.Issuer, err)
	}
	p.op = op
	return op, nil
}

// oauth2Config is chime's OAuth 2.0 client at op.
func (p *Provider) oauth2Config(op *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     p.cfg.ClientID,
		ClientSecret: p.cfg.ClientSecret,
		Endpoint:     op.Endpoint(),
		RedirectURL:  p.cfg.RedirectURL,
		Scopes:       p.cfg.Scopes,
	}
}

// flow is what the flow cookie carries: a CLI's sign-on carries its
// cliFlow too.
type flow struct {
	state, nonce, verifier string
	cli                    *cliFlow
}

// login starts a sign-on: it keeps a fresh state, nonce and PKCE verifier
// in the flow cookie and redirects to the provider.
func (p *Provider) login(w http.ResponseWriter, r *http.Request) {
	cli, isCLI, err := readCLIFlow(r.URL.Query())
	if err != nil {
		p.refuse(w, r, http.StatusBadRequest, "This sign-in from the command line cannot go on: "+err.Error(), nil)
		return
	}
	op, err := p.discover(r.Context())
	if err != nil {
		p.refuse(w, r, http.StatusBadGateway, "The identity provider cannot be reached", err)
		return
	}
	f := flow{state: randomString(), nonce: randomString(), verifier: oauth2.GenerateVerifier()}
	value := f.state + "." + f.nonce + "." + f.verifier
	if isCLI {
		value += "." + cli.port + "." + cli.state + "." + cli.challenge
	}
	http.SetCookie(w, &http.Cookie{
		Name:     flowCookie,
		Value:    value,
		Path:     "/auth/oidc/",
		MaxAge:   int(flowTTL / time.Second),
		HttpOnly: true,
		Secure:   p.secure,
		SameSite: http.SameSiteLaxMode, // sent back on the provider's redirect, a cross-site navigation
	})
	url := p.oauth2Config(op).AuthCodeURL(f.state, oidc.Nonce(f.nonce), oauth2.S256ChallengeOption(f.verifier))
	http.Redirect(w, r, url, http.StatusFound)
}

// callback finishes a sign-on: it checks the state, exchanges the code,
// verifies the ID token and its nonce, maps the user's groups to a role,
// and starts a chime session.
func (p *Provider) callback(w http.ResponseWriter, r *http.Request) {
	f, ok := readFlow(r)
	// The flow cookie serves one callback.
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Path: "/auth/oidc/", MaxAge: -1, HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode})
	q := r.URL.Query()
	switch {
	case !ok:
		p.refuse(w, r, http.StatusBadRequest, "This sign-in was not started here or took longer than ten minutes; sign in again", nil)
		return
	case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.state)) != 1:
		p.refuse(w, r, http.StatusBadRequest, "The sign-in's state does not match the one this browser started; sign in again", nil)
		return
	case q.Get("error") != "":
		p.refuse(w, r, http.StatusUnauthorized, "The identity provider refused the sign-in: "+q.Get("error")+" "+q.Get("error_description"), nil)
		return
	case q.Get("code") == "":
		p.refuse(w, r, http.StatusBadRequest, "The identity provider sent no authorization code", nil)
		return
	}
	op, err := p.discover(r.Context())
	if err != nil {
		p.refuse(w, r, http.StatusBadGateway, "The identity provider cannot be reached", err)
		return
	}
	ctx := oidc.ClientContext(r.Context(), p.cfg.HTTPClient)
	token, err := p.oauth2Config(op).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.verifier))
	if err != nil {
		p.refuse(w, r, http.StatusUnauthorized, "The identity provider did not exchange the authorization code", err)
		return
	}
	raw, _ := token.Extra("id_token").(string)
	if raw == "" {
		p.refuse(w, r, http.StatusUnauthorized, "The identity provider sent no ID token", nil)
		return
	}
	idToken, err := op.Verifier(&oidc.Config{ClientID: p.cfg.ClientID, Now: p.cfg.Now}).Verify(ctx, raw)
	if err != nil {
		p.refuse(w, r, http.StatusUnauthorized, "The ID token is not valid", err)
		return
	}
	if subtle.ConstantTimeCompare([]byte(idToken.Nonce), []byte(f.nonce)) != 1 {
		p.refuse(w, r, http.StatusUnauthorized, "The ID token's nonce does not match this sign-in's", nil)
		return
	}
	var claims map[string]any
	if err := idToken.Claims(&claims); err != nil {
		p.refuse(w, r, http.StatusUnauthorized, "The ID token's claims cannot be read", err)
		return
	}
	user, _ := claims[p.cfg.UserClaim].(string)
	user = strings.ToLower(user) // chime user names are lower case
	if user == "" {
		p.refuse(w, r, http.StatusForbidden, fmt.Sprintf("The ID token has no %q claim to name the chime user", p.cfg.UserClaim), nil)
		return
	}
	if verified, ok := claims["email_verified"].(bool); ok && !verified && p.cfg.UserClaim == "email" {
		p.refuse(w, r, http.StatusForbidden, "Sign-in refused: the identity provider has not verified the e-mail address "+user+", which names the chime user", nil)
		return
	}
	groups := stringsClaim(claims[p.cfg.GroupsClaim])
	role, scopes, err := mapRole(p.cfg.Rules, user, groups)
	if err != nil {
		p.refuse(w, r, http.StatusForbidden, "Sign-in refused: "+err.Error(), nil)
		return
	}
	email, _ := claims["email"].(string)
	login := auth.SSOLogin{
		User: user, Role: role, Scopes: scopes,
		Issuer: idToken.Issuer, Subject: idToken.Subject, Email: email,
		ClientAddr: clientAddr(r),
	}
	if f.cli != nil {
		p.finishCLI(w, r, *f.cli, login)
		return
	}
	session, err := p.sessions.StartSSOSession(r.Context(), login)
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		p.refuse(w, r, http.StatusForbidden, "Sign-in refused: "+apiErr.Message, nil)
		return
	}
	if err != nil {
		p.refuse(w, r, http.StatusInternalServerError, "The session could not be started; the server log has the details", err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     httpapi.SessionCookie,
		Value:    session.Token,
		Path:     "/",
		Expires:  session.Expires,
		HttpOnly: true,
		Secure:   p.secure,
		SameSite: http.SameSiteStrictMode,
	})
	// The browser came here from the provider, another site, so it would
	// not send a SameSite=Strict cookie along a redirect; a page of our
	// own that moves on makes the next request a same-site one.
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	_ = donePage.Execute(w, nil)
}

// refuse answers a sign-on that cannot go on with a page saying why, and
// logs err, the detail the page leaves out.
func (p *Provider) refuse(w http.ResponseWriter, r *http.Request, status int, message string, err error) {
	attrs := []slog.Attr{slog.Int("status", status), slog.String("reason", message), slog.String("client_addr", clientAddr(r))}
	if err != nil {
		attrs = append(attrs, slog.Any("error", err))
	}
	p.log.LogAttrs(r.Context(), slog.LevelWarn, "single sign-on refused", attrs...)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(status)
	_ = refusedPage.Execute(w, message)
}

var (
	donePage = template.Must(template.New("done").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/#/"><title>chime: signed in</title></head>
<body><p>Signed in. <a href="/#/">Continue to chime</a></p></body></html>
`))
	refusedPage = template.Must(template.New("refused").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>chime: sign-in refused</title></head>
<body><h1>Sign-in refused</h1><p id="reason">{{.}}</p><p><a href="/#/login">Back to the login page</a></p></body></html>
`))
)

// readFlow reads the flow cookie.
func readFlow(r *http.Request) (flow, bool) {
	c, err := r.Cookie(flowCookie)
	if err != nil {
		return flow{}, false
	}
	parts := strings.Split(c.Value, ".")
	if (len(parts) != 3 && len(parts) != 6) || slices.Contains(parts, "") {
		return flow{}, false
	}
	f := flow{state: parts[0], nonce: parts[1], verifier: parts[2]}
	if len(parts) == 6 {
		f.cli = &cliFlow{port: parts[3], state: parts[4], challenge: parts[5]}
	}
	return f, true
}

// stringsClaim reads a claim that lists strings: an array, or one string.
func stringsClaim(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// randomString is 130 random bits from crypto/rand, in base32.
func randomString() string { return rand.Text() }

// clientAddr is the client's IP address, for the log.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
