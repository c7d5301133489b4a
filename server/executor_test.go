package server

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/executor"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/alert"
)

// executorFixture is a running server with its API on an httptest server,
// and a token of role executor serving groups billing and other.
type executorFixture struct {
	s     *Server
	ts    *httptest.Server
	url   string
	token string
}

func newExecutorFixture(t *testing.T, url string, mods ...func(*Config)) *executorFixture {
	t.Helper()
	s := newServer(t, url, mods...)
	start(t, s)
	if _, _, err := s.BootstrapAdmin(t.Context()); err != nil {
		t.Fatalf("BootstrapAdmin: %v", err)
	}
	tok, err := s.auth.CreateToken(t.Context(), "admin", api.Token{Name: "exec", Role: api.RoleExecutor, Groups: []string{"billing"}})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return &executorFixture{s: s, ts: ts, url: ts.URL, token: tok.Secret}
}

// startExecutor runs an SDK executor of group billing with handlers until
// the test ends, and waits until it registered.
func (f *executorFixture) startExecutor(t *testing.T, instance string, handlers map[string]executor.HandlerFunc) *executor.Executor {
	t.Helper()
	ex := newSDKExecutor(t, executor.Config{
		Server: f.url, Token: f.token, Group: "billing", Instance: instance,
		Labels: map[string]string{"region": "eu"}, PollWait: 5 * time.Second, ShutdownTimeout: 5 * time.Second,
		Logger: quietLogger,
	})
	for name, h := range handlers {
		ex.Handle(name, h)
	}
	runExecutor(t, ex)
	return ex
}

// newSDKExecutor returns an SDK executor of cfg, not running yet.
func newSDKExecutor(t *testing.T, cfg executor.Config) *executor.Executor {
	t.Helper()
	ex, err := executor.New(cfg)
	if err != nil {
		t.Fatalf("executor.New: %v", err)
	}
	return ex
}

// runExecutor runs ex until the test ends, and waits until it registered.
func runExecutor(t *testing.T, ex *executor.Executor) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- ex.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("executor Run: %v", err)
		}
	})
	waitFor(t, "the executor to register", func() bool { return ex.ID() != "" })
}

func executorJob(name, handler string, recovery bool, mods ...func(*api.Job)) api.Job {
	j := api.Job{
		Group: "billing", Name: name, Type: "executor", RequestsRecovery: recovery,
		Executor: &api.ExecutorTarget{Group: "billing", Handler: handler, Routing: api.RoutingFirst, Labels: map[string]string{"region": "eu"}},
		Data:     map[string]any{"customer": "acme"},
	}
	for _, m := range mods {
		m(&j)
	}
	return j
}

// runOnce creates job j and runs it now with params, returning the
// execution ID.
func (f *executorFixture) runOnce(t *testing.T, j api.Job, params map[string]any) string {
	t.Helper()
	if _, err := f.s.CreateJob(t.Context(), "admin", j); err != nil {
		t.Fatalf("CreateJob(%s): %v", j.Name, err)
	}
	acc, err := f.s.RunJob(t.Context(), "admin", j.Group, j.Name, api.RunRequest{Params: params})
	if err != nil {
		t.Fatalf("RunJob(%s): %v", j.Name, err)
	}
	return acc.ExecutionIDs[0]
}

