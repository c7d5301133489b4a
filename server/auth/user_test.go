package auth_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/auth"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// userNames returns the names of the users.
func userNames(t *testing.T, e *env) []string {
	t.Helper()
	users, err := e.svc.ListUsers(t.Context())
	if err != nil {
		t.Fatalf("ListUsers: %v", err)
	}
	var names []string
	for _, u := range users {
		if u.Password != "" {
			t.Errorf("ListUsers returns a password for %s", u.Name)
		}
		names = append(names, u.Name+":"+string(u.Role))
	}
	return names
}

// TestUsers creates, lists, changes and deletes users, and checks their
// audit entries.
func TestUsers(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newEnv(t, url, nil)
		ctx := t.Context()
		u, err := e.svc.CreateUser(ctx, "root", api.User{Name: "ann", Role: api.RoleAdmin, Password: testPassword})
		if err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		if u.Password != "" || u.Created == nil || !u.Created.Equal(e.clock.Now()) {
			t.Errorf("CreateUser = %+v, want no password and Created now", u)
		}
		e.createUser(t, "bob", api.RoleViewer)
		_, err = e.svc.CreateUser(ctx, "root", api.User{Name: "bob", Role: api.RoleAdmin, Password: testPassword})
		wantAPIError(t, "CreateUser of a taken name", err, api.CodeConflict, "name")
		if got, want := userNames(t, e), []string{"ann:admin", "bob:viewer"}; !slices.Equal(got, want) {
			t.Errorf("ListUsers = %v, want %v", got, want)
		}

		u, err = e.svc.UpdateUser(ctx, "ann", api.User{Name: "bob", Role: api.RoleOperator})
		if err != nil || u.Role != api.RoleOperator || u.Created == nil {
			t.Errorf("UpdateUser(role) = %+v, %v; want bob as operator with Created", u, err)
		}
		_, err = e.svc.UpdateUser(ctx, "ann", api.User{Name: "carl", Role: api.RoleOperator})
		wantAPIError(t, "UpdateUser of an unknown user", err, api.CodeNotFound, "name")

		sess := e.login(t, "bob")
		e.wantUser(t, sess.Token, "bob", api.RoleOperator)
		tok, err := e.svc.CreateToken(ctx, "ann", api.Token{Name: "bob's token", User: "bob"})
		if err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		if err := e.svc.DeleteUser(ctx, "ann", "bob"); err != nil {
			t.Fatalf("DeleteUser: %v", err)
		}
		e.wantRefused(t, "a deleted user's session", sess.Token)
		e.wantRefused(t, "a deleted user's token", tok.Secret)
		if tokens, err := e.svc.ListTokens(ctx); err != nil || len(tokens) != 0 {
			t.Errorf("ListTokens after deleting their user = %v, %v; want none", tokens, err)
		}
		err = e.svc.DeleteUser(ctx, "ann", "bob")
		wantAPIError(t, "DeleteUser of a deleted user", err, api.CodeNotFound, "name")
		if got, want := userNames(t, e), []string{"ann:admin"}; !slices.Equal(got, want) {
			t.Errorf("ListUsers = %v, want %v", got, want)
		}

		got := e.audit.Entries(t)
		want := []string{
			"ann token.create tokens/" + tok.ID + " map[name:bob's token role:operator user:bob]",
			"ann user.delete users/bob map[role:operator]",
			"ann user.update users/bob map[role:operator]",
			"root user.create users/ann map[role:admin]",
			"test user.create users/bob map[role:viewer]",
		}
		if !slices.Equal(got, want) {
			t.Errorf("audit entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestValidation checks that bad input is refused with an error naming
// the field, and changes nothing.
func TestValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.SQLiteURL(t), nil)
	ctx := t.Context()
	e.createUser(t, "ann", api.RoleAdmin)
	long := strings.Repeat("x", 65)
	for _, tc := range []struct {
		name, field, message string
		call                 func() error
	}{
		{"short password", "password", "must be at least 12 characters", func() error {
			_, err := e.svc.CreateUser(ctx, "ann", api.User{Name: "bob", Role: api.RoleViewer, Password: "short"})
			return err
		}},
		{"password beyond bcrypt", "password", "must be at most 72 bytes (bcrypt reads no more)", func() error {
			_, err := e.svc.CreateUser(ctx, "ann", api.User{Name: "bob", Role: api.RoleViewer, Password: strings.Repeat("p", 73)})
			return err
		}},
		{"no password", "password", "required", func() error {
			_, err := e.svc.CreateUser(ctx, "ann", api.User{Name: "bob", Role: api.RoleViewer})
			return err
		}},
		{"upper-case name", "name", `"Bob": want lower-case letters, digits, '.', '_', '-' and '@', starting with a letter or digit`, func() error {
			_, err := e.svc.CreateUser(ctx, "ann", api.User{Name: "Bob", Role: api.RoleViewer, Password: testPassword})
			return err
		}},
		{"long name", "name", "is 65 characters long, at most 64 allowed", func() error {
			_, err := e.svc.CreateUser(ctx, "ann", api.User{Name: long, Role: api.RoleViewer, Password: testPassword})
			return err
		}},
		{"no role", "role", "required: want viewer, operator or admin", func() error {
			_, err := e.svc.CreateUser(ctx, "ann", api.User{Name: "bob", Password: testPassword})
			return err
		}},
		{"unknown role", "role", `"root" is not a role: want viewer, operator or admin`, func() error {
			_, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "ann", Role: "root"})
			return err
		}},
		{"nothing to change", "", "nothing to change: set role, password, shell, scopes or several", func() error {
			_, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "ann"})
			return err
		}},
		{"short new password", "password", "must be at least 12 characters", func() error {
			_, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "ann", Role: api.RoleViewer, Password: "short"})
			return err
		}},
		{"token without a name", "name", "required", func() error {
			_, err := e.svc.CreateToken(ctx, "ann", api.Token{Role: api.RoleViewer})
			return err
		}},
		{"token name with a newline", "name", `"ci\nbot" holds a character that is not printable`, func() error {
			_, err := e.svc.CreateToken(ctx, "ann", api.Token{Name: "ci\nbot"})
			return err
		}},
		{"token for an unknown user", "user", `no user named "bob"`, func() error {
			_, err := e.svc.CreateToken(ctx, "ann", api.Token{Name: "ci", User: "bob"})
			return err
		}},
		{"token expired already", "expires", "2026-03-01T09:00:00Z is not in the future", func() error {
			now := e.clock.Now()
			_, err := e.svc.CreateToken(ctx, "ann", api.Token{Name: "ci", Expires: &now})
			return err
		}},
		{"token without an ID", "id", "required", func() error {
			return e.svc.DeleteToken(ctx, "ann", "")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ae := wantAPIError(t, tc.name, tc.call(), api.CodeInvalidArgument, tc.field)
			if ae.Message != tc.message {
				t.Errorf("message %q, want %q", ae.Message, tc.message)
			}
		})
	}
	_, err := e.svc.CreateUser(ctx, "ann", api.User{Name: "bob", Role: api.RoleViewer, Password: "short"})
	if want := "invalid_argument: password: must be at least 12 characters"; err == nil || err.Error() != want {
		t.Errorf("CreateUser with a short password: %v, want %q", err, want)
	}
	if got, want := userNames(t, e), []string{"ann:admin"}; !slices.Equal(got, want) {
		t.Errorf("after refused changes ListUsers = %v, want %v", got, want)
	}
	if tokens, err := e.svc.ListTokens(ctx); err != nil || len(tokens) != 0 {
		t.Errorf("after refused changes ListTokens = %v, %v; want none", tokens, err)
	}
	if got := len(e.audit.Entries(t)); got != 1 {
		t.Errorf("%d audit entries, want 1: refused changes record none", got)
	}
}

