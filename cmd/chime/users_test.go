package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestUsersTokensAudit manages users and tokens with the CLI on a real
// server and reads what it did back from the audit log.
func TestUsersTokensAudit(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	run := func(stdin string, args ...string) (string, error) {
		t.Helper()
		out, _, err := execChime(t, stdin, append(args, flags...)...)
		return out, err
	}
	mustRun := func(stdin string, args ...string) string {
		t.Helper()
		out, err := run(stdin, args...)
		if err != nil {
			t.Fatalf("chime %s: %v", strings.Join(args, " "), err)
		}
		return out
	}

	if out := mustRun("", "tokens", "list"); out != "no tokens\n" {
		t.Errorf("chime tokens list on a new server = %q", out)
	}
	if out := mustRun("ann's password\n", "users", "create", "ann", "--role", "viewer", "--password-stdin"); out != "Created user ann (viewer).\n" {
		t.Errorf("chime users create = %q", out)
	}
	out := mustRun("", "users", "list")
	for _, want := range []string{`(?m)^USER +ROLE +SHELL +CREATED$`, `(?m)^admin +admin +no +\d{4}-`, `(?m)^ann +viewer +no +\d{4}-`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("chime users list does not match %s:\n%s", want, out)
		}
	}
	var users []api.User
	if err := json.Unmarshal([]byte(mustRun("", "users", "list", "-o", "json")), &users); err != nil || len(users) != 2 {
		t.Errorf("chime users list -o json: %+v, %v", users, err)
	}
	users = nil
	if err := yaml.Unmarshal([]byte(mustRun("", "users", "list", "-o", "yaml")), &users); err != nil || len(users) != 2 || users[1].Name != "ann" {
		t.Errorf("chime users list -o yaml: %+v, %v", users, err)
	}
	if out := mustRun("", "users", "set-role", "ann", "operator"); out != "User ann is now operator.\n" {
		t.Errorf("chime users set-role = %q", out)
	}
	if out := mustRun("ann's new password\n", "users", "passwd", "ann", "--password-stdin"); out != "Password of user ann changed; its sessions have ended.\n" {
		t.Errorf("chime users passwd = %q", out)
	}
	if s, err := srv.Client.Login(t.Context(), "ann", "ann's new password"); err != nil || s.Role != api.RoleOperator {
		t.Errorf("ann's login with the new password: %+v, %v", s, err)
	}

	// A token for ann: its secret is printed once, and works.
	secret := strings.TrimSpace(mustRun("", "tokens", "create", "ann-ci", "--user", "ann", "--role", "viewer", "--expires-in", "24h"))
	if _, err := srv.Client.WithToken(secret).Me(t.Context()); err != nil {
		t.Fatalf("the secret chime tokens create printed (%q) does not authenticate: %v", secret, err)
	}
	var tokens []api.Token
	if err := json.Unmarshal([]byte(mustRun("", "tokens", "list", "-o", "json")), &tokens); err != nil || len(tokens) != 1 {
		t.Fatalf("chime tokens list -o json: %+v, %v", tokens, err)
	}
	if out := mustRun("", "tokens", "list"); !regexp.MustCompile(`(?m)^` + tokens[0].ID + ` +ann-ci +viewer +no +ann +- +\d{4}-.* \d{4}-`).MatchString(out) {
		t.Errorf("chime tokens list:\n%s", out)
	}
	if out := mustRun("", "tokens", "revoke", tokens[0].ID); out != "Revoked token "+tokens[0].ID+".\n" {
		t.Errorf("chime tokens revoke = %q", out)
	}
	if _, err := srv.Client.WithToken(secret).Me(t.Context()); !apiclient.IsCode(err, api.CodeUnauthenticated) {
		t.Errorf("a revoked token: %v, want unauthenticated", err)
	}
	if out := mustRun("", "users", "delete", "ann"); out != "Deleted user ann.\n" {
		t.Errorf("chime users delete = %q", out)
	}

	// The audit log has all of it, newest first, and filters.
	var audit api.AuditList
	if err := json.Unmarshal([]byte(mustRun("", "audit", "list", "--actor", "admin", "-o", "json")), &audit); err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range audit.Entries {
		actions = append(actions, e.Action+" "+e.Target)
	}
	want := []string{"user.delete users/ann", "token.delete tokens/" + tokens[0].ID, "token.create tokens/" + tokens[0].ID,
		"user.update users/ann", "user.update users/ann", "user.create users/ann"}
	if strings.Join(actions, "\n") != strings.Join(want, "\n") {
		t.Errorf("chime audit list --actor admin:\n%s\nwant\n%s", strings.Join(actions, "\n"), strings.Join(want, "\n"))
	}
	out = mustRun("", "audit", "list", "--target", "users/ann", "--limit", "1")
	if !regexp.MustCompile(`^TIME +ACTOR +ACTION +TARGET +DETAIL\n\d{4}-\S+ \S+ +admin +user\.delete +users/ann +\{"role":"operator"\}\n$`).MatchString(out) {
		t.Errorf("chime audit list --target users/ann --limit 1:\n%s", out)
	}
	if out := mustRun("", "audit", "list", "--actor", "nobody"); out != "no audit entries\n" {
		t.Errorf("chime audit list --actor nobody = %q", out)
	}

	// Bad input is refused with the field named, and changes nothing.
	for _, tt := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"create without a role", "a long password\n", []string{"users", "create", "bob", "--password-stdin"}, "--role is required: viewer, operator or admin"},
		{"unknown role", "a long password\n", []string{"users", "create", "bob", "--role", "root", "--password-stdin"}, "invalid_argument: role: "},
		{"short password", "short\n", []string{"users", "create", "bob", "--role", "viewer", "--password-stdin"}, "invalid_argument: password: must be at least 12 characters"},
		{"no password", "", []string{"users", "create", "bob", "--role", "viewer", "--password-stdin"}, "--password-stdin: no answer"},
		{"password on a non-terminal", "", []string{"users", "passwd", "admin"}, "standard input is not a terminal"},
		{"unknown user", "a long password\n", []string{"users", "passwd", "bob", "--password-stdin"}, "not_found: name: no user named \"bob\""},
		{"last admin", "", []string{"users", "set-role", "admin", "viewer"}, "conflict: role: user \"admin\" is the last admin"},
		{"negative expiry", "", []string{"tokens", "create", "x", "--expires-in", "-1h"}, "--expires-in -1h0m0s: want a positive duration"},
		{"limit", "", []string{"audit", "list", "--limit", "0"}, "--limit 0: want at least 1"},
		{"output", "", []string{"users", "list", "-o", "xml"}, `unknown output format "xml": want table, json or yaml`},
	} {
		if _, err := run(tt.stdin, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: chime %s: %v, want an error with %q", tt.name, strings.Join(tt.args, " "), err, tt.want)
		}
	}
	if users, err := srv.Client.ListUsers(t.Context()); err != nil || len(users) != 1 || users[0].Role != api.RoleAdmin {
		t.Errorf("the users after the refused commands: %+v, %v; want the admin alone", users, err)
	}
}

