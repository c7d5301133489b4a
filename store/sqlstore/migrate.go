package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// SchemaVersion is the latest schema version: the number of the last
// migration. Open and OpenDB migrate every database to it.
const SchemaVersion = 7

// Migration is one versioned step of a schema: the store's own, or a
// component's (see [Store.MigrateComponent]). A migration is never edited
// once released; changes append a new one with the next version. Tables
// are created first, then Statements run in order.
type Migration struct {
	// Version numbers the step: positive, and increasing along the list.
	Version int
	// Description says what the step adds, in up to 200 bytes. It is
	// recorded with the version.
	Description string
	// Tables are created, with their indexes, if they do not exist.
	Tables []Table
	// Reindex replaces secondary indexes of tables that exist, after the
	// tables are created and before Statements run.
	Reindex []Reindex
	// Statements are further statements (ALTER TABLE, backfills…) run
	// after the tables are created and reindexed. They are rendered like [Store.SQL]
	// ({p} the table prefix, {now} the database clock) and may also use
	// the column type tokens of [Table]. On MySQL, whose DDL commits by
	// itself, a migration interrupted halfway runs again from its first
	// statement on the next start, so its statements must be idempotent
	// there.
	Statements []string
}

// migrations returns the store's schema history, oldest first. Migrations
// only add, so an older binary keeps working on a newer schema during a
// rolling upgrade.
func migrations() []Migration {
	return []Migration{
		{Version: 1, Description: "jobs, triggers, calendars, paused groups, executions and nodes", Tables: schemaV1()},
		// One statement per migration: MySQL commits each ALTER TABLE by
		// itself, so a migration of two could stop halfway and fail on
		// its first statement when run again; SQLite adds one column per
		// ALTER TABLE.
		{Version: 2, Description: "the metadata of jobs", Statements: []string{
			"ALTER TABLE {p}jobs ADD COLUMN job_meta {json}",
		}},
		{Version: 3, Description: "the origin of triggers", Statements: []string{
			// '' is a schedule's origin: the rows stored before are.
			"ALTER TABLE {p}triggers ADD COLUMN origin VARCHAR(16) NOT NULL DEFAULT ''",
		}},
		{Version: 4, Description: "the metadata of triggers", Statements: []string{
			"ALTER TABLE {p}triggers ADD COLUMN trigger_meta {json}",
		}},
		{Version: 5, Description: "indexes of executions that completing one does not change", Reindex: []Reindex{{
			Table: "executions",
			// Completing an execution changes its state, error and
			// finished time. With none of them in an index (a partial
			// index's predicate counts too) PostgreSQL completes it with
			// a HOT update, which writes no index entry, and InnoDB leaves
			// every secondary index alone. Running executions are found
			// by node (recovery: node_id; RECOVERABLE ones have node_id
			// '') and by job (busy checks), then filtered on state.
			Drop: []string{"executions_state", "executions_job", "executions_node"},
			Add: []Index{
				{Name: "executions_by_job", Cols: "job_group, job_name, sched_name"},
				{Name: "executions_by_node", Cols: "node_id, sched_name, epoch"},
			},
			// Room in every page for the completed version of the rows
			// inserted there, so that the HOT update finds it.
			FillFactor: 50,
		}}},
		{Version: 6, Description: "the re-arm delay of fixed-delay triggers", Statements: []string{
			// 0 is every other trigger's: the rows stored before are.
			"ALTER TABLE {p}triggers ADD COLUMN rearm_delay_ms BIGINT NOT NULL DEFAULT 0",
		}},
		{Version: 7, Description: "jobs by type, for the claims of a node that leaves some types alone", Reindex: []Reindex{{
			Table: "jobs",
			// A node with Config.ExcludeJobTypes (a chime server without
			// shell jobs, the default) claims triggers and recoverable
			// executions whose job has none of those types. Without this
			// index PostgreSQL read the whole jobs table at every claim
			// to find the (usually no) jobs of those types: 3.7 ms
			// instead of 0.3 ms for a claim of 500 among 50,000 jobs.
			Add: []Index{{Name: "jobs_type", Cols: "job_type, sched_name"}},
		}}},
	}
}

