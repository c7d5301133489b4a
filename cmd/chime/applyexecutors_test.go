package main

import (
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestApplyExecutorJobsToAFreshCluster applies an executor job to a
// server no executor has registered with: refused, naming
// jobs[0].executor.group, and nothing is stored; with allow_unregistered
// it is saved, and applying the file again changes nothing. Once an
// executor of the group registered, the job without the escape is saved.
func TestApplyExecutorJobsToAFreshCluster(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	apply := func(yaml string) (string, string, error) {
		t.Helper()
		return execChime(t, "", append([]string{"apply", "-f", writeFile(t, "jobs.yaml", yaml), "--yes"}, flags...)...)
	}
	job := `jobs:
  - group: billing
    name: close-month
    type: executor
    executor: {group: billing, handler: invoice.close%s}
    triggers: [{schedule: {kind: cron, expression: "0 0 2 1 * ?"}}]
`
	_, stderr, err := apply(strings.Replace(job, "%s", "", 1))
	if err == nil || !strings.Contains(stderr+err.Error(), "executor.group") {
		t.Errorf("chime apply before any executor: %v, %q; want a refusal naming executor.group", err, stderr)
	}
	if _, err := srv.Client.GetJob(t.Context(), "billing", "close-month"); err == nil {
		t.Errorf("the refused job was stored")
	}

	escaped := strings.Replace(job, "%s", ", allow_unregistered: true", 1)
	if _, stderr, err := apply(escaped); err != nil {
		t.Fatalf("chime apply with allow_unregistered: %v, %q", err, stderr)
	}
	before, err := srv.Client.GetJob(t.Context(), "billing", "close-month")
	if err != nil || before.Executor == nil || !before.Executor.AllowUnregistered {
		t.Fatalf("GetJob: %+v, %v; want the job with allow_unregistered", before, err)
	}
	if _, stderr, err := apply(escaped); err != nil {
		t.Fatalf("chime apply again: %v, %q", err, stderr)
	}
	if again, err := srv.Client.GetJob(t.Context(), "billing", "close-month"); err != nil || again.Version != before.Version {
		t.Errorf("applying the same file again: version %d, %v; want %d, unchanged", again.Version, err, before.Version)
	}

	tok, err := srv.Client.CreateToken(t.Context(), api.Token{Name: "exec", Role: api.RoleExecutor, Groups: []string{"billing"}})
	if err != nil {
		t.Fatal(err)
	}
	ec, err := apiclient.New(srv.URL, &apiclient.Options{Token: tok.Secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ec.RegisterExecutor(t.Context(), api.ExecutorRegister{Group: "billing", Handlers: []string{"invoice.close"}}); err != nil {
		t.Fatalf("RegisterExecutor: %v", err)
	}
	if _, stderr, err := apply(strings.Replace(job, "%s", "", 1)); err != nil {
		t.Errorf("chime apply once an executor registered: %v, %q", err, stderr)
	}
}
