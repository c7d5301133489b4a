package apiclient_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server/servertest"
)

// target is an HTTP endpoint for http jobs to call: it answers with
// status and counts the requests.
type target struct {
	mu     sync.Mutex
	status int
	hits   int
}

func newTarget(t *testing.T, status int) (*target, string) {
	t.Helper()
	tg := &target{status: status}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.mu.Lock()
		tg.hits++
		tg.mu.Unlock()
		w.WriteHeader(tg.status)
		_, _ = io.WriteString(w, "pong")
	}))
	t.Cleanup(hs.Close)
	return tg, hs.URL
}

// httpJob is an http job calling url, with an optional cron trigger.
func httpJob(group, name, url, cron string) api.Job {
	j := api.Job{
		Group: group, Name: name, Type: "http",
		HTTP: json.RawMessage(`{"method":"POST","url":"` + url + `"}`),
	}
	if cron != "" {
		j.Triggers = []api.Trigger{{Schedule: json.RawMessage(`{"kind":"cron","expression":"` + cron + `","time_zone":"Europe/Berlin"}`)}}
	}
	return j
}

// wantCode fails the test unless err wraps an *api.Error with code (and
// field, when not empty).
func wantCode(t *testing.T, err error, code api.ErrorCode, field string) {
	t.Helper()
	var apiErr *api.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v (%T), want an *api.Error %s", err, err, code)
	}
	if apiErr.Code != code || (field != "" && apiErr.Field != field) || apiErr.Message == "" {
		t.Fatalf("error = %+v, want code %s, field %q and a message", apiErr, code, field)
	}
}

// waitExecution polls the history until an execution matching q has an
// outcome other than running, and returns it.
func waitExecution(t *testing.T, c *apiclient.Client, q api.ExecutionQuery, match func(api.Execution) bool) api.Execution {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		page, err := c.ListExecutions(t.Context(), q)
		if err != nil {
			t.Fatalf("ListExecutions: %v", err)
		}
		for _, e := range page.Executions {
			if e.Outcome != "running" && match(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no finished execution matching after 20s; history: %+v", page.Executions)
		}
		time.Sleep(50 * time.Millisecond) // polling the real history; nothing to wait on
	}
}

