package sqlstore

// This file holds the SQL of every step, written once for all dialects.
// The tokens ({p}, {now}, {share}, {update}, {skip}, {wake}, ?) are
// described on type dialect; the few statements whose form differs by
// dialect are built by the dialect's methods (insertIgnore, upsert) and by
// the functions at the end of this file.

// Column lists, in the order the scan functions read them.
const (
	jobCols = `job_group, job_name, job_type, description, durable, requests_recovery, disallow_concurrent, ` +
		`persist_data, timeout_ns, job_data, job_meta, version`
	triggerCols = `trigger_group, trigger_name, job_group, job_name, description, priority, kind, schedule, ` +
		`calendar_name, misfire_instruction, trigger_data, origin, trigger_meta, rearm_delay_ms, start_time, end_time, next_fire_time, prev_fire_time, ` +
		`times_triggered, state, claimed_by, claim_epoch, version`
	triggerColsT = `t.trigger_group, t.trigger_name, t.job_group, t.job_name, t.description, t.priority, t.kind, ` +
		`t.schedule, t.calendar_name, t.misfire_instruction, t.trigger_data, t.origin, t.trigger_meta, t.rearm_delay_ms, t.start_time, t.end_time, ` +
		`t.next_fire_time, t.prev_fire_time, t.times_triggered, t.state, t.claimed_by, t.claim_epoch, t.version`
	execCols = `id, trigger_group, trigger_name, job_group, job_name, scheduled_time, fired_time, finished_time, ` +
		`node_id, epoch, state, recovering, requests_recovery, priority, error_message`
	calendarCols = `calendar_name, calendar_data, version`
	nodeCols     = `node_id, epoch, last_checkin, dead`
)

// jobBusyOfTrigger is true when the job of trigger row t disallows
// concurrent execution and has an EXECUTING or RECOVERABLE execution: its
// triggers must stay BLOCKED. The executions are read by job whatever the
// statistics say (see hintedIndexes).
const jobBusyOfTrigger = `EXISTS (SELECT 1 FROM {p}jobs j WHERE j.sched_name = t.sched_name ` +
	`AND j.job_group = t.job_group AND j.job_name = t.job_name AND j.disallow_concurrent = TRUE ` +
	`AND EXISTS (SELECT 1 FROM {p}executions e{use:executions_by_job} WHERE e.sched_name = t.sched_name ` +
	`AND e.job_group = t.job_group AND e.job_name = t.job_name AND e.state IN ('EXECUTING', 'RECOVERABLE')))`

// notAwaitingRun is false for a fixed-delay trigger that fired and waits
// for its run's end (see store.TriggerRecord.RearmDelay): unblocking its
// job leaves it BLOCKED, and only sqlTriggerRearm frees it.
const notAwaitingRun = `NOT (rearm_delay_ms > 0 AND next_fire_time IS NULL)`

// rearmAt is the re-armed fire time of trigger row t whose run ended at
// the instant of the bind parameter (Unix nanoseconds).
const rearmAt = `? + t.rearm_delay_ms * 1000000`

// sqlTriggerRearm re-arms a fixed-delay trigger awaiting its run, at the
// run's end plus its delay: WAITING (BLOCKED while its job is busy, PAUSED
// or PAUSED_BLOCKED when paused meanwhile), or COMPLETE past its end time.
// Its parameters: the end three times, the scheduler, the trigger's key.
const sqlTriggerRearm = `UPDATE {p}triggers AS t SET state = CASE ` +
	`WHEN t.end_time IS NOT NULL AND ` + rearmAt + ` > t.end_time THEN 'COMPLETE' ` +
	`WHEN t.state = 'PAUSED_BLOCKED' THEN CASE WHEN ` + jobBusyOfTrigger + ` THEN 'PAUSED_BLOCKED' ELSE 'PAUSED' END ` +
	`WHEN ` + jobBusyOfTrigger + ` THEN 'BLOCKED' ELSE 'WAITING' END, ` +
	`next_fire_time = CASE WHEN t.end_time IS NOT NULL AND ` + rearmAt + ` > t.end_time THEN NULL ELSE ` + rearmAt + ` END, ` +
	`version = t.version + 1 WHERE t.sched_name = ? AND t.trigger_group = ? AND t.trigger_name = ? ` +
	`AND t.rearm_delay_ms > 0 AND t.next_fire_time IS NULL AND t.state IN ('BLOCKED', 'PAUSED_BLOCKED'){wake}`

