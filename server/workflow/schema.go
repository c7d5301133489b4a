package workflow

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names the package's tables: {p}workflow_….
const component = "workflow"

// migrations are the package's schema, oldest first. A released
// migration is never edited; changes append a new one. Instants are
// BIGINT Unix nanoseconds.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "workflows, their instances and the instances' tasks",
		Tables: []sqlstore.Table{
			{
				Name: "workflow_defs",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"name {key} NOT NULL",
					"spec {json} NOT NULL",
					"version BIGINT NOT NULL",
					"updated BIGINT NOT NULL",
				},
				Primary: "sched_name, name",
			},
			{
				Name: "workflow_instances",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"id {key} NOT NULL",
					"workflow {key} NOT NULL",
					"state VARCHAR(16) NOT NULL",
					"graph {json} NOT NULL",
					"params {json}",
					"created BIGINT NOT NULL",
					"finished BIGINT",
				},
				Primary: "sched_name, id",
				Indexes: []sqlstore.Index{
					{Name: "workflow_instances_by_workflow", Cols: "workflow, sched_name, created"},
				},
			},
			{
				Name: "workflow_tasks",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"instance_id {key} NOT NULL",
					"task {key} NOT NULL",
					"ord INTEGER NOT NULL",
					"state VARCHAR(16) NOT NULL",
					"execution_id {key} NOT NULL",
					"attempts INTEGER NOT NULL",
					"ready_at BIGINT",
					"started BIGINT",
					"finished BIGINT",
					"error_message {text} NOT NULL",
				},
				Primary: "sched_name, instance_id, task",
				Indexes: []sqlstore.Index{
					// The sweep's ready tasks.
					{Name: "workflow_tasks_state", Cols: "state, sched_name, ready_at"},
				},
			},
		},
	}}
}