func TestJobs(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, nil).Client
	ctx := t.Context()
	_, url := newTarget(t, http.StatusOK)

	created, err := c.CreateJob(ctx, httpJob("reports", "nightly", url, "0 30 2 * * ?"))
	if err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if created.Version == 0 {
		t.Errorf("created job has no version: %+v", created)
	}
	_, err = c.CreateJob(ctx, httpJob("reports", "nightly", url, ""))
	wantCode(t, err, api.CodeConflict, "")

	got, err := c.GetJob(ctx, "reports", "nightly")
	if err != nil {
		t.Fatalf("GetJob: %v", err)
	}
	if got.Version != created.Version || len(got.Triggers) != 1 || got.Triggers[0].NextFireTime == nil {
		t.Errorf("GetJob = %+v, want version %d and one scheduled trigger", got, created.Version)
	}

	// An update from the current version succeeds; one from an older
	// version is refused and changes nothing.
	edit := *got
	edit.Description = "first edit"
	saved, wasCreated, err := c.PutJob(ctx, edit, got.Version)
	if err != nil || wasCreated || saved.Version <= got.Version || saved.Description != "first edit" {
		t.Fatalf("PutJob = %+v, created %v, %v; want an update to a newer version", saved, wasCreated, err)
	}
	edit.Description = "stale edit"
	_, _, err = c.PutJob(ctx, edit, got.Version)
	wantCode(t, err, api.CodeVersionMismatch, "")
	if now, _ := c.GetJob(ctx, "reports", "nightly"); now.Description != "first edit" {
		t.Errorf("a refused update changed the job: %q", now.Description)
	}
	_, wasCreated, err = c.PutJob(ctx, httpJob("reports", "hourly", url, "0 0 * * * ?"), 0)
	if err != nil || !wasCreated {
		t.Fatalf("PutJob of a new key: created %v, %v", wasCreated, err)
	}

	// Bad input names its field.
	bad := httpJob("reports", "broken", "not a url", "")
	_, _, err = c.PutJob(ctx, bad, 0)
	wantCode(t, err, api.CodeInvalidArgument, "http.url")
	bad = httpJob("reports", "broken", url, "0 0 25 * * ?")
	_, err = c.CreateJob(ctx, bad)
	wantCode(t, err, api.CodeInvalidArgument, "triggers[0].schedule.expression")
	_, err = c.GetJob(ctx, "reports", "broken")
	wantCode(t, err, api.CodeNotFound, "")

	// Paging: one job per page, the iterator follows the cursors.
	if _, err := c.CreateJob(ctx, httpJob("other", "a", url, "")); err != nil {
		t.Fatal(err)
	}
	page, err := c.ListJobs(ctx, api.JobQuery{Limit: 1})
	if err != nil || len(page.Jobs) != 1 || page.Next == "" {
		t.Fatalf("ListJobs limit 1 = %+v, %v; want one job and a cursor", page, err)
	}
	var keys []string
	for j, err := range c.Jobs(ctx, api.JobQuery{Limit: 1}) {
		if err != nil {
			t.Fatalf("Jobs: %v", err)
		}
		keys = append(keys, j.Group+"/"+j.Name)
	}
	if want := []string{"other/a", "reports/hourly", "reports/nightly"}; !slices.Equal(keys, want) {
		t.Errorf("Jobs = %v, want %v", keys, want)
	}
	group, err := c.ListJobs(ctx, api.JobQuery{Group: "reports", Text: "HOUR"})
	if err != nil || len(group.Jobs) != 1 || group.Jobs[0].Name != "hourly" {
		t.Errorf("ListJobs group and text = %+v, %v", group, err)
	}

	// Pause and resume.
	if err := c.PauseJob(ctx, "reports", "nightly"); err != nil {
		t.Fatalf("PauseJob: %v", err)
	}
	paused, err := c.ListJobs(ctx, api.JobQuery{State: "paused"})
	if err != nil || len(paused.Jobs) != 1 || !paused.Jobs[0].Paused {
		t.Errorf("paused jobs = %+v, %v", paused, err)
	}
	if err := c.ResumeJob(ctx, "reports", "nightly"); err != nil {
		t.Fatalf("ResumeJob: %v", err)
	}

	// Fire times and explanations.
	times, err := c.Upcoming(ctx, "reports", "nightly", 3)
	if err != nil || len(times) != 3 {
		t.Fatalf("Upcoming = %v, %v", times, err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, ft := range times {
		if local := ft.Time.In(berlin); local.Hour() != 2 || local.Minute() != 30 {
			t.Errorf("upcoming fire time %v is not 02:30 in Berlin", ft.Time)
		}
	}
	ex, err := c.Explain(ctx, "reports", "nightly", time.Now())
	if err != nil || ex.Summary == "" {
		t.Errorf("Explain = %+v, %v", ex, err)
	}
	cron, err := c.ExplainCron(ctx, "0 30 2 * * ?", "Europe/Berlin", 2)
	if err != nil || cron.Description != "At 02:30, every day" || len(cron.Next) != 2 {
		t.Errorf("ExplainCron = %+v, %v", cron, err)
	}
	_, err = c.ExplainCron(ctx, "0 30 2 * * ?", "Mars/Base", 2)
	wantCode(t, err, api.CodeInvalidArgument, "time_zone")

	// Delete.
	if err := c.DeleteJob(ctx, "other", "a"); err != nil {
		t.Fatalf("DeleteJob: %v", err)
	}
	_, err = c.GetJob(ctx, "other", "a")
	wantCode(t, err, api.CodeNotFound, "")
	err = c.DeleteJob(ctx, "other", "a")
	wantCode(t, err, api.CodeNotFound, "")
}

func TestExecutions(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, nil).Client
	ctx := t.Context()
	ok, okURL := newTarget(t, http.StatusOK)
	_, failURL := newTarget(t, http.StatusInternalServerError)
	for _, j := range []api.Job{httpJob("ops", "ping", okURL, ""), httpJob("ops", "broken", failURL, "")} {
		if _, err := c.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}

	acc, err := c.RunJob(ctx, "ops", "ping", api.RunRequest{Params: map[string]any{"reason": "test"}})
	if err != nil || acc.Count != 1 {
		t.Fatalf("RunJob = %+v, %v", acc, err)
	}
	done := waitExecution(t, c, api.ExecutionQuery{JobGroup: "ops", JobName: "ping"}, func(api.Execution) bool { return true })
	if done.Outcome != "succeeded" || !done.Manual || done.Params["reason"] != "test" {
		t.Errorf("execution = %+v, want a manual success with its params", done)
	}
	ok.mu.Lock()
	if ok.hits != 1 {
		t.Errorf("target called %d times, want 1", ok.hits)
	}
	ok.mu.Unlock()
	full, err := c.GetExecution(ctx, done.ID)
	if err != nil || full.ID != done.ID || !strings.Contains(full.Output, "pong") {
		t.Errorf("GetExecution = %+v, %v; want the captured response", full, err)
	}
	_, err = c.GetExecution(ctx, "no-such-id")
	wantCode(t, err, api.CodeNotFound, "")

	if _, err := c.RunJob(ctx, "ops", "broken", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	failed := waitExecution(t, c, api.ExecutionQuery{Outcomes: []string{"failed"}}, func(api.Execution) bool { return true })
	if failed.JobName != "broken" || failed.Error == "" {
		t.Errorf("failed execution = %+v", failed)
	}
	acc, err = c.RetryExecution(ctx, failed.ID)
	if err != nil || acc.Count != 1 {
		t.Fatalf("RetryExecution = %+v, %v", acc, err)
	}
	retried := waitExecution(t, c, api.ExecutionQuery{JobGroup: "ops", JobName: "broken"}, func(e api.Execution) bool { return e.ID != failed.ID })
	attempts, err := c.Attempts(ctx, retried.ID)
	if err != nil || len(attempts) == 0 {
		t.Fatalf("Attempts = %v, %v", attempts, err)
	}

	from := time.Now().Add(-time.Hour)
	var all []api.Execution
	for e, err := range c.Executions(ctx, api.ExecutionQuery{From: &from, Limit: 1}) {
		if err != nil {
			t.Fatalf("Executions: %v", err)
		}
		all = append(all, e)
	}
	if len(all) < 3 {
		t.Errorf("Executions over pages of one = %d executions, want at least 3", len(all))
	}
	_, err = c.ListExecutions(ctx, api.ExecutionQuery{Outcomes: []string{"exploded"}})
	wantCode(t, err, api.CodeInvalidArgument, "outcome")

	// A backfill over two days of a daily job runs it twice.
	if _, _, err := c.PutJob(ctx, httpJob("ops", "daily", okURL, "0 0 12 * * ?"), 0); err != nil {
		t.Fatal(err)
	}
	acc, err = c.Backfill(ctx, "ops", "daily", api.BackfillRequest{
		From: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC),
	})
	if err != nil || acc.Count != 2 {
		t.Errorf("Backfill = %+v, %v; want 2 runs", acc, err)
	}
}

