package main

import (
	"bufio"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestExecutionsLogsFollow follows a running Go job's log with `chime
// executions logs ID --follow`: the first line is printed while the job
// waits before logging the second, then the second; the command returns
// once the execution ended, saying how. Without --follow, the ended
// execution's lines are printed at once.
func TestExecutionsLogsFollow(t *testing.T) {
	t.Parallel()
	st := servertest.NewStepJob()
	srv := servertest.Start(t, &servertest.Options{JobTypes: map[string]chime.Job{"step": st}})
	token := cliLogin(t, srv.URL, srv.AdminPassword)
	ctx := t.Context()
	c := srv.Client
	if _, err := c.CreateJob(ctx, api.Job{Group: "g", Name: "steps", Type: "step"}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := c.RunJob(ctx, "g", "steps", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	id := acc.ExecutionIDs[0]
	deadline := time.Now().Add(20 * time.Second)
	for {
		e, err := c.GetExecution(ctx, id)
		if err == nil && e.Outcome == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s is not running after 20s: %+v, %v", id, e, err)
		}
		time.Sleep(20 * time.Millisecond) // the server runs it in the background
	}
	flags := []string{"--server", srv.URL, "--token", token}

	// The command writes to a pipe, read line by line as it prints.
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() {
		root := newRootCmdEnv(os.Getenv)
		root.SetArgs(append([]string{"executions", "logs", id, "--follow"}, flags...))
		root.SetOut(pw)
		root.SetErr(&stderr)
		err := root.ExecuteContext(ctx)
		_ = pw.Close()
		done <- err
	}()
	out := bufio.NewScanner(pr)
	nextLine := func() string {
		t.Helper()
		if !out.Scan() {
			t.Fatalf("the command's output ended: %v", out.Err())
		}
		return out.Text()
	}
	if l := nextLine(); !strings.HasSuffix(l, " INFO  first n=1") {
		t.Fatalf("first printed line = %q, want the first log line", l)
	}
	st.Step()
	if l := nextLine(); !strings.HasSuffix(l, " INFO  second n=2") {
		t.Fatalf("second printed line = %q, want the second log line", l)
	}
	st.Step()
	if out.Scan() {
		t.Errorf("printed %q after the last line", out.Text())
	}
	if err := <-done; err != nil {
		t.Fatalf("chime executions logs --follow: %v", err)
	}
	if want := "Execution " + id + " succeeded.\n"; stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}

	got, _, err := execChime(t, "", append([]string{"executions", "logs", id}, flags...)...)
	if err != nil {
		t.Fatalf("chime executions logs: %v", err)
	}
	if lines := strings.Split(strings.TrimSpace(got), "\n"); len(lines) != 2 || !strings.HasSuffix(lines[1], "second n=2") {
		t.Errorf("chime executions logs = %q, want the two lines", got)
	}
	got, _, err = execChime(t, "", append([]string{"executions", "logs", id, "-o", "json"}, flags...)...)
	if err != nil || !strings.HasPrefix(got, `{"seq":1,`) || strings.Count(got, "\n") != 2 {
		t.Errorf("chime executions logs -o json = %q, %v; want one object per line", got, err)
	}
}
