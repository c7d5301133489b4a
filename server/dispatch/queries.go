package dispatch

// Columns of an executor, in the order scanExecutor reads them, and of a
// run, in the order scanRun reads them.
const (
	executorCols = "id, grp, instance, version, labels, handlers, registered, last_heartbeat, lease_until, last_used, use_count"
	runCols      = "id, execution_id, attempt, grp, handler, job_group, job_name, scheduled_time, params, recovering, " +
		"timeout_ns, executor_id, token, node_id, state, shard_index, shard_total"
	// active are the states of a run not ended.
	active = "('assigned', 'running', 'cancel_requested')"
	// executorIs compares a run's executor with a parameter in a form no
	// index serves. A statement that finds a run by its key and checks its
	// executor names both columns of the executor's index (executor_id,
	// sched_name) and both of the primary key's (sched_name, id); before
	// PostgreSQL analyzed the runs' table the two cost the same to its
	// planner, which took the executor's index and walked every run the
	// executor had since the last vacuum (120 buffers a result in E1,
	// against 6 by key). The runs' table is a queue whose statistics say
	// little whenever they were taken, so the statement does not depend
	// on them. executor_id is never NULL: COALESCE changes nothing but
	// the plan.
	executorIs = "COALESCE(executor_id, '') = ?"
)

