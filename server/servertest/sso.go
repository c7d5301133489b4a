package servertest

import (
	"net"
	"testing"

	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/sso"
)

// Provider is the OpenID Connect provider a server of StartSSO signs users
// in through: its issuer URL and chime's client there.
type Provider struct {
	Issuer, ClientID, ClientSecret string
}

// StartSSO runs a server, as Start does with default options, whose
// single sign-on goes through p: named "Mock IdP", asking for the scopes
// openid, email and groups, with the role mapping rules (see
// sso.ParseRule), and its redirect URL on the server's own address.
func StartSSO(t testing.TB, p Provider, rules ...string) *Server {
	t.Helper()
	parsed := make([]sso.Rule, len(rules))
	for i, r := range rules {
		var err error
		if parsed[i], err = sso.ParseRule(r); err != nil {
			t.Fatalf("servertest: %v", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	return Start(t, &Options{
		Listener: ln,
		Config: server.Config{SSO: &sso.Config{
			Issuer: p.Issuer, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
			RedirectURL: "http://" + ln.Addr().String() + sso.CallbackPath,
			Scopes:      []string{"openid", "email", "groups"},
			Name:        "Mock IdP",
			Rules:       parsed,
		}},
	})
}