// Reindex replaces secondary indexes of one table in a [Migration].
type Reindex struct {
	// Table is the table's name without the table prefix.
	Table string
	// Drop names the indexes to drop, without the table prefix; those
	// that do not exist are skipped.
	Drop []string
	// Add are the indexes to create; those that exist are skipped.
	Add []Index
	// FillFactor, when not zero, is the percentage of each new page of
	// the table that inserts fill on PostgreSQL, leaving the rest for
	// updated row versions; other databases ignore it.
	FillFactor int
}

// Table is a table definition, rendered per dialect by the migrator and
// created if it does not exist.
//
// Column definitions are SQL with these type tokens, which each dialect
// replaces:
//
//	{key}   names and keys up to 200 characters, compared byte-wise:
//	        VARCHAR(200) COLLATE "C" on PostgreSQL, VARCHAR(200) with the
//	        table's binary NO PAD collation on MySQL, TEXT on SQLite
//	{text}  long text: TEXT, or LONGTEXT on MySQL
//	{json}  JSON text kept byte for byte: JSON on PostgreSQL (not JSONB),
//	        LONGTEXT on MySQL, TEXT on SQLite
//	{bool}  BOOLEAN
//
// BIGINT, INTEGER and VARCHAR(n) are the same everywhere; instants are best
// kept as BIGINT Unix nanoseconds. Indexes become CREATE INDEX IF NOT
// EXISTS statements, or KEY clauses of the CREATE TABLE on MySQL (whose
// CREATE INDEX has no IF NOT EXISTS); MySQL tables are InnoDB, utf8mb4,
// binary NO PAD collation (see convertCollation).
//
// The store's own tables follow a rule worth copying: primary keys start
// with sched_name, and secondary indexes start with the column their
// queries select by and put sched_name after it, so that no secondary index
// looks as good as the primary key to a planner without statistics
// (PostgreSQL before its first ANALYZE of a new table otherwise picks any
// index starting with sched_name for a primary key lookup, and filters).
type Table struct {
	// Name is the table's name without the table prefix.
	Name string
	// Columns are the column definitions, with type tokens.
	Columns []string
	// Primary lists the primary key's columns, comma-separated.
	Primary string
	// Indexes are the secondary indexes.
	Indexes []Index
}

// Index is a secondary index of a [Table].
type Index struct {
	// Name is the index's name without the table prefix. PostgreSQL and
	// SQLite index names share one namespace per schema, so it should
	// start with its table's name.
	Name string
	// Unique makes it a unique index.
	Unique bool
	// Cols lists its columns, comma-separated, each optionally followed
	// by DESC.
	Cols string
}

