package httpapi

import (
	"net/http"

	"github.com/chime-scheduler/chime/api"
)

// outcomes are the execution outcomes ?outcome= accepts.
func outcomes() []string {
	return []string{"running", "succeeded", "failed", "timed_out", "cancelled", "skipped", "node_lost", "killed", "no_executor", "executor_lost"}
}

// table is the route table: every route of docs/api.md. The mux serves
// exactly these routes and the OpenAPI document describes exactly these,
// so the two cannot drift apart.
func (h *handler) table() []route {
	const (
		none     api.Role = ""
		viewer            = api.RoleViewer
		operator          = api.RoleOperator
		admin             = api.RoleAdmin
		executor          = api.RoleExecutor
		v1                = api.Version
	)
	ok := func(body any) []response { return []response{{status: http.StatusOK, body: body}} }
	noContent := []response{{status: http.StatusNoContent}}
	accepted := []response{{status: http.StatusAccepted, body: api.Accepted{}}}
	countParam := param{name: "count", typ: paramInt, min: 1, max: 1000, def: 10, description: "How many fire times to return."}

	return []route{
		// Sessions.
		{
			method: http.MethodPost, path: v1 + "/auth/login", role: none, operationID: "login",
			summary: "Log in; the answer carries the session token, which is also set as the chime_session cookie. Failed logins back off per user name and client address (429 until the wait ends).",
			body:    api.LoginRequest{}, responses: ok(api.Session{}), errors: []int{http.StatusTooManyRequests},
			handle: h.login,
		},
		{
			method: http.MethodGet, path: v1 + "/auth/methods", role: none, operationID: "authMethods",
			summary:   "How users may sign in: with a password, and through the single sign-on provider when one is configured.",
			responses: ok(api.AuthMethods{}),
			handle:    h.authMethods,
		},
		{
			method: http.MethodPost, path: v1 + "/auth/logout", role: viewer, operationID: "logout",
			summary: "End the caller's session and clear the chime_session cookie.", responses: noContent,
			handle: h.logout,
		},
		{
			method: http.MethodGet, path: v1 + "/auth/me", role: viewer, operationID: "me",
			summary: "The caller: user name, role, shell capability, and the job groups its role is limited to.", responses: ok(api.User{}),
			handle: h.me,
		},

		// Jobs.
		{
			method: http.MethodGet, path: v1 + "/jobs", role: viewer, operationID: "listJobs",
			summary: "List jobs, ordered by group and name. With q, state or failing, a page may hold fewer " +
				"than limit jobs, or none, and still have a next cursor: each request reads at most 2,000 jobs.",
			query: append([]param{
				{name: "group", description: "Keeps the jobs of one group."},
				{name: "q", description: "Keeps jobs whose group, name or description contains it, ignoring case."},
				{name: "state", enum: []string{"paused", "active"}, description: "Keeps paused or active jobs."},
				{name: "failing", typ: paramBool, description: "Keeps the jobs whose last finished execution did not succeed."},
			}, pageParams()...),
			responses: ok(api.JobList{}),
			handle:    h.listJobs,
		},
		{
			method: http.MethodPost, path: v1 + "/jobs", role: operator, operationID: "createJob", groups: jobBodyGroup,
			summary: "Create a job; 409 if a job with its key exists. A shell job also needs the caller's shell capability (403 without).",
			body:    api.Job{}, responses: []response{{status: http.StatusCreated, body: api.Job{}, etag: true}},
			errors: []int{http.StatusConflict},
			handle: h.createJob,
		},
		{
			method: http.MethodPost, path: v1 + "/jobs/batch", role: operator, operationID: "createJobs", groups: batchBodyGroups,
			summary: "Create up to 1,000 new jobs in one step: all of them, or, when any is refused, none. " +
				"A problem with one job names it in the error's field (jobs[3].triggers[0].schedule); 409 if a job's or a trigger's key is taken. " +
				"Shell jobs also need the caller's shell capability (403 without).",
			body: api.JobBatch{}, responses: []response{{status: http.StatusCreated, body: api.JobBatchResult{}}},
			errors: []int{http.StatusConflict},
			handle: h.createJobs,
		},
		{
			method: http.MethodGet, path: v1 + "/jobs/{group}/{name}", role: viewer, operationID: "getJob",
			summary:   "One job with its triggers and status; the ETag header carries its version.",
			responses: []response{{status: http.StatusOK, body: api.Job{}, etag: true}},
			handle:    h.getJob,
		},
		{
			method: http.MethodPut, path: v1 + "/jobs/{group}/{name}", role: operator, operationID: "putJob", groups: pathGroup,
			summary: "Create (201) or replace (200) the job with this key. With If-Match, refused (412) unless it names the current version. Writing a shell job (or turning a job into or out of one) also needs the caller's shell capability (403 without).",
			ifMatch: true, body: api.Job{},
			responses: []response{
				{status: http.StatusOK, body: api.Job{}, etag: true},
				{status: http.StatusCreated, body: api.Job{}, etag: true},
			},
			handle: h.putJob,
		},
		{
			method: http.MethodDelete, path: v1 + "/jobs/{group}/{name}", role: operator, operationID: "deleteJob", groups: pathGroup,
			summary: "Delete the job and its triggers. Deleting a shell job also needs the caller's shell capability (403 without).", responses: noContent,
			handle: h.deleteJob,
		},
		{
			method: http.MethodPost, path: v1 + "/jobs/{group}/{name}/pause", role: operator, operationID: "pauseJob", groups: pathGroup,
			summary: "Pause every trigger of the job.", responses: noContent,
			handle: h.pauseJob,
		},
		{
			method: http.MethodPost, path: v1 + "/jobs/{group}/{name}/resume", role: operator, operationID: "resumeJob", groups: pathGroup,
			summary: "Resume every trigger of the job.", responses: noContent,
			handle: h.resumeJob,
		},
		{
			method: http.MethodPost, path: v1 + "/jobs/{group}/{name}/run", role: operator, operationID: "runJob", groups: pathGroup,
			summary: "Run the job now, with optional parameters merged over its data. Parameters for a shell job also need the caller's shell capability (403 without).",
			body:    api.RunRequest{}, optionalBody: true, responses: accepted,
			handle: h.runJob,
		},
		{
			method: http.MethodPost, path: v1 + "/jobs/{group}/{name}/backfill", role: operator, operationID: "backfillJob", groups: pathGroup,
			summary: "Run the job once for each fire time of its triggers in [from, to).",
			body:    api.BackfillRequest{}, responses: accepted,
			handle: h.backfillJob,
		},
		{
			method: http.MethodGet, path: v1 + "/jobs/{group}/{name}/upcoming", role: viewer, operationID: "upcomingFireTimes",
			summary:   "The job's next fire times across its triggers.",
			query:     []param{countParam},
			responses: ok([]api.FireTime{}),
			handle:    h.upcoming,
		},
		{
			method: http.MethodGet, path: v1 + "/jobs/{group}/{name}/versions", role: viewer, operationID: "listJobVersions",
			summary: "The job's versions, newest first: every create, update (pause and resume included), delete and rollback " +
				"records one, with who made it and when. A deleted job's versions stay. Each job keeps its newest 50 (the server's job_versions).",
			query:     pageParams(),
			responses: ok(api.JobVersionList{}),
			handle:    h.listJobVersions,
		},
		{
			method: http.MethodGet, path: v1 + "/jobs/{group}/{name}/versions/{number}", role: viewer, operationID: "getJobVersion",
			summary: "One version of the job with its spec. Values the API masks for viewers are masked in every version, " +
				"for everyone: their JSON pointers are in masked. 404 naming the version when it is not kept.",
			responses: ok(api.JobVersion{}),
			handle:    h.getJobVersion,
		},
		{
			method: http.MethodGet, path: v1 + "/jobs/{group}/{name}/versions/{number}/diff", role: viewer, operationID: "diffJobVersions",
			summary: "A unified diff of the specs of two versions of the job, as indented JSON with sorted keys: from the version from " +
				"(by default the version before this one) to this one.",
			query:     []param{{name: "from", typ: paramInt, min: 1, max: 1<<31 - 1, description: "The version to compare with; defaults to the one before."}},
			responses: ok(api.JobVersionDiff{}),
			handle:    h.diffJobVersions,
		},
		{
			method: http.MethodPost, path: v1 + "/jobs/{group}/{name}/versions/{number}/rollback", role: operator, operationID: "rollbackJob",
			summary: "Write this version's spec as the job, with the checks of PUT, and record it as a rolled_back version; a deleted job comes back. " +
				"With If-Match, refused (412) unless it names the job's current version. Masked values keep the job's current ones " +
				"(400 naming the pointer when the job has none there). Shell jobs also need the caller's shell capability (403 without).",
			ifMatch:   true,
			responses: []response{{status: http.StatusOK, body: api.Job{}, etag: true}},
			handle:    h.rollbackJob,
		},
		{
			method: http.MethodGet, path: v1 + "/jobs/{group}/{name}/explain", role: viewer, operationID: "explainJob",
			summary:   "Why the job did or did not run at an instant.",
			query:     []param{{name: "at", typ: paramTime, required: true, description: "The instant, RFC 3339."}},
			responses: ok(api.Explanation{}),
			handle:    h.explain,
		},

		// Executors: the protocol executors speak (see docs/executors.md),
		// with tokens of role executor, and the list people read.
		{
			method: http.MethodPost, path: v1 + "/executors", role: executor, operationID: "registerExecutor",
			summary: "Register an executor of a group the token serves; the answer names it in every later call, " +
				"with its lease and how often to send heartbeats.",
			body: api.ExecutorRegister{}, responses: []response{{status: http.StatusCreated, body: api.ExecutorRegistration{}}},
			handle: h.registerExecutor,
		},
		{
			method: http.MethodGet, path: v1 + "/executors", role: viewer, operationID: "listExecutors",
			summary:   "The registered executors by group, live or not, with their labels, handlers, lease and running runs.",
			responses: ok([]api.Executor{}),
			handle:    h.listExecutors,
		},
		{
			method: http.MethodPost, path: v1 + "/executors/{id}/heartbeat", role: executor, operationID: "executorHeartbeat",
			summary: "Extend the executor's lease; the answer lists the runs it must cancel. 409 once the lease lapsed: " +
				"its runs were taken from it, and it must cancel them and register again.",
			body: api.ExecutorHeartbeat{}, optionalBody: true, responses: ok(api.ExecutorHeartbeatReply{}),
			errors: []int{http.StatusConflict},
			handle: h.executorHeartbeat,
			quiet:  true,
		},
		{
			method: http.MethodPost, path: v1 + "/executors/{id}/poll", role: executor, operationID: "pollExecutor",
			summary: "Take the runs handed to the executor (they become running) and the cancel requests not yet told; " +
				"with wait, the request is held up to that long (at most 30s) while there is neither. " +
				"Results of runs that ended may come with it (results): they are recorded first, as the run's result " +
				"request would record them, and those the runs' leases refuse are named in the answer's refused.",
			body: api.ExecutorPoll{}, optionalBody: true, responses: ok(api.ExecutorWork{}),
			errors: []int{http.StatusConflict},
			handle: h.pollExecutor,
			quiet:  true,
		},
		{
			method: http.MethodPost, path: v1 + "/executors/{id}/runs/{run}/log", role: executor, operationID: "appendExecutorLogs",
			summary: "Send log lines of a running run, under the run's token, for its execution's live log stream; " +
				"number them as the result's logs will hold them. 409, appending nothing, when the run is not leased " +
				"to this executor under that token, or it ended.",
			body: api.ExecutorLogs{}, responses: noContent,
			errors: []int{http.StatusConflict},
			handle: h.appendExecutorLogs,
			quiet:  true,
		},
		{
			method: http.MethodPost, path: v1 + "/executors/{id}/runs/{run}/result", role: executor, operationID: "reportExecutorResult",
			summary: "Report how a run ended, under the run's token. 409, changing nothing, when the run is not leased " +
				"to this executor under that token (it was handed to another, or it ended).",
			body: api.ExecutorResult{}, responses: noContent,
			errors: []int{http.StatusConflict},
			handle: h.reportExecutorResult,
			quiet:  true,
		},

		// Executions.
		{
			method: http.MethodGet, path: v1 + "/executions", role: viewer, operationID: "listExecutions",
			summary: "Execution history, newest first.",
			query: append([]param{
				{name: "job", description: "Keeps one job's executions: group/name."},
				{name: "outcome", repeated: true, enum: outcomes(), description: "Keeps these outcomes; repeat for several."},
				{name: "from", typ: paramTime, description: "Keeps executions scheduled at or after this instant, RFC 3339."},
				{name: "to", typ: paramTime, description: "Keeps executions scheduled before this instant, RFC 3339."},
				{name: "node", description: "Keeps one node's executions."},
			}, pageParams()...),
			responses: ok(api.ExecutionList{}),
			handle:    h.listExecutions,
		},
		{
			method: http.MethodGet, path: v1 + "/executions/{id}", role: viewer, operationID: "getExecution",
			summary: "One execution with its output and logs.", responses: ok(api.Execution{}),
			handle: h.getExecution,
		},
		{
			method: http.MethodGet, path: v1 + "/executions/{id}/attempts", role: viewer, operationID: "executionAttempts",
			summary: "Every attempt of the execution's firing, first first.", responses: ok([]api.Execution{}),
			handle: h.attempts,
		},
		{
			method: http.MethodGet, path: v1 + "/executions/{id}/logs/stream", role: viewer, operationID: "streamExecutionLogs",
			summary: "The execution's log lines as Server-Sent Events, live while it runs, from whichever node runs it: " +
				"each line is a \"line\" event whose id is its seq and whose data is an api.LiveLogLine (seq, time, level, message, attrs); " +
				"the lines so far come first (from the history once it ended), then new ones as they are logged, then an \"end\" event " +
				"whose data is an api.LiveLogEnd (outcome, error, finished_time), after which the stream closes. " +
				"An error once the stream started is a \"failure\" event whose data is an api.Error. " +
				"A comment line every 15s keeps the connection open. Reconnect with Last-Event-ID to go on after a line.",
			lastEventID: true,
			responses:   []response{{status: http.StatusOK, body: "", contentType: "text/event-stream"}},
			handle:      h.streamLogs,
		},
		{
			method: http.MethodPost, path: v1 + "/executions/{id}/retry", role: operator, operationID: "retryExecution", groups: executionGroup,
			summary: "Run a finished execution's job again as a new attempt.", responses: accepted,
			errors: []int{http.StatusConflict},
			handle: h.retryExecution,
		},
		{
			method: http.MethodPost, path: v1 + "/executions/{id}/kill", role: operator, operationID: "killExecution", groups: executionGroup,
			summary: "Kill a running execution, on whichever node runs it: its job's context is cancelled within a second " +
				"and it ends killed, by the caller. Answers the execution as it stands.",
			responses: []response{{status: http.StatusAccepted, body: api.Execution{}}},
			errors:    []int{http.StatusConflict},
			handle:    h.killExecution,
		},
		{
			method: http.MethodGet, path: v1 + "/executions/{id}/items", role: viewer, operationID: "shardItems",
			summary: "The items of a sharded firing, for any attempt of its parent execution: each item's state, node, " +
				"attempts and duration. Not found for an execution that is not the parent of a sharded firing.",
			responses: ok(api.ShardItems{}),
			handle:    h.shardItems,
		},
		{
			method: http.MethodPost, path: v1 + "/executions/{id}/rerun-failed", role: operator, operationID: "rerunFailedItems", groups: executionGroup,
			summary: "Re-run the failed items of a failed sharded firing, and only those, as the parent's next attempt, " +
				"which the answer is. Conflict when the firing runs or succeeded.",
			responses: []response{{status: http.StatusAccepted, body: api.Execution{}}},
			errors:    []int{http.StatusConflict},
			handle:    h.rerunFailedItems,
		},

		// Calendars.
		{
			method: http.MethodGet, path: v1 + "/calendars", role: viewer, operationID: "listCalendars",
			summary: "Calendars, with the triggers that use them.", responses: ok([]api.Calendar{}),
			handle: h.listCalendars,
		},
		{
			method: http.MethodGet, path: v1 + "/calendars/{name}", role: viewer, operationID: "getCalendar",
			summary: "One calendar.", responses: ok(api.Calendar{}),
			handle: h.getCalendar,
		},
		{
			method: http.MethodPut, path: v1 + "/calendars/{name}", role: operator, operationID: "putCalendar",
			summary: "Create (201) or replace (200) the calendar with this name.",
			body:    api.Calendar{},
			responses: []response{
				{status: http.StatusOK, body: api.Calendar{}},
				{status: http.StatusCreated, body: api.Calendar{}},
			},
			handle: h.putCalendar,
		},
		{
			method: http.MethodPost, path: v1 + "/calendars/{name}/import", role: operator, operationID: "importCalendar",
			summary: "Create (201) or replace (200) a holiday calendar excluding the dates of an iCalendar file's events; with dry_run, only answer what it would hold (200).",
			body:    api.CalendarImport{},
			responses: []response{
				{status: http.StatusOK, body: api.CalendarImportResult{}},
				{status: http.StatusCreated, body: api.CalendarImportResult{}},
			},
			handle: h.importCalendar,
		},
		{
			method: http.MethodDelete, path: v1 + "/calendars/{name}", role: operator, operationID: "deleteCalendar",
			summary: "Delete the calendar; 409 while a trigger uses it.", responses: noContent,
			errors: []int{http.StatusConflict},
			handle: h.deleteCalendar,
		},

		// Concurrency pools.
		{
			method: http.MethodGet, path: v1 + "/pools", role: viewer, operationID: "listPools",
			summary:   "Concurrency pools, with their limits, the slots held, the firings waiting and the jobs that name them.",
			responses: ok([]api.Pool{}),
			handle:    h.listPools,
		},
		{
			method: http.MethodGet, path: v1 + "/pools/{name}", role: viewer, operationID: "getPool",
			summary: "One concurrency pool.", responses: ok(api.Pool{}),
			handle: h.getPool,
		},
		{
			method: http.MethodPut, path: v1 + "/pools/{name}", role: operator, operationID: "putPool",
			summary: "Create (201) or replace (200) the concurrency pool with this name: at most limit executions of its jobs run at once, across the cluster.",
			body:    api.Pool{},
			responses: []response{
				{status: http.StatusOK, body: api.Pool{}},
				{status: http.StatusCreated, body: api.Pool{}},
			},
			handle: h.putPool,
		},
		{
			method: http.MethodDelete, path: v1 + "/pools/{name}", role: operator, operationID: "deletePool",
			summary: "Delete the concurrency pool; 409 while a job names it.", responses: noContent,
			errors: []int{http.StatusConflict},
			handle: h.deletePool,
		},

		// Cluster and schedules.
		{
			method: http.MethodGet, path: v1 + "/nodes", role: viewer, operationID: "listNodes",
			summary: "The cluster's nodes, alive or not, with clock offsets, versions, worker counts and running executions.", responses: ok([]api.Node{}),
			handle: h.nodes,
		},
		{
			method: http.MethodGet, path: v1 + "/activity", role: viewer, operationID: "activity",
			summary: "Every job's executions per time bucket (fires, successes, failures, lag) with lag percentiles and the running count, for charts. The window is moved out to whole buckets; empty buckets are listed with zeros.",
			query: []param{
				{name: "since", typ: paramTime, description: "Start of the window, RFC 3339; defaults to 6 hours before until. The window is at most 7 days."},
				{name: "until", typ: paramTime, description: "End of the window, RFC 3339; defaults to now."},
				{name: "bucket", description: "Width of a bucket: a duration such as 60s, 5m or 1h, or a number of seconds; whole seconds, at least 10s, at most 2000 buckets. Defaults to 1m."},
			},
			responses: ok(api.Activity{}),
			handle:    h.activity,
		},
		{
			method: http.MethodGet, path: v1 + "/upcoming", role: viewer, operationID: "upcomingFirings",
			summary: "The next firings of every job, earliest first, merged across triggers; paused triggers left out.",
			query: []param{
				{name: "count", typ: paramInt, min: 1, max: 200, def: 20, description: "How many firings to return."},
				{name: "group", description: "Keeps the jobs of one group."},
			},
			responses: ok([]api.UpcomingFiring{}),
			handle:    h.upcomingAll,
		},
		{
			method: http.MethodGet, path: v1 + "/cron/explain", role: viewer, operationID: "explainCron",
			summary: "Explain a cron expression and list its next fire times, marking daylight-saving changes.",
			query: []param{
				{name: "expression", required: true, description: "The cron expression."},
				{name: "time_zone", description: "An IANA time zone; defaults to UTC."},
				countParam,
			},
			responses: ok(api.CronExplanation{}),
			handle:    h.explainCron,
		},

		// Maintenance.
		{
			method: http.MethodGet, path: v1 + "/maintenance", role: viewer, operationID: "getMaintenance",
			summary:   "The maintenance window in force: scope, reason, who started it and when; active false when none is.",
			responses: ok(api.Maintenance{}),
			handle:    h.maintenance,
		},
		{
			method: http.MethodPost, path: v1 + "/maintenance", role: operator, operationID: "startMaintenance", groups: maintenanceBodyGroup,
			summary: "Start a maintenance window: pause every job, or the jobs of one group (jobs added meanwhile " +
				"start paused), with a reason the dashboard shows; 409 if a window is on.",
			body: api.MaintenanceRequest{}, responses: []response{{status: http.StatusCreated, body: api.Maintenance{}}},
			errors: []int{http.StatusConflict},
			handle: h.startMaintenance,
		},
		{
			method: http.MethodDelete, path: v1 + "/maintenance", role: operator, operationID: "endMaintenance", groups: maintenanceGroup,
			summary: "End the maintenance window: its jobs resume, missed fire times following each trigger's misfire " +
				"instruction, except jobs paused by hand, which stay paused; 409 if no window is on.",
			responses: noContent, errors: []int{http.StatusConflict},
			handle: h.endMaintenance,
		},

		// Alerts and audit (admin).
		{
			method: http.MethodGet, path: v1 + "/alerts", role: admin, operationID: "getAlertSettings",
			summary: "The global alert settings, secrets masked.", responses: ok(api.AlertSettings{}),
			handle: h.alertSettings,
		},
		{
			method: http.MethodPut, path: v1 + "/alerts", role: admin, operationID: "putAlertSettings",
			summary: "Replace the global alert settings.", body: api.AlertSettings{}, responses: noContent,
			handle: h.putAlertSettings,
		},
		{
			method: http.MethodPost, path: v1 + "/alerts/test", role: admin, operationID: "testAlert",
			summary: "Send a test alert to the default recipients.", responses: noContent,
			handle: h.testAlert,
		},
		{
			method: http.MethodGet, path: v1 + "/audit", role: admin, operationID: "listAudit",
			summary: "The audit log, newest first.",
			query: append([]param{
				{name: "actor", description: "Keeps one actor's entries."},
				{name: "target", description: "Keeps the entries about one target."},
			}, pageParams()...),
			responses: ok(api.AuditList{}),
			handle:    h.listAudit,
		},

		// Users and tokens (admin).
		{
			method: http.MethodGet, path: v1 + "/users", role: admin, operationID: "listUsers",
			summary: "Local users.", responses: ok([]api.User{}),
			handle: h.listUsers,
		},
		{
			method: http.MethodPost, path: v1 + "/users", role: admin, operationID: "createUser",
			summary: "Create a user; 409 if the name is taken.", body: api.User{},
			responses: []response{{status: http.StatusCreated, body: api.User{}}},
			errors:    []int{http.StatusConflict},
			handle:    h.createUser,
		},
		{
			method: http.MethodPut, path: v1 + "/users/{name}", role: admin, operationID: "updateUser",
			summary: "Change a user's role, password or shell capability; fields left out keep their values.", body: api.User{}, responses: ok(api.User{}),
			handle: h.updateUser,
		},
		{
			method: http.MethodDelete, path: v1 + "/users/{name}", role: admin, operationID: "deleteUser",
			summary: "Delete a user.", responses: noContent,
			handle: h.deleteUser,
		},
		{
			method: http.MethodGet, path: v1 + "/tokens", role: admin, operationID: "listTokens",
			summary: "API tokens, without their secrets.", responses: ok([]api.Token{}),
			handle: h.listTokens,
		},
		{
			method: http.MethodPost, path: v1 + "/tokens", role: admin, operationID: "createToken",
			summary: "Create an API token; the answer holds its secret, shown this once.", body: api.Token{},
			responses: []response{{status: http.StatusCreated, body: api.Token{}}},
			handle:    h.createToken,
		},
		{
			method: http.MethodDelete, path: v1 + "/tokens/{id}", role: admin, operationID: "deleteToken",
			summary: "Revoke an API token.", responses: noContent,
			handle: h.deleteToken,
		},

		// Secrets (admin).
		{
			method: http.MethodGet, path: v1 + "/secrets", role: admin, operationID: "listSecrets",
			summary:   "Secrets by name, with their key IDs, times, who set them last and the jobs that use them; never their values.",
			responses: ok([]api.Secret{}),
			handle:    h.listSecrets,
		},
		{
			method: http.MethodGet, path: v1 + "/secrets/{name}", role: admin, operationID: "getSecret",
			summary: "One secret, without its value.", responses: ok(api.Secret{}),
			handle: h.getSecret,
		},
		{
			method: http.MethodPut, path: v1 + "/secrets/{name}", role: admin, operationID: "putSecret",
			summary: "Create (201) or replace (200) a secret's value, encrypted with the server's key; the answer never holds the value. Refused (400) when the server has no secret key.",
			body:    api.SecretValue{},
			responses: []response{
				{status: http.StatusOK, body: api.Secret{}},
				{status: http.StatusCreated, body: api.Secret{}},
			},
			handle: h.putSecret,
		},
		{
			method: http.MethodDelete, path: v1 + "/secrets/{name}", role: admin, operationID: "deleteSecret",
			summary: "Delete a secret; 409 while a job or the alert settings refer to it.", responses: noContent,
			errors: []int{http.StatusConflict},
			handle: h.deleteSecret,
		},

		// Probes, metrics and this document (public).
		{
			method: http.MethodGet, path: "/healthz", role: none, operationID: "healthz",
			summary: "The process is up: always 200 while it serves.", quiet: true,
			responses: []response{{status: http.StatusOK, body: "", contentType: "text/plain"}},
			handle:    h.healthz,
		},
		{
			method: http.MethodGet, path: "/readyz", role: none, operationID: "readyz",
			summary: "The node holds a lease and reaches the database: 200, or 503 with the reason.", quiet: true,
			responses: []response{{status: http.StatusOK, body: "", contentType: "text/plain"}},
			errors:    []int{http.StatusServiceUnavailable},
			handle:    h.readyz,
		},
		{
			method: http.MethodGet, path: "/metrics", role: none, operationID: "metrics",
			summary: "Prometheus metrics; 404 when the server exports none.", quiet: true,
			responses: []response{{status: http.StatusOK, body: "", contentType: "text/plain"}},
			handle:    h.serveMetrics,
		},
		{
			method: http.MethodGet, path: "/api/openapi.json", role: none, operationID: "openAPI",
			summary:   "This API as an OpenAPI 3.0 document.",
			responses: []response{{status: http.StatusOK, body: map[string]any{}}},
			handle:    h.serveOpenAPI,
		},
	}
}
