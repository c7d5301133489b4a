package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestAdminUsersTokensAlertsAudit drives the admin pages: an admin creates
// a user and changes its role, cannot delete the last admin, creates an
// API token whose secret is shown once and works, revokes it, saves the
// alert settings (a bad rate limit refused next to its field) and sends a
// test alert, and finds all of it in the audit log. A viewer is refused
// the three pages.
func TestAdminUsersTokensAlertsAudit(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/users", servertest.AdminName, srv.AdminPassword)
	p.WaitText(`tr[data-user="admin"]`, "(you)")

	// Create a user.
	p.ClickText("button", "New user")
	p.Fill(`dialog input[name="name"]`, "olga")
	p.Do("choosing the operator role", chromedp.SetValue(chromedp.CSS(`dialog select[name="role"]`), "operator"))
	p.Fill(`dialog input[name="password"]`, "short")
	p.ClickText("dialog button", "Create user")
	p.WaitText(`dialog .field[data-field="password"] .error`, "12 characters")
	setText(p, `dialog input[name="password"]`, "operator-password-1")
	p.ClickText("dialog button", "Create user")
	p.WaitText(`tr[data-user="olga"]`, "operator")

	// Demote it to viewer.
	p.Click(`button[aria-label="Edit user olga"]`)
	p.Do("choosing the viewer role", chromedp.SetValue(chromedp.CSS(`dialog select[name="role"]`), "viewer"))
	p.ClickText("dialog button", "Save")
	p.WaitText(`tr[data-user="olga"]`, "viewer")
	users, err := srv.Client.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(users, func(u api.User) bool { return u.Name == "olga" }); i < 0 || users[i].Role != api.RoleViewer {
		t.Errorf("users after the edit: %+v", users)
	}

	// The last admin cannot be deleted: the API's reason is shown.
	p.Click(`button[aria-label="Delete user admin"]`)
	p.ClickText("dialog button", "Delete")
	p.WaitText(".toast.error", "last admin")

	// A token: its secret is shown once and works.
	p.ClickText("button", "New token")
	p.Fill(`dialog input[name="name"]`, "deploy")
	p.Do("choosing the operator role", chromedp.SetValue(chromedp.CSS(`dialog select[name="role"]`), "operator"))
	p.ClickText("dialog button", "Create token")
	p.WaitText("dialog", "you will not see it again")
	secret := browsertest.Get(p, "reading the secret", chromedp.Evaluate[string](`document.querySelector('[data-testid="token-secret"]').value`))
	if !strings.HasPrefix(secret, "chime_") {
		t.Fatalf("the dialog shows secret %q", secret)
	}
	p.Screenshot("token-secret")
	tc, err := apiclient.New(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	me, err := tc.WithToken(secret).Me(ctx)
	if err != nil || me.Role != api.RoleOperator {
		t.Fatalf("the shown secret: Me = %+v, %v; want an operator", me, err)
	}
	p.ClickText("dialog button", "I have saved it")
	p.WaitText(`tr[data-token="deploy"]`, "operator")
	if n := p.Count("dialog"); n != 0 {
		t.Errorf("%d dialogs still open", n)
	}
	if strings.Contains(p.Text("body"), secret) {
		t.Error("the page still shows the secret after its dialog closed")
	}
	poll(p, "the toasts to go before the screenshot", `!document.querySelector('.toast')`)
	p.Screenshot("users")

	// Revoking it stops it working.
	// (A click by script: toasts still cover the row's button at the bottom right.)
	p.ClickText(`tr[data-token="deploy"] button`, "Revoke")
	p.ClickText("dialog button", "Revoke")
	poll(p, "the revoked token's row to go", `!document.querySelector('tr[data-token="deploy"]')`)
	var apiErr *api.Error
	if _, err := tc.WithToken(secret).Me(ctx); !errors.As(err, &apiErr) || apiErr.Code != api.CodeUnauthenticated {
		t.Errorf("a revoked token: Me error %v, want unauthenticated", err)
	}

	// Alert settings: a bad rate limit is refused next to its field.
	p.Route("/alerts")
	setText(p, `textarea[name="default_emails"]`, "ops@example.com\noncall@example.com")
	p.Fill(`input[name="rate_limit"]`, "often")
	p.ClickText("button", "Save")
	p.WaitText(`.field[data-field="rate_limit"] .error`, "")
	setText(p, `input[name="rate_limit"]`, "15m")
	setText(p, `textarea[name="default_slack"]`, "https://hooks.slack.com/services/T0/B0/X")
	setText(p, `textarea[name="default_pagerduty"]`, "R0UT1NG critical\nOTHERKEY")
	p.ClickText("button", "Save")
	p.WaitText("#toasts", "Alert settings saved")
	settings, err := srv.Client.AlertSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(settings.DefaultEmails, []string{"ops@example.com", "oncall@example.com"}) {
		t.Errorf("saved e-mails %v", settings.DefaultEmails)
	}
	if !slices.Equal(settings.DefaultSlack, []string{"https://hooks.slack.com/services/T0/B0/X"}) ||
		!slices.Equal(settings.DefaultPagerDuty, []api.PagerDutyTarget{{RoutingKey: "R0UT1NG", Severity: "critical"}, {RoutingKey: "OTHERKEY"}}) {
		t.Errorf("saved Slack %v and PagerDuty %v", settings.DefaultSlack, settings.DefaultPagerDuty)
	}
	p.ClickText("button", "Send test alert")
	p.WaitText("main", "A test alert was queued")
	poll(p, "the toasts to go before the screenshot", `!document.querySelector('.toast')`)
	p.Screenshot("alerts")

	// The audit log shows what was done, and filters by target.
	p.Route("/audit")
	for _, action := range []string{"user.create", "user.update", "token.create", "token.delete", "alerts.update", "alerts.test"} {
		p.WaitText(`tr[data-action="`+action+`"]`, "admin")
	}
	poll(p, "the toasts to go before the screenshot", `!document.querySelector('.toast')`)
	p.Screenshot("audit")
	p.Fill(`input[name="target"]`, "users/olga")
	p.ClickText("button", "Filter")
	poll(p, "the audit log to keep olga's entries", `location.hash.includes('target=users') && document.querySelectorAll('tr[data-action]').length === 2 && document.querySelectorAll('tr[data-action^="user."]').length === 2`)

	// Paging: with more entries than a page holds, Older shows the rest.
	for i := range 50 {
		cal := api.Calendar{Name: "paging", Calendar: json.RawMessage(fmt.Sprintf(`{"type":"holiday","time_zone":"UTC","excluded_dates":["2030-01-%02d"],"base":null}`, i%28+1))}
		if _, err := srv.Client.PutCalendar(ctx, cal); err != nil {
			t.Fatal(err)
		}
	}
	p.Route("/audit")
	p.WaitText(`tr[data-action="calendar.update"]`, "calendars/paging")
	if n := p.Count(`tr[data-action="user.create"]`); n != 0 {
		t.Errorf("the newest page shows %d user.create entries, want them on the older page", n)
	}
	p.ClickText("main a", "Older")
	p.WaitText(`tbody tr:last-child[data-action="user.create"]`, "system") // the first entry of all: the bootstrap admin
	p.WaitText("main", "Newest")

	// On a phone the admin pages fit the screen.
	p.SetViewport(390, 844, true)
	for _, rt := range []struct{ route, title string }{{"/users", "Users and tokens"}, {"/alerts", "Alerts"}, {"/audit", "Audit log"}} {
		route := rt.route
		p.Route(route)
		p.WaitText("main h1", rt.title)
		if w := browsertest.Get(p, "measuring "+route, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 390 {
			t.Errorf("%s is %d px wide on a 390 px phone", route, w)
		}
	}
	p.Route("/users")
	p.WaitText(`tr[data-user="olga"]`, "viewer")
	p.Screenshot("users-phone")

	// A viewer is refused the admin pages.
	v := b.NewPage(t)
	v.Login(srv.URL, "/", "olga", "operator-password-1")
	for _, route := range []string{"/users", "/alerts", "/audit"} {
		v.Route(route)
		v.WaitText("main", "needs the admin role")
	}
	// And the API agrees.
	vc, err := apiclient.New(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := vc.Login(ctx, "olga", "operator-password-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vc.WithToken(s.Token).ListUsers(ctx); !errors.As(err, &apiErr) || apiErr.Code != api.CodePermissionDenied {
		t.Errorf("a viewer listing users: %v, want %d permission_denied", err, http.StatusForbidden)
	}
}