// TestExecutorEndToEnd runs executor jobs on an SDK executor through a
// real server's API: the parameters arrive, the outcome, output and log
// lines are recorded, and the history names the executor.
func TestExecutorEndToEnd(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		f := newExecutorFixture(t, url)
		got := make(chan *executor.Run, 10)
		ex := f.startExecutor(t, "billing-1", map[string]executor.HandlerFunc{
			"invoice.close": func(_ context.Context, r *executor.Run) error {
				got <- r
				r.Logger.Info("closing", "customer", r.Params["customer"])
				fmt.Fprintf(r.Output, "closed %v for %v", r.Params["customer"], r.Params["month"])
				return nil
			},
			"invoice.fail": func(context.Context, *executor.Run) error { return errors.New("ledger locked") },
		})
		id := f.runOnce(t, executorJob("close", "invoice.close", false), map[string]any{"month": "2030-01"})
		e := waitExecution(t, f.s, id)
		if e.Outcome != "succeeded" || e.Output != "closed acme for 2030-01" {
			t.Errorf("execution %+v, want succeeded with the handler's output", e)
		}
		if e.ExecutorID != ex.ID() || e.ExecutorInstance != "billing-1" {
			t.Errorf("executor %q (%q), want %q (billing-1)", e.ExecutorID, e.ExecutorInstance, ex.ID())
		}
		if len(e.Logs) != 1 || e.Logs[0].Message != "closing" || e.Logs[0].Attrs["customer"] != "acme" {
			t.Errorf("logs %+v, want the handler's line", e.Logs)
		}
		r := receive(t, "the run", got)
		if r.JobKey != (executor.JobKey{Group: "billing", Name: "close"}) || r.Attempt != 1 || r.Recovering || r.ExecutionID != id {
			t.Errorf("run %+v", r)
		}
		id = f.runOnce(t, executorJob("fail", "invoice.fail", false), nil)
		if e := waitExecution(t, f.s, id); e.Outcome != "failed" || e.Error != "ledger locked" {
			t.Errorf("execution %+v, want failed with the handler's error", e)
		}
		// The node records the uses on its watch's next pass.
		var list []api.Executor
		waitFor(t, "the executor's two uses", func() bool {
			var err error
			list, err = f.s.ListExecutors(t.Context())
			return err == nil && len(list) == 1 && list[0].UseCount == 2
		})
		if list[0].ID != ex.ID() || !list[0].Live {
			t.Errorf("ListExecutors: %+v; want the executor, live, used twice", list)
		}
	})
}

// TestExecutorNoExecutor runs a job whose group has no executor with its
// labels: the execution is recorded no_executor naming the group, handler
// and labels, retried by the job's policy, then alerted as a failure.
func TestExecutorNoExecutor(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		f := newExecutorFixture(t, url)
		hook := newWebhook(t)
		f.startExecutor(t, "billing-1", map[string]executor.HandlerFunc{
			"invoice.close": func(context.Context, *executor.Run) error { return nil },
		})
		j := executorJob("us-only", "invoice.close", false, func(j *api.Job) {
			j.Executor.Labels = map[string]string{"region": "us"}
			j.Retry = &api.RetryPolicy{MaxAttempts: 2, Delay: "10ms"}
			j.Alerts = &api.JobAlerts{Webhooks: []string{hook.URL}}
		})
		id := f.runOnce(t, j, nil)
		e := waitExecution(t, f.s, id)
		want := `no live executor of group "billing" runs handler "invoice.close" with labels region=us (1 live executors in the group)`
		if e.Outcome != "no_executor" || e.Error != want {
			t.Errorf("execution %+v, want no_executor: %s", e, want)
		}
		p := hook.next(t, alert.KindFailure)
		if p.Attempt != 2 || !strings.Contains(p.Error, "no live executor") {
			t.Errorf("alert %+v, want the second attempt's no_executor", p)
		}
		list, err := f.s.ListExecutions(t.Context(), api.ExecutionQuery{Outcomes: []string{"no_executor", "executor_lost"}})
		if err != nil || len(list.Executions) != 2 || list.Executions[0].Outcome != "no_executor" {
			t.Errorf("ListExecutions(no_executor, executor_lost) = %+v, %v; want the job's 2 no_executor attempts", list, err)
		}
	})
}