// sqlAwaitingIdle finds the fixed-delay triggers awaiting a run that is no
// longer EXECUTING or RECOVERABLE, for Reconcile.
const sqlAwaitingIdle = `SELECT t.trigger_group, t.trigger_name FROM {p}triggers t WHERE t.sched_name = ? ` +
	`AND t.rearm_delay_ms > 0 AND t.next_fire_time IS NULL AND t.state IN ('BLOCKED', 'PAUSED_BLOCKED') ` +
	`AND NOT EXISTS (SELECT 1 FROM {p}executions e WHERE e.sched_name = t.sched_name ` +
	`AND e.trigger_group = t.trigger_group AND e.trigger_name = t.trigger_name AND e.state IN ('EXECUTING', 'RECOVERABLE')) ` +
	`ORDER BY t.trigger_group, t.trigger_name{update}`

// Clock and bookkeeping.
const (
	// sqlNow reads the database clock in Unix nanoseconds.
	sqlNow = `SELECT {now}`
)

// Leases and nodes.
const (
	// sqlNodeLeaseShare reads a node's lease under a shared row lock: every
	// write a node makes starts with it, so the lease check holds until
	// commit (no recovery can fence the node in between). On PostgreSQL the
	// lock is FOR KEY SHARE: the exclusive locks of recovery and
	// registration (FOR UPDATE) wait for it, but the node's own check-ins
	// (sqlNodeLeaseCheckIn, FOR NO KEY UPDATE) do not. Under FOR SHARE a
	// check-in queued behind the node's longest write in flight, and every
	// later write of the node queued behind the check-in.
	sqlNodeLeaseShare = `SELECT epoch, dead, registered FROM {p}nodes WHERE sched_name = ? AND node_id = ?{leaseshare}`
	// sqlNodeLeaseShareCustomPlans is sqlNodeLeaseShare that also sets
	// plan_cache_mode for the rest of the transaction, on PostgreSQL only
	// (see leaseCustomPlans): set_config(…, true) is SET LOCAL, run on the
	// node's row, and always true.
	sqlNodeLeaseShareCustomPlans = `SELECT epoch, dead, registered FROM {p}nodes WHERE sched_name = ? AND node_id = ? ` +
		`AND set_config('plan_cache_mode', 'force_custom_plan', true) IS NOT NULL{leaseshare}`
	// sqlNodeLeaseUpdate is sqlNodeLeaseShare for writes to the node row
	// that fence the node's own writes in flight (unregistering).
	sqlNodeLeaseUpdate = `SELECT epoch, dead, registered FROM {p}nodes WHERE sched_name = ? AND node_id = ?{update}`
	// sqlNodeLeaseCheckIn is sqlNodeLeaseShare for a check-in, which only
	// renews last_checkin.
	sqlNodeLeaseCheckIn = `SELECT epoch, dead, registered FROM {p}nodes WHERE sched_name = ? AND node_id = ?{leaseupdate}`
	// sqlNodeLock locks a node row, registered or not.
	sqlNodeLock = `SELECT ` + nodeCols + ` FROM {p}nodes WHERE sched_name = ? AND node_id = ?{update}`
	// sqlNodeRegister starts a new incarnation of a node: a greater epoch
	// fences every lease it held before.
	sqlNodeRegister = `UPDATE {p}nodes SET epoch = epoch + 1, dead = FALSE, registered = TRUE, last_checkin = {now} ` +
		`WHERE sched_name = ? AND node_id = ?`
	sqlNodeGet = `SELECT ` + nodeCols + ` FROM {p}nodes WHERE sched_name = ? AND node_id = ?`
	// sqlNodeCheckIn renews a lease on the database clock.
	sqlNodeCheckIn = `UPDATE {p}nodes SET last_checkin = ? WHERE sched_name = ? AND node_id = ?`
	sqlNodeList    = `SELECT ` + nodeCols + ` FROM {p}nodes WHERE sched_name = ? AND registered = TRUE ORDER BY node_id`
	// sqlNodeUnregister removes a node from the cluster; its row stays, so
	// that its next registration gets a greater epoch.
	sqlNodeUnregister = `UPDATE {p}nodes SET registered = FALSE WHERE sched_name = ? AND node_id = ?`
	// sqlNodesSilent finds the nodes other than the caller that have not
	// checked in for DeadAfter nanoseconds of the database clock.
	sqlNodesSilent = `SELECT node_id FROM {p}nodes WHERE sched_name = ? AND registered = TRUE AND dead = FALSE ` +
		`AND node_id <> ? AND last_checkin <= {now} - ? ORDER BY node_id`
	// sqlNodeLockSilent locks one of them and checks again under the lock.
	sqlNodeLockSilent = `SELECT ` + nodeCols + ` FROM {p}nodes WHERE sched_name = ? AND node_id = ? ` +
		`AND registered = TRUE AND dead = FALSE AND last_checkin <= {now} - ?{update}`
	// sqlNodeDeclareDead fences a dead node.
	sqlNodeDeclareDead = `UPDATE {p}nodes SET epoch = epoch + 1, dead = TRUE WHERE sched_name = ? AND node_id = ?`
)

