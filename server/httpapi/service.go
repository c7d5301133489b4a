package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// Service is what the API serves: the server's jobs, executions,
// calendars, nodes, alert settings and audit log. Every method returns an
// *api.Error (possibly wrapped) for a client's mistake, which the API
// answers with that error's status; any other error is answered 500 and
// logged. Methods that change something take the actor, the name of the
// authenticated caller, for the audit log.
type Service interface {
	ListJobs(ctx context.Context, q api.JobQuery) (*api.JobList, error)
	GetJob(ctx context.Context, group, name string) (*api.Job, error)
	CreateJob(ctx context.Context, actor string, job api.Job) (*api.Job, error)
	PutJob(ctx context.Context, actor string, job api.Job, ifMatch int64) (j *api.Job, created bool, err error) // ifMatch 0: no precondition
	DeleteJob(ctx context.Context, actor, group, name string) error
	PauseJob(ctx context.Context, actor, group, name string) error
	ResumeJob(ctx context.Context, actor, group, name string) error
	RunJob(ctx context.Context, actor, group, name string, req api.RunRequest) (*api.Accepted, error)
	Backfill(ctx context.Context, actor, group, name string, req api.BackfillRequest) (*api.Accepted, error)
	UpcomingFireTimes(ctx context.Context, group, name string, count int) ([]api.FireTime, error)
	Explain(ctx context.Context, group, name string, at time.Time) (*api.Explanation, error)
	ExplainCron(ctx context.Context, expression, timeZone string, count int) (*api.CronExplanation, error)
	ListExecutions(ctx context.Context, q api.ExecutionQuery) (*api.ExecutionList, error)
	GetExecution(ctx context.Context, id string) (*api.Execution, error)
	Attempts(ctx context.Context, id string) ([]api.Execution, error)
	RetryExecution(ctx context.Context, actor, id string) (*api.Accepted, error)
	ListCalendars(ctx context.Context) ([]api.Calendar, error)
	GetCalendar(ctx context.Context, name string) (*api.Calendar, error)
	PutCalendar(ctx context.Context, actor string, cal api.Calendar) (created bool, err error)
	DeleteCalendar(ctx context.Context, actor, name string) error
	Nodes(ctx context.Context) ([]api.Node, error)
	AlertSettings(ctx context.Context) (*api.AlertSettings, error)
	PutAlertSettings(ctx context.Context, actor string, s api.AlertSettings) error
	TestAlert(ctx context.Context, actor string) error
	ListAudit(ctx context.Context, q api.AuditQuery) (*api.AuditList, error)
	Ready(ctx context.Context) error
}

// Authenticator says who is calling and manages the users, sessions and
// API tokens that answer that question. Its errors follow the same rule as
// Service's.
type Authenticator interface {
	// Authenticate reads "Authorization: Bearer <token>" or the chime_session cookie.
	// No credentials or bad ones: *api.Error unauthenticated.
	Authenticate(ctx context.Context, r *http.Request) (*api.User, error) // Name, Role
	Login(ctx context.Context, username, password, clientAddr string) (*api.Session, error)
	Logout(ctx context.Context, token string) error
	ListUsers(ctx context.Context) ([]api.User, error)
	CreateUser(ctx context.Context, actor string, u api.User) (*api.User, error)
	UpdateUser(ctx context.Context, actor string, u api.User) (*api.User, error)
	DeleteUser(ctx context.Context, actor, name string) error
	ListTokens(ctx context.Context) ([]api.Token, error)
	CreateToken(ctx context.Context, actor string, t api.Token) (*api.Token, error) // Secret set once
	DeleteToken(ctx context.Context, actor, id string) error
}
