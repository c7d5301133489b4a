package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestWorkflowsCommands applies a workflow from YAML, refuses a cycle
// naming the edge, runs an instance to its end and exports the workflow
// as a file apply takes back unchanged.
func TestWorkflowsCommands(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	target := newEndpoint(t, http.StatusOK, "pong").URL
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	run := func(args ...string) (string, error) {
		t.Helper()
		out, _, err := execChime(t, "", append(args, flags...)...)
		return out, err
	}
	spec := `workflows:
  - name: etl
    tasks:
      - {name: extract, type: http, http: {url: ` + target + `}}
      - {name: load, type: http, http: {url: ` + target + `}}
      - {name: report, type: http, http: {url: ` + target + `}}
    edges:
      - {from: extract, to: load}
      - {from: load, to: report, on: always}
`
	cyclic := spec + "      - {from: report, to: extract}\n"
	if _, err := run("workflows", "apply", "-f", writeFile(t, "cycle.yaml", cyclic)); err == nil ||
		!strings.Contains(err.Error(), "invalid_argument: edges[2]: cycle: extract -> load -> report -> extract") {
		t.Fatalf("apply of a cycle: %v, want the cycle named", err)
	}
	if out, err := run("workflows", "list"); err != nil || out != "No workflows.\n" {
		t.Fatalf("list after a refused apply = %q, %v; want none", out, err)
	}
	file := writeFile(t, "etl.yaml", spec)
	if out, err := run("workflows", "apply", "-f", file); err != nil || out != "workflow etl created (version 1)\n" {
		t.Fatalf("apply = %q, %v", out, err)
	}
	out, err := run("workflows", "run", "etl", "--param", "day=mon", "-o", "json")
	var in api.WorkflowInstance
	if err != nil || json.Unmarshal([]byte(out), &in) != nil || in.ID == "" {
		t.Fatalf("run = %q, %v", out, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for in.State == "running" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // polls the server the way a user would
		out, err := run("workflows", "instance", in.ID, "-o", "json")
		if err != nil || json.Unmarshal([]byte(out), &in) != nil {
			t.Fatalf("instance = %q, %v", out, err)
		}
	}
	if in.State != "succeeded" || len(in.Tasks) != 3 || in.Params["day"] != "mon" {
		t.Fatalf("instance = %+v, want succeeded with 3 tasks and its params", in)
	}
	if out, err := run("workflows", "instances", "etl"); err != nil || !strings.Contains(out, in.ID) || !strings.Contains(out, "succeeded") {
		t.Errorf("instances = %q, %v", out, err)
	}
	if _, err := run("workflows", "rerun", in.ID); err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("rerun of a succeeded instance: %v, want a conflict", err)
	}
	// chime export leaves the workflow's task jobs out, and chime apply
	// --prune-all-groups leaves them alone.
	jobs, err := run("export")
	if err != nil || strings.Contains(jobs, "workflow.etl") {
		t.Errorf("chime export = %q, %v; want no job of group workflow.etl", jobs, err)
	}
	other := writeFile(t, "other.yaml", "jobs:\n  - {group: other, name: ping, type: http, http: {url: "+target+"}}\n")
	if _, err := run("apply", "-f", other, "--prune", "--prune-all-groups", "--yes"); err != nil {
		t.Fatal(err)
	}
	if out, err := run("jobs", "list", "--group", "workflow.etl"); err != nil || !strings.Contains(out, "extract") {
		t.Errorf("the workflow's jobs after a prune of every group = %q, %v; want them kept", out, err)
	}
	// The jobs API refuses to change or delete a workflow's task job,
	// naming the workflow.
	const owned = `conflict: group: job workflow.etl/load is task "load" of workflow "etl" and cannot be`
	if _, err := run("jobs", "delete", "workflow.etl/load"); err == nil || !strings.Contains(err.Error(), owned+" deleted through the jobs API") {
		t.Errorf("jobs delete of a task's job: %v, want it refused naming the workflow", err)
	}
	edit := writeFile(t, "edit.yaml", "jobs:\n  - {group: workflow.etl, name: load, type: http, http: {url: "+target+"/other}}\n")
	if _, err := run("apply", "-f", edit, "--yes"); err == nil || !strings.Contains(err.Error(), owned+" changed through the jobs API") {
		t.Errorf("apply of a task's job: %v, want it refused naming the workflow", err)
	}
	exported, err := run("workflows", "get", "etl", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run("workflows", "apply", "-f", writeFile(t, "exported.yaml", exported)); err != nil || out != "workflow etl updated (version 1)\n" {
		t.Errorf("apply of the export = %q, %v; want it unchanged at version 1", out, err)
	}
}
