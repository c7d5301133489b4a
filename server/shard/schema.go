package shard

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names this package's tables: {prefix}shard_….
const component = "shard"

// migrations are the package's schema, oldest first. A released
// migration is never edited; changes append a new one. Instants are
// BIGINT Unix nanoseconds of the database's clock.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "sharded firings and their items",
		Tables: []sqlstore.Table{
			{
				Name: "shard_parents",
				Columns: []string{
					"sched_name {key} NOT NULL",
					// The firing: the ID of its first attempt.
					"id {key} NOT NULL",
					// The parent's current attempt in the history.
					"execution_id {key} NOT NULL",
					"job_group {key} NOT NULL",
					"job_name {key} NOT NULL",
					"total INTEGER NOT NULL",
					"round INTEGER NOT NULL",
					"state VARCHAR(16) NOT NULL",
					// Items not ended yet, and items failed: kept in step
					// under the parent's row lock.
					"remaining INTEGER NOT NULL",
					"failed INTEGER NOT NULL",
					"node_id {key} NOT NULL",
					"spec {json}",
					"created BIGINT NOT NULL",
					"decided BIGINT",
					"recorded {bool} NOT NULL",
					"error_message {text} NOT NULL",
				},
				Primary: "sched_name, id",
				Indexes: []sqlstore.Index{
					// Stalled.
					{Name: "shard_parents_state", Cols: "sched_name, state, recorded"},
				},
			},
			{
				Name: "shard_items",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"parent_id {key} NOT NULL",
					"idx INTEGER NOT NULL",
					"round INTEGER NOT NULL",
					"state VARCHAR(16) NOT NULL",
					// The item's firing (first attempt) once started, and
					// its latest attempt; empty before.
					"first_id {key} NOT NULL",
					"execution_id {key} NOT NULL",
					"node_id {key} NOT NULL",
					"attempts INTEGER NOT NULL",
					"started BIGINT",
					"finished BIGINT",
					"error_message {text} NOT NULL",
				},
				Primary: "sched_name, parent_id, idx",
			},
		},
	}}
}
