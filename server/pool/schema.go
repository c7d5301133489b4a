package pool

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names the package's tables: {p}pool_….
const component = "pool"

// migrations are the package's schema, oldest first. A released
// migration is never edited; changes append a new one. Instants are
// BIGINT Unix nanoseconds of the database's clock.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "concurrency pools and their slots",
		Tables: []sqlstore.Table{
			{
				Name: "pool_pools",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"name {key} NOT NULL",
					"description {text} NOT NULL",
					"max_running INTEGER NOT NULL",
					"created BIGINT NOT NULL",
					"updated BIGINT NOT NULL",
				},
				Primary: "sched_name, name",
			},
			{
				Name: "pool_slots",
				Columns: []string{
					"sched_name {key} NOT NULL",
					// id is the execution that waits for or holds the slot.
					"id {key} NOT NULL",
					"pool {key} NOT NULL",
					"node_id {key} NOT NULL",
					"job_group {key} NOT NULL",
					"job_name {key} NOT NULL",
					"scheduled_time BIGINT NOT NULL",
					"state VARCHAR(16) NOT NULL",
					"enqueued BIGINT NOT NULL",
					"granted BIGINT",
					"lease_until BIGINT NOT NULL",
				},
				Primary: "sched_name, id",
				Indexes: []sqlstore.Index{
					// The queue of a pool, in order, and its running count.
					{Name: "pool_slots_queue", Cols: "pool, sched_name, state, scheduled_time, id"},
					// A node's renewal, its waiters' reads and its loss.
					{Name: "pool_slots_node", Cols: "node_id, sched_name"},
				},
			},
		},
	}}
}
