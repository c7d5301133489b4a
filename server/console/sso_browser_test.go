package console_test

import (
	"net"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
	"github.com/chime-scheduler/chime/server/sso"
)

// TestSignInWithProvider clicks "Sign in with Mock IdP" on the login page
// of a server with single sign-on through a local OpenID Connect provider,
// and lands on the dashboard as the user the provider vouched for, with
// the role its groups map to.
func TestSignInWithProvider(t *testing.T) {
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rule, err := sso.ParseRule(`group "billing-team" -> operator of billing.*`)
	if err != nil {
		t.Fatal(err)
	}
	cfg := idp.Config()
	srv := servertest.Start(t, &servertest.Options{
		Listener: ln,
		Config: server.Config{SSO: &sso.Config{
			Issuer: cfg.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
			RedirectURL: "http://" + ln.Addr().String() + sso.CallbackPath,
			Scopes:      []string{"openid", "email", "groups"},
			Name:        "Mock IdP",
			Rules:       []sso.Rule{rule},
		}},
	})
	idp.QueueUser(&mockoidc.MockUser{Subject: "sub-carol", Email: "carol@example.com", Groups: []string{"billing-team"}})

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Navigate(srv.URL + "/#/login")
	p.WaitText(`[data-testid="sso-login"]`, "Sign in with Mock IdP")
	p.Screenshot("sso-login")
	p.Click(`[data-testid="sso-login"]`)
	p.Do("waiting for the dashboard", chromedp.WaitVisible(chromedp.CSS(`main[data-page="/"]`)))
	p.WaitText(`[data-testid="whoami"]`, "carol@example.com (operator of billing.*)")
	p.Screenshot("sso-dashboard")
}
