package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/executor"
)

// TestExecutorLiveLogs runs an executor job whose handler logs a line,
// waits, and logs another: the execution's log stream shows the first
// line while the handler waits, before it logs the second, then the
// second and the end, numbered as the history numbers them.
func TestExecutorLiveLogs(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		f := newExecutorFixture(t, url)
		step := make(chan struct{})
		f.startExecutor(t, "billing-1", map[string]executor.HandlerFunc{
			"steps": func(ctx context.Context, r *executor.Run) error {
				for _, msg := range []string{"first", "second"} {
					r.Logger.Info(msg)
					select {
					case <-step:
					case <-ctx.Done():
						return context.Cause(ctx)
					}
				}
				return nil
			},
		})
		tok, err := f.s.auth.CreateToken(t.Context(), "admin", api.Token{Name: "viewer", Role: api.RoleViewer})
		if err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		id := f.runOnce(t, executorJob("steps", "steps", false), nil)
		waitFor(t, "the execution to run", func() bool {
			_, err := f.s.GetExecution(t.Context(), id)
			return err == nil
		})
		events := openStream(t, f.ts, tok.Secret, id)
		wantLine(t, nextEvent(t, events), 1, "first") // the handler waits: "second" is not logged yet
		step <- struct{}{}
		wantLine(t, nextEvent(t, events), 2, "second")
		step <- struct{}{}
		end := nextEvent(t, events)
		var got api.LiveLogEnd
		if end.name != "end" || json.Unmarshal([]byte(end.data), &got) != nil || got.Outcome != "succeeded" {
			t.Fatalf("event = %+v, want the end, succeeded", end)
		}
		if _, ok := <-events; ok {
			t.Error("the stream goes on after its end")
		}
		e := waitExecution(t, f.s, id)
		if len(e.Logs) != 2 || e.Logs[0].Message != "first" || e.Logs[1].Message != "second" {
			t.Errorf("history logs = %+v, want first and second", e.Logs)
		}
		waitFor(t, "the live lines to be deleted after the end (the history holds them)", func() bool {
			lines, err := f.s.live.Read(t.Context(), id, 0, 10)
			return err == nil && len(lines) == 0
		})
	})
}

// TestExecutorLiveLogsFenced sends a run's log lines under a stale token,
// for a run not leased to the sender, and after the run ended: each is a
// conflict and appends nothing, while the current token's lines are
// appended under the run's execution. A malformed line is refused with
// its field named.
func TestExecutorLiveLogsFenced(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		f := newExecutorFixture(t, url)
		x := f.rawExecutor(t, "raw.logs")
		id := f.runOnce(t, executorJob("raw", "raw.logs", false), nil)
		run := x.take(t)
		ctx := t.Context()
		line := func(seq int64, msg string) api.LiveLogLine {
			return api.LiveLogLine{Seq: seq, LogLine: api.LogLine{Time: time.Now().UTC(), Level: "INFO", Message: msg}}
		}
		live := func() []string {
			t.Helper()
			lines, err := f.s.live.Read(ctx, id, 0, 10)
			if err != nil {
				t.Fatalf("live.Read: %v", err)
			}
			var msgs []string
			for _, l := range lines {
				msgs = append(msgs, l.Message)
			}
			return msgs
		}

		err := x.c.AppendExecutorLogs(ctx, x.id, run.ID, api.ExecutorLogs{Token: run.Token + 1, Lines: []api.LiveLogLine{line(1, "stale")}})
		if !apiclient.IsCode(err, api.CodeConflict) {
			t.Errorf("lines under a stale token: %v, want a conflict", err)
		}
		err = x.c.AppendExecutorLogs(ctx, "no-such-executor", run.ID, api.ExecutorLogs{Token: run.Token, Lines: []api.LiveLogLine{line(1, "other")}})
		if !apiclient.IsCode(err, api.CodeNotFound) {
			t.Errorf("lines from an unknown executor: %v, want not_found", err)
		}
		err = x.c.AppendExecutorLogs(ctx, x.id, run.ID, api.ExecutorLogs{Token: run.Token, Lines: []api.LiveLogLine{line(0, "unnumbered")}})
		if fe := fieldOf(err); !apiclient.IsCode(err, api.CodeInvalidArgument) || fe != "lines[0].seq" {
			t.Errorf("a line numbered 0: %v (field %q), want invalid_argument naming lines[0].seq", err, fe)
		}
		if got := live(); len(got) != 0 {
			t.Fatalf("live lines after refused requests = %q, want none", got)
		}

		if err := x.c.AppendExecutorLogs(ctx, x.id, run.ID, api.ExecutorLogs{Token: run.Token, Lines: []api.LiveLogLine{line(1, "current")}}); err != nil {
			t.Fatalf("lines under the current token: %v", err)
		}
		if got := live(); len(got) != 1 || got[0] != "current" {
			t.Errorf("live lines = %q, want [current]", got)
		}

		if err := x.c.ReportExecutorResult(ctx, x.id, run.ID, api.ExecutorResult{Token: run.Token, Outcome: "succeeded",
			Logs: []api.LogLine{line(1, "current").LogLine}}); err != nil {
			t.Fatalf("ReportExecutorResult: %v", err)
		}
		waitExecution(t, f.s, id)
		err = x.c.AppendExecutorLogs(ctx, x.id, run.ID, api.ExecutorLogs{Token: run.Token, Lines: []api.LiveLogLine{line(2, "late")}})
		if !apiclient.IsCode(err, api.CodeConflict) {
			t.Errorf("lines after the run ended: %v, want a conflict", err)
		}
		waitFor(t, "the live lines to be deleted after the end", func() bool { return len(live()) == 0 })
	})
}

// fieldOf returns the field an API error names.
func fieldOf(err error) string {
	var apiErr *api.Error
	if !errors.As(err, &apiErr) {
		return ""
	}
	return apiErr.Field
}