// TestExecutorKillAndTimeout kills a run from the API and lets another
// time out: each handler's context is cancelled, and the executions are
// recorded killed (by whom) and timed_out.
func TestExecutorKillAndTimeout(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		f := newExecutorFixture(t, url)
		var mu sync.Mutex
		causes := map[string]error{}
		cancelled := map[string]time.Time{}
		started := make(chan string, 2)
		f.startExecutor(t, "billing-1", map[string]executor.HandlerFunc{
			"block": func(ctx context.Context, r *executor.Run) error {
				started <- r.JobKey.Name
				<-ctx.Done()
				mu.Lock()
				cancelled[r.JobKey.Name] = time.Now()
				causes[r.JobKey.Name] = context.Cause(ctx)
				mu.Unlock()
				return ctx.Err()
			},
		})
		id := f.runOnce(t, executorJob("kill", "block", false), nil)
		receive(t, "the handler to start", started)
		// The node records the start once the executor is chosen, which
		// may be after the handler started.
		running(t, f.s, "billing", "kill")
		killedAt := time.Now()
		if _, err := f.s.KillExecution(t.Context(), "alice", id); err != nil {
			t.Fatalf("KillExecution: %v", err)
		}
		e := waitExecution(t, f.s, id)
		mu.Lock()
		// A figure, not an assertion: the issue promises a second.
		t.Logf("the handler's context ended %s after the kill", cancelled["kill"].Sub(killedAt).Round(time.Millisecond))
		mu.Unlock()
		if e.Outcome != "killed" || e.KilledBy != "alice" {
			t.Errorf("execution %+v, want killed by alice", e)
		}
		id = f.runOnce(t, executorJob("timeout", "block", false, func(j *api.Job) { j.Timeout = "300ms" }), nil)
		receive(t, "the handler to start", started)
		if e := waitExecution(t, f.s, id); e.Outcome != "timed_out" {
			t.Errorf("execution %+v, want timed_out", e)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, name := range []string{"kill", "timeout"} {
			if !errors.Is(causes[name], executor.ErrKilled) {
				t.Errorf("%s: the handler's context ended with %v, want ErrKilled", name, causes[name])
			}
		}
	})
}

