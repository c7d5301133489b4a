package bench

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// dropTables drops the tables whose names start with prefix: the run's.
func dropTables(ctx context.Context, db *sql.DB, d sqlstore.Dialect, prefix string) error {
	var list string
	switch d {
	case sqlstore.Postgres:
		list = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND starts_with(tablename, $1)`
	case sqlstore.MySQL:
		list = `SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND LEFT(table_name, CHAR_LENGTH(?)) = ?`
	default:
		list = `SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, length(?1)) = ?1`
	}
	args := []any{prefix}
	if d == sqlstore.MySQL {
		args = append(args, prefix)
	}
	rows, err := db.QueryContext(ctx, list, args...)
	if err != nil {
		return fmt.Errorf("bench: list the run's tables: %w", err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("bench: list the run's tables: %w", err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("bench: list the run's tables: %w", err)
	}
	for _, t := range tables {
		// The names come from the catalogue and start with the run's
		// prefix, which is [a-z0-9_]: nothing to quote.
		if _, err := db.ExecContext(ctx, "DROP TABLE "+t); err != nil {
			return fmt.Errorf("bench: drop table %s: %w", t, err)
		}
	}
	return nil
}

// moveTriggers moves the times of every trigger of the run by d: its
// start, end and next fire time. The triggers have not fired, nothing else
// in them is a time, and no node runs yet.
func moveTriggers(ctx context.Context, db *sql.DB, d sqlstore.Dialect, prefix string, by time.Duration) error {
	p := "?"
	if d == sqlstore.Postgres {
		p = "$1"
	}
	// The prefix is the run's own, [a-z0-9_]: nothing to quote.
	q := "UPDATE " + prefix + "triggers SET start_time = start_time + " + p +
		", end_time = end_time + " + p + ", next_fire_time = next_fire_time + " + p
	args := []any{int64(by)}
	if d != sqlstore.Postgres {
		args = []any{int64(by), int64(by), int64(by)}
	}
	if _, err := db.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("bench: move the triggers to their fire times: %w", err)
	}
	return nil
}

// waitSample is how often sampleWaits looks at pg_stat_activity.
const waitSample = 100 * time.Millisecond

// sampleWaits counts, on PostgreSQL, what the nodes' active sessions wait
// on, every waitSample from t0 until ctx ends: "Type:event", or "CPU" for
// a session running without waiting. Other databases give nil.
func (r *run) sampleWaits(ctx context.Context, t0 time.Time) map[string]int {
	if r.st.Dialect() != sqlstore.Postgres {
		return nil
	}
	if err := sleepUntil(ctx, t0); err != nil {
		return nil
	}
	const q = `SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU') FROM pg_stat_activity
		WHERE state = 'active' AND starts_with(application_name, $1)`
	counts := make(map[string]int)
	tick := time.NewTicker(waitSample)
	defer tick.Stop()
	for {
		rows, err := r.st.DB().QueryContext(ctx, q, r.prefix)
		if err == nil {
			for rows.Next() {
				var ev string
				if rows.Scan(&ev) == nil {
					counts[ev]++
				}
			}
			rows.Close()
		}
		select {
		case <-ctx.Done():
			return counts
		case <-tick.C:
		}
	}
}
