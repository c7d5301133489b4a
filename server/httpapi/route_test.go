package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

// routeCase is one authenticated route with a valid request for it. The
// roles are written out here from docs/api.md, independently of the route
// table, so a wrong role in the table fails TestRouteRolesMatchDocs.
type routeCase struct {
	pattern string
	role    api.Role
	path    string
	body    string
	// call is the Service or Authenticator method the request reaches
	// ("" for none); status is the success status.
	call   string
	status int
}

func routeCases() []routeCase {
	const (
		viewer   = api.RoleViewer
		operator = api.RoleOperator
		admin    = api.RoleAdmin
		executor = api.RoleExecutor
	)
	return []routeCase{
		{"POST /api/v1/executors", executor, "/api/v1/executors", `{"group":"billing","handlers":["h"]}`, "RegisterExecutor", http.StatusCreated},
		{"GET /api/v1/executors", viewer, "/api/v1/executors", "", "ListExecutors", http.StatusOK},
		{"POST /api/v1/executors/{id}/heartbeat", executor, "/api/v1/executors/x1/heartbeat", "", "ExecutorHeartbeat", http.StatusOK},
		{"POST /api/v1/executors/{id}/poll", executor, "/api/v1/executors/x1/poll", `{"wait":"1s"}`, "PollExecutor", http.StatusOK},
		{"POST /api/v1/executors/{id}/runs/{run}/log", executor, "/api/v1/executors/x1/runs/r1/log", `{"token":1,"lines":[]}`, "AppendExecutorLogs", http.StatusNoContent},
		{"POST /api/v1/executors/{id}/runs/{run}/result", executor, "/api/v1/executors/x1/runs/r1/result", `{"token":1,"outcome":"succeeded"}`, "ReportExecutorResult", http.StatusNoContent},
		{"POST /api/v1/auth/logout", viewer, "/api/v1/auth/logout", "", "Logout", http.StatusNoContent},
		{"GET /api/v1/auth/me", viewer, "/api/v1/auth/me", "", "", http.StatusOK},
		{"GET /api/v1/jobs", viewer, "/api/v1/jobs", "", "ListJobs", http.StatusOK},
		{"POST /api/v1/jobs", operator, "/api/v1/jobs", `{"group":"g","name":"new","type":"http"}`, "CreateJob", http.StatusCreated},
		{"POST /api/v1/jobs/batch", operator, "/api/v1/jobs/batch", `{"jobs":[{"group":"g","name":"new1","type":"http"},{"group":"g","name":"new2","type":"http"}]}`, "CreateJobs", http.StatusCreated},
		{"GET /api/v1/jobs/{group}/{name}", viewer, "/api/v1/jobs/g/n", "", "GetJob", http.StatusOK},
		{"PUT /api/v1/jobs/{group}/{name}", operator, "/api/v1/jobs/g/n", `{"type":"http"}`, "PutJob", http.StatusOK},
		{"DELETE /api/v1/jobs/{group}/{name}", operator, "/api/v1/jobs/g/n", "", "DeleteJob", http.StatusNoContent},
		{"POST /api/v1/jobs/{group}/{name}/pause", operator, "/api/v1/jobs/g/n/pause", "", "PauseJob", http.StatusNoContent},
		{"POST /api/v1/jobs/{group}/{name}/resume", operator, "/api/v1/jobs/g/n/resume", "", "ResumeJob", http.StatusNoContent},
		{"POST /api/v1/jobs/{group}/{name}/run", operator, "/api/v1/jobs/g/n/run", `{"params":{"region":"eu"}}`, "RunJob", http.StatusAccepted},
		{"POST /api/v1/jobs/{group}/{name}/backfill", operator, "/api/v1/jobs/g/n/backfill", `{"from":"2025-01-01T00:00:00Z","to":"2025-01-02T00:00:00Z"}`, "Backfill", http.StatusAccepted},
		{"GET /api/v1/jobs/{group}/{name}/upcoming", viewer, "/api/v1/jobs/g/n/upcoming", "", "UpcomingFireTimes", http.StatusOK},
		{"GET /api/v1/jobs/{group}/{name}/versions", viewer, "/api/v1/jobs/g/n/versions", "", "ListJobVersions", http.StatusOK},
		{"GET /api/v1/jobs/{group}/{name}/versions/{number}", viewer, "/api/v1/jobs/g/n/versions/2", "", "GetJobVersion", http.StatusOK},
		{"GET /api/v1/jobs/{group}/{name}/versions/{number}/diff", viewer, "/api/v1/jobs/g/n/versions/2/diff", "", "DiffJobVersions", http.StatusOK},
		{"POST /api/v1/jobs/{group}/{name}/versions/{number}/rollback", operator, "/api/v1/jobs/g/n/versions/2/rollback", "", "RollbackJob", http.StatusOK},
		{"GET /api/v1/jobs/{group}/{name}/explain", viewer, "/api/v1/jobs/g/n/explain?at=2025-01-01T02:00:00Z", "", "Explain", http.StatusOK},
		{"GET /api/v1/executions", viewer, "/api/v1/executions", "", "ListExecutions", http.StatusOK},
		{"GET /api/v1/executions/{id}", viewer, "/api/v1/executions/e1", "", "GetExecution", http.StatusOK},
		{"GET /api/v1/executions/{id}/attempts", viewer, "/api/v1/executions/e1/attempts", "", "Attempts", http.StatusOK},
		{"POST /api/v1/executions/{id}/retry", operator, "/api/v1/executions/e1/retry", "", "RetryExecution", http.StatusAccepted},
		{"GET /api/v1/executions/{id}/logs/stream", viewer, "/api/v1/executions/e1/logs/stream", "", "ExecutionLogs", http.StatusOK},
		{"POST /api/v1/executions/{id}/kill", operator, "/api/v1/executions/e1/kill", "", "KillExecution", http.StatusAccepted},
		{"GET /api/v1/executions/{id}/items", viewer, "/api/v1/executions/e1/items", "", "ShardItems", http.StatusOK},
		{"POST /api/v1/executions/{id}/rerun-failed", operator, "/api/v1/executions/e1/rerun-failed", "", "RerunFailedItems", http.StatusAccepted},
		{"GET /api/v1/calendars", viewer, "/api/v1/calendars", "", "ListCalendars", http.StatusOK},
		{"GET /api/v1/calendars/{name}", viewer, "/api/v1/calendars/holidays", "", "GetCalendar", http.StatusOK},
		{"PUT /api/v1/calendars/{name}", operator, "/api/v1/calendars/holidays", `{"calendar":{"kind":"weekly"}}`, "PutCalendar", http.StatusCreated},
		{"POST /api/v1/calendars/{name}/import", operator, "/api/v1/calendars/holidays/import", `{"ics":"BEGIN:VCALENDAR"}`, "ImportCalendar", http.StatusCreated},
		{"GET /api/v1/activity", viewer, "/api/v1/activity", "", "Activity", http.StatusOK},
		{"GET /api/v1/upcoming", viewer, "/api/v1/upcoming", "", "Upcoming", http.StatusOK},
		{"DELETE /api/v1/calendars/{name}", operator, "/api/v1/calendars/holidays", "", "DeleteCalendar", http.StatusNoContent},
		{"GET /api/v1/pools", viewer, "/api/v1/pools", "", "ListPools", http.StatusOK},
		{"GET /api/v1/pools/{name}", viewer, "/api/v1/pools/reports", "", "GetPool", http.StatusOK},
		{"PUT /api/v1/pools/{name}", operator, "/api/v1/pools/reports", `{"limit":4}`, "PutPool", http.StatusCreated},
		{"DELETE /api/v1/pools/{name}", operator, "/api/v1/pools/reports", "", "DeletePool", http.StatusNoContent},
		{"GET /api/v1/nodes", viewer, "/api/v1/nodes", "", "Nodes", http.StatusOK},
		{"GET /api/v1/cron/explain", viewer, "/api/v1/cron/explain?expression=0+0+2+*+*+%3F", "", "ExplainCron", http.StatusOK},
		{"GET /api/v1/maintenance", viewer, "/api/v1/maintenance", "", "Maintenance", http.StatusOK},
		{"POST /api/v1/maintenance", operator, "/api/v1/maintenance", `{"reason":"db upgrade"}`, "StartMaintenance", http.StatusCreated},
		{"DELETE /api/v1/maintenance", operator, "/api/v1/maintenance", "", "EndMaintenance", http.StatusNoContent},
		{"GET /api/v1/alerts", admin, "/api/v1/alerts", "", "AlertSettings", http.StatusOK},
		{"PUT /api/v1/alerts", admin, "/api/v1/alerts", `{"rate_limit":"10m"}`, "PutAlertSettings", http.StatusNoContent},
		{"POST /api/v1/alerts/test", admin, "/api/v1/alerts/test", "", "TestAlert", http.StatusNoContent},
		{"GET /api/v1/audit", admin, "/api/v1/audit", "", "ListAudit", http.StatusOK},
		{"GET /api/v1/users", admin, "/api/v1/users", "", "ListUsers", http.StatusOK},
		{"POST /api/v1/users", admin, "/api/v1/users", `{"name":"new","role":"viewer","password":"pw"}`, "CreateUser", http.StatusCreated},
		{"PUT /api/v1/users/{name}", admin, "/api/v1/users/vera", `{"role":"operator"}`, "UpdateUser", http.StatusOK},
		{"DELETE /api/v1/users/{name}", admin, "/api/v1/users/vera", "", "DeleteUser", http.StatusNoContent},
		{"GET /api/v1/tokens", admin, "/api/v1/tokens", "", "ListTokens", http.StatusOK},
		{"POST /api/v1/tokens", admin, "/api/v1/tokens", `{"name":"ci","role":"operator"}`, "CreateToken", http.StatusCreated},
		{"DELETE /api/v1/tokens/{id}", admin, "/api/v1/tokens/t1", "", "DeleteToken", http.StatusNoContent},
		{"GET /api/v1/secrets", admin, "/api/v1/secrets", "", "ListSecrets", http.StatusOK},
		{"GET /api/v1/secrets/{name}", admin, "/api/v1/secrets/tok", "", "GetSecret", http.StatusOK},
		{"PUT /api/v1/secrets/{name}", admin, "/api/v1/secrets/tok", `{"value":"s3cret"}`, "PutSecret", http.StatusCreated},
		{"DELETE /api/v1/secrets/{name}", admin, "/api/v1/secrets/tok", "", "DeleteSecret", http.StatusNoContent},
		{"GET /api/v1/workflows", viewer, "/api/v1/workflows", "", "ListWorkflows", http.StatusOK},
		{"GET /api/v1/workflows/{name}", viewer, "/api/v1/workflows/etl", "", "GetWorkflow", http.StatusOK},
		{"PUT /api/v1/workflows/{name}", operator, "/api/v1/workflows/etl", `{"tasks":[{"name":"a","type":"http"}]}`, "PutWorkflow", http.StatusCreated},
		{"POST /api/v1/workflows/{name}/check", operator, "/api/v1/workflows/etl/check", `{"tasks":[{"name":"a","type":"http"}]}`, "CheckWorkflow", http.StatusNoContent},
		{"DELETE /api/v1/workflows/{name}", operator, "/api/v1/workflows/etl", "", "DeleteWorkflow", http.StatusNoContent},
		{"POST /api/v1/workflows/{name}/run", operator, "/api/v1/workflows/etl/run", `{"params":{"day":"mon"}}`, "RunWorkflow", http.StatusCreated},
		{"GET /api/v1/workflow-instances", viewer, "/api/v1/workflow-instances?workflow=etl", "", "ListWorkflowInstances", http.StatusOK},
		{"GET /api/v1/workflow-instances/{id}", viewer, "/api/v1/workflow-instances/i1", "", "GetWorkflowInstance", http.StatusOK},
		{"POST /api/v1/workflow-instances/{id}/pause", operator, "/api/v1/workflow-instances/i1/pause", "", "ChangeWorkflowInstance", http.StatusOK},
		{"POST /api/v1/workflow-instances/{id}/resume", operator, "/api/v1/workflow-instances/i1/resume", "", "ChangeWorkflowInstance", http.StatusOK},
		{"POST /api/v1/workflow-instances/{id}/kill", operator, "/api/v1/workflow-instances/i1/kill", "", "ChangeWorkflowInstance", http.StatusOK},
		{"POST /api/v1/workflow-instances/{id}/rerun", operator, "/api/v1/workflow-instances/i1/rerun", "", "ChangeWorkflowInstance", http.StatusOK},
	}
}

