package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// The real Service (package server) and Authenticator (package
// server/auth) are tested end to end by their own packages. The API's
// tests use these small stand-ins, which record every call so a test can
// assert what reached the layer below, and that a refused request reached
// nothing.

// recordedCall is one call a stand-in received.
type recordedCall struct {
	Method string
	Actor  string
	Args   []any
}

// recorder keeps calls; embedded in both stand-ins.
type recorder struct {
	mu    sync.Mutex
	calls []recordedCall
}

func (r *recorder) record(method, actor string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, recordedCall{Method: method, Actor: actor, Args: args})
}

// Calls returns the calls received so far.
func (r *recorder) Calls() []recordedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// recordingService is a Service that keeps jobs in a map, with versions
// as the real one does, answers the other methods with fixed values, and
// records every call.
type recordingService struct {
	recorder
	jobs map[string]api.Job // by "group/name"; guarded by recorder.mu

	// readyErr is what Ready returns.
	readyErr error
	// panicOn names a method that panics.
	panicOn string
}

func newRecordingService(jobs ...api.Job) *recordingService {
	s := &recordingService{jobs: make(map[string]api.Job)}
	for _, j := range jobs {
		s.jobs[j.Group+"/"+j.Name] = j
	}
	return s
}

func (s *recordingService) call(method, actor string, args ...any) {
	s.record(method, actor, args...)
	if method == s.panicOn {
		panic("recordingService: " + method + " panics as the test asked")
	}
}

func (s *recordingService) job(group, name string) (api.Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[group+"/"+name]
	return j, ok
}

func jobNotFound(group, name string) error {
	return httpjson.Errorf(api.CodeNotFound, "", "job %s/%s not found", group, name)
}

func (s *recordingService) ListJobs(_ context.Context, q api.JobQuery) (*api.JobList, error) {
	s.call("ListJobs", "", q)
	return &api.JobList{}, nil
}

func (s *recordingService) GetJob(_ context.Context, group, name string) (*api.Job, error) {
	s.call("GetJob", "", group, name)
	j, ok := s.job(group, name)
	if !ok {
		return nil, jobNotFound(group, name)
	}
	return &j, nil
}

func (s *recordingService) CreateJobs(_ context.Context, actor string, jobs []api.Job) (*api.JobBatchResult, error) {
	s.call("CreateJobs", actor, jobs)
	s.mu.Lock()
	defer s.mu.Unlock()
	res := &api.JobBatchResult{}
	for i, job := range jobs {
		if _, ok := s.jobs[job.Group+"/"+job.Name]; ok {
			return nil, httpjson.Errorf(api.CodeConflict, fmt.Sprintf("jobs[%d]", i), "job %s/%s exists", job.Group, job.Name)
		}
	}
	for _, job := range jobs {
		job.Version = 1
		s.jobs[job.Group+"/"+job.Name] = job
		res.Created = append(res.Created, api.CreatedJob{Group: job.Group, Name: job.Name})
	}
	return res, nil
}

func (s *recordingService) CreateJob(_ context.Context, actor string, job api.Job) (*api.Job, error) {
	s.call("CreateJob", actor, job)
	s.mu.Lock()
	defer s.mu.Unlock()
	key := job.Group + "/" + job.Name
	if _, ok := s.jobs[key]; ok {
		return nil, httpjson.Errorf(api.CodeConflict, "", "job %s exists", key)
	}
	job.Version = 1
	s.jobs[key] = job
	return &job, nil
}

func (s *recordingService) PutJob(_ context.Context, actor string, job api.Job, ifMatch int64, _ []string) (*api.Job, bool, error) {
	s.call("PutJob", actor, job, ifMatch)
	s.mu.Lock()
	defer s.mu.Unlock()
	key := job.Group + "/" + job.Name
	old, exists := s.jobs[key]
	if ifMatch != 0 && (!exists || old.Version != ifMatch) {
		return nil, false, httpjson.Errorf(api.CodeVersionMismatch, "", "job %s is at version %d, not %d", key, old.Version, ifMatch)
	}
	job.Version = old.Version + 1
	s.jobs[key] = job
	return &job, !exists, nil
}

