package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestLoginAndRoles logs in through the login page, sees a wrong password
// refused in the form, and checks that a viewer's menu holds no admin page
// and an admin page refuses the viewer.
func TestLoginAndRoles(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "viewer-password-1"}); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)

	p := b.NewPage(t)
	p.Navigate(srv.URL + "/#/cluster")
	p.WaitText("main h1", "Log in")
	p.Fill(`input[name="username"]`, servertest.AdminName)
	p.Fill(`input[name="password"]`, "not the password")
	p.Click(`form button[type="submit"]`)
	p.WaitText(".form-error", "")
	if msg := p.Text(".form-error"); !strings.Contains(strings.ToLower(msg), "password") && !strings.Contains(strings.ToLower(msg), "invalid") {
		t.Errorf("wrong password: the form says %q", msg)
	}
	p.Screenshot("login-refused")

	p.Fill(`input[name="password"]`, srv.AdminPassword)
	p.Click(`form button[type="submit"]`)
	// The login returns to the page asked for first.
	p.WaitText("main h1", "Cluster")
	p.WaitText(`[data-testid="nodes-alive"] .value`, "1")
	if who := p.Text(`[data-testid="whoami"]`); who != "admin (admin)" {
		t.Errorf("signed in as %q", who)
	}
	for _, label := range []string{"Users", "Audit", "Alerts"} {
		p.WaitText("#nav", label)
	}
	p.Screenshot("cluster")

	v := b.NewPage(t)
	v.Login(srv.URL, "/cluster", "vera", "viewer-password-1")
	nav := v.Text("#nav")
	for _, label := range []string{"Users", "Audit", "Alerts"} {
		if strings.Contains(nav, label) {
			t.Errorf("a viewer's menu shows %q: %q", label, nav)
		}
	}
	v.Route("/users")
	v.WaitText("main", "needs the admin role")

	// Logging out ends the session: the console asks to log in again.
	v.ClickText("button", "Log out")
	v.WaitText("main h1", "Log in")
	v.Route("/cluster")
	v.WaitText("main h1", "Log in")
}