// publicRoutes are the routes docs/api.md lets anyone call.
func publicRoutes() []string {
	return []string{
		"POST /api/v1/auth/login",
		"GET /api/v1/auth/methods",
		"GET /healthz",
		"GET /readyz",
		"GET /metrics",
		"GET /api/openapi.json",
	}
}

// TestRouteRolesMatchDocs checks the route table against the roles above:
// the same routes, each with the same least role.
func TestRouteRolesMatchDocs(t *testing.T) {
	t.Parallel()
	h := New(newRecordingService(), newRecordingAuthenticator(), nil).(*handler)
	want := make(map[string]api.Role)
	for _, c := range routeCases() {
		want[c.pattern] = c.role
	}
	for _, p := range publicRoutes() {
		want[p] = ""
	}
	got := make(map[string]api.Role)
	for _, rt := range h.routes {
		got[rt.pattern()] = rt.role
	}
	for p, role := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: not in the route table", p)
		} else if g != role {
			t.Errorf("%s: route table says role %q, docs/api.md %q", p, g, role)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: in the route table but not in this test's list", p)
		}
	}
}

// TestRolesEnforced sends every authenticated route's valid request as
// each kind of caller. A caller below the route's role is refused (401
// without credentials, 403 with too small or unknown a role) and nothing
// reaches the service; a caller at or above it gets through, once, with
// its name as the actor of a change.
func TestRolesEnforced(t *testing.T) {
	t.Parallel()
	callers := []struct {
		name  string
		token string
		role  api.Role
		user  string
	}{
		{name: "no credentials"},
		{name: "wrong token", token: "no-such-token"},
		{name: "unknown role", token: "unknown-role-token", role: "superuser", user: "rogue"},
		{name: "viewer", token: "viewer-token", role: api.RoleViewer, user: "vera"},
		{name: "operator", token: "operator-token", role: api.RoleOperator, user: "otto"},
		{name: "admin", token: "admin-token", role: api.RoleAdmin, user: "ada"},
		{name: "executor", token: "executor-token", role: api.RoleExecutor, user: "exa"},
	}
	for _, rc := range routeCases() {
		method, _, _ := strings.Cut(rc.pattern, " ")
		for _, caller := range callers {
			t.Run(rc.pattern+"/"+caller.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t)
				resp, raw := f.do(t, method, rc.path, caller.token, rc.body)
				switch {
				case caller.token == "" || caller.user == "":
					if resp.StatusCode != http.StatusUnauthorized {
						t.Fatalf("status = %d, want 401; body %s", resp.StatusCode, raw)
					}
					if e := decodeError(t, resp, raw); e.Code != api.CodeUnauthenticated {
						t.Errorf("code = %s, want unauthenticated", e.Code)
					}
					if resp.Header.Get("WWW-Authenticate") == "" {
						t.Error("401 without WWW-Authenticate")
					}
				case !mayCall(caller.role, rc.role):
					if resp.StatusCode != http.StatusForbidden {
						t.Fatalf("status = %d, want 403; body %s", resp.StatusCode, raw)
					}
					if e := decodeError(t, resp, raw); e.Code != api.CodePermissionDenied || !strings.Contains(e.Message, string(rc.role)) {
						t.Errorf("error = %+v, want permission_denied naming role %s", e, rc.role)
					}
				default:
					if resp.StatusCode != rc.status {
						t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, rc.status, raw)
					}
					calls := f.calls()
					if rc.call == "" {
						if len(calls) != 0 {
							t.Errorf("calls = %+v, want none", calls)
						}
						return
					}
					if len(calls) != 1 || calls[0].Method != rc.call {
						t.Fatalf("calls = %+v, want one %s", calls, rc.call)
					}
					wantActor := ""
					if method != http.MethodGet && rc.call != "Logout" {
						wantActor = caller.user
					}
					if calls[0].Actor != wantActor {
						t.Errorf("actor = %q, want %q", calls[0].Actor, wantActor)
					}
					return
				}
				if calls := f.calls(); len(calls) != 0 {
					t.Errorf("a refused request reached %+v", calls)
				}
				if g, _ := f.svc.job("g", "n"); g.Version != seededJob().Version {
					t.Errorf("job g/n changed to %+v", g)
				}
			})
		}
	}
}

// TestPublicRoutesNeedNoCredentials calls each public route without
// credentials.
func TestPublicRoutesNeedNoCredentials(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, newRecordingService(), &Options{Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("chime_fires_total 1\n"))
	})}, false)
	for _, p := range publicRoutes() {
		method, path, _ := strings.Cut(p, " ")
		body := ""
		if method == http.MethodPost {
			body = `{"username":"vera","password":"vera-pw"}`
		}
		resp, raw := f.do(t, method, path, "", body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status = %d, want 200; body %s", p, resp.StatusCode, raw)
		}
	}
}
