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
	// ListJobs answers GET /api/v1/jobs. A zero Limit means the default (50).
	ListJobs(ctx context.Context, q api.JobQuery) (*api.JobList, error)
	// GetJob answers GET /api/v1/jobs/{group}/{name}; not_found when absent.
	GetJob(ctx context.Context, group, name string) (*api.Job, error)
	// CreateJob answers POST /api/v1/jobs; conflict when the key exists.
	// The returned job's Version becomes the ETag.
	CreateJob(ctx context.Context, actor string, job api.Job) (*api.Job, error)
	// CreateJobs answers POST /api/v1/jobs/batch: it creates every job of
	// the batch in one atomic step, or none; a client's mistake about one
	// job names it in the field ("jobs[3].type").
	CreateJobs(ctx context.Context, actor string, jobs []api.Job) (*api.JobBatchResult, error)
	// PutJob upserts by key (PUT /api/v1/jobs/{group}/{name}); job's Group
	// and Name are the path's. With ifMatch set it must refuse, with
	// version_mismatch, to change a job at another version or a missing one.
	// keep lists the fields of job, by JSON name, that the request left
	// out: an existing job keeps its stored values of them.
	PutJob(ctx context.Context, actor string, job api.Job, ifMatch int64, keep []string) (j *api.Job, created bool, err error) // ifMatch 0: no precondition
	// DeleteJob deletes a job and its triggers.
	DeleteJob(ctx context.Context, actor, group, name string) error
	// PauseJob pauses every trigger of a job.
	PauseJob(ctx context.Context, actor, group, name string) error
	// ResumeJob resumes every trigger of a job.
	ResumeJob(ctx context.Context, actor, group, name string) error
	// RunJob runs a job now (answered 202).
	RunJob(ctx context.Context, actor, group, name string, req api.RunRequest) (*api.Accepted, error)
	// Backfill runs a job once per fire time in [req.From, req.To), both
	// set and ordered (answered 202).
	Backfill(ctx context.Context, actor, group, name string, req api.BackfillRequest) (*api.Accepted, error)
	// UpcomingFireTimes lists a job's next count fire times, count in
	// [1, 1000] (10 when the query gives none).
	UpcomingFireTimes(ctx context.Context, group, name string, count int) ([]api.FireTime, error)
	// ListJobVersions lists a job's versions, newest first, without their
	// specs (GET /api/v1/jobs/{group}/{name}/versions); not_found when the
	// job has none and does not exist.
	ListJobVersions(ctx context.Context, group, name string, q api.JobVersionQuery) (*api.JobVersionList, error)
	// GetJobVersion returns version n of a job with its spec; not_found,
	// naming it, when absent.
	GetJobVersion(ctx context.Context, group, name string, n int64) (*api.JobVersion, error)
	// DiffJobVersions compares version from of a job with version to; from
	// 0 compares to with the version before it.
	DiffJobVersions(ctx context.Context, group, name string, from, to int64) (*api.JobVersionDiff, error)
	// RollbackJob writes version n's spec as the job, as PutJob does
	// (ifMatch included), recording a rolled_back version; it returns the
	// job as stored.
	RollbackJob(ctx context.Context, actor, group, name string, n, ifMatch int64) (*api.Job, error)
	// Explain says why a job did or did not run at an instant.
	Explain(ctx context.Context, group, name string, at time.Time) (*api.Explanation, error)
	// ExplainCron explains a cron expression; timeZone may be empty (UTC).
	ExplainCron(ctx context.Context, expression, timeZone string, count int) (*api.CronExplanation, error)
	// ListExecutions answers GET /api/v1/executions, newest first.
	ListExecutions(ctx context.Context, q api.ExecutionQuery) (*api.ExecutionList, error)
	// GetExecution returns one execution; not_found when absent.
	GetExecution(ctx context.Context, id string) (*api.Execution, error)
	// Attempts lists every attempt of an execution's firing.
	Attempts(ctx context.Context, id string) ([]api.Execution, error)
	// ExecutionLogs is one read of GET /api/v1/executions/{id}/logs/stream:
	// the execution's log lines numbered after after (at most a few
	// hundred), in order, and End once it has ended and no line is left;
	// not_found when absent.
	ExecutionLogs(ctx context.Context, id string, after int64) (*api.LiveLogs, error)
	// RetryExecution runs a finished execution's job again as a new attempt
	// (answered 202).
	RetryExecution(ctx context.Context, actor, id string) (*api.Accepted, error)
	// KillExecution asks for a running execution to be killed by actor, on
	// whichever node runs it, and returns it as it stands (answered 202);
	// not_found when absent, conflict when it already ended.
	KillExecution(ctx context.Context, actor, id string) (*api.Execution, error)
	// ShardItems returns the items of the sharded firing whose parent
	// execution (any attempt) is id; not_found when there is none.
	ShardItems(ctx context.Context, id string) (*api.ShardItems, error)
	// RerunFailedItems re-runs the failed items of a failed sharded
	// firing as its parent's next attempt, which it returns (answered
	// 202); conflict when the firing did not fail.
	RerunFailedItems(ctx context.Context, id, actor string) (*api.Execution, error)
	// ListCalendars lists calendars with the triggers that use them.
	ListCalendars(ctx context.Context) ([]api.Calendar, error)
	// GetCalendar returns one calendar; not_found when absent.
	GetCalendar(ctx context.Context, name string) (*api.Calendar, error)
	// PutCalendar creates or replaces a calendar, reporting which (201 or
	// 200); cal.Name is the path's. It returns the calendar as stored.
	PutCalendar(ctx context.Context, actor string, cal api.Calendar) (stored *api.Calendar, created bool, err error)
	// DeleteCalendar deletes a calendar; conflict while a trigger uses it.
	DeleteCalendar(ctx context.Context, actor, name string) error
	// ListPools lists the concurrency pools with their counts.
	ListPools(ctx context.Context) ([]api.Pool, error)
	// GetPool returns one pool; not_found when absent.
	GetPool(ctx context.Context, name string) (*api.Pool, error)
	// PutPool creates or replaces a pool, reporting which (201 or 200);
	// p.Name is the path's. It returns the pool as stored.
	PutPool(ctx context.Context, actor string, p api.Pool) (stored *api.Pool, created bool, err error)
	// DeletePool deletes a pool; conflict while a job names it.
	DeletePool(ctx context.Context, actor, name string) error
	// Nodes lists the cluster's nodes.
	Nodes(ctx context.Context) ([]api.Node, error)
	// AlertSettings returns the global alert settings, secrets masked.
	AlertSettings(ctx context.Context) (*api.AlertSettings, error)
	// PutAlertSettings replaces the global alert settings.
	PutAlertSettings(ctx context.Context, actor string, s api.AlertSettings) error
	// TestAlert sends a test alert to the default recipients.
	TestAlert(ctx context.Context, actor string) error
	// Maintenance returns the maintenance window in force, Active false
	// when none is.
	Maintenance(ctx context.Context) (*api.Maintenance, error)
	// StartMaintenance pauses every job, or one job group's, until
	// EndMaintenance; invalid_argument names the field it refuses,
	// conflict when a window is on.
	StartMaintenance(ctx context.Context, actor string, req api.MaintenanceRequest) (*api.Maintenance, error)
	// EndMaintenance resumes the window's scope, keeping the jobs paused
	// by hand paused; conflict when no window is on.
	EndMaintenance(ctx context.Context, actor string) error
	// ListAudit answers GET /api/v1/audit, newest first.
	ListAudit(ctx context.Context, q api.AuditQuery) (*api.AuditList, error)
	// Activity answers GET /api/v1/activity: every job's executions per
	// time bucket. The service applies the defaults and limits of
	// api.ActivityQuery, naming the field it refuses.
	Activity(ctx context.Context, q api.ActivityQuery) (*api.Activity, error)
	// Upcoming answers GET /api/v1/upcoming: the next count firings of
	// every job (of one job group when group is set), count in [1, 200]
	// (20 when the query gives none).
	Upcoming(ctx context.Context, group string, count int) ([]api.UpcomingFiring, error)
	// ImportCalendar answers POST /api/v1/calendars/{name}/import: it
	// reads an iCalendar file into a holiday calendar and, unless
	// req.DryRun, creates or replaces the calendar (Created reports which).
	ImportCalendar(ctx context.Context, actor, name string, req api.CalendarImport) (*api.CalendarImportResult, error)
	// ListSecrets answers GET /api/v1/secrets: every secret without its
	// value.
	ListSecrets(ctx context.Context) ([]api.Secret, error)
	// GetSecret returns one secret without its value; not_found when
	// absent.
	GetSecret(ctx context.Context, name string) (*api.Secret, error)
	// PutSecret sets a secret's value, reporting whether it created the
	// secret (201) or replaced its value (200). The returned secret has no
	// value.
	PutSecret(ctx context.Context, actor, name, value string) (stored *api.Secret, created bool, err error)
	// DeleteSecret deletes a secret; conflict while something refers to
	// it.
	DeleteSecret(ctx context.Context, actor, name string) error
	// Ready reports whether the node holds a lease and reaches the
	// database (/readyz). An *api.Error's message is shown to the caller;
	// any other error is only logged.
	Ready(ctx context.Context) error
}

