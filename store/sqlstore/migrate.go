package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
)

// SchemaVersion is the latest schema version: the number of the last
// migration. Open and OpenDB migrate every database to it.
const SchemaVersion = 1

// migration is one versioned step of the schema.
type migration struct {
	version     int
	description string
	tables      []table
}

// migrations returns the schema's history, oldest first. A migration is
// never edited once released; changes append a new one. Migrations only
// add, so an older binary keeps working on a newer schema during a rolling
// upgrade.
func migrations() []migration {
	return []migration{
		{1, "jobs, triggers, calendars, paused groups, executions and nodes", schemaV1()},
	}
}

// table is a table definition, rendered per dialect. Primary keys start
// with sched_name; secondary indexes start with the column their queries
// select by and put sched_name after it, so that no secondary index looks
// as good as the primary key to a planner without statistics (PostgreSQL
// before its first ANALYZE of a new table otherwise picks any index
// starting with sched_name for a primary key lookup, and filters). Column
// types use the tokens {key} (names and keys, binary collation), {text},
// {json} and {bool}; indexes become CREATE INDEX statements, or inline KEY clauses on
// MySQL (whose CREATE INDEX has no IF NOT EXISTS).
type table struct {
	name    string // without prefix
	columns []string
	primary string
	indexes []index
}

type index struct {
	name   string // without prefix
	unique bool
	cols   string
}

// schemaV1 is the first schema. Every row carries sched_name and every
// primary key starts with it. Times are BIGINT Unix nanoseconds (NULL for
// none), durations BIGINT nanoseconds, and data JSON text kept byte for
// byte.
func schemaV1() []table {
	return []table{
		{
			name: "jobs",
			columns: []string{
				"sched_name {key} NOT NULL",
				"job_group {key} NOT NULL",
				"job_name {key} NOT NULL",
				"job_type {key} NOT NULL",
				"description {text} NOT NULL",
				"durable {bool} NOT NULL",
				"requests_recovery {bool} NOT NULL",
				"disallow_concurrent {bool} NOT NULL",
				"persist_data {bool} NOT NULL",
				"timeout_ns BIGINT NOT NULL",
				"job_data {json}",
				"version BIGINT NOT NULL",
			},
			primary: "sched_name, job_group, job_name",
		},
		{
			name: "triggers",
			columns: []string{
				"sched_name {key} NOT NULL",
				"trigger_group {key} NOT NULL",
				"trigger_name {key} NOT NULL",
				"job_group {key} NOT NULL",
				"job_name {key} NOT NULL",
				"description {text} NOT NULL",
				"priority INTEGER NOT NULL",
				"kind {key} NOT NULL",
				"schedule {json}",
				"calendar_name {key} NOT NULL",
				"misfire_instruction {key} NOT NULL",
				"trigger_data {json}",
				"start_time BIGINT",
				"end_time BIGINT",
				"next_fire_time BIGINT",
				"prev_fire_time BIGINT",
				"times_triggered BIGINT NOT NULL",
				"state VARCHAR(16) NOT NULL",
				"claimed_by {key} NOT NULL",
				"claim_epoch BIGINT NOT NULL",
				"version BIGINT NOT NULL",
			},
			primary: "sched_name, trigger_group, trigger_name",
			indexes: []index{
				// Ordered like the claiming query, so that it reads (and locks) no
				// more rows than it claims.
				{name: "triggers_claim", cols: "state, sched_name, next_fire_time, priority DESC, trigger_group, trigger_name"},
				{name: "triggers_job", cols: "job_group, job_name, sched_name"},
				{name: "triggers_calendar", cols: "calendar_name, sched_name"},
			},
		},
		{
			name: "calendars",
			columns: []string{
				"sched_name {key} NOT NULL",
				"calendar_name {key} NOT NULL",
				"calendar_data {json}",
				"version BIGINT NOT NULL",
			},
			primary: "sched_name, calendar_name",
		},
		{
			name: "paused_groups",
			columns: []string{
				"sched_name {key} NOT NULL",
				"kind VARCHAR(8) NOT NULL",  // TRIGGER, JOB or ALL
				"group_name {key} NOT NULL", // '' for ALL
				// Rows are created on demand and never deleted: they are the
				// lock points that serialize pausing and resuming with
				// inserting triggers (see TriggersPause). Only the rows with
				// paused set are recorded pauses.
				"paused {bool} NOT NULL",
			},
			primary: "sched_name, kind, group_name",
		},
		{
			name: "executions",
			columns: []string{
				"sched_name {key} NOT NULL",
				"id {key} NOT NULL",
				"trigger_group {key} NOT NULL",
				"trigger_name {key} NOT NULL",
				"job_group {key} NOT NULL",
				"job_name {key} NOT NULL",
				"scheduled_time BIGINT NOT NULL",
				"fired_time BIGINT",
				"finished_time BIGINT",
				"node_id {key} NOT NULL",
				"epoch BIGINT NOT NULL",
				"state VARCHAR(16) NOT NULL",
				"recovering {bool} NOT NULL",
				"requests_recovery {bool} NOT NULL",
				"priority INTEGER NOT NULL",
				"error_message {text} NOT NULL",
			},
			primary: "sched_name, id",
			indexes: []index{
				// The key that makes a second firing of one instant impossible.
				{name: "executions_fire_key", unique: true, cols: "trigger_group, trigger_name, scheduled_time, sched_name"},
				{name: "executions_state", cols: "state, sched_name, scheduled_time"},
				{name: "executions_job", cols: "job_group, job_name, sched_name, state"},
				{name: "executions_node", cols: "node_id, sched_name, state"},
			},
		},
		{
			name: "nodes",
			columns: []string{
				"sched_name {key} NOT NULL",
				"node_id {key} NOT NULL",
				"epoch BIGINT NOT NULL",
				"last_checkin BIGINT NOT NULL",
				"dead {bool} NOT NULL",
				"registered {bool} NOT NULL",
			},
			primary: "sched_name, node_id",
		},
	}
}

