package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestPoolsCommands sets, lists and deletes a pool through the CLI,
// applies a job that names it from a YAML file, and checks the refusals
// it prints: a bad limit, a job naming a pool that does not exist, a
// delete while a job names the pool.
func TestPoolsCommands(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	target := newEndpoint(t, http.StatusOK, "pong").URL
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	run := func(args ...string) (string, error) {
		t.Helper()
		out, _, err := execChime(t, "", append(args, flags...)...)
		return out, err
	}
	if out, err := run("pools", "list"); err != nil || !strings.Contains(out, "no pools") {
		t.Errorf("chime pools list before = %q, %v", out, err)
	}
	if _, err := run("pools", "set", "reports"); err == nil || !strings.Contains(err.Error(), "invalid_argument: limit:") {
		t.Errorf("chime pools set without --limit: %v, want an error naming limit", err)
	}
	file := writeFile(t, "jobs.yaml", `jobs:
  - group: rep
    name: daily
    type: http
    http: {url: `+target+`}
    pool: reports
    pool_max_wait: 5m
    triggers:
      - schedule: {kind: cron, expression: "0 0 * * * ?"}
`)
	if _, err := run("apply", "-f", file, "--yes"); err == nil || !strings.Contains(err.Error(), "pool") {
		t.Errorf("chime apply of a job naming a missing pool: %v, want an error naming pool", err)
	}
	out, err := run("pools", "set", "reports", "--limit", "4", "--description", "report jobs")
	if err != nil || out != "Pool reports created: at most 4 executions at once.\n" {
		t.Errorf("chime pools set = %q, %v", out, err)
	}
	if _, err := run("apply", "-f", file, "--yes"); err != nil {
		t.Fatalf("chime apply: %v", err)
	}
	job, err := srv.Client.GetJob(t.Context(), "rep", "daily")
	if err != nil || job.Pool != "reports" || job.PoolMaxWait != "5m" {
		t.Errorf("the applied job = %+v, %v; want pool reports, pool_max_wait 5m", job, err)
	}
	out, err = run("pools", "list")
	if err != nil || !strings.Contains(out, "reports") || !strings.Contains(out, "report jobs") {
		t.Errorf("chime pools list = %q, %v", out, err)
	}
	var pools []api.Pool
	out, err = run("pools", "list", "-o", "json")
	if err != nil || json.Unmarshal([]byte(out), &pools) != nil || len(pools) != 1 || pools[0].Limit != 4 || len(pools[0].Jobs) != 1 {
		t.Errorf("chime pools list -o json = %q, %v", out, err)
	}
	if _, err := run("pools", "delete", "reports"); err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("chime pools delete while a job names it: %v, want conflict", err)
	}

	// A file lists pools with the jobs that name them: apply creates both,
	// pools first, and export writes them back.
	both := writeFile(t, "both.yaml", `pools:
  - {name: exports, limit: 2, description: export jobs}
jobs:
  - group: exp
    name: weekly
    type: http
    http: {url: `+target+`}
    pool: exports
`)
	out, err = run("apply", "-f", both, "--yes")
	if err != nil || !strings.Contains(out, "created pool exports") || !strings.Contains(out, "exp/weekly") {
		t.Fatalf("chime apply of pools and jobs = %q, %v", out, err)
	}
	if out, err = run("apply", "-f", both, "--dry-run"); err != nil || !strings.Contains(out, "pool exports: unchanged") {
		t.Errorf("chime apply again --dry-run = %q, %v; want the pool unchanged", out, err)
	}
	out, err = run("export", "--group", "exp")
	if err != nil || !strings.Contains(out, "pools:") || !strings.Contains(out, "name: exports") || !strings.Contains(out, "limit: 2") {
		t.Errorf("chime export = %q, %v; want the pool exports", out, err)
	}

	if err := srv.Client.DeleteJob(t.Context(), "rep", "daily"); err != nil {
		t.Fatal(err)
	}
	if out, err := run("pools", "delete", "reports"); err != nil || out != "Pool reports deleted.\n" {
		t.Errorf("chime pools delete = %q, %v", out, err)
	}
}
