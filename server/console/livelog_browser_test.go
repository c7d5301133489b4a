package console_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// stepper is a Go job type that logs a line, waits for a step, logs a
// second line, waits for another step and returns.
type stepper struct{ step chan struct{} }

func (s *stepper) Execute(ctx context.Context, jc *chime.JobContext) error {
	for i, msg := range []string{"first line", "second line"} {
		jc.Logger.Info(msg, "n", i+1)
		select {
		case <-s.step:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// TestExecutionLiveLog watches a running Go job's execution page as a
// viewer: the first log line appears while the job waits before logging
// the second, then the second, live; when the job ends, the page shows it
// succeeded with the lines its history kept.
func TestExecutionLiveLog(t *testing.T) {
	st := &stepper{step: make(chan struct{})}
	srv := servertest.Start(t, &servertest.Options{JobTypes: map[string]chime.Job{"step": st}})
	ctx := context.Background()
	if _, err := srv.Client.CreateJob(ctx, api.Job{Group: "etl", Name: "steps", Type: "step"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "viewer-password-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.RunJob(ctx, "etl", "steps", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	running := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "etl", JobName: "steps", Outcomes: []string{"running"}})

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/executions/"+url.PathEscape(running.ID), "vera", "viewer-password-1")
	p.WaitText(`[data-testid="outcome"]`, "running")
	p.WaitText(`[data-testid="live-log"]`, "first line")
	p.WaitText(`[data-testid="live-status"]`, "Live")
	if n := p.Count(`[data-testid="log-line"]`); n != 1 {
		t.Errorf("the live log shows %d lines before the job logged its second, want 1", n)
	}
	p.Screenshot("execution-live-log-first")
	st.step <- struct{}{}
	p.WaitText(`[data-testid="live-log"]`, "second line")
	if n := p.Count(`[data-testid="log-line"]`); n != 2 {
		t.Errorf("the live log shows %d lines, want 2", n)
	}
	st.step <- struct{}{}
	p.WaitText(`[data-testid="outcome"]`, "succeeded")
	final := p.WaitText(`[data-testid="log"]`, "second line")
	p.Screenshot("execution-live-log-ended")
	if n := p.Count(`[data-testid="live-log"]`); n != 0 {
		t.Errorf("an ended execution still shows the live log (%d)", n)
	}
	if want := "first line"; !strings.Contains(final, want) {
		t.Errorf("the ended execution's log = %q, want %q too", final, want)
	}
}