// receive returns the next value of ch, failing the test after
// waitTimeout.
func receive[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// rawExecutor is an executor spoken to with the bare protocol, so that a
// test can make it stop heartbeating, as a stopped or dead process does.
// It sends heartbeats until it took a run.
type rawExecutor struct {
	c         *apiclient.Client
	id        string
	stopBeats func()
}

func (f *executorFixture) rawExecutor(t *testing.T, handlers ...string) *rawExecutor {
	t.Helper()
	c, err := apiclient.New(f.url, &apiclient.Options{Token: f.token})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := c.RegisterExecutor(t.Context(), api.ExecutorRegister{Group: "billing", Instance: "raw", Labels: map[string]string{"region": "eu"}, Handlers: handlers})
	if err != nil {
		t.Fatalf("RegisterExecutor: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			_, _ = c.ExecutorHeartbeat(ctx, reg.ID, api.ExecutorHeartbeat{})
		}
	}()
	x := &rawExecutor{c: c, id: reg.ID, stopBeats: sync.OnceFunc(func() { cancel(); <-done })}
	t.Cleanup(x.stopBeats)
	return x
}

// take polls until it gets one run, and stops the heartbeats.
func (x *rawExecutor) take(t *testing.T) api.ExecutorRun {
	t.Helper()
	work, err := x.c.PollExecutor(t.Context(), x.id, api.ExecutorPoll{Wait: "10s", Max: 1})
	x.stopBeats()
	if err != nil || len(work.Runs) != 1 {
		t.Fatalf("PollExecutor: %+v, %v; want one run", work, err)
	}
	return work.Runs[0]
}

// TestExecutorLost lets an executor's lease lapse while it runs: a job
// that requests recovery is handed to another executor as the next
// attempt, recovering, and the lost executor's late result is refused;
// a job that does not is recorded executor_lost and alerted.
func TestExecutorLost(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		f := newExecutorFixture(t, url, func(c *Config) { c.ExecutorLease = time.Second })
		hook := newWebhook(t)
		// Registered first, so that routing "first" picks it.
		lost := f.rawExecutor(t, "work")
		recovered := make(chan *executor.Run, 1)
		f.startExecutor(t, "billing-ok", map[string]executor.HandlerFunc{
			"work": func(_ context.Context, r *executor.Run) error { recovered <- r; return nil },
		})

		id := f.runOnce(t, executorJob("recover", "work", true), nil)
		run := lost.take(t)
		// No heartbeat from here on: the lease lapses within a second.
		r := receive(t, "the re-run", recovered)
		if !r.Recovering || r.Attempt != 2 || r.ID != run.ID {
			t.Errorf("re-run %+v, want attempt 2 of run %s, recovering", r, run.ID)
		}
		first := waitExecution(t, f.s, id)
		if first.Outcome != "executor_lost" || first.ExecutorID != lost.id || !strings.Contains(first.Error, "lost its lease") {
			t.Errorf("first attempt %+v, want executor_lost on %s", first, lost.id)
		}
		err := lost.c.ReportExecutorResult(t.Context(), lost.id, run.ID, api.ExecutorResult{Token: run.Token, Outcome: "succeeded"})
		if !apiclient.IsCode(err, api.CodeConflict) {
			t.Errorf("the lost executor's late result: %v, want a conflict", err)
		}
		if _, err := lost.c.ExecutorHeartbeat(t.Context(), lost.id, api.ExecutorHeartbeat{}); !apiclient.IsCode(err, api.CodeConflict) {
			t.Errorf("the lost executor's heartbeat: %v, want a conflict", err)
		}
		var attempts []api.Execution
		waitFor(t, "the second attempt to finish", func() bool {
			attempts, err = f.s.Attempts(t.Context(), id)
			return err == nil && len(attempts) == 2 && attempts[1].Outcome != "running"
		})
		if a := attempts[1]; a.Outcome != "succeeded" || !a.Recovering || a.Attempt != 2 {
			t.Errorf("second attempt %+v, want succeeded, recovering", a)
		}

		// Without recovery: executor_lost, alerted.
		lost2 := f.rawExecutor(t, "solo")
		j := executorJob("no-recover", "solo", false, func(j *api.Job) { j.Alerts = &api.JobAlerts{Webhooks: []string{hook.URL}} })
		id = f.runOnce(t, j, nil)
		lost2.take(t)
		if e := waitExecution(t, f.s, id); e.Outcome != "executor_lost" || e.ExecutorID != lost2.id {
			t.Errorf("execution %+v, want executor_lost on %s", e, lost2.id)
		}
		if p := hook.next(t, alert.KindFailure); !strings.Contains(p.Error, "lost its lease") {
			t.Errorf("alert %+v, want the executor_lost error", p)
		}
	})
}

