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

// TestAdminGrantsTheShellCapability creates a user with the shell
// capability on the users page, sees it in the list, and revokes it.
func TestAdminGrantsTheShellCapability(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/users", servertest.AdminName, srv.AdminPassword)
	p.WaitText(`tr[data-user="admin"]`, "(you)")

	p.ClickText("button", "New user")
	p.Fill(`dialog input[name="name"]`, "sam")
	p.Do("choosing the operator role", chromedp.SetValue(chromedp.CSS(`dialog select[name="role"]`), "operator"))
	p.Click(`dialog input[name="shell"]`)
	p.Fill(`dialog input[name="password"]`, "operator-password-1")
	p.ClickText("dialog button", "Create user")
	p.WaitText(`tr[data-user="sam"]`, "may write")
	shellOf := func() bool {
		t.Helper()
		users, err := srv.Client.ListUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(users, func(u api.User) bool { return u.Name == "sam" })
		if i < 0 {
			t.Fatalf("users: %+v, want sam", users)
		}
		return users[i].CanShell()
	}
	if !shellOf() {
		t.Error("sam was created without the shell capability")
	}
	p.Screenshot("user-with-shell")

	p.Click(`button[aria-label="Edit user sam"]`)
	p.Click(`dialog input[name="shell"]`)
	p.ClickText("dialog button", "Save")
	// The page reloads the list once the change is saved.
	browsertest.Get(p, "waiting for the list without sam's capability", chromedp.Poll[bool](
		`(() => { const r = document.querySelector('tr[data-user="sam"]'); return !!r && !r.textContent.includes('may write'); })()`))
	if shellOf() {
		t.Error("sam kept the shell capability after the edit")
	}
}
