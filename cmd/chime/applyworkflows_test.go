package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/server/servertest"
)

// TestApplyWorkflows applies a file with jobs and workflows, exports it
// and applies the export back unchanged, refuses a file with a bad
// workflow naming its field while changing nothing, and prunes the
// workflows a file does not list.
func TestApplyWorkflows(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	target := newEndpoint(t, http.StatusOK, "pong").URL
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	run := func(args ...string) (string, error) {
		t.Helper()
		out, _, err := execChime(t, "", append(args, flags...)...)
		return out, err
	}
	job := "  - {group: app, name: ping, type: http, http: {url: " + target + "}}\n"
	etl := `  - name: etl
    description: nightly load
    tasks:
      - {name: extract, type: http, http: {url: ` + target + `, method: POST}, retry: {max_attempts: 3, delay: 90s}}
      - {name: load, type: http, http: {url: ` + target + `}, timeout: 600s}
      - {name: report, type: http, http: {url: ` + target + `}}
    edges:
      - {from: extract, to: load, on: success}
      - {from: load, to: report, on: always}
    triggers:
      - schedule: {kind: cron, expression: "0 0 2 * * ?", time_zone: Europe/Berlin}
        data: {day: today}
`
	tidy := "  - name: tidy\n    tasks:\n      - {name: sweep, type: http, http: {url: " + target + "}}\n"
	file := writeFile(t, "all.yaml", "jobs:\n"+job+"workflows:\n"+etl+tidy)
	out, err := run("apply", "-f", file, "--yes")
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	for _, want := range []string{"created job app/ping", "created workflow etl (version 1)", "created workflow tidy (version 1)", "Applied 3 changes."} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	if out, err := run("apply", "-f", file, "--dry-run"); err != nil || !strings.HasSuffix(out, "0 to create, 0 to update, 3 unchanged.\n") {
		t.Errorf("apply of the same file again = %q, %v; want everything unchanged", out, err)
	}

	exported, err := run("export")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(exported, "\nworkflows:\n  - name: etl\n") || !strings.Contains(exported, "  - name: tidy\n") || strings.Contains(exported, "workflow.etl") {
		t.Errorf("export lacks the workflows, or has their task jobs:\n%s", exported)
	}
	if out, err := run("apply", "-f", writeFile(t, "export.yaml", exported), "--dry-run"); err != nil || !strings.HasSuffix(out, "0 to create, 0 to update, 3 unchanged.\n") {
		t.Errorf("apply of the export = %q, %v; want everything unchanged\nexport:\n%s", out, err, exported)
	}

	// A file whose third workflow the server refuses changes nothing,
	// not even the new job and the changed workflow listed before it.
	tidy2 := tidy + "      - {name: vacuum, type: http, http: {url: " + target + "}}\n"
	newJob := "  - {group: app, name: pong, type: http, http: {url: " + target + "}}\n"
	for _, tc := range []struct{ name, workflow, want string }{
		{
			name:     "cycle",
			workflow: "  - name: broken\n    tasks:\n      - {name: a, type: http, http: {url: " + target + "}}\n      - {name: b, type: http, http: {url: " + target + "}}\n    edges:\n      - {from: a, to: b}\n      - {from: b, to: a}\n",
			want:     "workflows[2].edges[1] (broken): cycle: a -> b -> a",
		},
		{
			name:     "unknown type",
			workflow: "  - name: broken\n    tasks:\n      - {name: a, type: shel}\n",
			want:     "workflows[2].tasks[0].type (broken): ",
		},
		{
			name:     "missing task",
			workflow: "  - name: broken\n    tasks:\n      - {name: a, type: http, http: {url: " + target + "}}\n    edges:\n      - {from: a, to: reprot}\n",
			want:     "workflows[2].edges[0].to (broken): ",
		},
	} {
		bad := writeFile(t, "bad.yaml", "jobs:\n"+job+newJob+"workflows:\n"+etl+tidy2+tc.workflow)
		if out, err := run("apply", "-f", bad, "--yes"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: apply = %q, %v; want an error naming %q", tc.name, out, err, tc.want)
		}
	}
	if out, err := run("apply", "-f", file, "--dry-run"); err != nil || !strings.HasSuffix(out, "0 to create, 0 to update, 3 unchanged.\n") {
		t.Errorf("after the refused files, apply of the first = %q, %v; want everything unchanged", out, err)
	}
	if out, err := run("jobs", "list", "--group", "app"); err != nil || strings.Contains(out, "pong") {
		t.Errorf("jobs after the refused files = %q, %v; want no app/pong", out, err)
	}
	if out, err := run("workflows", "list"); err != nil || strings.Contains(out, "broken") {
		t.Errorf("workflows after the refused files = %q, %v; want no broken", out, err)
	}

	// --prune deletes the workflows a file that lists workflows leaves
	// out, after showing them; --dry-run deletes nothing.
	keepETL := writeFile(t, "etl.yaml", "jobs:\n"+job+"workflows:\n"+etl)
	out, err = run("apply", "-f", keepETL, "--prune", "--dry-run")
	if err != nil || !strings.Contains(out, "workflow tidy: delete\n") || !strings.HasSuffix(out, "0 to create, 0 to update, 1 to delete, 2 unchanged.\n") {
		t.Errorf("prune --dry-run = %q, %v; want tidy to be deleted", out, err)
	}
	if out, err := run("workflows", "list"); err != nil || !strings.Contains(out, "tidy") {
		t.Errorf("workflows after prune --dry-run = %q, %v; want tidy kept", out, err)
	}
	if out, err := run("apply", "-f", keepETL, "--prune", "--yes"); err != nil || !strings.Contains(out, "deleted workflow tidy\n") {
		t.Errorf("prune = %q, %v; want tidy deleted", out, err)
	}
	if out, err := run("workflows", "list"); err != nil || strings.Contains(out, "tidy") || !strings.Contains(out, "etl") {
		t.Errorf("workflows after prune = %q, %v; want etl only", out, err)
	}
	if out, err := run("jobs", "list", "--group", "workflow.etl"); err != nil || !strings.Contains(out, "extract") {
		t.Errorf("etl's task jobs after the prune = %q, %v; want them kept", out, err)
	}
}