func TestCalendarsAndNodes(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, nil).Client
	ctx := t.Context()
	cal := api.Calendar{Name: "holidays", Calendar: json.RawMessage(`{"type":"holiday","time_zone":"Europe/Berlin","excluded_dates":["2025-12-25"]}`)}
	created, err := c.PutCalendar(ctx, cal)
	if err != nil || !created {
		t.Fatalf("PutCalendar: created %v, %v", created, err)
	}
	if created, err = c.PutCalendar(ctx, cal); err != nil || created {
		t.Fatalf("PutCalendar again: created %v, %v", created, err)
	}
	job := httpJob("ops", "daily", "http://127.0.0.1:9/", "0 0 12 * * ?")
	job.Triggers[0].Calendar = "holidays"
	if _, err := c.CreateJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	cals, err := c.ListCalendars(ctx)
	if err != nil || len(cals) != 1 || !slices.Equal(cals[0].UsedBy, []string{"ops.daily-0"}) {
		t.Errorf("ListCalendars = %+v, %v", cals, err)
	}
	got, err := c.GetCalendar(ctx, "holidays")
	if err != nil || got.Name != "holidays" || len(got.Calendar) == 0 {
		t.Errorf("GetCalendar = %+v, %v", got, err)
	}
	err = c.DeleteCalendar(ctx, "holidays")
	wantCode(t, err, api.CodeConflict, "")
	if err := c.DeleteJob(ctx, "ops", "daily"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteCalendar(ctx, "holidays"); err != nil {
		t.Errorf("DeleteCalendar once unused: %v", err)
	}

	nodes, err := c.Nodes(ctx)
	if err != nil || len(nodes) != 1 || !nodes[0].Self || nodes[0].ID == "" || nodes[0].Version == "" || nodes[0].Workers < 1 {
		t.Errorf("Nodes = %+v, %v; want this node with its version and workers", nodes, err)
	}
	if err := c.Health(ctx); err != nil {
		t.Errorf("Health: %v", err)
	}
	if err := c.Ready(ctx); err != nil { // servertest.Start waited for it
		t.Errorf("Ready: %v", err)
	}
}

