package apiclient_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aymanbagabas/go-udiff"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/secret"
	"github.com/chime-scheduler/chime/server/servertest"
)

// roles lists the roles from least to most allowed.
var roles = []api.Role{api.RoleViewer, api.RoleOperator, api.RoleAdmin}

// mutation is a valid request to one mutating route, so that a refusal of
// a role cannot be mistaken for a refusal of bad input.
type mutation struct {
	op string // the route's operation ID in the OpenAPI document
	// role is the least role allowed, as docs/api.md says.
	role api.Role
	path string
	body any // sent as JSON; nil sends no body
	// want is the status the route answers a role allowed to use it.
	want int
}

// credential is how a test caller authenticates.
type credential struct {
	name  string
	role  api.Role
	token string
}

// TestRolesOnEveryMutatingRoute runs a real server and sends a valid
// request to every mutating route its OpenAPI document lists (POST, PUT
// and DELETE, login aside): each role below the route's is refused with 403
// permission_denied, by session and by API token; no credentials and a
// bad token get 401 unauthenticated; and nothing changed, in the resources
// or the audit log. Then each route, in turn, succeeds for the least role
// allowed to use it, which proves the requests valid and the comparison
// able to see a change.
func TestRolesOnEveryMutatingRoute(t *testing.T) {
	t.Parallel()
	f := newRoleFixture(t)
	mutations := f.mutations()

	// Every mutating route of the document has a request, with the role
	// docs/api.md gives it, and every request a route.
	routes := mutatingRoutes(t, f.srv.URL)
	for op, rt := range routes {
		if !slices.ContainsFunc(mutations, func(m mutation) bool { return m.op == op }) {
			t.Errorf("mutating route %s %s (operation %s) has no request in this test: add one", rt.method, rt.path, op)
		}
	}
	for _, m := range mutations {
		rt, ok := routes[m.op]
		switch {
		case !ok:
			t.Errorf("operation %s is not a mutating route of the OpenAPI document", m.op)
		case rt.role != m.role:
			t.Errorf("%s %s needs role %s, want %s as docs/api.md says", rt.method, rt.path, rt.role, m.role)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	before := takeSnapshot(t, f.srv.Client)
	for _, m := range mutations {
		method := routes[m.op].method
		t.Run(m.op, func(t *testing.T) {
			for _, c := range f.creds {
				if slices.Index(roles, c.role) >= slices.Index(roles, m.role) {
					continue
				}
				status, apiErr := send(t, f.srv.URL, method, m.path, m.body, c.token)
				if status != http.StatusForbidden || apiErr.Code != api.CodePermissionDenied {
					t.Errorf("%s %s as %s: %d %+v, want 403 %s", method, m.path, c.name, status, apiErr, api.CodePermissionDenied)
				}
			}
			for _, token := range []string{"", "not-a-token"} {
				status, apiErr := send(t, f.srv.URL, method, m.path, m.body, token)
				if status != http.StatusUnauthorized || apiErr.Code != api.CodeUnauthenticated {
					t.Errorf("%s %s with token %q: %d %+v, want 401 %s", method, m.path, token, status, apiErr, api.CodeUnauthenticated)
				}
			}
		})
	}
	if diff := before.diff(takeSnapshot(t, f.srv.Client)); diff != "" {
		t.Fatalf("refused requests changed something (-before +after):\n%s", diff)
	}

	// Each route succeeds for the least role allowed to use it, and the
	// audit log shows it.
	for _, m := range mutations {
		method := routes[m.op].method
		status, apiErr := send(t, f.srv.URL, method, m.path, m.body, f.sessions[m.role])
		if status != m.want {
			t.Errorf("%s %s as a %s: %d %+v, want %d", method, m.path, m.role, status, apiErr, m.want)
		}
	}
	after := takeSnapshot(t, f.srv.Client)
	var byOperator, byAdmin int
	for _, e := range after.Audit[:len(after.Audit)-len(before.Audit)] { // newest first
		switch e.Actor {
		case "otto":
			byOperator++
		case servertest.AdminName:
			byAdmin++
		}
	}
	if byOperator == 0 || byAdmin == 0 {
		t.Errorf("allowed requests added %d audit entries by the operator and %d by the admin; want some of each",
			byOperator, byAdmin)
	}
}

// roleFixture is a running server with a user of each role, and the
// things the test's requests act on, all made by its admin.
type roleFixture struct {
	srv *servertest.Server
	// creds are a session and an API token of each role but admin.
	creds []credential
	// sessions are a session token of each role.
	sessions map[api.Role]string
	// targetURL answers http jobs with 500; hookURL takes alert webhooks.
	targetURL, hookURL string
	// failedID is a failed execution of job g/fixture; runningID an
	// execution of job g/hang, whose endpoint answers only when the
	// request is cancelled.
	failedID, runningID string
	// spareTokenID is a token nobody uses.
	spareTokenID string
	// runningInstance is an instance of a workflow whose one task hangs,
	// failedInstance one whose task failed (see workflows_test.go).
	runningInstance, failedInstance string
}

// newRoleFixture starts the server and, as its admin, creates the users
// vera (viewer), otto (operator) and ursula (viewer, to update and
// delete), logs vera and otto in, gives each role an API token, and
// creates job g/fixture with one failed execution, calendars holidays
// and spare, default alert webhooks and a spare token.
func newRoleFixture(t *testing.T) *roleFixture {
	t.Helper()
	f := &roleFixture{sessions: make(map[api.Role]string)}
	_, f.targetURL = newTarget(t, http.StatusInternalServerError) // before the server, so that it outlives the server's runs
	hangURL := newHangingTarget(t)
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(hook.Close)
	f.hookURL = hook.URL
	f.srv = servertest.Start(t, &servertest.Options{Config: server.Config{SecretKey: secret.GenerateKey()}})
	f.sessions[api.RoleAdmin] = f.srv.AdminToken
	admin := f.srv.Client
	ctx := t.Context()

	for _, u := range []api.User{
		{Name: "vera", Role: api.RoleViewer, Password: "vera's long password"},
		{Name: "otto", Role: api.RoleOperator, Password: "otto's long password"},
		{Name: "ursula", Role: api.RoleViewer, Password: "ursula's long password"},
	} {
		if _, err := admin.CreateUser(ctx, u); err != nil {
			t.Fatalf("CreateUser(%s): %v", u.Name, err)
		}
		if u.Name == "ursula" {
			continue
		}
		session, err := admin.WithToken("").Login(ctx, u.Name, u.Password)
		if err != nil {
			t.Fatalf("Login(%s): %v", u.Name, err)
		}
		token, err := admin.CreateToken(ctx, api.Token{Name: string(u.Role) + "-automation", Role: u.Role})
		if err != nil {
			t.Fatalf("CreateToken(%s): %v", u.Role, err)
		}
		f.sessions[u.Role] = session.Token
		f.creds = append(f.creds,
			credential{name: u.Name + "'s session", role: u.Role, token: session.Token},
			credential{name: "a " + string(u.Role) + " API token", role: u.Role, token: token.Secret})
	}
	spare, err := admin.CreateToken(ctx, api.Token{Name: "spare", Role: api.RoleViewer})
	if err != nil {
		t.Fatalf("CreateToken(spare): %v", err)
	}
	f.spareTokenID = spare.ID
	if _, err := admin.CreateJob(ctx, roleJob("g", "fixture", f.targetURL, "")); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	for _, name := range []string{"holidays", "spare"} {
		if _, err := admin.PutCalendar(ctx, holidays(name, "2030-12-25")); err != nil {
			t.Fatalf("PutCalendar(%s): %v", name, err)
		}
	}
	for _, name := range []string{"role-pool", "spare-pool"} {
		if _, _, err := admin.PutPool(ctx, api.Pool{Name: name, Limit: 1}); err != nil {
			t.Fatalf("PutPool(%s): %v", name, err)
		}
	}
	if _, _, err := admin.PutSecret(ctx, "spare-secret", "s3cret value"); err != nil {
		t.Fatalf("PutSecret: %v", err)
	}
	if err := admin.PutAlertSettings(ctx, api.AlertSettings{DefaultWebhooks: []string{f.hookURL}}); err != nil {
		t.Fatalf("PutAlertSettings: %v", err)
	}
	if _, err := admin.RunJob(ctx, "g", "fixture", api.RunRequest{}); err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	f.failedID = waitExecution(t, admin, api.ExecutionQuery{JobGroup: "g", JobName: "fixture"}, func(api.Execution) bool { return true }).ID
	f.runningID = startHanging(t, admin, "g", "hang", hangURL)
	f.runningInstance = startInstance(t, admin, "hangs", hangURL, "running")
	f.failedInstance = startInstance(t, admin, "fails", f.targetURL, "failed")
	return f
}

// mutations returns a valid request to each mutating route, in an order
// in which each succeeds for the least role allowed to use it.
func (f *roleFixture) mutations() []mutation {
	const v1 = api.Version
	newYear2024 := api.BackfillRequest{ // one fire time of the job's yearly trigger
		From: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC),
	}
	viewer, operator, admin := api.RoleViewer, api.RoleOperator, api.RoleAdmin
	return []mutation{
		{op: "createJob", role: operator, path: v1 + "/jobs", body: roleJob("g", "created", f.targetURL, ""), want: http.StatusCreated},
		{op: "createJobs", role: operator, path: v1 + "/jobs/batch", body: api.JobBatch{Jobs: []api.Job{roleJob("g", "batched", f.targetURL, "")}}, want: http.StatusCreated},
		{op: "putJob", role: operator, path: v1 + "/jobs/g/fixture", body: roleJob("g", "fixture", f.targetURL, "edited"), want: http.StatusOK},
		{op: "pauseJob", role: operator, path: v1 + "/jobs/g/fixture/pause", want: http.StatusNoContent},
		{op: "resumeJob", role: operator, path: v1 + "/jobs/g/fixture/resume", want: http.StatusNoContent},
		{op: "runJob", role: operator, path: v1 + "/jobs/g/fixture/run", body: api.RunRequest{Params: map[string]any{"why": "test"}}, want: http.StatusAccepted},
		{op: "backfillJob", role: operator, path: v1 + "/jobs/g/fixture/backfill", body: newYear2024, want: http.StatusAccepted},
		// Version 1 is the fixture as created, before putJob edited it.
		{op: "rollbackJob", role: operator, path: v1 + "/jobs/g/fixture/versions/1/rollback", want: http.StatusOK},
		{op: "retryExecution", role: operator, path: v1 + "/executions/" + f.failedID + "/retry", want: http.StatusAccepted},
		{op: "killExecution", role: operator, path: v1 + "/executions/" + f.runningID + "/kill", want: http.StatusAccepted},
		// Not a sharded firing: past the role check, not found.
		{op: "rerunFailedItems", role: operator, path: v1 + "/executions/" + f.failedID + "/rerun-failed", want: http.StatusNotFound},
		{op: "deleteJob", role: operator, path: v1 + "/jobs/g/created", want: http.StatusNoContent},
		{op: "putCalendar", role: operator, path: v1 + "/calendars/holidays", body: holidays("holidays", "2030-12-26"), want: http.StatusOK},
		{op: "importCalendar", role: operator, path: v1 + "/calendars/imported/import", body: api.CalendarImport{
			ICS: "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20301225\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
		}, want: http.StatusCreated},
		{op: "deleteCalendar", role: operator, path: v1 + "/calendars/spare", want: http.StatusNoContent},
		{op: "putPool", role: operator, path: v1 + "/pools/role-pool", body: api.Pool{Limit: 2}, want: http.StatusOK},
		{op: "deletePool", role: operator, path: v1 + "/pools/spare-pool", want: http.StatusNoContent},
		{op: "startMaintenance", role: operator, path: v1 + "/maintenance", body: api.MaintenanceRequest{Reason: "database upgrade"}, want: http.StatusCreated},
		{op: "endMaintenance", role: operator, path: v1 + "/maintenance", want: http.StatusNoContent},
		{op: "putAlertSettings", role: admin, path: v1 + "/alerts", body: api.AlertSettings{DefaultWebhooks: []string{f.hookURL}, RateLimit: "1m"}, want: http.StatusNoContent},
		{op: "testAlert", role: admin, path: v1 + "/alerts/test", want: http.StatusNoContent},
		{op: "createUser", role: admin, path: v1 + "/users", body: api.User{Name: "newcomer", Role: viewer, Password: "a long enough password"}, want: http.StatusCreated},
		{op: "updateUser", role: admin, path: v1 + "/users/ursula", body: api.User{Name: "ursula", Role: operator}, want: http.StatusOK},
		{op: "deleteUser", role: admin, path: v1 + "/users/ursula", want: http.StatusNoContent},
		{op: "createToken", role: admin, path: v1 + "/tokens", body: api.Token{Name: "deploy", Role: operator}, want: http.StatusCreated},
		{op: "deleteToken", role: admin, path: v1 + "/tokens/" + f.spareTokenID, want: http.StatusNoContent},
		{op: "putSecret", role: admin, path: v1 + "/secrets/api-token", body: api.SecretValue{Value: "a value"}, want: http.StatusCreated},
		{op: "deleteSecret", role: admin, path: v1 + "/secrets/spare-secret", want: http.StatusNoContent},
		{op: "checkWorkflow", role: operator, path: v1 + "/workflows/created/check", body: roleWorkflow("created", f.targetURL), want: http.StatusNoContent},
		{op: "putWorkflow", role: operator, path: v1 + "/workflows/created", body: roleWorkflow("created", f.targetURL), want: http.StatusCreated},
		{op: "runWorkflow", role: operator, path: v1 + "/workflows/created/run", body: api.WorkflowRunRequest{Params: map[string]any{"why": "test"}}, want: http.StatusCreated},
		{op: "pauseWorkflowInstance", role: operator, path: v1 + "/workflow-instances/" + f.runningInstance + "/pause", want: http.StatusOK},
		{op: "resumeWorkflowInstance", role: operator, path: v1 + "/workflow-instances/" + f.runningInstance + "/resume", want: http.StatusOK},
		{op: "killWorkflowInstance", role: operator, path: v1 + "/workflow-instances/" + f.runningInstance + "/kill", want: http.StatusOK},
		{op: "rerunWorkflowInstance", role: operator, path: v1 + "/workflow-instances/" + f.failedInstance + "/rerun", want: http.StatusOK},
		{op: "deleteWorkflow", role: operator, path: v1 + "/workflows/created", want: http.StatusNoContent},
		{op: "logout", role: viewer, path: v1 + "/auth/logout", want: http.StatusNoContent}, // last: it ends vera's session
	}
}

// docRoute is one operation of the OpenAPI document.
type docRoute struct {
	method, path string
	role         api.Role
}

// mutatingRoutes reads the server's OpenAPI document and returns its POST,
// PUT and DELETE operations that need a role, by operation ID. It fails
// the test if a mutating route other than login needs none.
func mutatingRoutes(t *testing.T, base string) map[string]docRoute {
	t.Helper()
	resp, err := http.Get(base + "/api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string   `json:"operationId"`
			Role        api.Role `json:"x-chime-role"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("decoding the OpenAPI document: %v", err)
	}
	out := make(map[string]docRoute)
	for path, ops := range doc.Paths {
		for method, op := range ops {
			method = strings.ToUpper(method)
			if method != http.MethodPost && method != http.MethodPut && method != http.MethodDelete {
				continue
			}
			if op.Role == "" {
				if op.OperationID != "login" {
					t.Errorf("%s %s (operation %s) changes state and needs no role", method, path, op.OperationID)
				}
				continue
			}
			if op.Role == api.RoleExecutor {
				// The executor protocol's routes: no other role may call
				// them; TestExecutorTokenScope in package server covers them.
				continue
			}
			if !slices.Contains(roles, op.Role) {
				t.Fatalf("%s %s needs unknown role %q", method, path, op.Role)
			}
			out[op.OperationID] = docRoute{method: method, path: path, role: op.Role}
		}
	}
	if len(out) == 0 {
		t.Fatal("the OpenAPI document lists no mutating route")
	}
	return out
}

// send sends a request with body as JSON and the bearer token (none when
// empty), and returns the answer's status and error body (zero unless the
// body is an api.Error).
func send(t *testing.T, base, method, path string, body any, token string) (int, api.Error) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var apiErr api.Error
	if resp.StatusCode >= 400 {
		_ = json.NewDecoder(resp.Body).Decode(&apiErr) // zero when not an api.Error
	}
	return resp.StatusCode, apiErr
}

// snapshot is what an admin reads of the server's state.
type snapshot struct {
	Jobs       []api.Job
	Executions []api.Execution
	Calendars  []api.Calendar
	Users      []api.User
	Tokens     []api.Token
	Secrets    []api.Secret
	Alerts     *api.AlertSettings
	Maint      *api.Maintenance
	Audit      []api.AuditEntry
	Workflows  []api.Workflow
	Instances  []api.WorkflowInstance
}

// takeSnapshot reads everything a mutation could change. A token's
// LastUsed is left out: using a token to be refused is not a change.
func takeSnapshot(t *testing.T, c *apiclient.Client) *snapshot {
	t.Helper()
	ctx := t.Context()
	var s snapshot
	for j, err := range c.Jobs(ctx, api.JobQuery{}) {
		if err != nil {
			t.Fatalf("Jobs: %v", err)
		}
		s.Jobs = append(s.Jobs, j)
	}
	for e, err := range c.Executions(ctx, api.ExecutionQuery{}) {
		if err != nil {
			t.Fatalf("Executions: %v", err)
		}
		s.Executions = append(s.Executions, e)
	}
	for e, err := range c.Audit(ctx, api.AuditQuery{}) {
		if err != nil {
			t.Fatalf("Audit: %v", err)
		}
		s.Audit = append(s.Audit, e)
	}
	var err error
	if s.Calendars, err = c.ListCalendars(ctx); err != nil {
		t.Fatalf("ListCalendars: %v", err)
	}
	if s.Users, err = c.ListUsers(ctx); err != nil {
		t.Fatalf("ListUsers: %v", err)
	}
	if s.Tokens, err = c.ListTokens(ctx); err != nil {
		t.Fatalf("ListTokens: %v", err)
	}
	for i := range s.Tokens {
		s.Tokens[i].LastUsed = nil
	}
	if s.Secrets, err = c.ListSecrets(ctx); err != nil {
		t.Fatalf("ListSecrets: %v", err)
	}
	if s.Alerts, err = c.AlertSettings(ctx); err != nil {
		t.Fatalf("AlertSettings: %v", err)
	}
	if s.Maint, err = c.Maintenance(ctx); err != nil {
		t.Fatalf("Maintenance: %v", err)
	}
	if s.Workflows, err = c.ListWorkflows(ctx); err != nil {
		t.Fatalf("ListWorkflows: %v", err)
	}
	if s.Instances, err = c.ListWorkflowInstances(ctx, "", 500); err != nil {
		t.Fatalf("ListWorkflowInstances: %v", err)
	}
	return &s
}

// diff returns a unified diff of two snapshots as JSON, empty when they
// are equal.
func (s *snapshot) diff(other *snapshot) string {
	a, _ := json.MarshalIndent(s, "", "  ")
	b, _ := json.MarshalIndent(other, "", "  ")
	if bytes.Equal(a, b) {
		return ""
	}
	return udiff.Unified("before", "after", string(a), string(b))
}

// roleJob is an http job calling url once a year, with its alerts off, so
// that nothing fires or alerts while the test runs.
func roleJob(group, name, url, description string) api.Job {
	j := httpJob(group, name, url, "0 0 3 1 1 ?")
	j.Description = description
	j.Alerts = &api.JobAlerts{Disabled: true}
	return j
}

// holidays is a holiday calendar excluding one date.
func holidays(name, date string) api.Calendar {
	return api.Calendar{Name: name, Calendar: json.RawMessage(`{"type":"holiday","time_zone":"UTC","excluded_dates":["` + date + `"]}`)}
}
