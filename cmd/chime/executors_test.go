package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestExecutorsList registers an executor with a token of role executor
// and lists it with `chime executors list`, as a table and as JSON.
func TestExecutorsList(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	token := cliLogin(t, srv.URL, srv.AdminPassword)
	ctx := t.Context()
	flags := []string{"--server", srv.URL, "--token", token}

	out, _, err := execChime(t, "", append([]string{"executors", "list"}, flags...)...)
	if err != nil || out != "no executors\n" {
		t.Errorf("chime executors list with none: %q, %v; want no executors", out, err)
	}

	tok, err := srv.Client.CreateToken(ctx, api.Token{Name: "exec", Role: api.RoleExecutor, Groups: []string{"billing"}})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	ec, err := apiclient.New(srv.URL, &apiclient.Options{Token: tok.Secret})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := ec.RegisterExecutor(ctx, api.ExecutorRegister{
		Group: "billing", Instance: "billing-1", Version: "1.2.3",
		Labels: map[string]string{"region": "eu", "gpu": "true"}, Handlers: []string{"invoice.close"},
	})
	if err != nil {
		t.Fatalf("RegisterExecutor: %v", err)
	}

	out, _, err = execChime(t, "", append([]string{"executors", "list"}, flags...)...)
	if err != nil {
		t.Fatalf("chime executors list: %v", err)
	}
	head := regexp.MustCompile(`^GROUP +ID +INSTANCE +LIVE +LABELS +VERSION +LAST HEARTBEAT +RUNNING\n`)
	row := regexp.MustCompile(`(?m)^billing +` + reg.ID + ` +billing-1 +yes +gpu=true,region=eu +1\.2\.3 +\d{4}-\S+.* +0$`)
	if !head.MatchString(out) || !row.MatchString(out) {
		t.Errorf("chime executors list:\n%s\nwant the heading and the executor's row", out)
	}

	// A run it takes and reports names it in `chime executions get`.
	job := api.Job{Group: "billing", Name: "close", Type: "executor", Executor: &api.ExecutorTarget{Group: "billing", Handler: "invoice.close"}}
	if _, err := srv.Client.CreateJob(ctx, job); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if _, err := srv.Client.RunJob(ctx, "billing", "close", api.RunRequest{}); err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	work, err := ec.PollExecutor(ctx, reg.ID, api.ExecutorPoll{Wait: "10s", Max: 1})
	if err != nil || len(work.Runs) != 1 {
		t.Fatalf("PollExecutor: %+v, %v; want the run", work, err)
	}
	run := work.Runs[0]
	if err := ec.ReportExecutorResult(ctx, reg.ID, run.ID, api.ExecutorResult{Token: run.Token, Outcome: "succeeded", Output: "closed"}); err != nil {
		t.Fatalf("ReportExecutorResult: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		e, err := srv.Client.GetExecution(ctx, run.ExecutionID)
		if err == nil && e.Outcome == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s: %+v, %v after 20s; want succeeded", run.ExecutionID, e, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the real history; nothing to wait on
	}
	out, _, err = execChime(t, "", append([]string{"executions", "get", run.ExecutionID}, flags...)...)
	if want := "Executor:   billing-1 (" + reg.ID + ")\n"; err != nil || !strings.Contains(out, want) {
		t.Errorf("chime executions get: %v\n%s\nwant %q", err, out, want)
	}

	out, _, err = execChime(t, "", append([]string{"executors", "list", "-o", "json"}, flags...)...)
	var list []api.Executor
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].ID != reg.ID || !list[0].Live {
		t.Errorf("chime executors list -o json: %q, %v; want the live executor %s", out, err, reg.ID)
	}
}
