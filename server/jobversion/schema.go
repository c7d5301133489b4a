package jobversion

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names this package's tables: {prefix}versions_jobs, its
// schema versions in {prefix}versions_schema_migrations.
const component = "versions"

// migrations are the package's schema history, oldest first. A released
// migration is never edited; changes append a new one.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "versions of jobs",
		Tables: []sqlstore.Table{{
			Name: "versions_jobs",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"job_group {key} NOT NULL",
				"job_name {key} NOT NULL",
				"seq BIGINT NOT NULL",
				"id {key} NOT NULL",
				"job_version BIGINT NOT NULL",
				"kind VARCHAR(16) NOT NULL",
				"actor {key} NOT NULL",
				"recorded_time BIGINT NOT NULL",
				"rolled_back_from BIGINT NOT NULL",
				"spec {text} NOT NULL",
				"masked {text} NOT NULL",
			},
			// List, Get and the retention's range delete of one job.
			Primary: "sched_name, job_group, job_name, seq",
			Indexes: []sqlstore.Index{
				// Record's idempotency.
				{Name: "versions_jobs_id", Cols: "sched_name, id", Unique: true},
			},
		}},
	}}
}