// Recovery of a node's work.
const (
	// sqlReleaseClaimsOfNode returns every trigger a node acquired to
	// WAITING, or BLOCKED while its job is busy.
	sqlReleaseClaimsOfNode = `UPDATE {p}triggers AS t SET state = CASE WHEN ` + jobBusyOfTrigger +
		` THEN 'BLOCKED' ELSE 'WAITING' END, claimed_by = '', claim_epoch = 0, version = version + 1 ` +
		`WHERE t.sched_name = ? AND t.state = 'ACQUIRED' AND t.claimed_by = ?{wake}`
	// sqlRunningOfNode locks the executions a node runs.
	sqlRunningOfNode = `SELECT ` + execCols + ` FROM {p}executions WHERE sched_name = ? AND node_id = ? ` +
		`AND state = 'EXECUTING' ORDER BY scheduled_time, id{update}`
	// sqlExecutionRecoverable hands an execution of a lost node, or one its
	// node released (ExecutionsRelease), to the cluster for re-running.
	sqlExecutionRecoverable = `UPDATE {p}executions SET state = 'RECOVERABLE', node_id = '', epoch = 0 ` +
		`WHERE sched_name = ? AND id = ?`
	// sqlExecutionFail records an execution of a lost node as failed.
	sqlExecutionFail = `UPDATE {p}executions SET state = 'FAILED', error_message = ?, finished_time = ? ` +
		`WHERE sched_name = ? AND id = ?`
)

