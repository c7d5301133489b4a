package console_test

import (
	"context"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestUsersPageShowsAndEditsScopes: an admin creates an operator limited
// to job groups on the users page, sees the limits in the users table and
// in the table of its tokens, is told next to the field when a viewer
// cannot have them, changes them and clears them.
func TestUsersPageShowsAndEditsScopes(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	scopesOf := func(name string) []string {
		t.Helper()
		users, err := srv.Client.ListUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(users, func(u api.User) bool { return u.Name == name })
		if i < 0 {
			t.Fatalf("no user %s in %+v", name, users)
		}
		return users[i].Scopes
	}
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/users", servertest.AdminName, srv.AdminPassword)
	p.WaitText(`tr[data-user="admin"]`, "all")

	// A viewer cannot be limited: the API's reason shows at the field.
	p.ClickText("button", "New user")
	p.Fill(`dialog input[name="name"]`, "bill")
	p.Fill(`dialog input[name="scopes"]`, "billing.*, payroll")
	p.Fill(`dialog input[name="password"]`, "operator-password-1")
	p.ClickText("dialog button", "Create user")
	p.WaitText(`dialog .field[data-field="scopes"] .error`, "operator")
	p.Do("choosing the operator role", chromedp.SetValue(chromedp.CSS(`dialog select[name="role"]`), "operator"))
	p.ClickText("dialog button", "Create user")
	p.WaitText(`tr[data-user="bill"]`, "billing.* payroll")
	if got := scopesOf("bill"); !slices.Equal(got, []string{"billing.*", "payroll"}) {
		t.Errorf("bill's scopes after the create: %v", got)
	}

	// Its token shows the limits it acts with.
	if _, err := srv.Client.CreateToken(ctx, api.Token{Name: "bill-ci", User: "bill"}); err != nil {
		t.Fatal(err)
	}
	p.Route("/jobs") // and back, to read the tokens again
	p.Route("/users")
	p.WaitText(`tr[data-token="bill-ci"]`, "billing.* payroll")
	poll(p, "the toasts to go before the screenshot", `!document.querySelector('.toast')`)
	p.Screenshot("users-scopes")

	// Change them, then clear them.
	p.Click(`button[aria-label="Edit user bill"]`)
	setText(p, `dialog input[name="scopes"]`, "reports.*")
	p.ClickText("dialog button", "Save")
	p.WaitText(`tr[data-user="bill"]`, "reports.*")
	if got := scopesOf("bill"); !slices.Equal(got, []string{"reports.*"}) {
		t.Errorf("bill's scopes after the edit: %v", got)
	}
	p.Click(`button[aria-label="Edit user bill"]`)
	setText(p, `dialog input[name="scopes"]`, "")
	p.ClickText("dialog button", "Save")
	poll(p, "bill's limits to go", `!document.querySelector('tr[data-user="bill"] .scopes')`)
	if got := scopesOf("bill"); len(got) != 0 {
		t.Errorf("bill's scopes after clearing them: %v", got)
	}
}
