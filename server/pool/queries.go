package pool

// States of a slot row.
const (
	stateWaiting = "waiting"
	stateRunning = "running"
)

// queries are the package's statements, rendered once per Service.
type queries struct {
	now                                      string
	poolUpdate, poolInsert, poolList         string
	poolCounts, poolDelete, poolLock         string
	slotInsert, slotGrant, slotWithdraw      string
	slotState, slotRelease, slotBehind       string
	slotsExpire, slotsRunning, slotsHead     string
	slotsRenew, slotsForgetNode, slotsOfNode string
	slotsDeletePool                          string
}

func renderQueries(render func(string) string) queries {
	return queries{
		now:        render(`SELECT {now}`),
		poolUpdate: render(`UPDATE {p}pool_pools SET description = ?, max_running = ?, updated = {now} WHERE sched_name = ? AND name = ?`),
		poolInsert: render(`INSERT INTO {p}pool_pools (sched_name, name, description, max_running, created, updated)
			VALUES (?, ?, ?, ?, {now}, {now})`),
		poolList: render(`SELECT name, description, max_running, created, updated FROM {p}pool_pools
			WHERE sched_name = ? AND (? = '' OR name = ?) ORDER BY name`),
		// Rows whose lease lapsed are taken back by the next grant; they
		// count for nothing meanwhile.
		poolCounts: render(`SELECT pool, state, COUNT(*) FROM {p}pool_slots
			WHERE sched_name = ? AND (? = '' OR pool = ?) AND lease_until > {now} GROUP BY pool, state`),
		poolDelete: render(`DELETE FROM {p}pool_pools WHERE sched_name = ? AND name = ?`),
		// Every grant of a pool locks its row: grants to one pool are
		// serialized, and each counts what the one before it granted.
		poolLock: render(`SELECT max_running FROM {p}pool_pools WHERE sched_name = ? AND name = ? {update}`),

		// A firing joins the queue only of a pool that exists.
		slotInsert: render(`INSERT INTO {p}pool_slots (sched_name, id, pool, node_id, job_group, job_name, scheduled_time,
			state, enqueued, granted, lease_until)
			SELECT sched_name, ?, name, ?, ?, ?, ?, 'waiting', {now}, NULL, {now} + ? FROM {p}pool_pools
			WHERE sched_name = ? AND name = ?`),
		slotGrant:    render(`UPDATE {p}pool_slots SET state = 'running', granted = ? WHERE sched_name = ? AND id = ? AND state = 'waiting'`),
		slotWithdraw: render(`DELETE FROM {p}pool_slots WHERE sched_name = ? AND id = ? AND state = 'waiting'`),
		slotState:    render(`SELECT state FROM {p}pool_slots WHERE sched_name = ? AND id = ?`),
		slotRelease:  render(`DELETE FROM {p}pool_slots WHERE sched_name = ? AND id = ?`),
		// Firings of the same job waiting behind this one.
		slotBehind: render(`SELECT COUNT(*) FROM {p}pool_slots WHERE sched_name = ? AND pool = ? AND job_group = ? AND job_name = ?
			AND state = 'waiting' AND (scheduled_time > ? OR (scheduled_time = ? AND id > ?))`),

		slotsExpire:  render(`DELETE FROM {p}pool_slots WHERE sched_name = ? AND pool = ? AND lease_until < ?`),
		slotsRunning: render(`SELECT COUNT(*) FROM {p}pool_slots WHERE sched_name = ? AND pool = ? AND state = 'running'`),
		// The queue's order: scheduled time, then the execution ID.
		slotsHead: render(`SELECT id FROM {p}pool_slots WHERE sched_name = ? AND pool = ? AND state = 'waiting'
			ORDER BY scheduled_time, id LIMIT ?`),
		slotsRenew:      render(`UPDATE {p}pool_slots SET lease_until = {now} + ? WHERE sched_name = ? AND node_id = ?`),
		slotsForgetNode: render(`DELETE FROM {p}pool_slots WHERE sched_name = ? AND node_id = ? AND enqueued < ?`),
		slotsOfNode:     render(`SELECT id, state FROM {p}pool_slots WHERE sched_name = ? AND node_id = ?`),
		slotsDeletePool: render(`DELETE FROM {p}pool_slots WHERE sched_name = ? AND pool = ?`),
	}
}
