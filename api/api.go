// Package api holds the wire types of chime server's REST API: the JSON
// bodies the server reads and writes and the CLI sends and decodes. It has
// no behaviour beyond field validation helpers; the routes are listed in
// docs/api.md and in the OpenAPI document the server serves at
// /api/openapi.json.
//
// Conventions: field names are snake_case; instants are RFC 3339 strings
// with their offset; durations are Go duration strings ("90s", "1h30m");
// lists are paged with an opaque cursor (Page.Next, passed back as
// ?cursor=); every error is an [Error].
package api

import (
	"encoding/json"
	"time"
)

// Version is the API's path prefix.
const Version = "/api/v1"

// Error is the one error shape of the API.
type Error struct {
	// Code is machine-readable: one of the ErrorCode constants.
	Code ErrorCode `json:"code"`
	// Message says what went wrong in words a person can act on.
	Message string `json:"message"`
	// Field names the offending input field, in dotted path form
	// ("triggers[0].schedule.expression"), when one is to blame.
	Field string `json:"field,omitempty"`
}

// Error implements error, so clients can return an Error as is.
func (e *Error) Error() string {
	if e.Field != "" {
		return string(e.Code) + ": " + e.Field + ": " + e.Message
	}
	return string(e.Code) + ": " + e.Message
}

// ErrorCode classifies an Error; each maps to one HTTP status.
type ErrorCode string

// Error codes, with their HTTP status.
const (
	CodeInvalidArgument  ErrorCode = "invalid_argument"  // 400
	CodeUnauthenticated  ErrorCode = "unauthenticated"   // 401
	CodePermissionDenied ErrorCode = "permission_denied" // 403
	CodeNotFound         ErrorCode = "not_found"         // 404
	CodeConflict         ErrorCode = "conflict"          // 409: already exists, or in use
	CodeVersionMismatch  ErrorCode = "version_mismatch"  // 412: If-Match names an older version
	CodeTooLarge         ErrorCode = "payload_too_large" // 413
	CodeRateLimited      ErrorCode = "rate_limited"      // 429
	CodeInternal         ErrorCode = "internal"          // 500
	CodeUnavailable      ErrorCode = "unavailable"       // 503: the database is unreachable
)