// Jobs.
const (
	sqlJobInsert = `INSERT INTO {p}jobs (sched_name, job_group, job_name, job_type, description, durable, ` +
		`requests_recovery, disallow_concurrent, persist_data, timeout_ns, job_data, job_meta, version) ` +
		`VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`
	sqlJobGet          = `SELECT ` + jobCols + ` FROM {p}jobs WHERE sched_name = ? AND job_group = ? AND job_name = ?`
	sqlJobGetForShare  = sqlJobGet + `{share}`
	sqlJobGetForUpdate = sqlJobGet + `{update}`

	sqlJobDelete         = `DELETE FROM {p}jobs WHERE sched_name = ? AND job_group = ? AND job_name = ?`
	sqlJobTriggersDelete = `DELETE FROM {p}triggers WHERE sched_name = ? AND job_group = ? AND job_name = ?`
	// sqlJobDeleteIfOrphan deletes a job that is not durable and has no
	// trigger left.
	sqlJobDeleteIfOrphan = `DELETE FROM {p}jobs WHERE sched_name = ? AND job_group = ? AND job_name = ? ` +
		`AND durable = FALSE AND NOT EXISTS (SELECT 1 FROM {p}triggers t WHERE t.sched_name = ? ` +
		`AND t.job_group = ? AND t.job_name = ?)`
	// sqlJobRunning finds an EXECUTING or RECOVERABLE execution of a job.
	sqlJobRunning = `SELECT id FROM {p}executions WHERE sched_name = ? AND job_group = ? AND job_name = ? ` +
		`AND state IN ('EXECUTING', 'RECOVERABLE') LIMIT 1`
	// sqlJobBlock blocks the triggers of a non-concurrent job that started
	// running. Triggers other nodes acquired keep their claim: firing them
	// reports Blocked.
	sqlJobBlock = `UPDATE {p}triggers SET state = CASE WHEN state = 'WAITING' THEN 'BLOCKED' ELSE 'PAUSED_BLOCKED' END, ` +
		`version = version + 1 WHERE sched_name = ? AND job_group = ? AND job_name = ? AND state IN ('WAITING', 'PAUSED')`
	// sqlJobUnblock unblocks the triggers of a job that is no longer busy.
	sqlJobUnblock = `UPDATE {p}triggers SET state = CASE WHEN state = 'BLOCKED' THEN 'WAITING' ELSE 'PAUSED' END, ` +
		`version = version + 1 WHERE sched_name = ? AND job_group = ? AND job_name = ? ` +
		`AND state IN ('BLOCKED', 'PAUSED_BLOCKED') AND ` + notAwaitingRun + `{wake}`
	// sqlJobsUnblock unblocks the triggers of jobs that allow concurrency
	// (a condition on their keys and {wake} appended).
	sqlJobsUnblock = `UPDATE {p}triggers SET state = CASE WHEN state = 'BLOCKED' THEN 'WAITING' ELSE 'PAUSED' END, ` +
		`version = version + 1 WHERE state IN ('BLOCKED', 'PAUSED_BLOCKED') AND ` + notAwaitingRun + ` AND sched_name = ? AND `
	sqlJobSetData = `UPDATE {p}jobs SET job_data = ?, version = version + 1 ` +
		`WHERE sched_name = ? AND job_group = ? AND job_name = ?`
	sqlJobTriggersComplete = `UPDATE {p}triggers SET state = 'COMPLETE', claimed_by = '', claim_epoch = 0, ` +
		`version = version + 1 WHERE sched_name = ? AND job_group = ? AND job_name = ?`
)

// Calendars.
const (
	sqlCalendarInsert = `INSERT INTO {p}calendars (sched_name, calendar_name, calendar_data, version) VALUES (?, ?, ?, 1)`
	sqlCalendarGet    = `SELECT ` + calendarCols + ` FROM {p}calendars WHERE sched_name = ? AND calendar_name = ?`
	// sqlCalendarGetForShare keeps a calendar from being deleted while a
	// trigger that names it is stored.
	sqlCalendarGetForShare  = sqlCalendarGet + `{share}`
	sqlCalendarGetForUpdate = sqlCalendarGet + `{update}`
	sqlCalendarList         = `SELECT ` + calendarCols + ` FROM {p}calendars WHERE sched_name = ? ORDER BY calendar_name`
	sqlCalendarRefs         = `SELECT COUNT(*) FROM {p}triggers WHERE sched_name = ? AND calendar_name = ?`
	sqlCalendarDelete       = `DELETE FROM {p}calendars WHERE sched_name = ? AND calendar_name = ?`
)