// TestUsersPasswdDatabase resets the admin's password with database
// access alone, on every database, while the server runs.
func TestUsersPasswdDatabase(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			srv := servertest.Start(t, &servertest.Options{Config: server.Config{DatabaseURL: url}})
			passwd := func(stdin, user string) (string, error) {
				t.Helper()
				// No --server and no token: the server's URL is not known
				// to the command, only the database's.
				out, _, err := execChimeEnv(t, testEnv(nil), strings.NewReader(stdin),
					"users", "passwd", user, "--database-url", url, "--password-stdin")
				return out, err
			}

			// Refused: too short, unknown user. Nothing changes.
			if _, err := passwd("short\n", "admin"); !apiclient.IsCode(err, api.CodeInvalidArgument) ||
				!strings.Contains(err.Error(), "password: must be at least 12 characters") {
				t.Errorf("a short password: %v", err)
			}
			if _, err := passwd("a long enough password\n", "nobody"); !apiclient.IsCode(err, api.CodeNotFound) {
				t.Errorf("an unknown user: %v", err)
			}
			if _, err := srv.Client.Me(t.Context()); err != nil {
				t.Fatalf("the admin's session after refused resets: %v", err)
			}

			out, err := passwd("the recovered password\n", "admin")
			if err != nil || !strings.HasPrefix(out, "Password of user admin changed in ") {
				t.Fatalf("chime users passwd --database-url = %q, %v", out, err)
			}
			if _, err := srv.Client.Me(t.Context()); !apiclient.IsCode(err, api.CodeUnauthenticated) {
				t.Errorf("the admin's old session: %v, want unauthenticated", err)
			}
			c, err := apiclient.New(srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Login(t.Context(), "admin", srv.AdminPassword); !apiclient.IsCode(err, api.CodeUnauthenticated) {
				t.Errorf("login with the old password: %v, want unauthenticated", err)
			}
			s, err := c.Login(t.Context(), "admin", "the recovered password")
			if err != nil {
				t.Fatalf("login with the new password: %v", err)
			}
			page, err := c.WithToken(s.Token).ListAudit(t.Context(), api.AuditQuery{Target: "users/admin", Limit: 1})
			if err != nil || len(page.Entries) != 1 || page.Entries[0].Actor != localActor || page.Entries[0].Action != "user.update" {
				t.Errorf("the audit log's last entry about the admin: %+v, %v; want a user.update by %s", page, err, localActor)
			}
		})
	}
}