// TestLastAdmin checks that the last admin can be neither deleted nor
// demoted, also when two admins are deleted at once.
func TestLastAdmin(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newEnv(t, url, nil)
		ctx := t.Context()
		e.createUser(t, "ann", api.RoleAdmin)
		e.createUser(t, "bob", api.RoleViewer)

		err := e.svc.DeleteUser(ctx, "ann", "ann")
		ae := wantAPIError(t, "DeleteUser of the last admin", err, api.CodeConflict, "")
		if want := `user "ann" is the last admin and cannot be deleted: make another user admin first`; ae.Message != want {
			t.Errorf("message %q, want %q", ae.Message, want)
		}
		_, err = e.svc.UpdateUser(ctx, "ann", api.User{Name: "ann", Role: api.RoleOperator})
		wantAPIError(t, "UpdateUser demoting the last admin", err, api.CodeConflict, "role")
		if _, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "ann", Role: api.RoleAdmin, Password: "a new long password"}); err != nil {
			t.Errorf("UpdateUser keeping the last admin an admin: %v", err)
		}

		// Two admins deleted at once, from two nodes: one goes.
		if _, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "bob", Role: api.RoleAdmin}); err != nil {
			t.Fatalf("UpdateUser(bob admin): %v", err)
		}
		other, err := auth.New(ctx, openStore(t, url, nil), &auth.Options{BcryptCost: bcrypt.MinCost})
		if err != nil {
			t.Fatalf("auth.New: %v", err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { errs[0] = e.svc.DeleteUser(ctx, "bob", "ann") })
		wg.Go(func() { errs[1] = other.DeleteUser(ctx, "ann", "bob") })
		wg.Wait()
		var conflicts int
		for _, err := range errs {
			var ae *api.Error
			switch {
			case err == nil:
			case errors.As(err, &ae) && ae.Code == api.CodeConflict:
				conflicts++
			default:
				t.Errorf("concurrent DeleteUser: %v", err)
			}
		}
		names := userNames(t, e)
		if conflicts != 1 || len(names) != 1 || !strings.HasSuffix(names[0], ":admin") {
			t.Errorf("two admins deleted at once: %d conflicts, users %v; want 1 conflict and one admin left", conflicts, names)
		}
	})
}

