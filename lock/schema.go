package lock

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names this package's tables: {prefix}lock_leases, with its
// versions in {prefix}lock_schema_migrations.
const component = "lock"

// migrations are the lock tables' history, oldest first. A released
// migration is never edited; changes append a new one.
//
// One row per lock name and scheduler name, never deleted, so that the
// token keeps growing across releases and restarts. Instants are BIGINT
// Unix nanoseconds of the database clock.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "lease locks of plain functions",
		Tables: []sqlstore.Table{{
			Name: "lock_leases",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"lock_name {key} NOT NULL",
				// token counts the acquisitions of the lock: the fencing
				// token of the current or last holder.
				"token BIGINT NOT NULL",
				// holder says who took it (host and process), for people.
				"holder {key} NOT NULL",
				"acquired_time BIGINT NOT NULL",
				// locked_until is when the lease lapses; the lock is free
				// once the database clock reaches it.
				"locked_until BIGINT NOT NULL",
			},
			Primary: "sched_name, lock_name",
		}},
	}}
}

// queries are the lock's statements, rendered once for the store's
// dialect.
type queries struct {
	acquire, acquired, insert, renew, release, holder string
}

func renderQueries(st *sqlstore.Store) queries {
	return queries{
		// Takes a lapsed lease. Under READ COMMITTED a concurrent UPDATE
		// waits for the row and re-checks the condition on the new
		// version, so only one of two racing acquirers matches.
		acquire: st.SQL(`UPDATE {p}lock_leases
			SET token = token + 1, holder = ?, acquired_time = {now}, locked_until = {now} + ?
			WHERE sched_name = ? AND lock_name = ? AND locked_until <= {now}`),
		acquired: st.SQL(`SELECT token, acquired_time FROM {p}lock_leases
			WHERE sched_name = ? AND lock_name = ?`),
		// The first acquisition of a name; a unique violation means
		// another process inserted it first.
		insert: st.SQL(`INSERT INTO {p}lock_leases (sched_name, lock_name, token, holder, acquired_time, locked_until)
			VALUES (?, ?, 1, ?, {now}, {now} + ?)`),
		// Extends a lease that has not lapsed.
		renew: st.SQL(`UPDATE {p}lock_leases SET locked_until = {now} + ?
			WHERE sched_name = ? AND lock_name = ? AND token = ? AND locked_until > {now}`),
		// Ends a lease that has not lapsed, but not before AtLeastFor
		// after its acquisition.
		release: st.SQL(`UPDATE {p}lock_leases
			SET locked_until = CASE WHEN acquired_time + ? > {now} THEN acquired_time + ? ELSE {now} END
			WHERE sched_name = ? AND lock_name = ? AND token = ? AND locked_until > {now}`),
		holder: st.SQL(`SELECT holder, token, locked_until FROM {p}lock_leases
			WHERE sched_name = ? AND lock_name = ?`),
	}
}
