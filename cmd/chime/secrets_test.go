package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/secret"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestSecretsAndExport manages secrets with the CLI on a real server, and
// exports a job that uses one as an admin and as a viewer: no export holds
// a secret's value, the viewer's masks the job's literal credentials, and
// applying the viewer's export cannot write its masks back.
func TestSecretsAndExport(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := servertest.Start(t, &servertest.Options{Config: server.Config{SecretKey: secret.GenerateKey()}})
	admin := []string{"--server", srv.URL, "--token", srv.AdminToken}
	run := func(stdin string, flags []string, args ...string) (string, error) {
		t.Helper()
		out, _, err := execChime(t, stdin, append(args, flags...)...)
		return out, err
	}
	mustRun := func(stdin string, flags []string, args ...string) string {
		t.Helper()
		out, err := run(stdin, flags, args...)
		if err != nil {
			t.Fatalf("chime %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	const value, newValue = "tok-value-0123456789", "tok-value-9876543210"

	if out := mustRun("", admin, "secrets", "list"); out != "no secrets\n" {
		t.Errorf("chime secrets list on a new server = %q", out)
	}
	keyID := regexp.MustCompile(`^Created secret billing-token \(key ([0-9a-f]{16})\)\.\n$`)
	out := mustRun(value+"\n", admin, "secrets", "set", "billing-token")
	if !keyID.MatchString(out) {
		t.Errorf("chime secrets set = %q", out)
	}
	file := writeFile(t, "token.txt", newValue+"\n")
	if out := mustRun("", admin, "secrets", "set", "billing-token", "--from-file", file); !strings.HasPrefix(out, "Replaced the value of secret billing-token (key ") {
		t.Errorf("chime secrets set --from-file = %q", out)
	}
	if _, err := run("", admin, "secrets", "set", "empty"); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("chime secrets set with nothing on standard input: %v, want an error saying it is empty", err)
	}

	job := api.Job{Group: "billing", Name: "sync", Type: "http",
		HTTP: json.RawMessage(`{"url":"https://billing.example.com/sync","headers":{` +
			`"Authorization":"Bearer {{secret \"billing-token\"}}","X-Legacy-Token":"legacy-plaintext-abc","Accept":"application/json"}}`),
		Alerts: &api.JobAlerts{Webhooks: []string{"https://hooks.slack.com/services/T0/B0/SECRETPATH"}}}
	if _, err := srv.Client.CreateJob(ctx, job); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	list := mustRun("", admin, "secrets", "list")
	if !regexp.MustCompile(`(?m)^billing-token +[0-9a-f]{16} +\d{4}-\S+ \S+ +admin +billing/sync$`).MatchString(list) {
		t.Errorf("chime secrets list:\n%s", list)
	}
	asJSON := mustRun("", admin, "secrets", "list", "-o", "json")
	for _, out := range []string{list, asJSON} {
		if strings.Contains(out, value) || strings.Contains(out, newValue) || strings.Contains(out, `"value"`) {
			t.Errorf("chime secrets list shows a value:\n%s", out)
		}
	}

	// The admin's export refers to the secret by name; its value is in no
	// export.
	exported := mustRun("", admin, "export")
	if !strings.Contains(exported, `Bearer {{secret "billing-token"}}`) || strings.Contains(exported, newValue) {
		t.Errorf("the admin's export:\n%s\nwant the reference, not the value", exported)
	}

	// A viewer's export masks the literal credential and the webhook.
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "vera's long password"}); err != nil {
		t.Fatal(err)
	}
	session, err := srv.Client.WithToken("").Login(ctx, "vera", "vera's long password")
	if err != nil {
		t.Fatal(err)
	}
	viewer := []string{"--server", srv.URL, "--token", session.Token}
	viewed := mustRun("", viewer, "export")
	for _, leak := range []string{newValue, "legacy-plaintext-abc", "SECRETPATH", "services/T0"} {
		if strings.Contains(viewed, leak) {
			t.Errorf("the viewer's export holds %q:\n%s", leak, viewed)
		}
	}
	for _, want := range []string{`Bearer {{secret "billing-token"}}`, "X-Legacy-Token: '****'", "application/json", "https://hooks.slack.com/****"} {
		if !strings.Contains(viewed, want) {
			t.Errorf("the viewer's export lacks %q:\n%s", want, viewed)
		}
	}
	if _, err := run("", viewer, "secrets", "list"); err == nil || !strings.Contains(err.Error(), "permission_denied") {
		t.Errorf("chime secrets list as a viewer: %v, want permission_denied", err)
	}

	// Applied by an admin, the viewer's masks are refused, not stored.
	masked := writeFile(t, "viewed.yaml", viewed)
	if out, err := run("y\n", admin, "apply", "-f", masked); err == nil || !strings.Contains(err.Error()+out, "the mask a viewer reads") {
		t.Errorf("applying a viewer's export: %v\n%s\nwant a refusal naming the mask", err, out)
	}
	stored, err := srv.Client.GetJob(ctx, "billing", "sync")
	if err != nil || !strings.Contains(string(stored.HTTP), "legacy-plaintext-abc") {
		t.Errorf("the job after the refused apply = %s, %v; want it unchanged", stored.HTTP, err)
	}

	if _, err := run("", admin, "secrets", "delete", "billing-token"); err == nil || !strings.Contains(err.Error(), "billing/sync") {
		t.Errorf("chime secrets delete of a used secret: %v, want a conflict naming the job", err)
	}
	if err := srv.Client.DeleteJob(ctx, "billing", "sync"); err != nil {
		t.Fatal(err)
	}
	if out := mustRun("", admin, "secrets", "delete", "billing-token"); out != "Deleted secret billing-token.\n" {
		t.Errorf("chime secrets delete = %q", out)
	}

	key := strings.TrimSpace(mustRun("", nil, "secrets", "keygen"))
	if _, err := secret.ParseKey(key); err != nil {
		t.Errorf("chime secrets keygen printed %q, which does not parse: %v", key, err)
	}
}
