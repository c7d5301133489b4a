package console_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
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
	cfg := idp.Config()
	srv := servertest.StartSSO(t, servertest.Provider{Issuer: cfg.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret},
		`group "billing-team" -> operator of billing.*`)
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
