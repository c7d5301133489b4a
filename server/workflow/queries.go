package workflow

// Columns of an instance, in the order scanInstance reads them.
const instCols = "id, workflow, state, graph, params, created, finished"

// queries are the package's statements, rendered once per Store.
type queries struct {
	defLock, defInsert, defUpdate, defGet, defList, defDelete string
	instInsert, instGet, instLock, instUpdate                 string
	instList, instListOf                                      string
	taskInsert, taskList, taskUpdate, readyTasks              string
	prunable, instDelete, taskDelete                          string
}

func renderQueries(render func(string) string) queries {
	return queries{
		defLock:   render(`SELECT spec, version FROM {p}workflow_defs WHERE sched_name = ? AND name = ? {update}`),
		defInsert: render(`INSERT INTO {p}workflow_defs (sched_name, name, spec, version, updated) VALUES (?, ?, ?, ?, ?)`),
		defUpdate: render(`UPDATE {p}workflow_defs SET spec = ?, version = ?, updated = ? WHERE sched_name = ? AND name = ?`),
		defGet:    render(`SELECT name, spec, version, updated FROM {p}workflow_defs WHERE sched_name = ? AND name = ?`),
		defList:   render(`SELECT name, spec, version, updated FROM {p}workflow_defs WHERE sched_name = ? ORDER BY name`),
		defDelete: render(`DELETE FROM {p}workflow_defs WHERE sched_name = ? AND name = ?`),

		instInsert: render(`INSERT INTO {p}workflow_instances (sched_name, ` + instCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`),
		instGet:    render(`SELECT ` + instCols + ` FROM {p}workflow_instances WHERE sched_name = ? AND id = ?`),
		// Every change of an instance holds its row's lock: one decision
		// about an instance at a time, cluster-wide.
		instLock:   render(`SELECT ` + instCols + ` FROM {p}workflow_instances WHERE sched_name = ? AND id = ? {update}`),
		instUpdate: render(`UPDATE {p}workflow_instances SET state = ?, finished = ? WHERE sched_name = ? AND id = ?`),
		instList: render(`SELECT ` + instCols + ` FROM {p}workflow_instances WHERE sched_name = ?
			ORDER BY created DESC, id LIMIT ?`),
		instListOf: render(`SELECT ` + instCols + ` FROM {p}workflow_instances WHERE sched_name = ? AND workflow = ?
			ORDER BY created DESC, id LIMIT ?`),

		taskInsert: render(`INSERT INTO {p}workflow_tasks (sched_name, instance_id, task, ord, state, execution_id, attempts,
			ready_at, started, finished, error_message) VALUES (?, ?, ?, ?, ?, '', 0, ?, NULL, NULL, '')`),
		taskList: render(`SELECT task, state, execution_id, attempts, ready_at, started, finished, error_message
			FROM {p}workflow_tasks WHERE sched_name = ? AND instance_id = ? ORDER BY ord`),
		taskUpdate: render(`UPDATE {p}workflow_tasks SET state = ?, execution_id = ?, attempts = ?, ready_at = ?, started = ?,
			finished = ?, error_message = ? WHERE sched_name = ? AND instance_id = ? AND task = ?`),
		readyTasks: render(`SELECT t.instance_id, t.task, t.attempts, i.workflow, i.params FROM {p}workflow_tasks t JOIN {p}workflow_instances i
			ON i.sched_name = t.sched_name AND i.id = t.instance_id
			WHERE t.state = 'ready' AND t.sched_name = ? AND t.ready_at < ? AND i.state = 'running'
			ORDER BY t.ready_at LIMIT ?`),

		// Ended instances have a finished time; running and paused ones
		// (a re-run's too) have none.
		prunable: render(`SELECT id FROM {p}workflow_instances WHERE sched_name = ? AND finished < ?
			ORDER BY finished LIMIT ?`),
		instDelete: render(`DELETE FROM {p}workflow_instances WHERE sched_name = ? AND id = ?`),
		taskDelete: render(`DELETE FROM {p}workflow_tasks WHERE sched_name = ? AND instance_id = ?`),
	}
}
