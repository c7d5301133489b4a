package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestApplyPrune checks chime apply --prune: the dry run shows the jobs of
// the file's groups that the file does not list and deletes nothing; the
// apply deletes them and leaves other groups alone; an empty file is
// refused; and the pruned job's history shows the delete.
func TestApplyPrune(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	ctx, c := t.Context(), srv.Client
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	for _, key := range [][2]string{{"reports", "nightly"}, {"reports", "stale"}, {"billing", "invoices"}} {
		if _, err := c.CreateJob(ctx, api.Job{Group: key[0], Name: key[1], Type: "http", HTTP: json.RawMessage(`{"url":"http://127.0.0.1:9/x"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	file := writeFile(t, "jobs.yaml", `jobs:
  - group: reports
    name: nightly
    type: http
    http: {url: "http://127.0.0.1:9/x"}
`)
	exists := func(group, name string) bool {
		_, err := c.GetJob(ctx, group, name)
		return err == nil
	}

	out, _, err := execChime(t, "", append([]string{"apply", "-f", file, "--prune", "--dry-run"}, flags...)...)
	if err != nil {
		t.Fatalf("chime apply --prune --dry-run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"job reports/stale: delete\n--- server: job reports/stale (version 1)\n+++ /dev/null\n",
		"-name: stale\n",
		"0 to create, 0 to update, 1 to delete, 1 unchanged.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "billing") {
		t.Errorf("dry run would prune another group's job:\n%s", out)
	}
	if !exists("reports", "stale") {
		t.Fatalf("--dry-run deleted reports/stale")
	}

	// A file without jobs is refused, empty or listing calendars only.
	empty := writeFile(t, "empty.yaml", "jobs: []\n")
	if _, _, err := execChime(t, "", append([]string{"apply", "-f", empty, "--prune", "--prune-all-groups", "--yes"}, flags...)...); err == nil {
		t.Errorf("prune of an empty file succeeded, want a refusal")
	}
	calendarsOnly := writeFile(t, "calendars.yaml", `calendars:
  - name: holidays
    calendar: {type: holiday, time_zone: UTC, excluded_dates: ["2025-12-25"]}
`)
	_, _, err = execChime(t, "", append([]string{"apply", "-f", calendarsOnly, "--prune", "--prune-all-groups", "--yes"}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "refusing to prune") {
		t.Errorf("prune of a file without jobs: %v, want a refusal", err)
	}
	if !exists("reports", "stale") || !exists("billing", "invoices") {
		t.Fatalf("a refused prune deleted jobs")
	}

	out, _, err = execChime(t, "", append([]string{"apply", "-f", file, "--prune", "--yes"}, flags...)...)
	if err != nil {
		t.Fatalf("chime apply --prune: %v\n%s", err, out)
	}
	if !strings.Contains(out, "deleted job reports/stale\nApplied 1 change.\n") {
		t.Errorf("apply --prune output:\n%s", out)
	}
	if exists("reports", "stale") || !exists("reports", "nightly") || !exists("billing", "invoices") {
		t.Errorf("after the prune: stale %v, nightly %v, invoices %v; want only stale gone",
			exists("reports", "stale"), exists("reports", "nightly"), exists("billing", "invoices"))
	}

	// With --prune-all-groups, the other group's job goes too.
	out, _, err = execChime(t, "", append([]string{"apply", "-f", file, "--prune", "--prune-all-groups", "--dry-run"}, flags...)...)
	if err != nil || !strings.Contains(out, "job billing/invoices: delete\n") {
		t.Errorf("dry run with --prune-all-groups: %v\n%s", err, out)
	}

	// The versions command shows the delete; rollback brings the job back.
	out, _, err = execChime(t, "", append([]string{"jobs", "versions", "reports/stale"}, flags...)...)
	if err != nil {
		t.Fatalf("chime jobs versions: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "VERSION") || !strings.Contains(lines[1], "deleted") ||
		!strings.Contains(lines[1], servertest.AdminName) || !strings.Contains(lines[2], "created") {
		t.Errorf("chime jobs versions:\n%s", out)
	}
	out, _, err = execChime(t, "", append([]string{"jobs", "rollback", "reports/stale", "1"}, flags...)...)
	if err != nil || !strings.Contains(out, "Job reports/stale rolled back to version 1") || !exists("reports", "stale") {
		t.Errorf("chime jobs rollback: %v\n%s", err, out)
	}
}

// TestJobsDiff checks chime jobs diff with one and two versions, and bad
// arguments.
func TestJobsDiff(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	ctx, c := t.Context(), srv.Client
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	job := api.Job{Group: "g", Name: "n", Type: "http", Description: "one", HTTP: json.RawMessage(`{"url":"http://127.0.0.1:9/x"}`)}
	if _, err := c.CreateJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"two", "three"} {
		job.Description = d
		if _, _, err := c.PutJob(ctx, job, 0); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := execChime(t, "", append([]string{"jobs", "diff", "g/n", "3"}, flags...)...)
	if err != nil || !strings.Contains(out, "--- version 2\n+++ version 3\n") || !strings.Contains(out, "-  \"description\": \"two\",\n+  \"description\": \"three\",\n") {
		t.Errorf("chime jobs diff g/n 3: %v\n%s", err, out)
	}
	out, _, err = execChime(t, "", append([]string{"jobs", "diff", "g/n", "1", "3"}, flags...)...)
	if err != nil || !strings.Contains(out, "-  \"description\": \"one\",\n+  \"description\": \"three\",\n") {
		t.Errorf("chime jobs diff g/n 1 3: %v\n%s", err, out)
	}
	out, _, err = execChime(t, "", append([]string{"jobs", "diff", "g/n", "1"}, flags...)...)
	if err != nil || !strings.Contains(out, "--- nothing\n+++ version 1\n") {
		t.Errorf("chime jobs diff g/n 1: %v\n%s", err, out)
	}
	if _, _, err := execChime(t, "", append([]string{"jobs", "diff", "g/n", "zero"}, flags...)...); err == nil || !strings.Contains(err.Error(), `"zero"`) {
		t.Errorf("chime jobs diff g/n zero: %v, want an error naming it", err)
	}
	if _, _, err := execChime(t, "", append([]string{"jobs", "rollback", "g/n", "9"}, flags...)...); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("chime jobs rollback g/n 9: %v, want not found naming version 9", err)
	}
}
