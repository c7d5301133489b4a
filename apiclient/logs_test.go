package apiclient_test

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestFollowExecutionLogs follows a running Go job's log through a real
// server: the first line arrives while the job waits before logging the
// second, then the second, then the end. Following it again after the
// first line gives the rest; an unknown execution is not found.
func TestFollowExecutionLogs(t *testing.T) {
	t.Parallel()
	st := servertest.NewStepJob()
	srv := servertest.Start(t, &servertest.Options{JobTypes: map[string]chime.Job{"step": st}})
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

	lines := make(chan api.LiveLogLine, 10)
	type result struct {
		end *api.LiveLogEnd
		err error
	}
	done := make(chan result, 1)
	go func() {
		end, err := c.FollowExecutionLogs(ctx, id, 0, func(l api.LiveLogLine) error {
			lines <- l
			return nil
		})
		done <- result{end, err}
	}()
	next := func() api.LiveLogLine {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case <-time.After(20 * time.Second):
			t.Fatal("no line within 20s")
		}
		return api.LiveLogLine{}
	}
	if l := next(); l.Seq != 1 || l.Message != "first" || l.Level != "INFO" {
		t.Fatalf("first line = %+v, want 1 INFO first", l)
	}
	st.Step()
	if l := next(); l.Seq != 2 || l.Message != "second" {
		t.Fatalf("second line = %+v, want 2 second", l)
	}
	st.Step()
	select {
	case r := <-done:
		if r.err != nil || r.end == nil || r.end.Outcome != "succeeded" {
			t.Fatalf("FollowExecutionLogs = %+v, %v; want the end, succeeded", r.end, r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("FollowExecutionLogs did not return after the execution ended")
	}

	var rest []string
	end, err := c.FollowExecutionLogs(ctx, id, 1, func(l api.LiveLogLine) error {
		rest = append(rest, l.Message)
		return nil
	})
	if err != nil || end == nil || len(rest) != 1 || rest[0] != "second" {
		t.Errorf("following the ended execution after line 1: %v, %+v, %v; want [second] and the end", rest, end, err)
	}
	_, err = c.FollowExecutionLogs(ctx, "no-such-execution", 0, func(api.LiveLogLine) error { return nil })
	if !apiclient.IsCode(err, api.CodeNotFound) {
		t.Errorf("following an unknown execution: %v, want not_found", err)
	}
}
