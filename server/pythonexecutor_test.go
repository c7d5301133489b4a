package server

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// pythonExecutor is examples/python-executor/executor.py: an executor
// written from the OpenAPI document with Python's standard library only.
const pythonExecutor = "../examples/python-executor/executor.py"

// startPythonExecutor runs the Python example executor of group billing
// as a process, stopped when the test ends, and returns its stderr once
// it registered. Without python3 the test is skipped, or fails under
// CI=true.
func (f *executorFixture) startPythonExecutor(t *testing.T, instance string) *syncBuffer {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 is required under CI=true: %v", err)
		}
		t.Skipf("python3 is not installed (%v): the Python executor is not tested", err)
	}
	script, err := filepath.Abs(pythonExecutor)
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd := exec.Command(python, script, "--server", f.url, "--group", "billing", "--instance", instance, "--labels", "region=eu")
	cmd.Env = append(cmd.Environ(), "CHIME_TOKEN="+f.token)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("python executor's stderr:\n%s", stderr)
		}
	})
	waitFor(t, "the python executor "+instance+" to register", func() bool {
		return strings.Contains(stderr.String(), "registered as executor")
	})
	return stderr
}

// TestPythonExecutor routes jobs to the Python example executor, a real
// process that speaks the protocol without the Go SDK: a run succeeds
// with its output and log lines and the history names the executor; the
// items of a sharded firing print their shard index and total; a run
// fails with its handler's message; a long run streams its first log line
// live and, killed, is recorded killed.
func TestPythonExecutor(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		f := newExecutorFixture(t, url)
		f.startPythonExecutor(t, "py-1")
		pyID := f.executorIDOf(t, "py-1")
		ctx := t.Context()

		id := f.runOnce(t, executorJob("echo", "py.echo", false), map[string]any{"month": "2030-01"})
		e := waitExecution(t, f.s, id)
		var out map[string]any
		if e.Outcome != "succeeded" || json.Unmarshal([]byte(e.Output), &out) != nil || out["customer"] != "acme" || out["month"] != "2030-01" {
			t.Errorf("echo execution: %s %q (%s), want succeeded with the parameters as output", e.Outcome, e.Output, e.Error)
		}
		if e.ExecutorID != pyID || e.ExecutorInstance != "py-1" {
			t.Errorf("echo ran on %s (%s), want %s (py-1)", e.ExecutorID, e.ExecutorInstance, pyID)
		}
		if len(e.Logs) != 1 || e.Logs[0].Message != "echoing" || e.Logs[0].Level != "INFO" {
			t.Errorf("echo logs = %+v, want the line echoing", e.Logs)
		}

		// A firing of two shards: each item prints its place among them
		// before the parameters.
		id = f.runOnce(t, executorJob("echo-sharded", "py.echo", false, func(j *api.Job) { j.Shards = 2 }), nil)
		if parent := waitExecution(t, f.s, id); parent.Outcome != "succeeded" {
			t.Fatalf("sharded echo: %s (%s), want succeeded", parent.Outcome, parent.Error)
		}
		si, err := f.s.ShardItems(ctx, id)
		if err != nil {
			t.Fatalf("ShardItems: %v", err)
		}
		if len(si.Items) != 2 {
			t.Fatalf("sharded echo has %d items, want 2", len(si.Items))
		}
		for _, it := range si.Items {
			e, err := f.s.GetExecution(ctx, it.ExecutionID)
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("shard: %d/2\n{", it.Index); e.Outcome != "succeeded" || !strings.HasPrefix(e.Output, want) {
				t.Errorf("shard item %d: %s with output %q, want succeeded with output starting %q", it.Index, e.Outcome, e.Output, want)
			}
		}

		id = f.runOnce(t, executorJob("fail", "py.fail", false), map[string]any{"message": "ledger locked"})
		if e := waitExecution(t, f.s, id); e.Outcome != "failed" || !strings.Contains(e.Error, "ledger locked") {
			t.Errorf("fail execution: %s %q, want failed with the handler's message", e.Outcome, e.Error)
		}

		tok, err := f.s.auth.CreateToken(ctx, "admin", api.Token{Name: "viewer", Role: api.RoleViewer})
		if err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		id = f.runOnce(t, executorJob("sleep", "py.sleep", false), map[string]any{"seconds": 60})
		waitFor(t, "the sleep to run", func() bool {
			e, err := f.s.GetExecution(ctx, id)
			return err == nil && e.Outcome == "running"
		})
		events := openStream(t, f.ts, tok.Secret, id)
		wantLine(t, nextEvent(t, events), 1, "sleeping") // live, while the handler sleeps
		if _, err := f.s.KillExecution(ctx, "admin", id); err != nil {
			t.Fatalf("KillExecution: %v", err)
		}
		if e := waitExecution(t, f.s, id); e.Outcome != "killed" || e.ExecutorID != pyID {
			t.Errorf("killed execution: %s on %s (%s), want killed on %s", e.Outcome, e.ExecutorID, e.Error, pyID)
		}
	})
}