func (s *recordingService) DeleteJob(_ context.Context, actor, group, name string) error {
	s.call("DeleteJob", actor, group, name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobs[group+"/"+name]; !ok {
		return jobNotFound(group, name)
	}
	delete(s.jobs, group+"/"+name)
	return nil
}

func (s *recordingService) PauseJob(_ context.Context, actor, group, name string) error {
	s.call("PauseJob", actor, group, name)
	return nil
}

func (s *recordingService) ResumeJob(_ context.Context, actor, group, name string) error {
	s.call("ResumeJob", actor, group, name)
	return nil
}

func (s *recordingService) RunJob(_ context.Context, actor, group, name string, req api.RunRequest) (*api.Accepted, error) {
	s.call("RunJob", actor, group, name, req)
	return &api.Accepted{ExecutionIDs: []string{"e1"}, Count: 1}, nil
}

func (s *recordingService) Backfill(_ context.Context, actor, group, name string, req api.BackfillRequest) (*api.Accepted, error) {
	s.call("Backfill", actor, group, name, req)
	return &api.Accepted{Count: 2}, nil
}

func (s *recordingService) UpcomingFireTimes(_ context.Context, group, name string, count int) ([]api.FireTime, error) {
	s.call("UpcomingFireTimes", "", group, name, count)
	return nil, nil
}

func (s *recordingService) ListJobVersions(_ context.Context, group, name string, q api.JobVersionQuery) (*api.JobVersionList, error) {
	s.call("ListJobVersions", "", group, name, q)
	return &api.JobVersionList{}, nil
}

func (s *recordingService) GetJobVersion(_ context.Context, group, name string, n int64) (*api.JobVersion, error) {
	s.call("GetJobVersion", "", group, name, n)
	return &api.JobVersion{Number: n, Kind: api.VersionCreated}, nil
}

func (s *recordingService) DiffJobVersions(_ context.Context, group, name string, from, to int64) (*api.JobVersionDiff, error) {
	s.call("DiffJobVersions", "", group, name, from, to)
	return &api.JobVersionDiff{From: from, To: to}, nil
}

func (s *recordingService) RollbackJob(_ context.Context, actor, group, name string, n, ifMatch int64) (*api.Job, error) {
	s.call("RollbackJob", actor, group, name, n, ifMatch)
	return &api.Job{Group: group, Name: name, Version: 2}, nil
}

func (s *recordingService) Explain(_ context.Context, group, name string, at time.Time) (*api.Explanation, error) {
	s.call("Explain", "", group, name, at)
	return &api.Explanation{At: at, Summary: "Not due"}, nil
}

func (s *recordingService) ExplainCron(_ context.Context, expression, timeZone string, count int) (*api.CronExplanation, error) {
	s.call("ExplainCron", "", expression, timeZone, count)
	return &api.CronExplanation{Expression: expression, TimeZone: timeZone}, nil
}

func (s *recordingService) ListExecutions(_ context.Context, q api.ExecutionQuery) (*api.ExecutionList, error) {
	s.call("ListExecutions", "", q)
	return &api.ExecutionList{}, nil
}

func (s *recordingService) GetExecution(_ context.Context, id string) (*api.Execution, error) {
	s.call("GetExecution", "", id)
	return &api.Execution{ID: id, FirstID: id, Attempt: 1, Outcome: "succeeded"}, nil
}

func (s *recordingService) Attempts(_ context.Context, id string) ([]api.Execution, error) {
	s.call("Attempts", "", id)
	return []api.Execution{{ID: id, FirstID: id, Attempt: 1, Outcome: "failed"}}, nil
}

// ExecutionLogs plays three executions: "forever" logs nothing and never
// ends; "long" logs one line per read and ends with its third; any other
// has one line and has ended.
func (s *recordingService) ExecutionLogs(_ context.Context, id string, after int64) (*api.LiveLogs, error) {
	s.call("ExecutionLogs", "", id, after)
	if id == "forever" {
		return &api.LiveLogs{}, nil
	}
	seq := after + 1
	out := &api.LiveLogs{Lines: []api.LiveLogLine{{Seq: seq, LogLine: api.LogLine{Level: "INFO", Message: "line " + strconv.FormatInt(seq, 10)}}}}
	if id != "long" || seq >= 3 {
		out.End = &api.LiveLogEnd{Outcome: "succeeded"}
	}
	return out, nil
}

func (s *recordingService) RetryExecution(_ context.Context, actor, id string) (*api.Accepted, error) {
	s.call("RetryExecution", actor, id)
	return &api.Accepted{Count: 1}, nil
}

func (s *recordingService) KillExecution(_ context.Context, actor, id string) (*api.Execution, error) {
	s.call("KillExecution", actor, id)
	return &api.Execution{ID: id, FirstID: id, Attempt: 1, Outcome: "running", KilledBy: actor}, nil
}

func (s *recordingService) ShardItems(_ context.Context, id string) (*api.ShardItems, error) {
	s.call("ShardItems", "", id)
	return &api.ShardItems{ExecutionID: id, FirstID: id, Total: 1, State: "running", Remaining: 1,
		Items: []api.ShardItem{{Index: 0, State: "pending"}}}, nil
}

func (s *recordingService) RerunFailedItems(_ context.Context, id, actor string) (*api.Execution, error) {
	s.call("RerunFailedItems", actor, id)
	return &api.Execution{ID: "e2", FirstID: id, Attempt: 2, Outcome: "running"}, nil
}

// callerName names the API caller of ctx, as the executor methods, which
// take no actor, record it.
func callerName(ctx context.Context) string {
	if u, ok := Caller(ctx); ok {
		return u.Name
	}
	return ""
}

func (s *recordingService) RegisterExecutor(ctx context.Context, r api.ExecutorRegister) (*api.ExecutorRegistration, error) {
	s.call("RegisterExecutor", callerName(ctx), r.Group)
	return &api.ExecutorRegistration{ID: "x1", Lease: "15s", HeartbeatInterval: "5s"}, nil
}

func (s *recordingService) ExecutorHeartbeat(ctx context.Context, id string, _ api.ExecutorHeartbeat) (*api.ExecutorHeartbeatReply, error) {
	s.call("ExecutorHeartbeat", callerName(ctx), id)
	return &api.ExecutorHeartbeatReply{Cancel: []api.ExecutorRunRef{}}, nil
}

func (s *recordingService) PollExecutor(ctx context.Context, id string, _ api.ExecutorPoll) (*api.ExecutorWork, error) {
	s.call("PollExecutor", callerName(ctx), id)
	return &api.ExecutorWork{Runs: []api.ExecutorRun{}, Cancel: []api.ExecutorRunRef{}}, nil
}

func (s *recordingService) ReportExecutorResult(ctx context.Context, id, run string, _ api.ExecutorResult) error {
	s.call("ReportExecutorResult", callerName(ctx), id, run)
	return nil
}

func (s *recordingService) AppendExecutorLogs(ctx context.Context, id, run string, _ api.ExecutorLogs) error {
	s.call("AppendExecutorLogs", callerName(ctx), id, run)
	return nil
}

func (s *recordingService) ListExecutors(context.Context) ([]api.Executor, error) {
	s.call("ListExecutors", "")
	return nil, nil
}

func (s *recordingService) ListCalendars(context.Context) ([]api.Calendar, error) {
	s.call("ListCalendars", "")
	return nil, nil
}

func (s *recordingService) GetCalendar(_ context.Context, name string) (*api.Calendar, error) {
	s.call("GetCalendar", "", name)
	return &api.Calendar{Name: name, Calendar: []byte(`{"kind":"weekly"}`)}, nil
}

func (s *recordingService) PutCalendar(_ context.Context, actor string, cal api.Calendar) (*api.Calendar, bool, error) {
	s.call("PutCalendar", actor, cal)
	return &cal, true, nil
}

func (s *recordingService) DeleteCalendar(_ context.Context, actor, name string) error {
	s.call("DeleteCalendar", actor, name)
	return nil
}

func (s *recordingService) Nodes(context.Context) ([]api.Node, error) {
	s.call("Nodes", "")
	return []api.Node{{ID: "a", Alive: true, Self: true}}, nil
}

func (s *recordingService) AlertSettings(context.Context) (*api.AlertSettings, error) {
	s.call("AlertSettings", "")
	return &api.AlertSettings{RateLimit: "10m"}, nil
}

func (s *recordingService) PutAlertSettings(_ context.Context, actor string, settings api.AlertSettings) error {
	s.call("PutAlertSettings", actor, settings)
	return nil
}

func (s *recordingService) TestAlert(_ context.Context, actor string) error {
	s.call("TestAlert", actor)
	return nil
}

func (s *recordingService) Maintenance(context.Context) (*api.Maintenance, error) {
	s.call("Maintenance", "")
	return &api.Maintenance{}, nil
}

func (s *recordingService) StartMaintenance(_ context.Context, actor string, req api.MaintenanceRequest) (*api.Maintenance, error) {
	s.call("StartMaintenance", actor, req)
	return &api.Maintenance{Active: true, Group: req.Group, Reason: req.Reason, By: actor}, nil
}

func (s *recordingService) EndMaintenance(_ context.Context, actor string) error {
	s.call("EndMaintenance", actor)
	return nil
}

func (s *recordingService) ListAudit(_ context.Context, q api.AuditQuery) (*api.AuditList, error) {
	s.call("ListAudit", "", q)
	return &api.AuditList{}, nil
}

func (s *recordingService) ListSecrets(context.Context) ([]api.Secret, error) {
	s.call("ListSecrets", "")
	return []api.Secret{{Name: "tok", KeyID: "0123456789abcdef"}}, nil
}

func (s *recordingService) GetSecret(_ context.Context, name string) (*api.Secret, error) {
	s.call("GetSecret", "", name)
	return &api.Secret{Name: name, KeyID: "0123456789abcdef"}, nil
}

func (s *recordingService) PutSecret(_ context.Context, actor, name, value string) (*api.Secret, bool, error) {
	s.call("PutSecret", actor, name, value)
	return &api.Secret{Name: name, KeyID: "0123456789abcdef"}, true, nil
}

func (s *recordingService) DeleteSecret(_ context.Context, actor, name string) error {
	s.call("DeleteSecret", actor, name)
	return nil
}

func (s *recordingService) Ready(context.Context) error {
	s.call("Ready", "")
	return s.readyErr
}

// recordingAuthenticator is an Authenticator over fixed users and tokens.
// It records every call but Authenticate, so "no calls" means a refused
// request changed nothing.
type recordingAuthenticator struct {
	recorder
	users    map[string]api.User // by name, with passwords
	sessions map[string]api.User // by token; guarded by recorder.mu
	issued   int                 // guarded by recorder.mu
}

// testUser is one of the stand-in's users, with its standing API token.
type testUser struct {
	user  api.User
	token string
}

// testUsers are the stand-in's users: one per role, and one whose role
// the API does not know.
func testUsers() []testUser {
	return []testUser{
		{api.User{Name: "vera", Role: api.RoleViewer, Password: "vera-pw"}, "viewer-token"},
		{api.User{Name: "otto", Role: api.RoleOperator, Password: "otto-pw"}, "operator-token"},
		{api.User{Name: "ada", Role: api.RoleAdmin, Password: "ada-pw"}, "admin-token"},
		{api.User{Name: "rogue", Role: "superuser", Password: "rogue-pw"}, "unknown-role-token"},
		{api.User{Name: "exa", Role: api.RoleExecutor, Password: "exa-pw"}, "executor-token"},
	}
}

func newRecordingAuthenticator() *recordingAuthenticator {
	a := &recordingAuthenticator{users: make(map[string]api.User), sessions: make(map[string]api.User)}
	for _, u := range testUsers() {
		a.users[u.user.Name] = u.user
		a.sessions[u.token] = api.User{Name: u.user.Name, Role: u.user.Role}
	}
	return a
}

func unauthenticated() error {
	return httpjson.Errorf(api.CodeUnauthenticated, "", "missing or invalid credentials")
}

func (a *recordingAuthenticator) Authenticate(_ context.Context, r *http.Request) (*api.User, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		c, err := r.Cookie("chime_session")
		if err != nil {
			return nil, unauthenticated()
		}
		token = c.Value
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	u, ok := a.sessions[token]
	if !ok {
		return nil, unauthenticated()
	}
	return &u, nil
}

func (a *recordingAuthenticator) Login(_ context.Context, username, password, clientAddr string) (*api.Session, error) {
	a.record("Login", "", username, clientAddr)
	a.mu.Lock()
	defer a.mu.Unlock()
	u, ok := a.users[username]
	if !ok || u.Password != password {
		return nil, unauthenticated()
	}
	a.issued++
	token := "session-" + strconv.Itoa(a.issued)
	a.sessions[token] = api.User{Name: u.Name, Role: u.Role}
	return &api.Session{Token: token, User: u.Name, Role: u.Role, Expires: time.Now().Add(time.Hour)}, nil
}

func (a *recordingAuthenticator) Logout(_ context.Context, token string) error {
	a.record("Logout", "", token)
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, token)
	return nil
}

