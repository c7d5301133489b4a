package history

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names the history's schema: its tables are
// {prefix}server_…, its versions in {prefix}server_schema_migrations.
const component = "server"

// migrations returns the history's schema, oldest first. A migration is
// never edited once released; changes append a new one.
//
// MySQL limits an index key to 3072 bytes, and a {key} column takes 800
// (VARCHAR(200) utf8mb4), so no index has more than three {key} columns.
// InnoDB appends the primary key (sched_name, id) to every secondary
// index, which orders rows of equal time by id there too.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "server execution history, decisions and audit log",
		Tables: []sqlstore.Table{
			{
				Name: "server_executions",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"id {key} NOT NULL",
					"first_id {key} NOT NULL",
					"attempt INTEGER NOT NULL",
					"job_group {key} NOT NULL",
					"job_name {key} NOT NULL",
					"trigger_group {key} NOT NULL",
					"trigger_name {key} NOT NULL",
					"node_id {key} NOT NULL",
					"scheduled_time BIGINT",
					"started_time BIGINT NOT NULL",
					"finished_time BIGINT",
					"outcome VARCHAR(16) NOT NULL",
					"error_message {text} NOT NULL",
					"output {text} NOT NULL",
					"output_truncated {bool} NOT NULL",
					"logs {json}",
					"recovering {bool} NOT NULL",
					"manual {bool} NOT NULL",
					"params {json}",
				},
				Primary: "sched_name, id",
				Indexes: []sqlstore.Index{
					// List of everything, newest first; pruning by age.
					{Name: "server_executions_started", Cols: "started_time, sched_name, id"},
					// List, Stats and pruning of one job.
					{Name: "server_executions_job", Cols: "job_group, job_name, sched_name, started_time"},
					// LastSuccess.
					{Name: "server_executions_success", Cols: "job_group, job_name, sched_name, outcome, finished_time"},
					// List by outcome (running, failed…).
					{Name: "server_executions_outcome", Cols: "outcome, sched_name, started_time"},
					// MarkNodeLost and List by node.
					{Name: "server_executions_node", Cols: "node_id, sched_name, outcome, started_time"},
					// Attempts.
					{Name: "server_executions_first", Cols: "first_id, sched_name, attempt"},
				},
			},
			{
				Name: "server_decisions",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"id {key} NOT NULL",
					"job_group {key} NOT NULL",
					"job_name {key} NOT NULL",
					"trigger_group {key} NOT NULL",
					"trigger_name {key} NOT NULL",
					"scheduled_time BIGINT",
					"decided_time BIGINT NOT NULL",
					// The scheduled time, or the decided time when there is
					// none: what Decisions selects and orders by.
					"sort_time BIGINT NOT NULL",
					"kind VARCHAR(32) NOT NULL",
					"reason {text} NOT NULL",
					"node_id {key} NOT NULL",
					"execution_id {key} NOT NULL",
				},
				Primary: "sched_name, id",
				Indexes: []sqlstore.Index{
					{Name: "server_decisions_job", Cols: "job_group, job_name, sched_name, sort_time"},
					{Name: "server_decisions_time", Cols: "sort_time, sched_name, id"},
				},
			},
			{
				Name: "server_audit",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"id {key} NOT NULL",
					"audit_time BIGINT NOT NULL",
					"actor {key} NOT NULL",
					"action {key} NOT NULL",
					"target {key} NOT NULL",
					"detail {json}",
				},
				Primary: "sched_name, id",
				Indexes: []sqlstore.Index{
					{Name: "server_audit_time", Cols: "audit_time, sched_name, id"},
					{Name: "server_audit_actor", Cols: "actor, sched_name, audit_time"},
					{Name: "server_audit_target", Cols: "target, sched_name, audit_time"},
				},
			},
		},
	}, {
		Version:     2,
		Description: "who asked to kill a running execution",
		// One statement: MySQL commits an ALTER TABLE by itself.
		Statements: []string{"ALTER TABLE {p}server_executions ADD COLUMN killed_by {key} NOT NULL DEFAULT ''"},
	}, {
		Version:     3,
		Description: "the executor that ran an execution of an executor job",
		Statements:  []string{"ALTER TABLE {p}server_executions ADD COLUMN executor_id {key} NOT NULL DEFAULT ''"},
	}, {
		Version:     4,
		Description: "the instance name of the executor that ran an execution",
		Statements:  []string{"ALTER TABLE {p}server_executions ADD COLUMN executor_instance {key} NOT NULL DEFAULT ''"},
	}, {
		Version:     5,
		Description: "the execution of the parent job whose end ran a child job's execution",
		Statements:  []string{"ALTER TABLE {p}server_executions ADD COLUMN cause_id {key} NOT NULL DEFAULT ''"},
	}}
}

// Columns of an execution, in the order scanExecution reads them; the
// light list replaces output and logs with empty values.
const (
	executionHead = "id, first_id, attempt, job_group, job_name, trigger_group, trigger_name, node_id, " +
		"scheduled_time, started_time, finished_time, outcome, error_message, "
	executionTail  = ", output_truncated, recovering, manual, params, killed_by, executor_id, executor_instance, cause_id"
	executionCols  = executionHead + "output, logs" + executionTail
	executionLight = executionHead + "'', NULL" + executionTail

	decisionCols = "id, job_group, job_name, trigger_group, trigger_name, scheduled_time, decided_time, " +
		"kind, reason, node_id, execution_id"
	auditCols = "id, audit_time, actor, action, target, detail"
	// auditInsertHead and auditInsertRow make the INSERT of audit
	// entries, a row each.
	auditInsertHead = `INSERT INTO {p}server_audit (sched_name, ` + auditCols + `) VALUES `
	auditInsertRow  = `(?, ?, ?, ?, ?, ?, ?)`
)