// Authenticator says who is calling and manages the users, sessions and
// API tokens that answer that question. Its errors follow the same rule as
// Service's.
type Authenticator interface {
	// Authenticate reads "Authorization: Bearer <token>" or the chime_session cookie.
	// No credentials or bad ones: *api.Error unauthenticated.
	Authenticate(ctx context.Context, r *http.Request) (*api.User, error) // Name, Role
	// Login checks a user's password and starts a session; unauthenticated
	// for bad credentials, rate_limited when too many failed. clientAddr is
	// the client's IP address.
	Login(ctx context.Context, username, password, clientAddr string) (*api.Session, error)
	// Logout ends the session of a token (bearer or cookie).
	Logout(ctx context.Context, token string) error
	// ListUsers lists users; the API drops any Password.
	ListUsers(ctx context.Context) ([]api.User, error)
	// CreateUser creates a user; conflict when the name is taken.
	CreateUser(ctx context.Context, actor string, u api.User) (*api.User, error)
	// UpdateUser changes a user's role or password; u.Name is the path's.
	UpdateUser(ctx context.Context, actor string, u api.User) (*api.User, error)
	// DeleteUser deletes a user.
	DeleteUser(ctx context.Context, actor, name string) error
	// ListTokens lists API tokens; the API drops any Secret.
	ListTokens(ctx context.Context) ([]api.Token, error)
	// CreateToken creates an API token.
	CreateToken(ctx context.Context, actor string, t api.Token) (*api.Token, error) // Secret set once
	// DeleteToken revokes an API token.
	DeleteToken(ctx context.Context, actor, id string) error
}
