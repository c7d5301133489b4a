package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestExecutionsItemsAndRerunFailed runs a sharded shell job whose item 1
// fails until a file exists, lists the firing's items with `chime
// executions items`, then re-runs the failed item alone with `chime
// executions rerun-failed`.
func TestExecutionsItemsAndRerunFailed(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, &servertest.Options{Config: server.Config{EnableShellJobs: true}})
	token := cliLogin(t, srv.URL, srv.AdminPassword)
	c := srv.Client
	ctx := t.Context()
	flags := []string{"--server", srv.URL, "--token", token}
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	// Each item appends its index and total to a file of its own, and
	// item 1 fails while the file ok is missing.
	script := `echo "$CHIME_SHARD_INDEX/$CHIME_SHARD_TOTAL" >> "` + dir + `/item-$CHIME_SHARD_INDEX"; test "$CHIME_SHARD_INDEX" != 1 || test -e "` + ok + `"`
	spec, err := json.Marshal(map[string]any{"shell": script})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateJob(ctx, api.Job{Group: "ops", Name: "split", Type: "shell", Shell: spec, Shards: 3}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := c.RunJob(ctx, "ops", "split", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	id := acc.ExecutionIDs[0]
	wait := func(id string) *api.Execution {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			e, err := c.GetExecution(ctx, id)
			if err == nil && e.Outcome != "running" {
				return e
			}
			if time.Now().After(deadline) {
				t.Fatalf("execution %s: %+v, %v after 20s; want it ended", id, e, err)
			}
			time.Sleep(20 * time.Millisecond) // polling the real history; nothing to wait on
		}
	}
	if e := wait(id); e.Outcome != "failed" || e.Error != "1 of 3 items failed: 1" {
		t.Fatalf("parent = %s %q; want failed naming item 1", e.Outcome, e.Error)
	}
	out, _, err := execChime(t, "", append([]string{"executions", "items", id}, flags...)...)
	if err != nil {
		t.Fatalf("chime executions items: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], "failed, 3 items, 0 not ended, 1 failed") {
		t.Fatalf("chime executions items:\n%s\nwant a summary, a heading and 3 items", out)
	}
	for i, want := range []string{"succeeded", "failed", "succeeded"} {
		if f := strings.Fields(lines[2+i]); f[0] != []string{"0", "1", "2"}[i] || f[1] != want || f[2] != srv.Server.NodeID() {
			t.Errorf("item line %q; want index %d %s on %s", lines[2+i], i, want, srv.Server.NodeID())
		}
	}
	if err := os.WriteFile(ok, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err = execChime(t, "", append([]string{"executions", "rerun-failed", id, "-o", "json"}, flags...)...)
	if err != nil {
		t.Fatalf("chime executions rerun-failed: %v", err)
	}
	var rerun api.Execution
	if err := json.Unmarshal([]byte(out), &rerun); err != nil {
		t.Fatalf("rerun-failed -o json: %v\n%s", err, out)
	}
	if e := wait(rerun.ID); e.Outcome != "succeeded" || e.Attempt != 2 || e.FirstID != id {
		t.Fatalf("re-run = %+v; want attempt 2 of %s, succeeded", e, id)
	}
	// Items 0 and 2 ran once, item 1 twice: once failed, once re-run.
	for i, want := range []string{"0/3\n", "1/3\n1/3\n", "2/3\n"} {
		b, err := os.ReadFile(filepath.Join(dir, "item-"+string(rune('0'+i))))
		if err != nil || string(b) != want {
			t.Errorf("item %d ran %q, %v; want %q", i, b, err, want)
		}
	}
	if _, _, err := execChime(t, "", append([]string{"executions", "rerun-failed", id}, flags...)...); err == nil || !strings.Contains(err.Error(), "succeeded") {
		t.Errorf("rerun-failed of a succeeded firing: %v; want a conflict saying it succeeded", err)
	}
}