// schemaV1 is the first schema. Every row carries sched_name and every
// primary key starts with it. Times are BIGINT Unix nanoseconds (NULL for
// none), durations BIGINT nanoseconds, and data JSON text kept byte for
// byte.
func schemaV1() []Table {
	return []Table{
		{
			Name: "jobs",
			Columns: []string{
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
			Primary: "sched_name, job_group, job_name",
		},
		{
			Name: "triggers",
			Columns: []string{
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
			Primary: "sched_name, trigger_group, trigger_name",
			Indexes: []Index{
				// Ordered like the claiming query, so that it reads (and locks) no
				// more rows than it claims.
				{Name: "triggers_claim", Cols: "state, sched_name, next_fire_time, priority DESC, trigger_group, trigger_name"},
				{Name: "triggers_job", Cols: "job_group, job_name, sched_name"},
				{Name: "triggers_calendar", Cols: "calendar_name, sched_name"},
			},
		},
		{
			Name: "calendars",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"calendar_name {key} NOT NULL",
				"calendar_data {json}",
				"version BIGINT NOT NULL",
			},
			Primary: "sched_name, calendar_name",
		},
		{
			Name: "paused_groups",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"kind VARCHAR(8) NOT NULL",  // TRIGGER, JOB or ALL
				"group_name {key} NOT NULL", // '' for ALL
				// Rows are created on demand and never deleted: they are the
				// lock points that serialize pausing and resuming with
				// inserting triggers (see TriggersPause). Only the rows with
				// paused set are recorded pauses.
				"paused {bool} NOT NULL",
			},
			Primary: "sched_name, kind, group_name",
		},
		{
			Name: "executions",
			Columns: []string{
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
			Primary: "sched_name, id",
			Indexes: []Index{
				// The key that makes a second firing of one instant impossible.
				{Name: "executions_fire_key", Unique: true, Cols: "trigger_group, trigger_name, scheduled_time, sched_name"},
				{Name: "executions_state", Cols: "state, sched_name, scheduled_time"},
				{Name: "executions_job", Cols: "job_group, job_name, sched_name, state"},
				{Name: "executions_node", Cols: "node_id, sched_name, state"},
			},
		},
		{
			Name: "nodes",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"node_id {key} NOT NULL",
				"epoch BIGINT NOT NULL",
				"last_checkin BIGINT NOT NULL",
				"dead {bool} NOT NULL",
				"registered {bool} NOT NULL",
			},
			Primary: "sched_name, node_id",
		},
	}
}

// ddl renders the statements that create the tables of a migration; each
// is idempotent (IF NOT EXISTS).
func (d *dialect) ddl(prefix string, tables []Table) []string {
	var out []string
	for _, t := range tables {
		var b strings.Builder
		b.WriteString("CREATE TABLE IF NOT EXISTS " + prefix + t.Name + " (\n")
		for _, c := range t.Columns {
			b.WriteString("\t" + d.ddlTypes.Replace(c) + ",\n")
		}
		b.WriteString("\tPRIMARY KEY (" + t.Primary + ")")
		if d.name == MySQL {
			for _, ix := range t.Indexes {
				kind := "KEY"
				if ix.Unique {
					kind = "UNIQUE KEY"
				}
				b.WriteString(",\n\t" + kind + " " + prefix + ix.Name + " (" + ix.Cols + ")")
			}
		}
		b.WriteString("\n)" + d.ddlTypes.Replace("{opts}"))
		out = append(out, b.String())
		if d.name == MySQL {
			continue
		}
		out = append(out, createIndexes(prefix, t.Name, t.Indexes)...)
	}
	return out
}

// createIndexes renders CREATE INDEX IF NOT EXISTS statements (PostgreSQL,
// SQLite) for indexes of a table.
func createIndexes(prefix, table string, list []Index) []string {
	out := make([]string, 0, len(list))
	for _, ix := range list {
		kind := "INDEX"
		if ix.Unique {
			kind = "UNIQUE INDEX"
		}
		out = append(out, "CREATE "+kind+" IF NOT EXISTS "+prefix+ix.Name+" ON "+prefix+table+" ("+ix.Cols+")")
	}
	return out
}

// reindex renders the statements of a migration's Reindex. PostgreSQL and
// SQLite drop and create each index with IF [NOT] EXISTS, in the
// migration's transaction. MySQL, whose DDL commits by itself, gets one
// ALTER TABLE per table, which InnoDB applies entirely or not at all,
// listing only the indexes to drop that exist and those to add that do
// not (MySQL 8 has no IF [NOT] EXISTS for indexes): run again after it
// committed, it has nothing left to do.
func (s *Store) reindex(ctx context.Context, db execQuerier, list []Reindex) ([]string, error) {
	var out []string
	for _, r := range list {
		table := s.prefix + r.Table
		if s.d.name != MySQL {
			for _, name := range r.Drop {
				out = append(out, "DROP INDEX IF EXISTS "+s.prefix+name)
			}
			out = append(out, createIndexes(s.prefix, r.Table, r.Add)...)
			if r.FillFactor != 0 && s.d.name == Postgres {
				out = append(out, fmt.Sprintf("ALTER TABLE %s SET (fillfactor = %d)", table, r.FillFactor))
			}
			continue
		}
		exists, err := mysqlIndexes(ctx, db, table)
		if err != nil {
			return nil, err
		}
		var clauses []string
		for _, name := range r.Drop {
			if exists[s.prefix+name] {
				clauses = append(clauses, "DROP INDEX "+s.prefix+name)
			}
		}
		for _, ix := range r.Add {
			if exists[s.prefix+ix.Name] {
				continue
			}
			kind := "ADD INDEX "
			if ix.Unique {
				kind = "ADD UNIQUE INDEX "
			}
			clauses = append(clauses, kind+s.prefix+ix.Name+" ("+ix.Cols+")")
		}
		if len(clauses) > 0 {
			out = append(out, "ALTER TABLE "+table+" "+strings.Join(clauses, ", "))
		}
	}
	return out, nil
}