// TestExecutorTokenScope checks the executor role's bounds through the
// HTTP API: its token calls only the executor routes and only for its
// groups, a stale token's result is refused, malformed messages get 400
// naming the field, and a viewer cannot list tokens.
func TestExecutorTokenScope(t *testing.T) {
	t.Parallel()
	f := newExecutorFixture(t, dbtest.SQLiteURL(t))
	ctx := t.Context()
	other, err := f.s.auth.CreateToken(ctx, "admin", api.Token{Name: "other", Role: api.RoleExecutor, Groups: []string{"other"}})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	c, _ := apiclient.New(f.url, &apiclient.Options{Token: f.token})
	oc, _ := apiclient.New(f.url, &apiclient.Options{Token: other.Secret})

	if _, err := c.ListJobs(ctx, api.JobQuery{}); !apiclient.IsCode(err, api.CodePermissionDenied) {
		t.Errorf("ListJobs with an executor token: %v, want permission_denied", err)
	}
	if _, err := c.ListExecutors(ctx); !apiclient.IsCode(err, api.CodePermissionDenied) {
		t.Errorf("ListExecutors with an executor token: %v, want permission_denied", err)
	}
	if _, err := c.RegisterExecutor(ctx, api.ExecutorRegister{Group: "other", Handlers: []string{"h"}}); !apiclient.IsCode(err, api.CodePermissionDenied) {
		t.Errorf("registering in a group the token does not serve: %v, want permission_denied", err)
	}
	if _, err := c.RegisterExecutor(ctx, api.ExecutorRegister{Group: "billing"}); !apiclient.IsCode(err, api.CodeInvalidArgument) {
		t.Errorf("registering without handlers: %v, want invalid_argument", err)
	}
	reg, err := c.RegisterExecutor(ctx, api.ExecutorRegister{Group: "billing", Handlers: []string{"h"}})
	if err != nil {
		t.Fatalf("RegisterExecutor: %v", err)
	}
	if _, err := oc.PollExecutor(ctx, reg.ID, api.ExecutorPoll{}); !apiclient.IsCode(err, api.CodePermissionDenied) {
		t.Errorf("polling another group's executor: %v, want permission_denied", err)
	}
	if _, err := c.PollExecutor(ctx, reg.ID, api.ExecutorPoll{Wait: "1m"}); !apiclient.IsCode(err, api.CodeInvalidArgument) {
		t.Errorf("polling with a wait of a minute: %v, want invalid_argument", err)
	}
	id := f.runOnce(t, executorJob("scoped", "h", false, func(j *api.Job) { j.Executor.Labels = nil }), nil)
	work, err := c.PollExecutor(ctx, reg.ID, api.ExecutorPoll{Wait: "10s"})
	if err != nil || len(work.Runs) != 1 {
		t.Fatalf("PollExecutor: %+v, %v", work, err)
	}
	run := work.Runs[0]
	if err := oc.ReportExecutorResult(ctx, reg.ID, run.ID, api.ExecutorResult{Token: run.Token, Outcome: "succeeded"}); !apiclient.IsCode(err, api.CodePermissionDenied) {
		t.Errorf("another group's token reporting: %v, want permission_denied", err)
	}
	if err := c.ReportExecutorResult(ctx, reg.ID, run.ID, api.ExecutorResult{Token: run.Token + 1, Outcome: "succeeded"}); !apiclient.IsCode(err, api.CodeConflict) {
		t.Errorf("a stale token's result: %v, want conflict", err)
	}
	err = c.ReportExecutorResult(ctx, reg.ID, run.ID, api.ExecutorResult{Token: run.Token, Outcome: "done"})
	wantAPIError(t, unwrapAPI(err), api.CodeInvalidArgument, "outcome")
	if e, err := f.s.GetExecution(ctx, id); err != nil || e.Outcome != "running" {
		t.Errorf("after the refused results: %+v, %v; want still running", e, err)
	}
	if err := c.ReportExecutorResult(ctx, reg.ID, run.ID, api.ExecutorResult{Token: run.Token, Outcome: "succeeded", Output: "ok"}); err != nil {
		t.Fatalf("ReportExecutorResult: %v", err)
	}
	if e := waitExecution(t, f.s, id); e.Outcome != "succeeded" || e.Output != "ok" {
		t.Errorf("execution %+v, want succeeded with ok", e)
	}

	// A viewer reads no token; an operator cannot make an executor token.
	for _, u := range []api.User{{Name: "vera", Role: api.RoleViewer, Password: "a long enough password"}, {Name: "otto", Role: api.RoleOperator, Password: "a long enough password"}} {
		if _, err := f.s.auth.CreateUser(ctx, "admin", u); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
	}
	viewer, err := apiclient.New(f.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := viewer.Login(ctx, "vera", "a long enough password")
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	if _, err := viewer.WithToken(sess.Token).ListTokens(ctx); !apiclient.IsCode(err, api.CodePermissionDenied) {
		t.Errorf("a viewer listing tokens: %v, want permission_denied", err)
	}
	if _, err := f.s.auth.CreateToken(ctx, "otto", api.Token{Name: "sneaky", Role: api.RoleExecutor, Groups: []string{"billing"}}); err == nil {
		t.Error("an operator's executor token was created")
	}
	if _, err := f.s.auth.CreateToken(ctx, "admin", api.Token{Name: "groupless", Role: api.RoleExecutor}); err == nil {
		t.Error("an executor token without groups was created")
	}
}

// unwrapAPI returns the *api.Error err wraps, or err.
func unwrapAPI(err error) error {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae
	}
	return err
}