// ddl renders the statements that create the tables of a migration; each
// is idempotent (IF NOT EXISTS).
func (d *dialect) ddl(prefix string, tables []table) []string {
	var out []string
	for _, t := range tables {
		var b strings.Builder
		b.WriteString("CREATE TABLE IF NOT EXISTS " + prefix + t.name + " (\n")
		for _, c := range t.columns {
			b.WriteString("\t" + d.ddlTypes.Replace(c) + ",\n")
		}
		b.WriteString("\tPRIMARY KEY (" + t.primary + ")")
		if d.name == MySQL {
			for _, ix := range t.indexes {
				kind := "KEY"
				if ix.unique {
					kind = "UNIQUE KEY"
				}
				b.WriteString(",\n\t" + kind + " " + prefix + ix.name + " (" + ix.cols + ")")
			}
		}
		b.WriteString("\n)" + d.ddlTypes.Replace("{opts}"))
		out = append(out, b.String())
		if d.name == MySQL {
			continue
		}
		for _, ix := range t.indexes {
			kind := "INDEX"
			if ix.unique {
				kind = "UNIQUE INDEX"
			}
			out = append(out, "CREATE "+kind+" IF NOT EXISTS "+prefix+ix.name+" ON "+prefix+t.name+" ("+ix.cols+")")
		}
	}
	return out
}

// migrationsTable is the bookkeeping table: one row per applied version.
func (d *dialect) migrationsTable(prefix string) string {
	return "CREATE TABLE IF NOT EXISTS " + prefix + "schema_migrations (\n" +
		"\tversion INTEGER NOT NULL PRIMARY KEY,\n" +
		"\tdescription VARCHAR(200) NOT NULL,\n" +
		"\tapplied_at BIGINT NOT NULL\n)" + d.ddlTypes.Replace("{opts}")
}

