package dispatch

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names the package's tables: {p}dispatch_….
const component = "dispatch"

// migrations are the package's schema, oldest first. A released
// migration is never edited; changes append a new one. Instants are
// BIGINT Unix nanoseconds of the database's clock.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "executors, executor groups and the runs handed to executors",
		Tables: []sqlstore.Table{
			{
				Name: "dispatch_executors",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"id {key} NOT NULL",
					"grp {key} NOT NULL",
					"instance {key} NOT NULL",
					"version {key} NOT NULL",
					"labels {json}",
					"handlers {json}",
					"registered BIGINT NOT NULL",
					"last_heartbeat BIGINT NOT NULL",
					"lease_until BIGINT NOT NULL",
					"last_used BIGINT",
					"use_count BIGINT NOT NULL",
				},
				Primary: "sched_name, id",
				Indexes: []sqlstore.Index{
					{Name: "dispatch_executors_group", Cols: "grp, sched_name, lease_until"},
				},
			},
			{
				Name: "dispatch_groups",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"grp {key} NOT NULL",
					// The ID of the executor the round robin picked last.
					"rr_last {key} NOT NULL",
				},
				Primary: "sched_name, grp",
			},
			{
				Name: "dispatch_runs",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"id {key} NOT NULL",
					"execution_id {key} NOT NULL",
					"attempt INTEGER NOT NULL",
					"grp {key} NOT NULL",
					"handler {key} NOT NULL",
					"job_group {key} NOT NULL",
					"job_name {key} NOT NULL",
					"scheduled_time BIGINT NOT NULL",
					"params {json}",
					"recovering {bool} NOT NULL",
					"timeout_ns BIGINT NOT NULL",
					"executor_id {key} NOT NULL",
					"token BIGINT NOT NULL",
					"node_id {key} NOT NULL",
					"state VARCHAR(16) NOT NULL",
					"cancel_told {bool} NOT NULL",
					"outcome VARCHAR(16) NOT NULL",
					"error_message {text} NOT NULL",
					"output {text} NOT NULL",
					"logs {json}",
					"assigned BIGINT NOT NULL",
					"started BIGINT",
					"finished BIGINT",
				},
				Primary: "sched_name, id",
				// Replaced by migration 4.
				Indexes: []sqlstore.Index{
					// Take, Heartbeat and the running counts of busy_over.
					{Name: "dispatch_runs_executor", Cols: "executor_id, sched_name, state"},
					{Name: "dispatch_runs_group", Cols: "grp, sched_name, state"},
				},
			},
		},
	}, {
		Version:     2,
		Description: "the shard index of a sharded firing's item",
		Statements:  []string{"ALTER TABLE {p}dispatch_runs ADD COLUMN shard_index INTEGER NOT NULL DEFAULT 0"},
	}, {
		Version:     3,
		Description: "the shard total of a sharded firing's item",
		Statements:  []string{"ALTER TABLE {p}dispatch_runs ADD COLUMN shard_total INTEGER NOT NULL DEFAULT 0"},
	}, {
		Version:     4,
		Description: "indexes of runs that a run's changes of state do not touch, and a run's node's",
		Reindex: []sqlstore.Reindex{{
			Table: "dispatch_runs",
			// A run changes state three times (taken, reported, deleted)
			// and had its state in both indexes, so each change wrote
			// an entry in every index and left a dead one behind, which
			// every later read by executor walked over. With no column a
			// take, a report, a cancel or a loss changes in an index,
			// PostgreSQL makes each a HOT update and InnoDB leaves the
			// secondary indexes alone. An executor's or a group's rows
			// are then filtered on state: an executor holds few, and a
			// group's are read only by busy_over's running counts.
			Drop: []string{"dispatch_runs_executor", "dispatch_runs_group"},
			Add: []sqlstore.Index{
				{Name: "dispatch_runs_by_executor", Cols: "executor_id, sched_name"},
				{Name: "dispatch_runs_by_group", Cols: "grp, sched_name"},
				// Watch reads a node's runs, and ForgetNode deletes them.
				{Name: "dispatch_runs_by_node", Cols: "node_id, sched_name"},
			},
			// Room in each page for two changed versions of each row
			// inserted there (taken, then reported), so that the HOT
			// updates find it without waiting for the versions before
			// to be pruned. A run's row lives seconds: the table holds
			// the runs in progress, and a few pages more cost nothing.
			FillFactor: 30,
		}},
	}}
}
