package auth_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/auth"
)

// TestStartSSOSession signs users on as the single sign-on provider does:
// the first sign-on creates the user, later ones replace its role and
// scopes, which its sessions and tokens act with; a local user is not
// taken over, and the user has no password that works.
func TestStartSSOSession(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newEnv(t, url, nil)
		ctx := t.Context()
		if _, err := e.svc.BootstrapWithPassword(ctx, testPassword); err != nil {
			t.Fatal(err)
		}
		login := auth.SSOLogin{User: "carol@example.com", Role: api.RoleOperator, Scopes: []string{"billing.*", "payroll"},
			Issuer: "https://idp.example.com", Subject: "sub-1", Email: "Carol@example.com", ClientAddr: "192.0.2.1"}
		sess, err := e.svc.StartSSOSession(ctx, login)
		if err != nil {
			t.Fatalf("StartSSOSession: %v", err)
		}
		u, err := e.authAs(t, sess.Token)
		if err != nil {
			t.Fatal(err)
		}
		if u.Name != login.User || u.Role != api.RoleOperator || !cmp.Equal(u.Scopes, login.Scopes) {
			t.Errorf("the session acts as %+v, want carol@example.com, operator of billing.*, payroll", u)
		}

		// A token of the user carries its scopes.
		tok, err := e.svc.CreateToken(ctx, "admin", api.Token{Name: "carol-ci", User: login.User})
		if err != nil {
			t.Fatal(err)
		}
		if u, err := e.authAs(t, tok.Secret); err != nil || !cmp.Equal(u.Scopes, login.Scopes) {
			t.Errorf("the token acts as %+v, %v; want carol's scopes", u, err)
		}

		// The next sign-on replaces role and scopes, for every session.
		login.Role, login.Scopes = api.RoleViewer, nil
		if _, err := e.svc.StartSSOSession(ctx, login); err != nil {
			t.Fatal(err)
		}
		if u, err := e.authAs(t, sess.Token); err != nil || u.Role != api.RoleViewer || len(u.Scopes) != 0 {
			t.Errorf("the first session after a new mapping acts as %+v, %v; want viewer, unscoped", u, err)
		}

		// No password opens the account.
		if _, err := e.svc.Login(ctx, login.User, "sso", "192.0.2.1:5000"); err == nil {
			t.Errorf("a password login of a single sign-on user succeeded")
		}
		users, err := e.svc.ListUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var sources []string
		for _, u := range users {
			sources = append(sources, u.Name+":"+u.Source)
		}
		if diff := cmp.Diff([]string{"admin:", "carol@example.com:sso"}, sources); diff != "" {
			t.Errorf("users and their sources (-want +got):\n%s", diff)
		}

		// A local user is never taken over.
		e.createUser(t, "olga", api.RoleViewer)
		_, err = e.svc.StartSSOSession(ctx, auth.SSOLogin{User: "olga", Role: api.RoleAdmin, Subject: "sub-2"})
		ae := wantAPIError(t, "sign-on as a local user", err, api.CodeConflict, "user")
		if want := `a local user named "olga" exists`; ae != nil && !strings.Contains(ae.Message, want) {
			t.Errorf("message %q, want %q", ae.Message, want)
		}

		// Bad input changes nothing.
		for _, tc := range []struct {
			name  string
			login auth.SSOLogin
			field string
		}{
			{"upper-case name", auth.SSOLogin{User: "Bob", Role: api.RoleViewer}, "user"},
			{"unknown role", auth.SSOLogin{User: "bob", Role: "root"}, "role"},
			{"scoped admin", auth.SSOLogin{User: "bob", Role: api.RoleAdmin, Scopes: []string{"x"}}, "scopes"},
			{"bad pattern", auth.SSOLogin{User: "bob", Role: api.RoleOperator, Scopes: []string{"a["}}, "scopes"},
		} {
			_, err := e.svc.StartSSOSession(ctx, tc.login)
			wantAPIError(t, tc.name, err, api.CodeInvalidArgument, tc.field)
		}
		if users, _ := e.svc.ListUsers(ctx); len(users) != 3 {
			t.Errorf("%d users after refused sign-ons, want 3", len(users))
		}

		// Every sign-on is in the audit log, with the provider's subject.
		var got []string
		for _, entry := range e.audit.Entries(t) {
			if strings.Contains(entry, auth.ActionSSOLogin) {
				got = append(got, entry)
			}
		}
		want := []string{
			"carol@example.com user.sso_login users/carol@example.com map[created:true email:Carol@example.com issuer:https://idp.example.com role:operator scopes:[billing.* payroll] subject:sub-1]",
			"carol@example.com user.sso_login users/carol@example.com map[email:Carol@example.com issuer:https://idp.example.com role:viewer subject:sub-1]",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("audit entries (-want +got):\n%s", diff)
		}
	})
}