// queries are the history's fixed statements, rendered once for the
// store's dialect. Lists with filters are built per call (see where).
type queries struct {
	executionInsert                                string
	executionFinish, executionGet, executionExists string
	executionAttempts, executionNodeLost           string
	executionLost                                  string
	executionKill, executionKills                  string
	lastSuccess                                    string
	decisionInsert, auditInsert                    string
	// Prune's statements; see History.Prune and pruneJob.
	pruneJobs, pruneJobsCapped, pruneRank                   string
	pruneSelectOld, pruneSelectOldBefore, pruneSelectBefore string
	pruneDecisions                                          string
	// executionsInsert inserts batchChunk executions (see RecordBatch);
	// executionsInsertIgnore leaves alone those already recorded.
	executionsInsert, executionsInsertIgnore string
	// executionsInsertArrays and executionsInsertArraysIgnore are the
	// same for any number of executions, from arrays (on PostgreSQL).
	executionsInsertArrays, executionsInsertArraysIgnore string
}

func renderQueries(st *sqlstore.Store) queries {
	return queries{
		executionsInsert:             executionsInsert(st, batchChunk, false),
		executionsInsertIgnore:       executionsInsert(st, batchChunk, true),
		executionsInsertArrays:       executionsInsertArrays(st, false),
		executionsInsertArraysIgnore: executionsInsertArrays(st, true),
		executionInsert: st.SQL(`INSERT INTO {p}server_executions (sched_name, ` + executionCols + `)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', NULL, ?, ?, ?, ?, '', ?, ?, ?)`),
		executionFinish: st.SQL(`UPDATE {p}server_executions
			SET outcome = ?, finished_time = ?, error_message = ?, output = ?, output_truncated = ?, logs = ?
			WHERE sched_name = ? AND id = ? AND outcome IN ('running', 'node_lost')`),
		executionGet:    st.SQL(`SELECT ` + executionCols + ` FROM {p}server_executions WHERE sched_name = ? AND id = ?`),
		executionExists: st.SQL(`SELECT COUNT(*) FROM {p}server_executions WHERE sched_name = ? AND id = ?`),
		executionAttempts: st.SQL(`SELECT ` + executionCols + ` FROM {p}server_executions
			WHERE first_id = ? AND sched_name = ? ORDER BY attempt, started_time, id`),
		executionNodeLost: st.SQL(`UPDATE {p}server_executions
			SET outcome = 'node_lost', finished_time = ?, error_message = ?
			WHERE node_id = ? AND sched_name = ? AND outcome = 'running'`),
		executionLost: st.SQL(`UPDATE {p}server_executions
			SET outcome = 'node_lost', finished_time = ?, error_message = ?
			WHERE sched_name = ? AND id = ? AND outcome = 'running'`),
		// A kill request is the first killer's name on the running
		// execution; the node running it polls for its own (see Kills),
		// by the node index.
		executionKill: st.SQL(`UPDATE {p}server_executions SET killed_by = ?
			WHERE sched_name = ? AND id = ? AND outcome = 'running' AND killed_by = ''`),
		executionKills: st.SQL(`SELECT id, killed_by FROM {p}server_executions
			WHERE node_id = ? AND sched_name = ? AND outcome = 'running' AND killed_by <> ''`),
		lastSuccess: st.SQL(`SELECT MAX(finished_time) FROM {p}server_executions
			WHERE job_group = ? AND job_name = ? AND sched_name = ? AND outcome = 'succeeded'`),
		decisionInsert: st.SQL(`INSERT INTO {p}server_decisions (sched_name, ` + decisionCols + `, sort_time)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		auditInsert: st.SQL(auditInsertHead + auditInsertRow),
		pruneJobs: st.SQL(`SELECT DISTINCT job_group, job_name FROM {p}server_executions
			WHERE started_time < ? AND sched_name = ?`),
		pruneJobsCapped: st.SQL(`SELECT job_group, job_name FROM {p}server_executions
			WHERE sched_name = ? GROUP BY job_group, job_name
			HAVING MIN(started_time) < ? OR COUNT(*) > ?`),
		pruneRank: st.SQL(`SELECT started_time, id FROM {p}server_executions
			WHERE job_group = ? AND job_name = ? AND sched_name = ?
			ORDER BY started_time DESC, id DESC LIMIT 1 OFFSET ?`),
		pruneSelectOld: st.SQL(`SELECT id FROM {p}server_executions
			WHERE job_group = ? AND job_name = ? AND sched_name = ? AND started_time < ? AND outcome <> 'running'
			ORDER BY started_time, id LIMIT ?`),
		pruneSelectOldBefore: st.SQL(`SELECT id FROM {p}server_executions
			WHERE job_group = ? AND job_name = ? AND sched_name = ? AND started_time < ? AND outcome <> 'running'
			AND (started_time < ? OR (started_time = ? AND id < ?))
			ORDER BY started_time, id LIMIT ?`),
		pruneSelectBefore: st.SQL(`SELECT id FROM {p}server_executions
			WHERE job_group = ? AND job_name = ? AND sched_name = ? AND outcome <> 'running'
			AND (started_time < ? OR (started_time = ? AND id < ?))
			ORDER BY started_time, id LIMIT ?`),
		pruneDecisions: st.SQL(`SELECT id FROM {p}server_decisions
			WHERE sort_time < ? AND sched_name = ? ORDER BY sort_time LIMIT ?`),
	}
}