// TestExecutorJobValidation refuses executor jobs with a bad target,
// naming the field, and stores nothing: a group no executor has ever
// registered in and a handler none of the group's has ever advertised
// among them, unless the job sets allow_unregistered.
func TestExecutorJobValidation(t *testing.T) {
	t.Parallel()
	s := newServer(t, dbtest.SQLiteURL(t))
	ctx := t.Context()
	// Jobs of group billing may name handler h, which an executor of the
	// group advertised; its lease need not hold.
	if _, err := s.dispatch.Register(ctx, api.ExecutorRegister{Group: "billing", Handlers: []string{"h", "other"}}); err != nil {
		t.Fatalf("Register: %v", err)
	}
	tests := []struct {
		name  string
		mod   func(j *api.Job)
		field string
	}{
		{"UnregisteredGroup", func(j *api.Job) { j.Executor.Group = "payroll" }, "executor.group"},
		{"UnadvertisedHandler", func(j *api.Job) { j.Executor.Handler = "invoice.void" }, "executor.handler"},
		{"NoTarget", func(j *api.Job) { j.Executor = nil }, "executor"},
		{"EmptyGroup", func(j *api.Job) { j.Executor.Group = "" }, "executor.group"},
		{"NoHandler", func(j *api.Job) { j.Executor.Handler = "" }, "executor.handler"},
		{"UnknownRouting", func(j *api.Job) { j.Executor.Routing = "fastest" }, "executor.routing"},
		{"ShardingBroadcastWithShards", func(j *api.Job) { j.Executor.Routing, j.Shards = api.RoutingShardingBroadcast, 3 }, "shards"},
		{"BadLabel", func(j *api.Job) { j.Executor.Labels = map[string]string{"region": "eu\n"} }, "executor.labels.region"},
		{"HashKeyWithoutHash", func(j *api.Job) { j.Executor.HashKey = "customer" }, "executor.hash_key"},
		{"TargetOnHTTPJob", func(j *api.Job) { j.Type, j.HTTP = "http", []byte(`{"url":"http://127.0.0.1/"}`) }, "executor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := executorJob("bad-"+strings.ToLower(tc.name), "h", false, tc.mod)
			_, err := s.CreateJob(ctx, "admin", j)
			wantAPIError(t, err, api.CodeInvalidArgument, tc.field)
			if _, err := s.GetJob(ctx, j.Group, j.Name); err == nil {
				t.Errorf("the refused job %s was stored", j.Name)
			}
		})
	}
	j := executorJob("good", "h", false, func(j *api.Job) {
		j.Executor.Routing, j.Executor.HashKey = api.RoutingConsistentHash, "customer"
	})
	if _, err := s.CreateJob(ctx, "admin", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	got, err := s.GetJob(ctx, j.Group, j.Name)
	if err != nil || got.Executor == nil || got.Executor.HashKey != "customer" || got.Executor.Routing != api.RoutingConsistentHash {
		t.Errorf("GetJob: %+v, %v; want the executor target back", got, err)
	}
	// The escape: saved before any executor of payroll registers.
	early := executorJob("early", "payroll.run", false, func(j *api.Job) {
		j.Executor.Group, j.Executor.AllowUnregistered = "payroll", true
	})
	if _, err := s.CreateJob(ctx, "admin", early); err != nil {
		t.Fatalf("CreateJob(allow_unregistered): %v", err)
	}
	if got, err := s.GetJob(ctx, early.Group, early.Name); err != nil || got.Executor == nil || !got.Executor.AllowUnregistered {
		t.Errorf("GetJob: %+v, %v; want allow_unregistered kept", got, err)
	}
	// The batch names the job's index.
	_, err = s.CreateJobs(ctx, "admin", []api.Job{executorJob("b1", "h", false), executorJob("b2", "nobody", false)})
	wantAPIError(t, err, api.CodeInvalidArgument, "jobs[1].executor.handler")
	if _, err := s.GetJob(ctx, "billing", "b1"); err == nil {
		t.Errorf("the batch was refused, but its job b1 was stored")
	}
}