// Migrate brings the schema to [SchemaVersion]. Open and OpenDB call it;
// it is safe to run from many processes at once. The migrations run under
// a lock: a transaction-scoped advisory lock on PostgreSQL, the SQLite
// write lock of a BEGIN IMMEDIATE transaction (both with the DDL inside the
// transaction, so a migration applies entirely or not at all), and a named
// GET_LOCK on MySQL, whose DDL commits by itself (its statements are
// idempotent, so a migration interrupted halfway is finished by the next
// start).
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	if err := s.migrate(ctx); err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	return nil
}

// migrate is Migrate with an unprefixed error.
func (s *Store) migrate(ctx context.Context) error {
	var err error
	if s.d.name == MySQL {
		err = s.migrateMySQL(ctx)
	} else {
		err = s.write(ctx, "migrating", func(tx *txn) error {
			if s.d.name == Postgres {
				if err := s.lockMigrationsPostgres(tx); err != nil {
					return err
				}
			}
			return s.migrateOn(ctx, tx.Tx)
		})
	}
	if err != nil {
		return fmt.Errorf("migrating the %s schema (tables %s*): %w", s.d.name, s.prefix, err)
	}
	return nil
}

// lockMigrationsPostgres takes an advisory lock that ends with the
// transaction, keyed on the schema and the table prefix.
func (s *Store) lockMigrationsPostgres(tx *txn) error {
	var schema sql.NullString
	if err := tx.QueryRowContext(tx.ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	if !schema.Valid {
		return errors.New("no current schema: search_path names no existing schema")
	}
	_, err := tx.ExecContext(tx.ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(schema.String, s.prefix))
	return err
}

// lockKey hashes a name into an advisory lock key.
func lockKey(parts ...string) int64 {
	h := fnv.New64a()
	h.Write([]byte("chime migrate"))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return int64(h.Sum64())
}

// migrateMySQL runs the migrations on one connection holding a named lock.
func (s *Store) migrateMySQL(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var dbName sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&dbName); err != nil {
		return err
	}
	if !dbName.Valid {
		return errors.New("no database selected: the MySQL URL must name one")
	}
	name := fmt.Sprintf("chime_migrate_%016x", uint64(lockKey(dbName.String, s.prefix)))
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 60)", name).Scan(&got); err != nil {
		return err
	}
	if !got.Valid || got.Int64 != 1 {
		return fmt.Errorf("timed out after 60s waiting for lock %s held by another migration", name)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(?)", name)
	}()
	return s.migrateOn(ctx, conn)
}

// execQuerier is a transaction or a connection.
type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// migrateOn applies the missing migrations on db, which holds the lock.
func (s *Store) migrateOn(ctx context.Context, db execQuerier) error {
	if _, err := db.ExecContext(ctx, s.d.migrationsTable(s.prefix)); err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, "SELECT version FROM "+s.prefix+"schema_migrations")
	if err != nil {
		return err
	}
	applied := make(map[int]bool)
	latest := 0
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		applied[v] = true
		latest = max(latest, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if latest > SchemaVersion {
		s.log.Warn("database schema is newer than this binary; running on it",
			"schema_version", latest, "known_version", SchemaVersion, "table_prefix", s.prefix)
	}
	insert := s.d.render(s.prefix, sqlMigrationApplied)
	for _, m := range migrations() {
		if applied[m.version] {
			continue
		}
		for _, stmt := range s.d.ddl(s.prefix, m.tables) {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d: %w", m.version, err)
			}
		}
		if _, err := db.ExecContext(ctx, insert, m.version, m.description); err != nil {
			return fmt.Errorf("migration %d: recording it: %w", m.version, err)
		}
		s.log.Info("applied schema migration", "dialect", string(s.d.name), "table_prefix", s.prefix,
			"schema_version", m.version, "description", m.description)
	}
	return nil
}