// TestBootstrap starts eight nodes at once on one empty database: each
// creates the tables and bootstraps, exactly one creates the admin, and
// its password logs in.
func TestBootstrap(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		ctx := t.Context()
		const n = 8
		svcs := make([]*auth.Service, n)
		stores := make([]*sqlstore.Store, n)
		for i := range stores {
			stores[i] = openStore(t, url, &sqlstore.Options{MaxOpenConns: 2})
		}
		type result struct {
			password string
			created  bool
			err      error
		}
		results := make([]result, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				var err error
				svcs[i], err = auth.New(ctx, stores[i], &auth.Options{BcryptCost: bcrypt.MinCost})
				if err != nil {
					results[i].err = fmt.Errorf("New: %w", err)
					return
				}
				r := &results[i]
				r.password, r.created, r.err = svcs[i].Bootstrap(ctx)
			})
		}
		wg.Wait()
		var password string
		for i, r := range results {
			switch {
			case r.err != nil:
				t.Fatalf("node %d: %v", i, r.err)
			case r.created && password != "":
				t.Errorf("node %d created the first admin too", i)
			case r.created:
				password = r.password
			case r.password != "":
				t.Errorf("node %d returned a password without creating the admin", i)
			}
		}
		if len(password) != 20 || strings.Trim(password, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != "" {
			t.Fatalf("first admin's password %q: want 20 letters and digits from exactly one node", password)
		}
		sess, err := svcs[3].Login(ctx, auth.BootstrapUser, password, "192.0.2.1")
		if err != nil || sess.Role != api.RoleAdmin {
			t.Fatalf("Login as the first admin = %+v, %v; want an admin session", sess, err)
		}
		if _, created, err := svcs[0].Bootstrap(ctx); created || err != nil {
			t.Errorf("Bootstrap with an admin = created %v, %v; want false, nil", created, err)
		}

		// Users but no "admin": nothing to bootstrap.
		if _, err := svcs[0].CreateUser(ctx, "admin", api.User{Name: "ann", Role: api.RoleAdmin, Password: testPassword}); err != nil {
			t.Fatal(err)
		}
		if err := svcs[0].DeleteUser(ctx, "ann", auth.BootstrapUser); err != nil {
			t.Fatal(err)
		}
		if _, created, err := svcs[0].Bootstrap(ctx); created || err != nil {
			t.Errorf("Bootstrap with users but none named admin = created %v, %v; want false, nil", created, err)
		}
	})
}

// TestSchedulersShareDatabase runs two schedulers' services on one
// database and tables: neither sees the other's users or sessions.
func TestSchedulersShareDatabase(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		ctx := t.Context()
		a := newEnv(t, url, nil)
		b, err := auth.New(ctx, openStore(t, url, &sqlstore.Options{SchedulerName: "other"}), &auth.Options{BcryptCost: bcrypt.MinCost})
		if err != nil {
			t.Fatalf("auth.New: %v", err)
		}
		if _, created, err := a.svc.Bootstrap(ctx); !created || err != nil {
			t.Fatalf("Bootstrap = created %v, %v; want the first admin", created, err)
		}
		if got, want := a.audit.Entries(t), []string{"system user.create users/admin map[bootstrap:true role:admin]"}; !slices.Equal(got, want) {
			t.Errorf("audit entries after Bootstrap = %q, want %q", got, want)
		}
		a.createUser(t, "ann", api.RoleAdmin)
		sess := a.login(t, "ann")
		if _, err := b.Authenticate(ctx, bearer(sess.Token)); err == nil {
			t.Errorf("another scheduler accepts ann's session")
		}
		if users, err := b.ListUsers(ctx); err != nil || len(users) != 0 {
			t.Errorf("another scheduler's ListUsers = %v, %v; want none", users, err)
		}
		if _, created, err := b.Bootstrap(ctx); !created || err != nil {
			t.Errorf("another scheduler's Bootstrap = created %v, %v; want its own first admin", created, err)
		}
	})
}
