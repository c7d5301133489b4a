package auth_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/auth"
)

// TestTokens creates, uses, lists, expires and revokes API tokens.
func TestTokens(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newEnv(t, url, nil)
		ctx := t.Context()
		e.createUser(t, "ann", api.RoleAdmin)
		e.createUser(t, "bob", api.RoleOperator)

		ci, err := e.svc.CreateToken(ctx, "ann", api.Token{Name: "ci", Role: api.RoleViewer})
		if err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		if !strings.HasPrefix(ci.Secret, auth.TokenPrefix) || len(ci.Secret) != len(auth.TokenPrefix)+43 ||
			ci.User != "ann" || ci.Role != api.RoleViewer || ci.ID == "" || ci.Created == nil {
			t.Errorf("CreateToken = %+v, want a chime_ secret, user ann (the actor), role viewer, an ID and Created", ci)
		}
		e.wantUser(t, ci.Secret, "ann", api.RoleViewer)

		// Role defaults to the user's, may not exceed it, and is bounded by
		// the user's current one.
		deploy, err := e.svc.CreateToken(ctx, "ann", api.Token{Name: "deploy", User: "bob"})
		if err != nil || deploy.Role != api.RoleOperator {
			t.Fatalf("CreateToken for bob = %+v, %v; want bob's role, operator", deploy, err)
		}
		_, err = e.svc.CreateToken(ctx, "ann", api.Token{Name: "escalate", User: "bob", Role: api.RoleAdmin})
		ae := wantAPIError(t, "CreateToken above its user's role", err, api.CodeInvalidArgument, "role")
		if want := `admin exceeds the role of user "bob" (operator)`; ae.Message != want {
			t.Errorf("message %q, want %q", ae.Message, want)
		}
		if _, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "bob", Role: api.RoleViewer}); err != nil {
			t.Fatal(err)
		}
		e.wantUser(t, deploy.Secret, "bob", api.RoleViewer)

		_, err = e.svc.CreateToken(ctx, "ann", api.Token{Name: "ci"})
		wantAPIError(t, "CreateToken with a taken name", err, api.CodeConflict, "name")

		// Last use is recorded, at most once a minute.
		e.clock.Advance(time.Hour)
		e.wantUser(t, ci.Secret, "ann", api.RoleViewer)
		e.clock.Advance(30 * time.Second)
		e.wantUser(t, ci.Secret, "ann", api.RoleViewer)
		tokens, err := e.svc.ListTokens(ctx)
		if err != nil || len(tokens) != 2 {
			t.Fatalf("ListTokens = %v, %v; want 2 tokens", tokens, err)
		}
		listed := tokens[0]
		if listed.Name != "ci" || listed.Secret != "" || listed.ID != ci.ID || listed.LastUsed == nil ||
			!listed.LastUsed.Equal(e.clock.Now().Add(-30*time.Second)) || !listed.Created.Equal(*ci.Created) {
			t.Errorf("ListTokens[0] = %+v, want ci without its secret, last used 30s ago", listed)
		}

		// A token with an expiry stops working then.
		expires := e.clock.Now().Add(time.Hour)
		short, err := e.svc.CreateToken(ctx, "ann", api.Token{Name: "short-lived", Expires: &expires})
		if err != nil || short.Expires == nil || !short.Expires.Equal(expires) {
			t.Fatalf("CreateToken with an expiry = %+v, %v", short, err)
		}
		e.clock.Advance(59 * time.Minute)
		e.wantUser(t, short.Secret, "ann", api.RoleAdmin)
		e.clock.Advance(time.Minute)
		e.wantRefused(t, "an expired token", short.Secret)

		// Revoked.
		if err := e.svc.DeleteToken(ctx, "ann", ci.ID); err != nil {
			t.Fatalf("DeleteToken: %v", err)
		}
		e.wantRefused(t, "a revoked token", ci.Secret)
		err = e.svc.DeleteToken(ctx, "ann", ci.ID)
		wantAPIError(t, "DeleteToken of a revoked token", err, api.CodeNotFound, "id")
		e.wantUser(t, deploy.Secret, "bob", api.RoleViewer)

		// Logout with a token does not revoke it.
		if err := e.svc.Logout(ctx, deploy.Secret); err != nil {
			t.Errorf("Logout with a token: %v", err)
		}
		e.wantUser(t, deploy.Secret, "bob", api.RoleViewer)

		var got []string
		for _, a := range e.audit.Entries(t) {
			if strings.Contains(a, " token.") {
				got = append(got, a)
			}
		}
		want := []string{
			"ann token.create tokens/" + ci.ID + " map[name:ci role:viewer user:ann]",
			"ann token.create tokens/" + deploy.ID + " map[name:deploy role:operator user:bob]",
			"ann token.create tokens/" + short.ID + " map[expires:" + expires.Format(time.RFC3339) + " name:short-lived role:admin user:ann]",
			"ann token.delete tokens/" + ci.ID + " map[name:ci]",
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("token audit entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestExecutorTokenIsTrustedForASecond: a node keeps an executor token's
// lookup for a second. Removed from the database behind the service's back
// (as another node's revocation is), it still authenticates within that
// second and not after it; revoked through the service, or its owner no
// longer an admin, it is refused at once. Other tokens are looked up on
// every request.
func TestExecutorTokenIsTrustedForASecond(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		ctx := t.Context()
		e := newEnv(t, url, nil)
		e.createUser(t, "ann", api.RoleAdmin)
		e.createUser(t, "bob", api.RoleAdmin)
		create := func(name, user string, role api.Role, groups ...string) *api.Token {
			t.Helper()
			tok, err := e.svc.CreateToken(ctx, "test", api.Token{Name: name, Role: role, User: user, Groups: groups})
			if err != nil {
				t.Fatalf("CreateToken %s: %v", name, err)
			}
			return tok
		}
		removeBehind := func(tok *api.Token) {
			t.Helper()
			if _, err := e.st.DB().ExecContext(ctx, e.st.SQL("DELETE FROM {p}auth_tokens WHERE sched_name = ? AND id = ?"),
				e.st.SchedulerName(), tok.ID); err != nil {
				t.Fatalf("deleting token %s: %v", tok.Name, err)
			}
		}

		exec, ops := create("exec", "ann", api.RoleExecutor, "billing"), create("ops", "ann", api.RoleOperator)
		e.wantUser(t, exec.Secret, "ann", api.RoleExecutor)
		e.wantUser(t, ops.Secret, "ann", api.RoleOperator)
		removeBehind(exec)
		removeBehind(ops)
		u, err := e.authAs(t, exec.Secret)
		if err != nil || u.Role != api.RoleExecutor || len(u.Groups) != 1 || u.Groups[0] != "billing" || u.Shell == nil || *u.Shell {
			t.Errorf("the executor token within its second: %+v, %v; want ann, executor of billing, no shell", u, err)
		}
		u.Groups[0] = "changed" // a caller's copy
		e.wantRefused(t, "the operator token, removed", ops.Secret)
		e.clock.Advance(time.Second)
		e.wantRefused(t, "the executor token a second after it was removed", exec.Secret)

		revoked := create("revoked", "ann", api.RoleExecutor, "billing")
		e.wantUser(t, revoked.Secret, "ann", api.RoleExecutor)
		if err := e.svc.DeleteToken(ctx, "ann", revoked.ID); err != nil {
			t.Fatalf("DeleteToken: %v", err)
		}
		e.wantRefused(t, "the executor token revoked through the service", revoked.Secret)

		demoted := create("demoted", "bob", api.RoleExecutor, "billing")
		if u, err := e.authAs(t, demoted.Secret); err != nil || u.Groups[0] != "billing" {
			t.Fatalf("the executor token of bob: %+v, %v", u, err)
		}
		if _, err := e.svc.UpdateUser(ctx, "ann", api.User{Name: "bob", Role: api.RoleViewer}); err != nil {
			t.Fatalf("UpdateUser: %v", err)
		}
		e.wantRefused(t, "the executor token of an owner no longer an admin", demoted.Secret)
	})
}
