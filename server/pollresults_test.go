package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/executor"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
)

// TestPollCarriesResults sends runs' results with polls, through the HTTP
// API: a malformed result refuses the whole poll, naming it, recording
// nothing and taking no run; a result under a stale token is named in the
// answer's refused while the poll's other result is recorded and its runs
// are taken.
func TestPollCarriesResults(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		f := newExecutorFixture(t, url)
		x := f.rawExecutor(t, "work")
		poll := func(p api.ExecutorPoll) (*api.ExecutorWork, error) {
			return x.c.PollExecutor(ctx, x.id, p)
		}
		ids := map[string]string{}
		for _, name := range []string{"a", "b"} {
			ids[name] = f.runOnce(t, executorJob(name, "work", false), nil)
		}
		runs := map[string]api.ExecutorRun{}
		for len(runs) < 2 {
			work, err := poll(api.ExecutorPoll{Wait: "10s", Max: 10})
			if err != nil {
				t.Fatalf("PollExecutor: %v", err)
			}
			for _, r := range work.Runs {
				runs[r.JobName] = r
			}
		}
		a, b := runs["a"], runs["b"]
		ids["c"] = f.runOnce(t, executorJob("c", "work", false), nil)

		_, err := poll(api.ExecutorPoll{Max: 10, Results: []api.ExecutorRunResult{
			{Run: a.ID, Result: api.ExecutorResult{Token: a.Token, Outcome: "succeeded"}},
			{Run: b.ID, Result: api.ExecutorResult{Token: b.Token, Outcome: "done"}},
		}})
		wantAPIError(t, unwrapAPI(err), api.CodeInvalidArgument, "results[1].result.outcome")
		_, err = poll(api.ExecutorPoll{Max: 10, Results: []api.ExecutorRunResult{{Result: api.ExecutorResult{Token: a.Token, Outcome: "succeeded"}}}})
		wantAPIError(t, unwrapAPI(err), api.CodeInvalidArgument, "results[0].run")
		tooMany := make([]api.ExecutorRunResult, api.MaxPollResults+1)
		for i := range tooMany {
			tooMany[i] = api.ExecutorRunResult{Run: a.ID, Result: api.ExecutorResult{Token: a.Token, Outcome: "succeeded"}}
		}
		_, err = poll(api.ExecutorPoll{Max: 10, Results: tooMany})
		wantAPIError(t, unwrapAPI(err), api.CodeInvalidArgument, "results")
		for _, name := range []string{"a", "b"} {
			if e, err := f.s.GetExecution(ctx, ids[name]); err != nil || e.Outcome != "running" {
				t.Errorf("%s after the refused polls: %+v, %v; want running", name, e, err)
			}
		}

		// The stale token's result is refused; a's is recorded, and c,
		// which the refused polls did not take, is taken.
		work, err := poll(api.ExecutorPoll{Wait: "10s", Max: 10, Results: []api.ExecutorRunResult{
			{Run: a.ID, Result: api.ExecutorResult{Token: a.Token, Outcome: "succeeded", Output: "a's output"}},
			{Run: b.ID, Result: api.ExecutorResult{Token: b.Token + 1, Outcome: "failed", Error: "late"}},
		}})
		if err != nil {
			t.Fatalf("PollExecutor with results: %v", err)
		}
		if len(work.Refused) != 1 || work.Refused[0].Run != b.ID || work.Refused[0].Reason == "" {
			t.Errorf("refused = %+v; want b's result (%s), with the reason", work.Refused, b.ID)
		}
		if len(work.Runs) != 1 || work.Runs[0].JobName != "c" {
			t.Fatalf("runs = %+v; want c's", work.Runs)
		}
		c := work.Runs[0]
		if e := waitExecution(t, f.s, ids["a"]); e.Outcome != "succeeded" || e.Output != "a's output" {
			t.Errorf("a = %+v; want succeeded with its output", e)
		}
		if e, err := f.s.GetExecution(ctx, ids["b"]); err != nil || e.Outcome != "running" {
			t.Errorf("b after its refused result: %+v, %v; want running", e, err)
		}

		// Sent again, a's result is refused: the run ended.
		work, err = poll(api.ExecutorPoll{Results: []api.ExecutorRunResult{
			{Run: a.ID, Result: api.ExecutorResult{Token: a.Token, Outcome: "failed"}},
			{Run: b.ID, Result: api.ExecutorResult{Token: b.Token, Outcome: "failed", Error: "boom"}},
			{Run: c.ID, Result: api.ExecutorResult{Token: c.Token, Outcome: "succeeded"}},
		}})
		if err != nil {
			t.Fatalf("PollExecutor with results: %v", err)
		}
		if len(work.Refused) != 1 || work.Refused[0].Run != a.ID {
			t.Errorf("refused = %+v; want a's second result (%s)", work.Refused, a.ID)
		}
		for name, want := range map[string]string{"a": "succeeded", "b": "failed", "c": "succeeded"} {
			if e := waitExecution(t, f.s, ids[name]); e.Outcome != want {
				t.Errorf("%s = %+v; want %s", name, e, want)
			}
		}
		if err := x.c.ReportExecutorResult(ctx, x.id, c.ID, api.ExecutorResult{Token: c.Token, Outcome: "succeeded"}); !apiclient.IsCode(err, api.CodeConflict) {
			t.Errorf("c's result sent again alone: %v; want a conflict", err)
		}
	})
}

// TestSDKSendsResultsWithPolls runs quick runs one after another on the
// Go SDK and counts its requests: the results of runs that end at once
// ride on the next poll, so most runs cost no result request of their
// own; every run's outcome is recorded once.
func TestSDKSendsResultsWithPolls(t *testing.T) {
	t.Parallel()
	f := newExecutorFixture(t, dbtest.SQLiteURL(t))
	var mu sync.Mutex
	requests := map[string]int{}
	counted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		mu.Lock()
		requests[kind]++
		mu.Unlock()
		f.s.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(counted.Close)
	ex := newSDKExecutor(t, executor.Config{
		Server: counted.URL, Token: f.token, Group: "billing", Instance: "quick",
		Labels: map[string]string{"region": "eu"}, PollWait: 5 * time.Second, Logger: quietLogger,
	})
	ex.Handle("quick", func(_ context.Context, r *executor.Run) error {
		fmt.Fprintf(r.Output, "run %v", r.Params["n"])
		return nil
	})
	runExecutor(t, ex)

	const runs = 20
	for i := range runs {
		id := f.runOnce(t, executorJob(fmt.Sprintf("quick-%d", i), "quick", false), map[string]any{"n": i})
		if e := waitExecution(t, f.s, id); e.Outcome != "succeeded" || e.Output != fmt.Sprintf("run %d", i) {
			t.Fatalf("run %d = %+v; want succeeded with its output", i, e)
		}
	}
	mu.Lock()
	alone := requests["result"]
	mu.Unlock()
	// A result goes alone when no poll took it within 5 ms: on a busy
	// machine a few may.
	if alone > runs/2 {
		t.Errorf("%d of %d results were sent alone (requests %v); want most with a poll", alone, runs, requests)
	}
}