// Job is a job as the server manages it: what runs, when, and the rules
// around each run. PUT /api/v1/jobs/{group}/{name} upserts it by key, so
// jobs declared in YAML or code and jobs made in the API reconcile.
type Job struct {
	Group       string `json:"group"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Type is "http", "shell", "executor" or a Go job type the embedding
	// binary registered.
	Type string `json:"type"`
	// HTTP is the request of an "http" job (package jobs/httpjob's Spec).
	HTTP json.RawMessage `json:"http,omitempty"`
	// Shell is the command of a "shell" job (package jobs/shelljob's Spec).
	Shell json.RawMessage `json:"shell,omitempty"`
	// Executor says where an "executor" job runs: which group of
	// executors, which handler, and how one executor is chosen.
	Executor *ExecutorTarget `json:"executor,omitempty"`
	// Data is the data map handed to a Go job type.
	Data map[string]any `json:"data,omitempty"`
	// Triggers say when the job runs. A job without triggers runs only
	// when asked (run now, backfill).
	Triggers []Trigger `json:"triggers,omitempty"`
	// Timeout cancels an attempt that runs longer; it is recorded as
	// timed_out. Empty for no limit.
	Timeout string `json:"timeout,omitempty"`
	// Retry re-runs failed attempts. Nil for no retries.
	Retry *RetryPolicy `json:"retry,omitempty"`
	// Overlap says what a firing does while an execution of the same job
	// runs anywhere in the cluster: OverlapAllow (the default),
	// OverlapSkip, OverlapQueue or OverlapCancel.
	Overlap Overlap `json:"overlap,omitempty"`
	// Pool names the concurrency pool the job's executions share with
	// other jobs' (see Pool): a firing waits for a free slot of it, in
	// order, for at most PoolMaxWait. Empty for none.
	Pool string `json:"pool,omitempty"`
	// PoolMaxWait bounds a firing's wait for a slot of Pool, after which
	// the firing trigger's misfire instruction applies (docs/pools.md).
	// Defaults to "1m"; only with Pool.
	PoolMaxWait string `json:"pool_max_wait,omitempty"`
	// RequestsRecovery re-runs the job on a live node when its node dies
	// mid-run.
	RequestsRecovery bool `json:"requests_recovery,omitempty"`
	// Alerts overrides the global alert recipients for this job.
	Alerts *JobAlerts `json:"alerts,omitempty"`
	// Children are jobs to run when an execution of this one ends for
	// good (see ChildJob).
	Children []ChildJob `json:"children,omitempty"`
	// Shards makes each firing a sharded firing of that many items (1 to
	// 10,000), which run in parallel across the cluster, each retried and
	// recovered on its own; 0 for a job that is not sharded. See
	// docs/sharding.md.
	Shards int `json:"shards,omitempty"`
	// ShardParams, when given, has one object per shard, which item i sees
	// among its parameters (overriding the job's and trigger's data).
	ShardParams []map[string]any `json:"shard_params,omitempty"`
	// Paused reports (and on upsert sets) whether every trigger of the job
	// is paused.
	Paused bool `json:"paused,omitempty"`
	// Version increases with every change; the ETag header carries it, and
	// If-Match on an update must name the current one. Read-only.
	Version int64 `json:"version,omitempty"`
	// Status is computed by the server; ignored on input.
	Status *JobStatus `json:"status,omitempty"`
	// Warnings answer a write that used a deprecated spelling the server
	// still accepts, each naming the field ("triggers[0].schedule: …");
	// the same text is in the response's Warning headers. Ignored on
	// input.
	Warnings []string `json:"warnings,omitempty"`
}

// Trigger fires a job on a schedule.
type Trigger struct {
	// Name identifies the trigger within the job's group; defaults to the
	// job's name with its index ("nightly-0").
	Name string `json:"name,omitempty"`
	// Schedule says when the trigger fires: an object whose "kind" is
	// cron, once, simple, calendar_interval, daily_time_interval or
	// fixed_delay, each with its own fields, as docs/api.md describes; for
	// example
	// {"kind":"cron","expression":"0 30 2 ? * MON-FRI","time_zone":"Europe/Berlin"},
	// {"kind":"simple","interval":"5m"} or {"kind":"fixed_delay","delay":"30s"}. Package api/wire decodes and
	// encodes it.
	Schedule json.RawMessage `json:"schedule"`
	// Calendar names an exclusion calendar.
	Calendar string `json:"calendar,omitempty"`
	// Misfire is a schedule.MisfireInstruction; empty for the smart policy.
	Misfire string `json:"misfire,omitempty"`
	// Priority breaks ties between triggers due at the same instant: a
	// 32-bit integer, higher first.
	Priority int `json:"priority,omitempty"`
	// StartTime and EndTime bound the firing window; each lies between
	// 1677-09-21 and 2262-04-11, the instants the server keeps.
	StartTime *time.Time `json:"start_time,omitempty"`
	EndTime   *time.Time `json:"end_time,omitempty"`
	// Data overrides the job's data for this trigger's firings.
	Data map[string]any `json:"data,omitempty"`
	// State, NextFireTime and PreviousFireTime are reported by the server.
	State            string     `json:"state,omitempty"`
	NextFireTime     *time.Time `json:"next_fire_time,omitempty"`
	PreviousFireTime *time.Time `json:"previous_fire_time,omitempty"`
}

// RetryPolicy re-runs a failed attempt.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included: 3 means up to
	// two retries.
	MaxAttempts int `json:"max_attempts"`
	// Backoff is "fixed" or "exponential" (the default).
	Backoff string `json:"backoff,omitempty"`
	// Delay is the wait before the first retry; exponential backoff doubles
	// it for each further retry. Defaults to "10s".
	Delay string `json:"delay,omitempty"`
	// MaxDelay caps the wait. Defaults to "1h".
	MaxDelay string `json:"max_delay,omitempty"`
	// Jitter spreads each wait by up to this fraction, 0 to 1. Defaults to
	// 0.2.
	Jitter *float64 `json:"jitter,omitempty"`
}

// Overlap is a job's overlap policy, enforced across the cluster.
type Overlap string

// Overlap policies.
const (
	// OverlapAllow runs every firing, concurrently if need be.
	OverlapAllow Overlap = "allow"
	// OverlapSkip skips a firing while an execution runs, recording it as
	// skipped.
	OverlapSkip Overlap = "skip"
	// OverlapQueue holds one firing until the running execution ends; more
	// firings meanwhile are skipped.
	OverlapQueue Overlap = "queue"
	// OverlapCancel cancels the running execution and runs the new one.
	OverlapCancel Overlap = "cancel"
)

// JobAlerts are a job's own alert settings: where its alerts go, and the
// conditions that raise them besides a final failure, a timeout, a
// misfire and a lost node.
type JobAlerts struct {
	// Emails, Webhooks, Slack, Teams and PagerDuty replace the global
	// default recipients of their channel when set, each list on its own.
	Emails   []string `json:"emails,omitempty"`
	Webhooks []string `json:"webhooks,omitempty"`
	// Slack are Slack incoming webhook URLs.
	Slack []string `json:"slack,omitempty"`
	// Teams are Microsoft Teams incoming webhook (Workflows) URLs.
	Teams []string `json:"teams,omitempty"`
	// PagerDuty are PagerDuty services, reached through the Events API v2.
	// Their routing keys are secrets: viewers read them masked.
	PagerDuty []PagerDutyTarget `json:"pagerduty,omitempty"`
	// DeadMan alerts when the job has not succeeded for this long.
	DeadMan string `json:"dead_man,omitempty"`
	// AfterFailures, when above 1, alerts about failures only on the
	// AfterFailures-th consecutive failed (or timed out) execution, as the
	// history counts them; 0 or 1 alerts on every final failure.
	AfterFailures int `json:"after_failures,omitempty"`
	// RunningLongerThan alerts once about an execution still running this
	// long after it started, like "10m".
	RunningLongerThan string `json:"running_longer_than,omitempty"`
	// Recovered alerts when the job first succeeds after an alert about
	// its failure; to PagerDuty it resolves the incident.
	Recovered bool `json:"recovered,omitempty"`
	// Disabled turns the job's alerts off.
	Disabled bool `json:"disabled,omitempty"`
}

// PagerDutyTarget is a PagerDuty service that receives alerts.
type PagerDutyTarget struct {
	// RoutingKey is the integration key of the service's Events API v2
	// integration, or a {{secret "name"}} reference to it. Required.
	RoutingKey string `json:"routing_key"`
	// Severity is critical, error, warning or info. Defaults to error.
	Severity string `json:"severity,omitempty"`
}

// JobStatus is what the server knows of a job's recent runs.
type JobStatus struct {
	LastOutcome  string     `json:"last_outcome,omitempty"`
	LastRun      *time.Time `json:"last_run,omitempty"`
	LastSuccess  *time.Time `json:"last_success,omitempty"`
	NextFireTime *time.Time `json:"next_fire_time,omitempty"`
	// Failing is set when the job's last finished execution did not
	// succeed.
	Failing bool `json:"failing,omitempty"`
	// Running counts executions in progress across the cluster.
	Running int `json:"running,omitempty"`
}

// JobList is a page of jobs, ordered by group and name.
type JobList struct {
	Jobs []Job `json:"jobs"`
	// Next continues the list after the last job the request looked at;
	// empty when no job is left. With filters other than group the page
	// may hold fewer jobs than the limit, or none, and still have a Next.
	Next string `json:"next,omitempty"`
}

// RunRequest is the body of POST /api/v1/jobs/{group}/{name}/run.
type RunRequest struct {
	// Params are merged over the job's data for this run.
	Params map[string]any `json:"params,omitempty"`
}

// BackfillRequest is the body of POST /api/v1/jobs/{group}/{name}/backfill:
// one run for each fire time of the job's triggers in [From, To).
type BackfillRequest struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Trigger limits the backfill to one trigger's fire times.
	Trigger string `json:"trigger,omitempty"`
}

// Accepted answers run, retry and backfill requests.
type Accepted struct {
	// ExecutionIDs will appear in the execution history once started.
	ExecutionIDs []string `json:"execution_ids,omitempty"`
	// Count is how many runs were scheduled.
	Count int `json:"count"`
}

// Execution is one attempt at running a job.
type Execution struct {
	// ID identifies the attempt: 32 lower-case hex digits, the
	// execution_id of its log records and alerts (older versions stored
	// other formats, served as they are).
	ID string `json:"id"`
	// FirstID is the first attempt's ID: attempts of one firing share it.
	FirstID       string     `json:"first_id"`
	Attempt       int        `json:"attempt"`
	JobGroup      string     `json:"job_group"`
	JobName       string     `json:"job_name"`
	TriggerGroup  string     `json:"trigger_group,omitempty"`
	TriggerName   string     `json:"trigger_name,omitempty"`
	NodeID        string     `json:"node_id"`
	ScheduledTime time.Time  `json:"scheduled_time"`
	StartedTime   *time.Time `json:"started_time,omitempty"`
	FinishedTime  *time.Time `json:"finished_time,omitempty"`
	// Outcome is running, succeeded, failed, timed_out, cancelled, skipped,
	// node_lost or killed.
	Outcome         string         `json:"outcome"`
	Error           string         `json:"error,omitempty"`
	Output          string         `json:"output,omitempty"`
	OutputTruncated bool           `json:"output_truncated,omitempty"`
	Logs            []LogLine      `json:"logs,omitempty"`
	Recovering      bool           `json:"recovering,omitempty"`
	Manual          bool           `json:"manual,omitempty"`
	Params          map[string]any `json:"params,omitempty"`
	// KilledBy is the user or token who asked to kill the execution while
	// it ran (POST /api/v1/executions/{id}/kill); its outcome is killed
	// once its job stopped.
	KilledBy string `json:"killed_by,omitempty"`
	// ExecutorID and ExecutorInstance name the executor that ran an
	// "executor" job's attempt (see ExecutorTarget); empty for runs on a
	// scheduler node.
	ExecutorID       string `json:"executor_id,omitempty"`
	ExecutorInstance string `json:"executor_instance,omitempty"`
	// Cause is the execution of the parent job whose end ran this one, a
	// child job's (see ChildJob); empty otherwise.
	Cause string `json:"cause,omitempty"`
}

// LogLine is one log record a job wrote during an execution.
type LogLine struct {
	Time    time.Time      `json:"time"`
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Attrs   map[string]any `json:"attrs,omitempty"`
}

// LiveLogLine is one log line of an execution as the stream of GET
// /api/v1/executions/{id}/logs/stream sends it: the data of a "line"
// event, whose id is Seq.
type LiveLogLine struct {
	// Seq numbers the execution's lines from 1, in the order they were
	// logged. A client that reconnects sends the last it got as the
	// Last-Event-ID header, and the stream goes on after it.
	Seq int64 `json:"seq"`
	LogLine
}

// LiveLogEnd is the data of a log stream's last event, "end": how the
// execution ended. The stream closes after it.
type LiveLogEnd struct {
	// Outcome is how the execution ended: succeeded, failed, timed_out,
	// cancelled, skipped, node_lost or killed.
	Outcome      string     `json:"outcome"`
	Error        string     `json:"error,omitempty"`
	FinishedTime *time.Time `json:"finished_time,omitempty"`
}

// LiveLogs is one read of an execution's log lines after a seq: the lines,
// in order, and End once the execution has ended and no line is left.
type LiveLogs struct {
	Lines []LiveLogLine `json:"lines"`
	End   *LiveLogEnd   `json:"end,omitempty"`
}

// ExecutionList is a page of executions, newest first.
type ExecutionList struct {
	Executions []Execution `json:"executions"`
	Next       string      `json:"next,omitempty"`
}

// Decision is one thing the scheduler decided about a job's fire time:
// fired, misfired, skipped, vetoed, paused, retry scheduled.
type Decision struct {
	JobGroup      string    `json:"job_group"`
	JobName       string    `json:"job_name"`
	TriggerGroup  string    `json:"trigger_group,omitempty"`
	TriggerName   string    `json:"trigger_name,omitempty"`
	ScheduledTime time.Time `json:"scheduled_time"`
	At            time.Time `json:"at"`
	Kind          string    `json:"kind"`
	Reason        string    `json:"reason"`
	NodeID        string    `json:"node_id,omitempty"`
	ExecutionID   string    `json:"execution_id,omitempty"`
}

// Explanation answers GET /api/v1/jobs/{group}/{name}/explain?at=…: why the
// job did or did not run at an instant.
type Explanation struct {
	At time.Time `json:"at"`
	// Summary is one sentence: "Fired at 02:00:00.012 on node a",
	// "Not due: the next fire time after 01:00 was 03:00", "Skipped: the
	// previous execution was still running (overlap: skip)".
	Summary string `json:"summary"`
	// Decisions and Executions recorded around the instant.
	Decisions  []Decision  `json:"decisions"`
	Executions []Execution `json:"executions"`
	// FireTimes are the job's scheduled fire times around the instant.
	FireTimes []time.Time `json:"fire_times"`
}

// Calendar is a named exclusion calendar.
type Calendar struct {
	Name string `json:"name"`
	// Calendar is the calendar's definition: an object whose "type" is
	// holiday, weekly, monthly, annual, daily or cron, with its
	// "time_zone", its type's fields and an optional "base" calendar, as
	// docs/api.md describes; for example
	// {"type":"weekly","time_zone":"UTC","excluded_days_of_week":[1,7]}.
	// Package api/wire decodes and encodes it.
	Calendar json.RawMessage `json:"calendar"`
	// UsedBy lists the triggers ("group.name") that use the calendar.
	// Read-only.
	UsedBy []string `json:"used_by,omitempty"`
	// Warnings answer a write that used a deprecated spelling, as
	// Job.Warnings do. Ignored on input.
	Warnings []string `json:"warnings,omitempty"`
}

// Node is a scheduler node of the cluster.
type Node struct {
	ID          string    `json:"id"`
	Epoch       int64     `json:"epoch"`
	LastCheckIn time.Time `json:"last_check_in"`
	Alive       bool      `json:"alive"`
	// ClockOffset is the node's clock minus the database's: measured now
	// for the node that answers, and for the other live nodes as they
	// last reported it (every DeadAfter/3). Empty for a dead node, or one
	// that has not reported yet.
	ClockOffset string `json:"clock_offset,omitempty"`
	// Self marks the node that answered.
	Self bool `json:"self,omitempty"`
	// Version is the chime version the node runs ("v1.4.0", or "devel"
	// and a VCS revision for a build from source), and Workers the size
	// of its worker pool: as the node last reported them (every
	// DeadAfter/3), and kept after it dies. Empty and zero until the
	// node has reported.
	Version string `json:"version,omitempty"`
	Workers int    `json:"workers,omitempty"`
	// Running counts the executions the node runs now, from the
	// execution history.
	Running int `json:"running"`
}

// Role is what a user or token may do.
type Role string

// Roles, each allowed everything the one before it may do.
const (
	// RoleViewer reads jobs, triggers, calendars, nodes and the execution
	// history, but not users, tokens, alert settings or secrets. Sensitive
	// header values, environment variables and URL query values of jobs,
	// and the paths, queries and user info of alert webhook URLs, are
	// masked for it. Execution output, error messages, logs and parameters
	// stay readable: whatever a job prints a viewer reads (the values of
	// {{secret}} references are masked there, as a best effort).
	RoleViewer Role = "viewer"
	// RoleOperator also creates, edits, pauses, runs, retries and deletes
	// jobs, triggers and calendars, and reads jobs unmasked (an operator
	// could point a job at a server of their own and read its headers
	// anyway). It may refer to secrets in jobs, not read or change them.
	RoleOperator Role = "operator"
	// RoleAdmin also manages users, tokens, alert settings and secrets.
	RoleAdmin Role = "admin"
	// RoleExecutor is the role of an executor's token, outside the
	// order of the three roles above: it may call only the executor
	// protocol's routes, and only for the groups the token names
	// (Token.Groups). No other role includes it, and it includes none.
	RoleExecutor Role = "executor"
)

// rank orders the roles: each may do everything the ones below it may.
// Unknown roles rank 0.
func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleOperator:
		return 2
	case RoleAdmin:
		return 3
	default:
		return 0
	}
}

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// Includes reports whether a caller with role r may use what needs role
// need: an admin may do what an operator may, an operator what a viewer
// may. An unknown role, on either side, includes nothing.
func (r Role) Includes(need Role) bool {
	return r.Valid() && need.Valid() && r.rank() >= need.rank()
}

// User is a local user. Password is accepted on input and never returned.
type User struct {
	Name     string `json:"name"`
	Role     Role   `json:"role"`
	Password string `json:"password,omitempty"`
	// Shell is the shell capability: with a role of operator or above,
	// the user may create, change and delete jobs of type shell, which
	// run commands on the servers' hosts. Only an admin grants it. The
	// server always returns it; in an update, absent (nil) keeps it.
	Shell *bool `json:"shell,omitempty"`
	// Scopes, when not empty, limit the user's role to the job groups
	// these patterns match (see ScopeMatches): an operator scoped to
	// "billing.*" changes, runs and kills jobs only in the groups
	// billing.eu, billing.us, … and reads every other job as a viewer
	// does. Empty means every group. Only an operator may have them.
	// Single sign-on sets them from the role mapping at each sign-on; an
	// admin sets them on local users (in an update, null or absent keeps
	// them and [] clears them). A user's API tokens act with its scopes.
	Scopes []string `json:"scopes"`
	// Source is "sso" for a user single sign-on created, who signs in
	// only through the identity provider; empty for a local user.
	Source  string     `json:"source,omitempty"`
	Created *time.Time `json:"created,omitempty"`
	// Groups are the executor groups a caller of role executor serves;
	// empty for the other roles. Read-only.
	Groups []string `json:"groups,omitempty"`
}

// CanShell reports whether u has the shell capability.
func (u *User) CanShell() bool { return u != nil && u.Shell != nil && *u.Shell }

// Token is an API token for automation. Secret is returned once, when the
// token is created.
type Token struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Role Role   `json:"role"`
	User string `json:"user,omitempty"`
	// Shell gives the token the shell capability (see User.Shell), which
	// it has only while its user has it too. Only a user with the
	// capability may own such a token.
	Shell bool `json:"shell,omitempty"`
	// Groups are the executor groups a token of role executor serves: 1
	// to 20 names, required for that role and refused for the others.
	Groups   []string   `json:"groups,omitempty"`
	Secret   string     `json:"secret,omitempty"`
	Created  *time.Time `json:"created,omitempty"`
	LastUsed *time.Time `json:"last_used,omitempty"`
	Expires  *time.Time `json:"expires,omitempty"`
}

// Secret is a named secret that job and alert templates insert with
// {{secret "name"}}, kept encrypted in the database (admin only), as the
// API shows it: never with its value, which is write-only (SecretValue).
type Secret struct {
	// Name is 1 to 200 of letters, digits, '.', '_' and '-', starting with
	// a letter or digit.
	Name string `json:"name"`
	// KeyID identifies the key the value is encrypted with: the first 16
	// hex digits of a SHA-256 of the key, not the key. Read-only.
	KeyID string `json:"key_id,omitempty"`
	// Created and Updated are when the secret was first and last set, and
	// UpdatedBy who set it last. Read-only.
	Created   *time.Time `json:"created,omitempty"`
	Updated   *time.Time `json:"updated,omitempty"`
	UpdatedBy string     `json:"updated_by,omitempty"`
	// UsedBy lists the jobs ("group/name") whose specs or alert webhooks
	// refer to the secret. Read-only.
	UsedBy []string `json:"used_by,omitempty"`
}

// SecretValue is the body of PUT /api/v1/secrets/{name}: the secret's
// value, non-empty UTF-8 of at most 64 KiB. No answer ever returns it.
type SecretValue struct {
	Value string `json:"value"`
}

// AuthMethods answers GET /api/v1/auth/methods: how users may sign in,
// for the console's login page.
type AuthMethods struct {
	// Password is always true: local users sign in with their password.
	Password bool `json:"password"`
	// SSO is the single sign-on provider, nil when none is configured.
	SSO *SSOProvider `json:"sso,omitempty"`
}

// SSOProvider is a configured single sign-on (OpenID Connect) provider.
type SSOProvider struct {
	// Name is what the login page shows: "Sign in with <Name>".
	Name string `json:"name"`
	// LoginURL starts the sign-on: a browser sent there is redirected to
	// the provider, and back to the console with a session.
	LoginURL string `json:"login_url"`
}

// LoginRequest is the body of POST /api/v1/auth/login.
type LoginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Session answers a login: the token goes in "Authorization: Bearer …"
// (the console gets it as a cookie too).
type Session struct {
	Token   string    `json:"token"`
	User    string    `json:"user"`
	Role    Role      `json:"role"`
	Expires time.Time `json:"expires"`
}

// AlertSettings are the global alert settings (admin only). Secrets are
// write-only: reads return them masked.
type AlertSettings struct {
	DefaultEmails   []string `json:"default_emails,omitempty"`
	DefaultWebhooks []string `json:"default_webhooks,omitempty"`
	// DefaultSlack, DefaultTeams and DefaultPagerDuty receive the alerts
	// of jobs that name none of their own on that channel.
	DefaultSlack     []string          `json:"default_slack,omitempty"`
	DefaultTeams     []string          `json:"default_teams,omitempty"`
	DefaultPagerDuty []PagerDutyTarget `json:"default_pagerduty,omitempty"`
	// RateLimit is the least time between two alerts of one kind for one
	// job, like "10m".
	RateLimit string `json:"rate_limit,omitempty"`
}

// AuditEntry records who changed what, when.
type AuditEntry struct {
	ID     string         `json:"id"`
	Time   time.Time      `json:"time"`
	Actor  string         `json:"actor"`
	Action string         `json:"action"`
	Target string         `json:"target"`
	Detail map[string]any `json:"detail,omitempty"`
}

// AuditList is a page of audit entries, newest first.
type AuditList struct {
	Entries []AuditEntry `json:"entries"`
	Next    string       `json:"next,omitempty"`
}

// CronExplanation answers GET /api/v1/cron/explain?expression=…&time_zone=…&count=…
// (and `chime cron explain|next`, offline).
type CronExplanation struct {
	Expression string `json:"expression"`
	TimeZone   string `json:"time_zone"`
	// Description is the expression in English.
	Description string `json:"description"`
	// Next are the next fire times; DST marks those whose local time a
	// daylight-saving change moved or repeated.
	Next []FireTime `json:"next"`
}

// FireTime is one upcoming fire time.
type FireTime struct {
	Time time.Time `json:"time"`
	// DST is set when a daylight-saving change falls between this fire time
	// and the previous one, or the wall time was moved by a gap.
	DST bool `json:"dst,omitempty"`
}

// JobQuery selects jobs: the query string of GET /api/v1/jobs.
type JobQuery struct {
	// Group keeps the jobs of one group.
	Group string `json:"group,omitempty"`
	// Text keeps jobs whose group, name or description contains it (case
	// insensitive): ?q=.
	Text string `json:"q,omitempty"`
	// State is "paused" or "active".
	State string `json:"state,omitempty"`
	// Failing keeps the jobs whose last finished execution did not succeed.
	Failing bool `json:"failing,omitempty"`
	// Cursor continues a previous page; Limit bounds the page (default 50,
	// at most 500).
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// ExecutionQuery selects executions: the query string of
// GET /api/v1/executions.
type ExecutionQuery struct {
	// JobGroup and JobName keep one job's executions (?job=group/name).
	JobGroup string `json:"job_group,omitempty"`
	JobName  string `json:"job_name,omitempty"`
	// Outcomes keeps these outcomes (?outcome=failed&outcome=timed_out).
	Outcomes []string `json:"outcome,omitempty"`
	// From and To bound the time an execution started (skipped firings: the
	// time they were skipped): From ≤ t < To.
	From *time.Time `json:"from,omitempty"`
	To   *time.Time `json:"to,omitempty"`
	// NodeID keeps one node's executions (?node=).
	NodeID string `json:"node,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// AuditQuery selects audit entries: the query string of GET /api/v1/audit.
type AuditQuery struct {
	Actor  string `json:"actor,omitempty"`
	Target string `json:"target,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}