// Triggers.
const (
	sqlTriggerInsert = `INSERT INTO {p}triggers (sched_name, ` + triggerCols + `) ` +
		`VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0, 1)`
	// sqlTriggerReplace overwrites a trigger, dropping any claim on it.
	sqlTriggerReplace = `UPDATE {p}triggers SET job_group = ?, job_name = ?, description = ?, priority = ?, kind = ?, ` +
		`schedule = ?, calendar_name = ?, misfire_instruction = ?, trigger_data = ?, origin = ?, trigger_meta = ?, rearm_delay_ms = ?, ` +
		`start_time = ?, end_time = ?, next_fire_time = ?, prev_fire_time = ?, times_triggered = ?, state = ?, ` +
		`claimed_by = '', claim_epoch = 0, ` +
		`version = version + 1 WHERE sched_name = ? AND trigger_group = ? AND trigger_name = ?`
	sqlTriggerGet = `SELECT ` + triggerCols + ` FROM {p}triggers ` +
		`WHERE sched_name = ? AND trigger_group = ? AND trigger_name = ?`
	sqlTriggerGetForUpdate = sqlTriggerGet + `{update}`
	// sqlJobTriggerKeysForUpdate locks the triggers of a job, in key
	// order.
	sqlJobTriggerKeysForUpdate = `SELECT trigger_group, trigger_name FROM {p}triggers ` +
		`WHERE sched_name = ? AND job_group = ? AND job_name = ? ORDER BY trigger_group, trigger_name{update}`
	sqlTriggerDelete = `DELETE FROM {p}triggers WHERE sched_name = ? AND trigger_group = ? AND trigger_name = ?`
	// sqlTriggerSetState moves a trigger to a state that holds no claim.
	sqlTriggerSetState = `UPDATE {p}triggers SET state = ?, claimed_by = '', claim_epoch = 0, version = version + 1 ` +
		`WHERE sched_name = ? AND trigger_group = ? AND trigger_name = ?`
	// sqlTriggerSetTiming stores a trigger's timing after a fire or a
	// misfire, in a state that holds no claim.
	sqlTriggerSetTiming = `UPDATE {p}triggers SET next_fire_time = ?, prev_fire_time = ?, times_triggered = ?, ` +
		`start_time = ?, end_time = ?, schedule = ?, misfire_instruction = ?, state = ?, claimed_by = '', ` +
		`claim_epoch = 0, version = version + 1 WHERE sched_name = ? AND trigger_group = ? AND trigger_name = ?`
)

// Pausing and resuming.
const (
	// sqlPauseTriggers pauses the selected triggers (selector appended):
	// WAITING and ACQUIRED become PAUSED, dropping the claim, and BLOCKED
	// becomes PAUSED_BLOCKED.
	sqlPauseTriggers = `UPDATE {p}triggers AS t SET state = CASE WHEN state = 'BLOCKED' THEN 'PAUSED_BLOCKED' ` +
		`ELSE 'PAUSED' END, claimed_by = '', claim_epoch = 0, version = version + 1 ` +
		`WHERE t.sched_name = ? AND t.state IN ('WAITING', 'ACQUIRED', 'BLOCKED')`
	// sqlResumeTriggers resumes the selected triggers (selector and {wake}
	// appended): WAITING, or BLOCKED while their job is busy.
	sqlResumeTriggers = `UPDATE {p}triggers AS t SET state = CASE WHEN ` + jobBusyOfTrigger +
		` THEN 'BLOCKED' ELSE 'WAITING' END, version = version + 1 ` +
		`WHERE t.sched_name = ? AND t.state IN ('PAUSED', 'PAUSED_BLOCKED')`
	// sqlPausedOfInsert reads, under shared locks, the paused-group rows
	// that decide whether a new trigger starts paused: ALL, then JOB of its
	// job group, then TRIGGER of its trigger group (the kinds sort in that
	// order, and so do the rows of the primary key). A locking read waits
	// for a pause or resume of any of them in progress and reads its
	// committed outcome; a pause or resume that comes later waits for the
	// insert to commit.
	sqlPausedOfInsert = `SELECT kind, group_name, paused FROM {p}paused_groups WHERE sched_name = ? ` +
		`AND ((kind = 'ALL' AND group_name = '') OR (kind = 'JOB' AND group_name = ?) ` +
		`OR (kind = 'TRIGGER' AND group_name = ?)) ORDER BY kind, group_name{share}`
	// sqlPausedAllShare reads the ALL row under a shared lock: pausing or
	// resuming a group waits for a pause or resume of everything.
	sqlPausedAllShare = `SELECT kind, group_name, paused FROM {p}paused_groups WHERE sched_name = ? ` +
		`AND kind = 'ALL' AND group_name = ''{share}`
	// sqlPausedGroupsResume forgets every paused trigger group and job group
	// (resuming everything), keeping the rows.
	sqlPausedGroupsResume = `UPDATE {p}paused_groups SET paused = FALSE WHERE sched_name = ? AND paused = TRUE`
	sqlPausedGroupsList   = `SELECT kind, group_name FROM {p}paused_groups WHERE sched_name = ? AND paused = TRUE ` +
		`ORDER BY kind, group_name`
)