// TestUsersShellCapability grants and revokes the shell capability with
// the CLI, and gives it to a token.
func TestUsersShellCapability(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	run := func(stdin string, args ...string) (string, error) {
		t.Helper()
		out, _, err := execChime(t, stdin, append(args, flags...)...)
		return out, err
	}
	mustRun := func(stdin string, args ...string) string {
		t.Helper()
		out, err := run(stdin, args...)
		if err != nil {
			t.Fatalf("chime %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	mustRun("ann's password\n", "users", "create", "ann", "--role", "operator", "--shell", "--password-stdin")
	mustRun("bob's password\n", "users", "create", "bob", "--role", "operator", "--password-stdin")
	out := mustRun("", "users", "list")
	for _, want := range []string{`(?m)^ann +operator +yes +\d{4}-`, `(?m)^bob +operator +no +\d{4}-`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("chime users list does not match %s:\n%s", want, out)
		}
	}
	if _, err := run("", "tokens", "create", "bob-shell", "--user", "bob", "--shell"); err == nil ||
		!strings.Contains(err.Error(), `user "bob" does not have the shell capability`) {
		t.Errorf("chime tokens create --shell for bob = %v, want refused", err)
	}
	if out := mustRun("", "users", "set-shell", "bob", "yes"); out != "User bob now has the shell capability.\n" {
		t.Errorf("chime users set-shell yes = %q", out)
	}
	mustRun("", "tokens", "create", "bob-shell", "--user", "bob", "--shell")
	if out := mustRun("", "tokens", "list"); !regexp.MustCompile(`(?m)^\S+ +bob-shell +operator +yes +bob `).MatchString(out) {
		t.Errorf("chime tokens list does not show the token's shell capability:\n%s", out)
	}
	if out := mustRun("", "users", "set-shell", "ann", "no"); out != "User ann no longer has the shell capability.\n" {
		t.Errorf("chime users set-shell no = %q", out)
	}
	if _, err := run("", "users", "set-shell", "ann", "maybe"); err == nil || !strings.Contains(err.Error(), "want yes or no") {
		t.Errorf("chime users set-shell maybe = %v, want refused", err)
	}
}

// TestTokensExecutor creates a token of role executor with the CLI: it
// serves the groups given and may register executors there, nowhere else.
func TestTokensExecutor(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	out, stderr, err := execChime(t, "", append([]string{"tokens", "create", "billing-exec", "--role", "executor", "--group", "billing,ops"}, flags...)...)
	if err != nil {
		t.Fatalf("chime tokens create --role executor: %v\n%s", err, stderr)
	}
	secret := strings.TrimSpace(out)
	ex := srv.Client.WithToken(secret)
	if _, err := ex.RegisterExecutor(t.Context(), api.ExecutorRegister{Group: "ops", Handlers: []string{"h"}}); err != nil {
		t.Errorf("registering in a group of the token: %v", err)
	}
	if _, err := ex.RegisterExecutor(t.Context(), api.ExecutorRegister{Group: "web", Handlers: []string{"h"}}); !apiclient.IsCode(err, api.CodePermissionDenied) {
		t.Errorf("registering in another group: %v, want permission_denied", err)
	}
	out, _, err = execChime(t, "", append([]string{"tokens", "list"}, flags...)...)
	if err != nil || !regexp.MustCompile(`(?m) +billing-exec +executor +no +admin +billing,ops +\d{4}-`).MatchString(out) {
		t.Errorf("chime tokens list: %v\n%s", err, out)
	}
	if _, _, err := execChime(t, "", append([]string{"tokens", "create", "no-group", "--role", "executor"}, flags...)...); err == nil || !strings.Contains(err.Error(), "groups") {
		t.Errorf("an executor token without --group: %v, want an error naming groups", err)
	}
}
