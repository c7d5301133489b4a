package livelog

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names this package's tables: {prefix}livelog_lines, its
// versions in {prefix}livelog_schema_migrations.
const component = "livelog"

// migrations are the package's schema history, oldest first. A released
// migration is never edited; changes append a new one.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "log lines of running executions",
		Tables: []sqlstore.Table{{
			Name: "livelog_lines",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"execution_id {key} NOT NULL",
				"seq BIGINT NOT NULL",
				"line_time BIGINT NOT NULL",
				"level VARCHAR(16) NOT NULL",
				"message {text} NOT NULL",
				"attrs {json}",
			},
			Primary: "sched_name, execution_id, seq",
			Indexes: []sqlstore.Index{
				// Prune by age.
				{Name: "livelog_lines_time", Cols: "line_time, sched_name"},
			},
		}},
	}}
}