// Claiming and firing.
const (
	// sqlAcquirePostgres claims due triggers in one statement: lock the
	// earliest due WAITING rows, skipping rows other nodes are claiming,
	// and mark them ACQUIRED by this lease. RETURNING gives them in no
	// particular order; the store sorts them.
	sqlAcquirePostgres = `WITH due AS (SELECT sched_name, trigger_group, trigger_name FROM {p}triggers ` +
		`WHERE sched_name = ? AND state = 'WAITING' AND next_fire_time <= ? ` +
		`ORDER BY next_fire_time, priority DESC, trigger_group, trigger_name LIMIT ?{skip}) ` +
		`UPDATE {p}triggers AS t SET state = 'ACQUIRED', claimed_by = ?, claim_epoch = ?, version = t.version + 1 ` +
		`FROM due WHERE t.sched_name = due.sched_name AND t.trigger_group = due.trigger_group ` +
		`AND t.trigger_name = due.trigger_name RETURNING ` + triggerColsT
	// sqlAcquireSelect is the first step of claiming on MySQL and SQLite:
	// lock the earliest due WAITING rows, skipping rows other nodes hold
	// (SQLite's write transaction holds the whole database instead). The
	// claim index is ordered like this query, so the scan stops after
	// LIMIT rows and locks no more. sqlAcquireClaim (built by acquireClaimSQL)
	// then marks them ACQUIRED, in the same transaction.
	sqlAcquireSelect = `SELECT ` + triggerCols + ` FROM {p}triggers ` +
		`WHERE sched_name = ? AND state = 'WAITING' AND next_fire_time <= ? ` +
		`ORDER BY next_fire_time, priority DESC, trigger_group, trigger_name LIMIT ?{skip}`
	// sqlExecutionInsert records a firing. The unique key executions_fire_key
	// on (trigger, scheduled time) refuses a second firing of one instant.
	sqlExecutionInsert = `INSERT INTO {p}executions (sched_name, ` + execCols + `) ` +
		`VALUES (?, ?, ?, ?, ?, ?, ?, COALESCE(?, {now}), NULL, ?, ?, 'EXECUTING', FALSE, ?, ?, '')`
	// sqlExecutionOfInstant finds the firing of a trigger at a scheduled time.
	sqlExecutionOfInstant = `SELECT id FROM {p}executions WHERE sched_name = ? AND trigger_group = ? ` +
		`AND trigger_name = ? AND scheduled_time = ?`
)

// Executions.
const (
	sqlExecutionGetForUpdate = `SELECT ` + execCols + ` FROM {p}executions WHERE sched_name = ? AND id = ?{update}`
	// sqlExecutionFinish records the end of an execution.
	sqlExecutionFinish = `UPDATE {p}executions SET state = ?, error_message = ?, finished_time = COALESCE(?, {now}) ` +
		`WHERE sched_name = ? AND id = ?`
	// sqlExecutionsPrune deletes finished executions.
	sqlExecutionsPrune = `DELETE FROM {p}executions WHERE sched_name = ? ` +
		`AND state IN ('SUCCEEDED', 'FAILED', 'VETOED') AND finished_time < ?`
	// sqlRecoverableJobless fails the recoverable executions whose job was
	// deleted: they cannot run again. Like sqlRecoverableClaim it finds
	// them by their empty node, through the node index: every recovery
	// scan of every node runs it, and by state alone it read every
	// execution of the scheduler.
	sqlRecoverableJobless = `UPDATE {p}executions AS e SET state = 'FAILED', error_message = 'job not found', ` +
		`finished_time = ? WHERE e.node_id = '' AND e.sched_name = ? AND e.state = 'RECOVERABLE' AND NOT EXISTS (SELECT 1 ` +
		`FROM {p}jobs j WHERE j.sched_name = e.sched_name AND j.job_group = e.job_group AND j.job_name = e.job_name)`
	// sqlRecoverableClaim locks recoverable executions for this node. A
	// recoverable execution has no node (sqlExecutionRecoverable), which
	// the node index finds: no index holds the state.
	sqlRecoverableClaim = `SELECT ` + execCols + ` FROM {p}executions WHERE node_id = '' AND sched_name = ? AND state = 'RECOVERABLE' ` +
		`ORDER BY scheduled_time, priority DESC, id LIMIT ?{skip}`
	// sqlExecutionResume makes a recoverable execution run again on this node.
	sqlExecutionResume = `UPDATE {p}executions SET state = 'EXECUTING', node_id = ?, epoch = ?, recovering = TRUE, ` +
		`fired_time = ? WHERE sched_name = ? AND id = ?`
)