// mysqlIndexes returns the names of a MySQL table's indexes.
func mysqlIndexes(ctx context.Context, db execQuerier, table string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`, table)
	if err != nil {
		return nil, fmt.Errorf("reading the indexes of %s: %w", table, err)
	}
	defer rows.Close()
	out := make(map[string]bool)
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("reading the indexes of %s: %w", table, err)
		}
		out[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the indexes of %s: %w", table, err)
	}
	return out, nil
}

// statements renders a migration's extra statements: column type tokens,
// then the tokens of [Store.SQL].
func (d *dialect) statements(prefix string, stmts []string) []string {
	out := make([]string, len(stmts))
	for i, stmt := range stmts {
		out[i] = d.render(prefix, d.ddlTypes.Replace(stmt))
	}
	return out
}

// migrationsTable is the bookkeeping table, named without the prefix: one
// row per applied version.
func (d *dialect) migrationsTable(prefix, table string) string {
	return "CREATE TABLE IF NOT EXISTS " + prefix + table + " (\n" +
		"\tversion INTEGER NOT NULL PRIMARY KEY,\n" +
		"\tdescription VARCHAR(200) NOT NULL,\n" +
		"\tapplied_at BIGINT NOT NULL\n)" + d.ddlTypes.Replace("{opts}")
}

// schema is one migrated schema: the store's own or a component's.
type schema struct {
	// component is empty for the store's own schema.
	component string
	// table is the bookkeeping table, without the prefix.
	table string
	list  []Migration
}

// storeSchema is the store's own schema, kept in {prefix}schema_migrations.
func storeSchema() schema {
	return schema{table: "schema_migrations", list: migrations()}
}

// describe names the schema in errors and logs.
func (sc schema) describe() string {
	if sc.component == "" {
		return "store"
	}
	return "component " + strconv.Quote(sc.component)
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
	if err := s.migrateSchema(ctx, storeSchema()); err != nil {
		return fmt.Errorf("migrating the %s schema (tables %s*): %w", s.d.name, s.prefix, err)
	}
	return nil
}

// migrateSchema applies the missing migrations of sc under the migration
// lock. Every schema of one table prefix shares that lock: migrations are
// rare, and one lock lets a component's migration rely on the store's
// tables being complete.
func (s *Store) migrateSchema(ctx context.Context, sc schema) error {
	if s.d.name == MySQL {
		return s.migrateMySQL(ctx, sc)
	}
	return s.write(ctx, "migrating", func(tx *txn) error {
		if s.d.name == Postgres {
			if err := s.lockMigrationsPostgres(tx); err != nil {
				return err
			}
		}
		return s.migrateOn(ctx, tx.Tx, sc)
	})
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
func (s *Store) migrateMySQL(ctx context.Context, sc schema) error {
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
	if err := s.migrateOn(ctx, conn, sc); err != nil {
		return err
	}
	return s.convertCollation(ctx, conn, sc)
}

// noPadCollation returns the binary NO PAD collation of utf8mb4 the MySQL
// server has (MySQL 8's or MariaDB's), or utf8mb4_bin when it has neither.
func noPadCollation(ctx context.Context, db *sql.DB) (string, error) {
	rows, err := db.QueryContext(ctx, `SELECT COLLATION_NAME FROM information_schema.COLLATIONS
		WHERE COLLATION_NAME IN (?, ?)`, mysqlNoPadBinary, mariaNoPadBinary)
	if err != nil {
		return "", fmt.Errorf("reading the MySQL server's collations: %w", err)
	}
	defer rows.Close()
	found := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return "", err
		}
		found[name] = true
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	for _, c := range []string{mysqlNoPadBinary, mariaNoPadBinary} {
		if found[c] {
			return c, nil
		}
	}
	return padBinary, nil
}

// convertCollation converts the tables of sc that an older version
// created with the PAD SPACE utf8mb4_bin collation to the store's NO PAD
// one, so that keys differing only in trailing spaces are distinct. It
// runs under the migration lock; a table already converted is left alone,
// and converting can only make keys distinct, never collide.
func (s *Store) convertCollation(ctx context.Context, conn *sql.Conn, sc schema) error {
	if s.keyCollation == padBinary {
		return nil
	}
	ours := map[string]bool{s.prefix + sc.table: true}
	for _, m := range sc.list {
		for _, t := range m.Tables {
			ours[s.prefix+t.Name] = true
		}
	}
	// One query finds every padding table of the database; most starts
	// find none.
	rows, err := conn.QueryContext(ctx, `SELECT TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_COLLATION = ?`, padBinary)
	if err != nil {
		return fmt.Errorf("reading the tables' collations: %w", err)
	}
	var padded []string
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			rows.Close()
			return fmt.Errorf("reading the tables' collations: %w", err)
		}
		if ours[table] {
			padded = append(padded, table)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading the tables' collations: %w", err)
	}
	for _, table := range padded {
		stmt := fmt.Sprintf("ALTER TABLE %s CONVERT TO CHARACTER SET utf8mb4 COLLATE %s", table, s.keyCollation)
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("converting %s to collation %s: %w", table, s.keyCollation, err)
		}
		s.log.Info("converted a table to a NO PAD collation: keys differing in trailing spaces are now distinct",
			"table", table, "collation", s.keyCollation)
	}
	return nil
}

// execQuerier is a transaction or a connection.
type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// migrateOn applies the missing migrations of sc on db, which holds the
// lock.
func (s *Store) migrateOn(ctx context.Context, db execQuerier, sc schema) error {
	if _, err := db.ExecContext(ctx, s.d.migrationsTable(s.prefix, sc.table)); err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, "SELECT version FROM "+s.prefix+sc.table)
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
	known := 0
	if len(sc.list) > 0 {
		known = sc.list[len(sc.list)-1].Version
	}
	if latest > known {
		s.log.Warn("database schema is newer than this binary; running on it", "schema", sc.describe(),
			"schema_version", latest, "known_version", known, "table_prefix", s.prefix)
	}
	insert := s.d.render(s.prefix, "INSERT INTO {p}"+sc.table+" (version, description, applied_at) VALUES (?, ?, {now})")
	for _, m := range sc.list {
		if applied[m.Version] {
			continue
		}
		reindex, err := s.reindex(ctx, db, m.Reindex)
		if err != nil {
			return fmt.Errorf("migration %d: %w", m.Version, err)
		}
		stmts := append(s.d.ddl(s.prefix, m.Tables), reindex...)
		stmts = append(stmts, s.d.statements(s.prefix, m.Statements)...)
		for _, stmt := range stmts {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d: %w", m.Version, err)
			}
		}
		if _, err := db.ExecContext(ctx, insert, m.Version, m.Description); err != nil {
			return fmt.Errorf("migration %d: recording it: %w", m.Version, err)
		}
		s.log.Info("applied schema migration", "schema", sc.describe(), "dialect", string(s.d.name),
			"table_prefix", s.prefix, "schema_version", m.Version, "description", m.Description)
	}
	return nil
}
