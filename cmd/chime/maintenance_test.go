package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestMaintenanceCommands starts, shows and ends a maintenance window on
// one group through the CLI, and checks the refusals it prints.
func TestMaintenanceCommands(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	target := newEndpoint(t, http.StatusOK, "pong").URL
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	run := func(args ...string) (string, error) {
		t.Helper()
		out, _, err := execChime(t, "", append(args, flags...)...)
		return out, err
	}
	file := writeFile(t, "jobs.yaml", `jobs:
  - group: billing
    name: invoice
    type: http
    http: {url: `+target+`}
    triggers:
      - schedule: {kind: cron, expression: "0 0 * * * ?"}
`)
	if _, err := run("apply", "-f", file, "--yes"); err != nil {
		t.Fatal(err)
	}

	if out, err := run("maintenance", "status"); err != nil || out != "No maintenance window is on.\n" {
		t.Errorf("chime maintenance status before = %q, %v", out, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"maintenance", "start"}, "invalid_argument: reason: is required"},
		{[]string{"maintenance", "start", "--group", "nosuch", "--reason", "upgrade"}, `invalid_argument: group: no job is in group "nosuch"`},
		{[]string{"maintenance", "end"}, "conflict: no maintenance window is on"},
	} {
		if _, err := run(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("chime %s: %v, want an error containing %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}

	out, err := run("maintenance", "start", "--group", "billing", "--reason", "ledger migration")
	if err != nil || !strings.HasPrefix(out, "Maintenance on group billing since ") || !strings.HasSuffix(out, ", started by "+servertest.AdminName+": ledger migration\n") {
		t.Errorf("chime maintenance start = %q, %v", out, err)
	}
	var m api.Maintenance
	out, err = run("maintenance", "status", "-o", "json")
	if err != nil || json.Unmarshal([]byte(out), &m) != nil || !m.Active || m.Group != "billing" || m.Reason != "ledger migration" || m.By != servertest.AdminName || m.Since == nil {
		t.Errorf("chime maintenance status -o json = %q, %v", out, err)
	}
	if j, err := srv.Client.GetJob(t.Context(), "billing", "invoice"); err != nil || !j.Paused {
		t.Errorf("job during maintenance: paused %v, %v; want paused", j != nil && j.Paused, err)
	}
	if _, err := run("maintenance", "start", "--reason", "again"); err == nil || !strings.Contains(err.Error(), "conflict: a maintenance window on the jobs of group \"billing\" is already on") {
		t.Errorf("a second chime maintenance start: %v, want a conflict naming the window", err)
	}

	if out, err := run("maintenance", "end"); err != nil || !strings.HasPrefix(out, "Maintenance ended") {
		t.Errorf("chime maintenance end = %q, %v", out, err)
	}
	if j, err := srv.Client.GetJob(t.Context(), "billing", "invoice"); err != nil || j.Paused {
		t.Errorf("job after maintenance: paused %v, %v; want active", j != nil && j.Paused, err)
	}
	if out, err := run("maintenance", "status"); err != nil || out != "No maintenance window is on.\n" {
		t.Errorf("chime maintenance status after = %q, %v", out, err)
	}
}
