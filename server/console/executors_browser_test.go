package console_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/executor"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
	"github.com/chromedp/chromedp"
)

// startExecutor runs an SDK executor of group billing, labelled
// region=eu, with one handler "invoice.close" that prints a line, until
// the test ends, and returns it once it registered.
func startExecutor(t *testing.T, srv *servertest.Server) *executor.Executor {
	t.Helper()
	tok, err := srv.Client.CreateToken(context.Background(), api.Token{Name: "exec", Role: api.RoleExecutor, Groups: []string{"billing"}})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	ex, err := executor.New(executor.Config{
		Server: srv.URL, Token: tok.Secret, Group: "billing", Instance: "billing-7", Version: "4.2.0",
		Labels: map[string]string{"region": "eu"}, PollWait: 2 * time.Second, ShutdownTimeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ex.Handle("invoice.close", func(_ context.Context, r *executor.Run) error {
		fmt.Fprintf(r.Output, "closed %v", r.Params["customer"])
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("executor Run: %v", err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for ex.ID() == "" {
		if time.Now().After(deadline) {
			t.Fatal("the executor did not register within 20s")
		}
		time.Sleep(20 * time.Millisecond) // the executor registers in its own goroutine; nothing to wait on
	}
	return ex
}

// TestExecutorsPage shows, to a viewer, the Executors page with the
// group, instance, labels, version and handlers of a live executor and a
// recent no_executor execution among the failures, the
// execution page of a run it ran naming it, and the executions page's
// outcome filter offering no_executor and executor_lost.
func TestExecutorsPage(t *testing.T) {
	srv := servertest.Start(t, nil)
	ex := startExecutor(t, srv)
	ctx := context.Background()
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "viewer-password-1"}); err != nil {
		t.Fatal(err)
	}
	job := api.Job{Group: "billing", Name: "close", Type: "executor", Data: map[string]any{"customer": "acme"},
		Executor: &api.ExecutorTarget{Group: "billing", Handler: "invoice.close", Routing: api.RoutingRoundRobin}}
	if _, err := srv.Client.CreateJob(ctx, job); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if _, err := srv.Client.RunJob(ctx, "billing", "close", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	run := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "billing", JobName: "close", Outcomes: []string{"succeeded"}})
	// No executor of the group carries region=us.
	usOnly := api.Job{Group: "billing", Name: "us-only", Type: "executor",
		Executor: &api.ExecutorTarget{Group: "billing", Handler: "invoice.close", Labels: map[string]string{"region": "us"}}}
	if _, err := srv.Client.CreateJob(ctx, usOnly); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if _, err := srv.Client.RunJob(ctx, "billing", "us-only", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	waitExecution(t, srv, api.ExecutionQuery{JobGroup: "billing", JobName: "us-only", Outcomes: []string{"no_executor"}})

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/executors", "vera", "viewer-password-1")
	row := p.WaitText(`[data-testid="executor"][data-instance="billing-7"]`, "billing-7")
	for _, want := range []string{"live", "region=eu", "invoice.close", "4.2.0", ex.ID()} {
		if !strings.Contains(row, want) {
			t.Errorf("the executor's row %q lacks %q", row, want)
		}
	}
	if got := p.Text(`section[data-group="billing"] h2`); !strings.Contains(got, "billing") {
		t.Errorf("the group's heading = %q, want it to name billing", got)
	}
	p.WaitText(`[data-testid="executors-live"]`, "1")
	p.WaitText(`[data-testid="executor-failures"] [data-outcome="no_executor"]`, "billing/us-only")
	p.Screenshot("executors")

	p.Route("/executions/" + url.PathEscape(run.ID))
	p.WaitText(`[data-testid="outcome"]`, "succeeded")
	if got := p.WaitText(`[data-testid="executor"]`, "billing-7"); !strings.Contains(got, ex.ID()) {
		t.Errorf("the execution's executor = %q, want billing-7 and its ID %s", got, ex.ID())
	}
	p.Screenshot("execution-on-executor")

	p.Route("/executions")
	options := p.WaitText(`select[name="outcome"]`, "executor lost")
	for _, want := range []string{"no executor", "executor lost", "node lost"} {
		if !strings.Contains(options, want) {
			t.Errorf("the outcome filter offers %q, want %q", options, want)
		}
	}
}

// TestExecutorJobForm creates a job of type executor in the job form as
// an admin: the executor fields show for that type only; the API's
// refusal of a hash key without consistent-hash routing shows under its
// field; the saved
// job has the group, handler, routing, hash key and labels given, and
// its edit form shows them again; a handler no executor advertised is
// refused until "Save it before its executors register" is checked, and
// the saved job then allows unregistered ones.
func TestExecutorJobForm(t *testing.T) {
	srv := servertest.Start(t, nil)
	startExecutor(t, srv)
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/jobs/new", servertest.AdminName, srv.AdminPassword)
	p.WaitText("main h1", "New job")
	if !browsertest.Get(p, "reading whether the executor fields are hidden", chromedp.Evaluate[bool](
		`document.querySelector('[data-testid="executor-fields"]').hidden`)) {
		t.Error("the executor fields show for an HTTP job")
	}
	typeIn(p, `input[name="group"]`, "billing")
	typeIn(p, `input[name="name"]`, "close-month")
	typeIn(p, `input[name="triggers[0].schedule.expression"]`, "0 0 2 1 * ?")
	setValue(p, `select[name="type"]`, "executor")
	waitJS(p, "the executor fields", `document.querySelector('input[name="executor.group"]').offsetParent !== null`)
	typeIn(p, `input[name="executor.group"]`, "billing")
	typeIn(p, `input[name="executor.handler"]`, "invoice.close")
	typeIn(p, `input[name="executor.hash_key"]`, "customer")
	setValue(p, `textarea[name="executor.labels"]`, "region=eu")
	p.ClickText("button", "Create job")
	p.WaitText(`.field[data-field="executor.hash_key"] .error`, "consistent_hash")
	setValue(p, `select[name="executor.routing"]`, "consistent_hash")
	p.Screenshot("job-edit-executor")
	p.ClickText("button", "Create job")
	p.WaitText("main h1", "billing/close-month")

	job, err := srv.Client.GetJob(context.Background(), "billing", "close-month")
	if err != nil {
		t.Fatal(err)
	}
	x := job.Executor
	if job.Type != "executor" || x == nil || x.Group != "billing" || x.Handler != "invoice.close" || x.Routing != api.RoutingConsistentHash ||
		x.HashKey != "customer" || len(x.Labels) != 1 || x.Labels["region"] != "eu" {
		t.Errorf("the form created a job of type %q with executor %+v", job.Type, x)
	}

	p.ClickText(".page-head a", "Edit")
	waitJS(p, "the edit form's executor fields", `document.querySelector('input[name="executor.handler"]')?.value === 'invoice.close'`)
	got := browsertest.Get(p, "reading the form", chromedp.Evaluate[string](
		`['type','executor.group','executor.routing','executor.hash_key','executor.labels'].map(n => document.querySelector('[name="' + n + '"]').value).join('|')`))
	if want := "executor|billing|consistent_hash|customer|region=eu"; got != want {
		t.Errorf("the edit form holds %q, want %q", got, want)
	}
	if browsertest.Get(p, "reading the allow-unregistered box", chromedp.Evaluate[bool](
		`document.querySelector('input[name="executor.allow_unregistered"]').checked`)) {
		t.Error("the edit form's allow-unregistered box is checked for a job that does not set it")
	}

	// A handler no executor advertised is refused under its field until
	// the box is checked; the saved job keeps the setting and the form
	// shows it again.
	typeIn(p, `input[name="executor.handler"]`, "invoice.reopen")
	p.ClickText("button", "Save")
	p.WaitText(`.field[data-field="executor.handler"] .error`, "allow_unregistered")
	setValue(p, `input[name="executor.allow_unregistered"]`, "true")
	p.ClickText("button", "Save")
	waitJS(p, "the job's page", `(h => h && h.innerText.includes('billing/close-month') && !h.innerText.startsWith('Edit'))(document.querySelector('main h1'))`)
	job, err = srv.Client.GetJob(context.Background(), "billing", "close-month")
	if err != nil {
		t.Fatal(err)
	}
	if x := job.Executor; x == nil || x.Handler != "invoice.reopen" || !x.AllowUnregistered {
		t.Errorf("saving with the box checked left executor %+v, want handler invoice.reopen with allow_unregistered", x)
	}
	p.ClickText(".page-head a", "Edit")
	waitJS(p, "the edit form's checked allow-unregistered box",
		`document.querySelector('input[name="executor.handler"]')?.value === 'invoice.reopen' && document.querySelector('input[name="executor.allow_unregistered"]').checked`)
}