func (a *recordingAuthenticator) ListUsers(context.Context) ([]api.User, error) {
	a.record("ListUsers", "")
	a.mu.Lock()
	defer a.mu.Unlock()
	var users []api.User
	for _, u := range a.users {
		users = append(users, u) // with its password: the API must drop it
	}
	return users, nil
}

func (a *recordingAuthenticator) CreateUser(_ context.Context, actor string, u api.User) (*api.User, error) {
	a.record("CreateUser", actor, u)
	return &u, nil
}

func (a *recordingAuthenticator) UpdateUser(_ context.Context, actor string, u api.User) (*api.User, error) {
	a.record("UpdateUser", actor, u)
	return &u, nil
}

func (a *recordingAuthenticator) DeleteUser(_ context.Context, actor, name string) error {
	a.record("DeleteUser", actor, name)
	return nil
}

func (a *recordingAuthenticator) ListTokens(context.Context) ([]api.Token, error) {
	a.record("ListTokens", "")
	return []api.Token{{ID: "t1", Name: "ci", Role: api.RoleOperator}}, nil
}

func (a *recordingAuthenticator) CreateToken(_ context.Context, actor string, t api.Token) (*api.Token, error) {
	a.record("CreateToken", actor, t)
	t.ID, t.Secret = "t2", "secret-shown-once"
	return &t, nil
}

func (a *recordingAuthenticator) DeleteToken(_ context.Context, actor, id string) error {
	a.record("DeleteToken", actor, id)
	return nil
}