// runInsertHead and runInsertRow make the INSERT of assigned runs, with
// token 1: one row of runInsertRow per run, each with runInsertParams
// arguments.
const (
	runInsertHead = `INSERT INTO {p}dispatch_runs (sched_name, ` + runCols + `, cancel_told, outcome, error_message, output, logs,
			assigned, started, finished) VALUES `
	runInsertRow    = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 'assigned', ?, ?, ?, '', '', '', NULL, ?, NULL, NULL)`
	runInsertParams = 18
)

// queries are the package's statements, rendered once per Service.
type queries struct {
	now                                                            string
	executorInsert, executorGet, executorList                      string
	executorHeartbeat, executorsLive, executorsLiveAt, executorUse string
	groupInsert, groupLock                                         string
	runningGroup, runningAll, runsActive                           string
	runInsert, runRehandover, runToken                             string
	runTake, runsStart, cancelsUntold, cancelTold                  string
	runReport, runCancel, runLose, runDelete                       string
	runsForgetNode, watch, pending, runFence                       string
	executorsPrune, takeAll                                        string
	handedStart, handedStartTail, handedSelect                     string
}

func renderQueries(render func(string) string) queries {
	return queries{
		now: render(`SELECT {now}`),
		executorInsert: render(`INSERT INTO {p}dispatch_executors (sched_name, id, grp, instance, version, labels, handlers,
			registered, last_heartbeat, lease_until, last_used, use_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0)`),
		executorGet: render(`SELECT ` + executorCols + ` FROM {p}dispatch_executors WHERE sched_name = ? AND id = ?`),
		// Executors whose lease lapsed before the bound and that hold no
		// run: every registration adds a row, and this removes the old.
		executorsPrune: render(`DELETE FROM {p}dispatch_executors WHERE sched_name = ? AND lease_until < ?
			AND NOT EXISTS (SELECT 1 FROM {p}dispatch_runs r WHERE r.sched_name = {p}dispatch_executors.sched_name
			AND r.executor_id = {p}dispatch_executors.id)`),
		executorList: render(`SELECT ` + executorCols + ` FROM {p}dispatch_executors WHERE sched_name = ? ORDER BY grp, registered, id`),
		// A heartbeat extends only a lease that holds: once it lapsed,
		// the executor's runs may be someone else's.
		executorHeartbeat: render(`UPDATE {p}dispatch_executors SET last_heartbeat = ?, lease_until = ?
			WHERE sched_name = ? AND id = ? AND lease_until > ?`),
		executorsLive: render(`SELECT ` + executorCols + ` FROM {p}dispatch_executors
			WHERE sched_name = ? AND grp = ? AND lease_until > ? ORDER BY registered, id`),
		// The same, with the clock it compared the leases with, so that a
		// round robin hand-over reads both in one round trip.
		executorsLiveAt: render(`SELECT ` + executorCols + `, COALESCE(?, {now}) FROM {p}dispatch_executors
			WHERE sched_name = ? AND grp = ? AND lease_until > COALESCE(?, {now}) ORDER BY registered, id`),
		executorUse: render(`UPDATE {p}dispatch_executors SET last_used = ?, use_count = use_count + ? WHERE sched_name = ? AND id = ?`),

		groupInsert: render(`INSERT INTO {p}dispatch_groups (sched_name, grp, rr_last) VALUES (?, ?, '')`),
		groupLock:   render(`SELECT 1 FROM {p}dispatch_groups WHERE sched_name = ? AND grp = ? {update}`),

		runningGroup: render(`SELECT executor_id, COUNT(*) FROM {p}dispatch_runs
			WHERE sched_name = ? AND grp = ? AND state IN ` + active + ` GROUP BY executor_id`),
		runningAll: render(`SELECT executor_id, COUNT(*) FROM {p}dispatch_runs
			WHERE sched_name = ? AND state IN ` + active + ` GROUP BY executor_id`),
		runsActive: render(`SELECT id, token, state FROM {p}dispatch_runs
			WHERE sched_name = ? AND executor_id = ? AND state IN ` + active),

		runInsert: render(runInsertHead + runInsertRow),
		// A lost run goes to its next executor with the next token, so
		// that whatever the lost one sends is refused.
		runRehandover: render(`UPDATE {p}dispatch_runs SET executor_id = ?, token = token + 1, state = 'assigned',
			execution_id = ?, attempt = ?, recovering = ?, cancel_told = ?, assigned = ?, started = NULL
			WHERE sched_name = ? AND id = ? AND state = 'lost'`),
		runToken: render(`SELECT token FROM {p}dispatch_runs WHERE sched_name = ? AND id = ?`),
		runTake: render(`SELECT ` + runCols + ` FROM {p}dispatch_runs
			WHERE sched_name = ? AND executor_id = ? AND state = 'assigned' ORDER BY assigned LIMIT ? {update}`),
		// The runs taken: their IDs follow, rendered with the query.
		runsStart: `UPDATE {p}dispatch_runs SET state = 'running', started = ?
			WHERE sched_name = ? AND executor_id = ? AND state = 'assigned'`,
		cancelsUntold: render(`SELECT id, token FROM {p}dispatch_runs
			WHERE sched_name = ? AND executor_id = ? AND state = 'cancel_requested' AND cancel_told = ?`),
		cancelTold: render(`UPDATE {p}dispatch_runs SET cancel_told = ? WHERE sched_name = ? AND id = ? AND token = ?`),
		// The fence: only the executor the run is leased to, under the
		// run's current token, while it has not ended.
		// A result's end is the Service's clock when it has one, the
		// database's otherwise (a NULL first argument): no round trip
		// to read it first.
		// The run is found by its key: executorIs keeps the executor's
		// index out of the plan.
		runReport: render(`UPDATE {p}dispatch_runs SET state = 'done', outcome = ?, error_message = ?, output = ?, logs = ?,
			finished = COALESCE(?, {now}) WHERE sched_name = ? AND id = ? AND ` + executorIs + ` AND token = ? AND state IN ` + active),
		runCancel: render(`UPDATE {p}dispatch_runs SET state = 'cancel_requested', cancel_told = ?
			WHERE sched_name = ? AND id = ? AND token = ? AND state IN ('assigned', 'running')`),
		runLose: render(`UPDATE {p}dispatch_runs SET state = 'lost', finished = ?
			WHERE sched_name = ? AND id = ? AND token = ? AND state IN ` + active),
		// The fence of a run's log lines: as runReport's.
		runFence: render(`SELECT execution_id FROM {p}dispatch_runs
			WHERE sched_name = ? AND id = ? AND ` + executorIs + ` AND token = ? AND state IN ` + active),
		runDelete: render(`DELETE FROM {p}dispatch_runs WHERE sched_name = ? AND id = ?`),
		// pending tells a waiting Take whether a transaction would find
		// anything: most reads find nothing, and take no lock.
		// With the executor's lease, so that a lapsed one is told too.
		// pending reads whether an executor's lease holds (by the
		// Service's clock when it has one, the database's for a NULL
		// first argument) and how many of its runs wait to be taken or
		// told.
		pending: render(`SELECT e.lease_until > COALESCE(CAST(? AS BIGINT), {now}), (SELECT COUNT(*) FROM {p}dispatch_runs r
			WHERE r.sched_name = e.sched_name AND r.executor_id = e.id
			AND ((? > 0 AND r.state = 'assigned') OR (r.state = 'cancel_requested' AND r.cancel_told = ?)))
			FROM {p}dispatch_executors e WHERE e.sched_name = ? AND e.id = ?`),
		// takeAll is Take's transaction in one statement, on PostgreSQL:
		// while the executor's lease holds, it picks its oldest assigned
		// runs, as many as it asks for, starts them (a run another take
		// started meanwhile is no longer assigned when the UPDATE checks
		// it again, and is left out) and marks its cancel
		// requests told, returning both (each row with the run's
		// columns, after its kind), then one row of kind 'live'. It
		// returns nothing at all when the lease lapsed or the executor is
		// unknown: takeOnce then tells which. The runs are read by the
		// executor's index and updated by their row addresses (ctid),
		// whatever the plan; the time is the Service's clock when it has
		// one, the database's for a NULL first argument.
		takeAll: render(`WITH at AS (
			SELECT COALESCE(CAST(? AS BIGINT), {now}) AS now
		), live AS (
			SELECT 1 FROM {p}dispatch_executors, at WHERE sched_name = ? AND id = ? AND lease_until > at.now
		), picked AS (
			SELECT ctid FROM {p}dispatch_runs WHERE sched_name = ? AND executor_id = ? AND state = 'assigned'
			AND EXISTS (SELECT 1 FROM live) ORDER BY assigned, id LIMIT ?
		), taken AS (
			UPDATE {p}dispatch_runs SET state = 'running', started = (SELECT now FROM at)
			WHERE ctid = ANY (ARRAY (SELECT ctid FROM picked)) AND sched_name = ? AND executor_id = ? AND state = 'assigned'
			RETURNING 'run' AS kind, ` + runCols + `
		), told AS (
			UPDATE {p}dispatch_runs SET cancel_told = TRUE
			WHERE sched_name = ? AND executor_id = ? AND state = 'cancel_requested' AND cancel_told = FALSE
			AND EXISTS (SELECT 1 FROM live)
			RETURNING 'cancel' AS kind, ` + runCols + `
		)
		SELECT * FROM taken UNION ALL SELECT * FROM told
		UNION ALL SELECT 'live', '', '', 0, '', '', '', '', 0, NULL, FALSE, 0, '', 0, '', '', 0, 0 FROM live`),
		// The runs a node handed an executor, by their keys (takeHanded):
		// the IDs' list follows the head, rendered with it. On
		// PostgreSQL one statement starts them while the lease holds;
		// elsewhere a transaction reads them, locking them, then starts
		// them (see startRuns).
		handedStart: `UPDATE {p}dispatch_runs SET state = 'running', started = COALESCE(CAST(? AS BIGINT), {now})
			WHERE sched_name = ? AND ` + executorIs + ` AND state = 'assigned'`,
		handedStartTail: ` AND EXISTS (SELECT 1 FROM {p}dispatch_executors
			WHERE sched_name = ? AND id = ? AND lease_until > COALESCE(CAST(? AS BIGINT), {now}))
			RETURNING ` + runCols,
		handedSelect: `SELECT ` + runCols + ` FROM {p}dispatch_runs
			WHERE sched_name = ? AND ` + executorIs + ` AND state = 'assigned'`,
		runsForgetNode: render(`DELETE FROM {p}dispatch_runs WHERE sched_name = ? AND node_id = ? AND assigned < ?`),
		// The runs of this node that ended or whose executor's lease
		// lapsed (before the bound), with that lease: the results and
		// the lapsed leases in one read.
		watch: render(`SELECT r.id, r.token, r.state, r.outcome, r.error_message, r.output, r.logs, r.executor_id,
			e.instance, e.lease_until
			FROM {p}dispatch_runs AS r
			LEFT JOIN {p}dispatch_executors AS e ON e.sched_name = r.sched_name AND e.id = r.executor_id
			WHERE r.sched_name = ? AND r.node_id = ?
			AND (r.state NOT IN ` + active + ` OR e.lease_until IS NULL OR e.lease_until <= ?)`),
	}
}