// Reconciliation: every repair locks the rows its check found, so the
// check and the repair are one atomic step.
const (
	// sqlStaleClaims finds ACQUIRED triggers whose claim no live lease
	// holds. Staleness never ends (an epoch only grows), so the rows found
	// stay stale until repaired.
	sqlStaleClaims = `SELECT t.trigger_group, t.trigger_name FROM {p}triggers t WHERE t.sched_name = ? ` +
		`AND t.state = 'ACQUIRED' AND NOT EXISTS (SELECT 1 FROM {p}nodes n WHERE n.sched_name = t.sched_name ` +
		`AND n.node_id = t.claimed_by AND n.epoch = t.claim_epoch AND n.registered = TRUE AND n.dead = FALSE) ` +
		`ORDER BY t.trigger_group, t.trigger_name{update}`
	// sqlReleaseClaim returns one acquired trigger to WAITING, or BLOCKED
	// while its job is busy.
	sqlReleaseClaim = `UPDATE {p}triggers AS t SET state = CASE WHEN ` + jobBusyOfTrigger +
		` THEN 'BLOCKED' ELSE 'WAITING' END, claimed_by = '', claim_epoch = 0, version = version + 1 ` +
		`WHERE t.sched_name = ? AND t.trigger_group = ? AND t.trigger_name = ? AND t.state = 'ACQUIRED'{wake}`
	// sqlTriggersRelease returns triggers claimed by a lease (a condition
	// on their keys and {wake} appended) to WAITING, BLOCKED while their job
	// is busy, or COMPLETE without a next fire time.
	sqlTriggersRelease = `UPDATE {p}triggers AS t SET state = CASE WHEN t.next_fire_time IS NULL THEN 'COMPLETE' ` +
		`WHEN ` + jobBusyOfTrigger + ` THEN 'BLOCKED' ELSE 'WAITING' END, claimed_by = '', claim_epoch = 0, ` +
		`version = t.version + 1 WHERE t.sched_name = ? AND t.state = 'ACQUIRED' AND t.claimed_by = ? ` +
		`AND t.claim_epoch = ? AND `
	// sqlStaleExecutions finds EXECUTING executions whose node and epoch is
	// no live lease.
	sqlStaleExecutions = `SELECT ` + execCols + ` FROM {p}executions e WHERE e.sched_name = ? ` +
		`AND e.state = 'EXECUTING' AND NOT EXISTS (SELECT 1 FROM {p}nodes n WHERE n.sched_name = e.sched_name ` +
		`AND n.node_id = e.node_id AND n.epoch = e.epoch AND n.registered = TRUE AND n.dead = FALSE) ` +
		`ORDER BY e.id{update}`
	// sqlBlockedIdleJobs finds the jobs that have BLOCKED or PAUSED_BLOCKED
	// triggers but are not busy.
	sqlBlockedIdleJobs = `SELECT DISTINCT t.job_group, t.job_name FROM {p}triggers t WHERE t.sched_name = ? ` +
		`AND t.state IN ('BLOCKED', 'PAUSED_BLOCKED') AND ` + notAwaitingRun + ` AND NOT ` + jobBusyOfTrigger +
		` ORDER BY t.job_group, t.job_name`
	// sqlBlockedOfIdleJob locks those triggers of one job, checking again
	// under the job's row lock.
	sqlBlockedOfIdleJob = `SELECT t.trigger_group, t.trigger_name FROM {p}triggers t WHERE t.sched_name = ? ` +
		`AND t.job_group = ? AND t.job_name = ? AND t.state IN ('BLOCKED', 'PAUSED_BLOCKED') AND ` + notAwaitingRun + ` ` +
		`AND NOT ` + jobBusyOfTrigger + ` ORDER BY t.trigger_group, t.trigger_name{update}`
)