// TestStartSSOSessionKeepsTheLastAdmin refuses a sign-on whose mapping
// would demote the last admin.
func TestStartSSOSessionKeepsTheLastAdmin(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newEnv(t, url, nil)
		ctx := t.Context()
		if _, err := e.svc.StartSSOSession(ctx, auth.SSOLogin{User: "ann", Role: api.RoleAdmin}); err != nil {
			t.Fatal(err)
		}
		_, err := e.svc.StartSSOSession(ctx, auth.SSOLogin{User: "ann", Role: api.RoleViewer})
		wantAPIError(t, "demoting the last admin", err, api.CodeConflict, "role")
		users, err := e.svc.ListUsers(ctx)
		if err != nil || len(users) != 1 || users[0].Role != api.RoleAdmin {
			t.Errorf("users after the refused sign-on: %+v, %v; want ann, admin", users, err)
		}
	})
}

// TestLocalUserScopes limits a local operator to job groups: its sessions
// and tokens act with the scopes, a scoped admin is refused, and a new
// role other than operator drops them.
func TestLocalUserScopes(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newEnv(t, url, nil)
		ctx := t.Context()
		if _, err := e.svc.BootstrapWithPassword(ctx, testPassword); err != nil {
			t.Fatal(err)
		}
		_, err := e.svc.CreateUser(ctx, "admin", api.User{Name: "ann", Role: api.RoleAdmin, Password: testPassword, Scopes: []string{"billing.*"}})
		wantAPIError(t, "a scoped admin", err, api.CodeInvalidArgument, "scopes")

		u, err := e.svc.CreateUser(ctx, "admin", api.User{Name: "olga", Role: api.RoleOperator, Password: testPassword, Scopes: []string{"billing.*"}})
		if err != nil || !cmp.Equal(u.Scopes, []string{"billing.*"}) {
			t.Fatalf("CreateUser = %+v, %v", u, err)
		}
		sess := e.login(t, "olga")
		if got, err := e.authAs(t, sess.Token); err != nil || !cmp.Equal(got.Scopes, []string{"billing.*"}) {
			t.Errorf("olga's session acts as %+v, %v; want scoped to billing.*", got, err)
		}
		if u, err := e.svc.UpdateUser(ctx, "admin", api.User{Name: "olga", Scopes: []string{"billing.*", "payroll"}}); err != nil || len(u.Scopes) != 2 {
			t.Errorf("UpdateUser(scopes) = %+v, %v", u, err)
		}
		_, err = e.svc.UpdateUser(ctx, "admin", api.User{Name: "olga", Role: api.RoleAdmin, Scopes: []string{"x"}})
		wantAPIError(t, "scoping an admin", err, api.CodeInvalidArgument, "scopes")
		if u, err := e.svc.UpdateUser(ctx, "admin", api.User{Name: "olga", Role: api.RoleViewer}); err != nil || len(u.Scopes) != 0 {
			t.Errorf("UpdateUser(viewer) = %+v, %v; want the scopes dropped", u, err)
		}
		if got, err := e.authAs(t, sess.Token); err != nil || got.Role != api.RoleViewer || len(got.Scopes) != 0 {
			t.Errorf("olga's session after the demotion acts as %+v, %v", got, err)
		}
	})
}
