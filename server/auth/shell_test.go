package auth_test

import (
	"slices"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

// TestShellCapability grants and revokes the shell capability of a user,
// and checks that sessions and tokens carry it only while the user has
// it, that a token cannot have it without its user, and that the audit log
// records each grant.
func TestShellCapability(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newEnv(t, url, nil)
		ctx := t.Context()
		yes, no := true, false
		e.createUser(t, "ann", api.RoleAdmin)
		bob, err := e.svc.CreateUser(ctx, "ann", api.User{Name: "bob", Role: api.RoleOperator, Password: testPassword, Shell: &yes})
		if err != nil || !bob.CanShell() {
			t.Fatalf("CreateUser with shell = %+v, %v; want the capability", bob, err)
		}
		e.createUser(t, "cal", api.RoleOperator)

		canShell := func(token string) bool {
			t.Helper()
			u, err := e.authAs(t, token)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if u.Shell == nil {
				t.Fatalf("Authenticate returned user %s without its shell capability set", u.Name)
			}
			return u.CanShell()
		}
		annSession, bobSession, calSession := e.login(t, "ann").Token, e.login(t, "bob").Token, e.login(t, "cal").Token
		if canShell(annSession) || !canShell(bobSession) || canShell(calSession) {
			t.Errorf("sessions' shell capability: ann %v, bob %v, cal %v; want false, true, false",
				canShell(annSession), canShell(bobSession), canShell(calSession))
		}

		withShell, err := e.svc.CreateToken(ctx, "ann", api.Token{Name: "deploy", User: "bob", Shell: true})
		if err != nil || !withShell.Shell {
			t.Fatalf("CreateToken with shell for bob = %+v, %v", withShell, err)
		}
		without, err := e.svc.CreateToken(ctx, "ann", api.Token{Name: "read", User: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		if !canShell(withShell.Secret) || canShell(without.Secret) {
			t.Errorf("tokens' shell capability: with %v, without %v; want true, false", canShell(withShell.Secret), canShell(without.Secret))
		}
		_, err = e.svc.CreateToken(ctx, "ann", api.Token{Name: "sneaky", User: "cal", Shell: true})
		ae := wantAPIError(t, "CreateToken with shell for a user without it", err, api.CodeInvalidArgument, "shell")
		if want := `user "cal" does not have the shell capability, so neither can the token; an admin grants it to the user first`; ae.Message != want {
			t.Errorf("message %q, want %q", ae.Message, want)
		}

		// Revoking the user's capability applies at once to its session and
		// its tokens; granting it again restores the token's.
		got, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "bob", Shell: &no})
		if err != nil || got.CanShell() || got.Role != api.RoleOperator {
			t.Fatalf("UpdateUser shell false = %+v, %v; want operator without shell", got, err)
		}
		if canShell(bobSession) || canShell(withShell.Secret) {
			t.Errorf("after revoking: session %v, token %v; want both false", canShell(bobSession), canShell(withShell.Secret))
		}
		// A change of password alone keeps the capability as it is.
		if got, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "cal", Shell: &yes}); err != nil || !got.CanShell() {
			t.Fatalf("UpdateUser shell true = %+v, %v", got, err)
		}
		if got, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "cal", Password: testPassword + "!"}); err != nil || !got.CanShell() {
			t.Fatalf("UpdateUser password only = %+v, %v; want shell kept", got, err)
		}
		if _, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "bob", Shell: &yes}); err != nil {
			t.Fatal(err)
		}
		if !canShell(withShell.Secret) {
			t.Error("the token's shell capability did not come back with its user's")
		}

		users, err := e.svc.ListUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, u := range users {
			if u.Shell == nil {
				t.Errorf("ListUsers: %s without its shell capability set", u.Name)
			}
			if u.CanShell() {
				listed = append(listed, u.Name)
			}
		}
		if !slices.Equal(listed, []string{"bob", "cal"}) {
			t.Errorf("users listed with shell: %q, want bob and cal", listed)
		}
		tokens, err := e.svc.ListTokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range tokens {
			if tok.Shell != (tok.Name == "deploy") {
				t.Errorf("ListTokens: %s shell %v", tok.Name, tok.Shell)
			}
		}

		entries := e.audit.Entries(t)
		for _, want := range []string{
			"ann user.create users/bob map[role:operator shell:true]",
			"ann user.update users/bob map[shell:false]",
			"ann user.update users/cal map[shell:true]",
		} {
			if !slices.Contains(entries, want) {
				t.Errorf("audit log lacks %q; has %q", want, entries)
			}
		}
	})
}