func TestUsersTokensAndAudit(t *testing.T) {
	t.Parallel()
	admin := servertest.Start(t, nil).Client
	ctx := t.Context()

	me, err := admin.Me(ctx)
	if err != nil || me.Name != "admin" || me.Role != api.RoleAdmin {
		t.Fatalf("Me = %+v, %v", me, err)
	}
	_, err = admin.Login(ctx, "admin", "wrong password")
	wantCode(t, err, api.CodeUnauthenticated, "")
	if m, err := admin.AuthMethods(ctx); err != nil || !m.Password || m.SSO != nil {
		t.Errorf("AuthMethods = %+v, %v; want passwords only, no sign-on provider configured", m, err)
	}

	if _, err := admin.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "a long enough password"}); err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	_, err = admin.CreateUser(ctx, api.User{Name: "short", Role: api.RoleViewer, Password: "short"})
	wantCode(t, err, api.CodeInvalidArgument, "password")
	users, err := admin.ListUsers(ctx)
	if err != nil || len(users) != 2 {
		t.Errorf("ListUsers = %+v, %v", users, err)
	}
	session, err := admin.WithToken("").Login(ctx, "vera", "a long enough password")
	if err != nil {
		t.Fatalf("Login as vera: %v", err)
	}
	vera := admin.WithToken(session.Token)
	if _, err := vera.ListJobs(ctx, api.JobQuery{}); err != nil {
		t.Errorf("a viewer lists jobs: %v", err)
	}
	_, err = vera.CreateJob(ctx, httpJob("g", "n", "http://127.0.0.1:9/", ""))
	wantCode(t, err, api.CodePermissionDenied, "")
	if _, err := admin.UpdateUser(ctx, api.User{Name: "vera", Role: api.RoleOperator}); err != nil {
		t.Fatalf("UpdateUser: %v", err)
	}
	if _, err := vera.CreateJob(ctx, httpJob("g", "n", "http://127.0.0.1:9/", "")); err != nil {
		t.Errorf("an operator creates a job: %v", err)
	}
	if err := vera.Logout(ctx); err != nil {
		t.Fatalf("Logout: %v", err)
	}
	_, err = vera.Me(ctx)
	wantCode(t, err, api.CodeUnauthenticated, "")

	tok, err := admin.CreateToken(ctx, api.Token{Name: "ci", Role: api.RoleViewer})
	if err != nil || tok.Secret == "" {
		t.Fatalf("CreateToken = %+v, %v", tok, err)
	}
	ci := admin.WithToken(tok.Secret)
	if who, err := ci.Me(ctx); err != nil || who.Role != api.RoleViewer {
		t.Errorf("Me with the token = %+v, %v", who, err)
	}
	tokens, err := admin.ListTokens(ctx)
	if err != nil || len(tokens) != 1 || tokens[0].Secret != "" {
		t.Errorf("ListTokens = %+v, %v; want one token without its secret", tokens, err)
	}
	if err := admin.DeleteToken(ctx, tok.ID); err != nil {
		t.Fatalf("DeleteToken: %v", err)
	}
	_, err = ci.Me(ctx)
	wantCode(t, err, api.CodeUnauthenticated, "")
	if err := admin.DeleteUser(ctx, "vera"); err != nil {
		t.Errorf("DeleteUser: %v", err)
	}

	var actions []string
	for e, err := range admin.Audit(ctx, api.AuditQuery{Limit: 2}) {
		if err != nil {
			t.Fatalf("Audit: %v", err)
		}
		actions = append(actions, e.Action)
	}
	for _, want := range []string{"user.create", "user.update", "token.create", "token.delete", "user.delete"} {
		if !slices.Contains(actions, want) {
			t.Errorf("audit log %v lacks %s", actions, want)
		}
	}
	page, err := admin.ListAudit(ctx, api.AuditQuery{Actor: "vera"})
	if err != nil || len(page.Entries) == 0 {
		t.Errorf("ListAudit by actor = %+v, %v", page, err)
	}
}

