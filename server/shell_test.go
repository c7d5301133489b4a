package server_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
)

// wantAPIError checks that err is an *api.Error with code, whose message
// contains text.
func wantAPIError(t *testing.T, what string, err error, code api.ErrorCode, field, text string) {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) {
		t.Fatalf("%s: error %v, want an *api.Error %s", what, err, code)
	}
	if ae.Code != code || ae.Field != field || !strings.Contains(ae.Message, text) {
		t.Errorf("%s: error %q (code %s, field %q), want code %s, field %q, a message with %q", what, ae.Message, ae.Code, ae.Field, code, field, text)
	}
}

// TestShellJobsNeedTheShellCapability checks, over the API, that an
// operator writes shell jobs only with the shell capability an admin
// grants, while running one as saved stays with the operator role.
func TestShellJobsNeedTheShellCapability(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			srv := servertest.Start(t, &servertest.Options{Config: server.Config{
				DatabaseURL: db.URL(t), EnableShellJobs: true, ShellAllow: []string{"/bin/echo"},
			}})
			ctx := t.Context()
			admin := srv.Client
			yes := true
			login := func(name string, shell bool) *apiclient.Client {
				t.Helper()
				u := api.User{Name: name, Role: api.RoleOperator, Password: "correct horse battery"}
				if shell {
					u.Shell = &yes
				}
				if _, err := admin.CreateUser(ctx, u); err != nil {
					t.Fatalf("CreateUser(%s): %v", name, err)
				}
				c, err := apiclient.New(srv.URL, nil)
				if err != nil {
					t.Fatal(err)
				}
				sess, err := c.Login(ctx, name, u.Password)
				if err != nil {
					t.Fatalf("Login(%s): %v", name, err)
				}
				return c.WithToken(sess.Token)
			}
			plain, shell := login("olga", false), login("sam", true)

			echo := api.Job{Group: "ops", Name: "echo", Type: "shell", Shell: []byte(`{"argv":["/bin/echo","{{.Params.word}}"]}`),
				Data: map[string]any{"word": "hello"}}
			_, err := plain.CreateJob(ctx, echo)
			wantAPIError(t, "creating a shell job without the capability", err, api.CodePermissionDenied, "",
				"creating shell job ops/echo needs the shell capability, which olga does not have")
			if _, err := shell.CreateJob(ctx, echo); err != nil {
				t.Fatalf("creating a shell job with the capability: %v", err)
			}

			// Changing it, turning it into another type, and deleting it are
			// writes to a shell job.
			changed := echo
			changed.Description = "now with a description"
			_, _, err = plain.PutJob(ctx, changed, 0)
			wantAPIError(t, "changing a shell job", err, api.CodePermissionDenied, "", "writing shell job ops/echo")
			asHTTP := api.Job{Group: "ops", Name: "echo", Type: "http", HTTP: []byte(`{"url":"https://example.com"}`)}
			_, _, err = plain.PutJob(ctx, asHTTP, 0)
			wantAPIError(t, "turning a shell job into an http job", err, api.CodePermissionDenied, "", "writing shell job ops/echo")
			err = plain.DeleteJob(ctx, "ops", "echo")
			wantAPIError(t, "deleting a shell job", err, api.CodePermissionDenied, "", "deleting shell job ops/echo")

			// Running it as saved is an operator's; parameters feed its
			// command, so they need the capability.
			acc, err := plain.RunJob(ctx, "ops", "echo", api.RunRequest{})
			if err != nil {
				t.Fatalf("running a shell job as saved: %v", err)
			}
			_, err = plain.RunJob(ctx, "ops", "echo", api.RunRequest{Params: map[string]any{"word": "--help"}})
			wantAPIError(t, "running a shell job with parameters", err, api.CodePermissionDenied, "", "running with parameters shell job ops/echo")
			if _, err := shell.RunJob(ctx, "ops", "echo", api.RunRequest{Params: map[string]any{"word": "bye"}}); err != nil {
				t.Fatalf("running a shell job with parameters and the capability: %v", err)
			}
			waitOutcome(t, admin, acc.ExecutionIDs[0], "succeeded")

			// Other jobs stay an operator's.
			if _, err := plain.CreateJob(ctx, api.Job{Group: "ops", Name: "ping", Type: "http", HTTP: []byte(`{"url":"https://example.com"}`)}); err != nil {
				t.Fatalf("creating an http job as an operator: %v", err)
			}
			if err := plain.DeleteJob(ctx, "ops", "ping"); err != nil {
				t.Fatalf("deleting an http job as an operator: %v", err)
			}

			// A grant applies to the user's session at once.
			if _, err := admin.UpdateUser(ctx, api.User{Name: "olga", Shell: &yes}); err != nil {
				t.Fatal(err)
			}
			if err := plain.DeleteJob(ctx, "ops", "echo"); err != nil {
				t.Fatalf("deleting a shell job once granted the capability: %v", err)
			}
			me, err := plain.Me(ctx)
			if err != nil || !me.CanShell() {
				t.Errorf("GET /auth/me = %+v, %v; want the shell capability", me, err)
			}
		})
	}
}

// waitOutcome waits for execution id to finish with outcome.
func waitOutcome(t *testing.T, c *apiclient.Client, id, outcome string) *api.Execution {
	t.Helper()
	var e *api.Execution
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := c.GetExecution(t.Context(), id)
		if err == nil && got.Outcome != "running" {
			e = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s did not finish within 20s (last: %+v, %v)", id, got, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the API: nothing to wait on
	}
	if e.Outcome != outcome {
		t.Errorf("execution %s = %s (%s), want %s", id, e.Outcome, e.Error, outcome)
	}
	return e
}

// TestShellAllowList checks that a shell job whose program is not in the
// server's allow-list is refused when saved, naming the field, as is the
// inherit_env: true of earlier versions.
func TestShellAllowList(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, &servertest.Options{Config: server.Config{EnableShellJobs: true, ShellAllow: []string{"/bin/echo"}}})
	ctx := t.Context()
	for _, tc := range []struct {
		name, spec, field, text string
	}{
		{"not listed", `{"argv":["/bin/rm","-rf","/tmp/x"]}`, "shell.argv[0]", `"/bin/rm" is not in this server's allow-list of commands (shell_allow)`},
		{"looked up in PATH", `{"argv":["echo","hi"]}`, "shell.argv[0]", "is not a clean absolute path"},
		{"script", `{"shell":"echo hi"}`, "shell.shell", "scripts run /bin/sh"},
	} {
		_, err := srv.Client.CreateJob(ctx, api.Job{Group: "ops", Name: "bad", Type: "shell", Shell: []byte(tc.spec)})
		wantAPIError(t, tc.name, err, api.CodeInvalidArgument, tc.field, tc.text)
	}
	if _, err := srv.Client.GetJob(ctx, "ops", "bad"); !apiclient.IsCode(err, api.CodeNotFound) {
		t.Errorf("GetJob of a refused job: %v, want not_found", err)
	}
	_, err := srv.Client.CreateJob(ctx, api.Job{Group: "ops", Name: "inherit", Type: "shell",
		Shell: []byte(`{"argv":["/bin/echo"],"inherit_env":true}`)})
	wantAPIError(t, "inherit_env true", err, api.CodeInvalidArgument, "shell.inherit_env", `list the variables to pass by name`)

}