func TestAlertSettings(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, nil).Client
	ctx := t.Context()
	got := make(chan string, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case got <- string(body):
		default:
		}
	}))
	t.Cleanup(hook.Close)

	if err := c.PutAlertSettings(ctx, api.AlertSettings{DefaultWebhooks: []string{hook.URL}, RateLimit: "5m"}); err != nil {
		t.Fatalf("PutAlertSettings: %v", err)
	}
	settings, err := c.AlertSettings(ctx)
	if err != nil || len(settings.DefaultWebhooks) != 1 {
		t.Fatalf("AlertSettings = %+v, %v", settings, err)
	}
	if d, err := time.ParseDuration(settings.RateLimit); err != nil || d != 5*time.Minute {
		t.Errorf("AlertSettings = %+v, %v", settings, err)
	}
	if err := c.TestAlert(ctx); err != nil {
		t.Fatalf("TestAlert: %v", err)
	}
	select {
	case body := <-got:
		if !strings.Contains(body, `"text"`) {
			t.Errorf("webhook body has no text field: %s", body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the test alert did not reach the webhook within 20s")
	}
	err = c.PutAlertSettings(ctx, api.AlertSettings{RateLimit: "often"})
	wantCode(t, err, api.CodeInvalidArgument, "rate_limit")
}

// clientMethods maps each operation of the server's OpenAPI document to the
// client method that calls it ("" for routes a Go client has no use for).
var clientMethods = map[string]string{
	"login": "Login", "logout": "Logout", "me": "Me", "authMethods": "AuthMethods",
	"listJobs": "ListJobs", "createJob": "CreateJob", "createJobs": "CreateJobs", "getJob": "GetJob", "putJob": "PutJob", "deleteJob": "DeleteJob",
	"pauseJob": "PauseJob", "resumeJob": "ResumeJob", "runJob": "RunJob", "backfillJob": "Backfill",
	"upcomingFireTimes": "Upcoming", "explainJob": "Explain",
	"listJobVersions": "ListJobVersions", "getJobVersion": "GetJobVersion", "diffJobVersions": "DiffJobVersions", "rollbackJob": "RollbackJob",
	"listExecutions": "ListExecutions", "getExecution": "GetExecution", "executionAttempts": "Attempts", "retryExecution": "RetryExecution",
	"killExecution": "KillExecution", "streamExecutionLogs": "FollowExecutionLogs",
	"shardItems": "ShardItems", "rerunFailedItems": "RerunFailedItems",
	"registerExecutor": "RegisterExecutor", "listExecutors": "ListExecutors", "executorHeartbeat": "ExecutorHeartbeat",
	"pollExecutor": "PollExecutor", "reportExecutorResult": "ReportExecutorResult",
	"appendExecutorLogs": "AppendExecutorLogs",
	"listCalendars":      "ListCalendars", "getCalendar": "GetCalendar", "putCalendar": "PutCalendar", "deleteCalendar": "DeleteCalendar",
	"listNodes": "Nodes", "explainCron": "ExplainCron",
	"listPools": "ListPools", "getPool": "GetPool", "putPool": "PutPool", "deletePool": "DeletePool",
	"importCalendar": "ImportCalendar", "activity": "Activity", "upcomingFirings": "UpcomingFirings",
	"getAlertSettings": "AlertSettings", "putAlertSettings": "PutAlertSettings", "testAlert": "TestAlert",
	"listAudit": "ListAudit", "getMaintenance": "Maintenance", "startMaintenance": "StartMaintenance", "endMaintenance": "EndMaintenance",
	"listUsers": "ListUsers", "createUser": "CreateUser", "updateUser": "UpdateUser", "deleteUser": "DeleteUser",
	"listTokens": "ListTokens", "createToken": "CreateToken", "deleteToken": "DeleteToken",
	"listSecrets": "ListSecrets", "getSecret": "GetSecret", "putSecret": "PutSecret", "deleteSecret": "DeleteSecret",
	"listWorkflows": "ListWorkflows", "getWorkflow": "GetWorkflow", "putWorkflow": "PutWorkflow", "deleteWorkflow": "DeleteWorkflow",
	"checkWorkflow": "CheckWorkflow",
	"runWorkflow":   "RunWorkflow", "listWorkflowInstances": "ListWorkflowInstances", "getWorkflowInstance": "GetWorkflowInstance",
	"pauseWorkflowInstance": "ChangeWorkflowInstance", "resumeWorkflowInstance": "ChangeWorkflowInstance",
	"killWorkflowInstance": "ChangeWorkflowInstance", "rerunWorkflowInstance": "ChangeWorkflowInstance",
	"healthz": "Health", "readyz": "Ready",
	"metrics": "", // Prometheus scrapes it
	"openAPI": "", // this test reads it
}

// TestEveryRouteHasAMethod reads the OpenAPI document a real server
// serves, which is built from the routes it registers, and checks that the
// client has a method for every operation: a route added to the server
// without one fails here.
func TestEveryRouteHasAMethod(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, nil).Client
	resp, err := http.Get(c.BaseURL() + "/api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("decoding the OpenAPI document: %v", err)
	}
	client := reflect.TypeFor[*apiclient.Client]()
	seen := 0
	for path, ops := range doc.Paths {
		for method, op := range ops {
			seen++
			name, ok := clientMethods[op.OperationID]
			if !ok {
				t.Errorf("%s %s (operation %q) has no client method; add one and list it in clientMethods", strings.ToUpper(method), path, op.OperationID)
				continue
			}
			if _, found := client.MethodByName(name); name != "" && !found {
				t.Errorf("operation %q: *apiclient.Client has no method %s", op.OperationID, name)
			}
		}
	}
	if seen != len(clientMethods) {
		t.Errorf("the document lists %d operations, clientMethods %d: remove the operations the server dropped", seen, len(clientMethods))
	}
}
