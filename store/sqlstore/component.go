package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// This file is what other parts of chime (the server's history, its users)
// need to keep their own tables on the store's database: a versioned
// migration of their own, and SQL rendered for the store's dialect.

var (
	validComponent = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	validName      = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
)

// MigrateComponent brings a component's own tables to the last of its
// migrations, on the store's database and under its table prefix. It is
// safe to run from many processes at once: it takes the lock the store's
// own [Store.Migrate] takes (a transaction-scoped advisory lock on
// PostgreSQL, BEGIN IMMEDIATE on SQLite, GET_LOCK on MySQL) and applies
// each missing migration once, recording it in the table
// {prefix}{component}_schema_migrations. On PostgreSQL and SQLite each
// migration applies entirely or not at all; on MySQL, whose DDL commits by
// itself, a migration interrupted halfway runs again on the next call (see
// [Migration.Statements]).
//
// component names the component: 1 to 32 of a-z, 0-9 and _. Each table and
// index name must start with component and an underscore, so that
// components cannot collide with each other (the store's own tables are
// named jobs, triggers and so on). migrations are oldest first, with
// positive, increasing versions; a migration is never edited once
// released. A bad component name or migration list is reported before
// anything is changed.
func (s *Store) MigrateComponent(ctx context.Context, component string, migrations []Migration) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	if err := validateComponent(component, migrations); err != nil {
		return fmt.Errorf("sqlstore: MigrateComponent: %w", err)
	}
	sc := schema{component: component, table: component + "_schema_migrations", list: migrations}
	if err := s.migrateSchema(ctx, sc); err != nil {
		return fmt.Errorf("sqlstore: migrating component %q on %s (tables %s%s_*): %w",
			component, s.d.name, s.prefix, component, err)
	}
	return nil
}

// validateComponent checks a component's name and migrations.
func validateComponent(component string, migrations []Migration) error {
	if !validComponent.MatchString(component) {
		return fmt.Errorf("component name %q: want 1 to 32 of a-z, 0-9 and _", component)
	}
	if len(migrations) == 0 {
		return errors.New("no migrations")
	}
	own := component + "_"
	prev := 0
	for i, m := range migrations {
		switch {
		case m.Version <= prev:
			return fmt.Errorf("migrations[%d]: Version %d: want versions positive and increasing", i, m.Version)
		case m.Description == "" || len(m.Description) > 200:
			return fmt.Errorf("migrations[%d] (version %d): Description is %d bytes long, want 1 to 200",
				i, m.Version, len(m.Description))
		case len(m.Tables) == 0 && len(m.Statements) == 0 && len(m.Reindex) == 0:
			return fmt.Errorf("migrations[%d] (version %d): no Tables, no Reindex and no Statements", i, m.Version)
		}
		prev = m.Version
		if err := validateReindex(i, m, own); err != nil {
			return err
		}
		for j, t := range m.Tables {
			if !validName.MatchString(t.Name) || !strings.HasPrefix(t.Name, own) {
				return fmt.Errorf("migrations[%d] (version %d): Tables[%d].Name %q: want a-z, 0-9 and _ starting with %q",
					i, m.Version, j, t.Name, own)
			}
			if t.Name == own+"schema_migrations" {
				return fmt.Errorf("migrations[%d] (version %d): Tables[%d].Name %q is the bookkeeping table's", i, m.Version, j, t.Name)
			}
			if len(t.Columns) == 0 || t.Primary == "" {
				return fmt.Errorf("migrations[%d] (version %d): table %s: want Columns and a Primary key", i, m.Version, t.Name)
			}
			for k, ix := range t.Indexes {
				if !validName.MatchString(ix.Name) || !strings.HasPrefix(ix.Name, own) || ix.Cols == "" {
					return fmt.Errorf("migrations[%d] (version %d): table %s: Indexes[%d] %q: want a name of a-z, 0-9 and _ starting with %q, and Cols",
						i, m.Version, t.Name, k, ix.Name, own)
				}
			}
		}
	}
	return nil
}

// validateReindex checks that a component's migration reindexes only
// the component's tables, with index names of its own.
func validateReindex(i int, m Migration, own string) error {
	for j, r := range m.Reindex {
		if !validName.MatchString(r.Table) || !strings.HasPrefix(r.Table, own) {
			return fmt.Errorf("migrations[%d] (version %d): Reindex[%d].Table %q: want a-z, 0-9 and _ starting with %q",
				i, m.Version, j, r.Table, own)
		}
		names := slices.Clone(r.Drop)
		for _, ix := range r.Add {
			if ix.Cols == "" {
				return fmt.Errorf("migrations[%d] (version %d): Reindex[%d]: index %q has no Cols", i, m.Version, j, ix.Name)
			}
			names = append(names, ix.Name)
		}
		for _, name := range names {
			if !validName.MatchString(name) || !strings.HasPrefix(name, own) {
				return fmt.Errorf("migrations[%d] (version %d): Reindex[%d]: index %q: want a name of a-z, 0-9 and _ starting with %q",
					i, m.Version, j, name, own)
			}
		}
	}
	return nil
}

// SQL renders a statement for the store's dialect and table prefix, for
// components that keep their own tables on the store's database (see
// [Store.MigrateComponent]). Write one SQL text with these tokens:
//
//	{p}       the table prefix ([Store.TablePrefix])
//	{now}     the database clock, in Unix nanoseconds (a BIGINT expression)
//	{share}   a shared row lock on the rows a SELECT returns
//	{update}  an exclusive row lock on the rows a SELECT returns
//	{skip}    an exclusive row lock that skips rows other transactions hold
//	{intdiv}  the integer division operator (/, or DIV on MySQL, whose /
//	          gives a decimal)
//	?         a bind parameter, rewritten to $1, $2, … on PostgreSQL
//
// The lock clauses are empty on SQLite, whose write transactions hold the
// database's write lock. Every ? is a parameter, even inside a string
// literal: pass literals containing ? as parameters. Rendering is not free:
// render each statement once and keep the text.
func (s *Store) SQL(q string) string { return s.d.render(s.prefix, q) }

// InsertIgnore returns the clause that, appended to an INSERT into a table
// whose primary key is keyCols, leaves alone the rows whose key is taken
// (ON CONFLICT … DO NOTHING, or on MySQL an ON DUPLICATE KEY UPDATE of
// anyCol to itself, which counts no affected row), so that a component
// writes its statements without asking which database it talks to.
func (s *Store) InsertIgnore(keyCols, anyCol string) string { return s.d.insertIgnore(keyCols, anyCol) }

// Vacuum has PostgreSQL vacuum one of a component's tables, named
// without the prefix, now. It is for a queue: a table whose rows live
// seconds, thousands deleted a second. Autovacuum visits a database at
// most once per autovacuum_naptime (a minute by default), and meanwhile
// such a table grows with the dead rows PostgreSQL cannot reuse until a
// vacuum (in E1 the runs' table went from 350 to 10,000 pages in a
// minute), and every read by one of its indexes walks them. A table the
// user may not vacuum is skipped with a warning of PostgreSQL's, not an
// error. It does nothing on the other databases: InnoDB purges deleted
// rows by itself, and SQLite reuses their pages.
func (s *Store) Vacuum(ctx context.Context, name string) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	if !validName.MatchString(name) {
		return fmt.Errorf("sqlstore: Vacuum: table name %q: want 1 to 64 of a-z, 0-9 and _", name)
	}
	if s.d.name != Postgres {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, "VACUUM "+s.prefix+name); err != nil {
		return fmt.Errorf("sqlstore: vacuuming %s%s: %w", s.prefix, name, err)
	}
	return nil
}

// Placeholders returns n comma-separated bind parameters, "?, ?, ?", for
// an IN list of a component's statement.
func Placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// Rows returns row, a parenthesized list of bind parameters, n times,
// comma-separated, for the VALUES of a multi-row INSERT.
func Rows(row string, n int) string {
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// SingleWriter reports whether the database takes one writing transaction
// at a time (SQLite, whose write lock is the database's), so that a
// component sends its writes one after the other rather than at once.
func (s *Store) SingleWriter() bool { return s.d.name == SQLite }

// WritableCTEs reports whether the database runs UPDATE … RETURNING
// inside a WITH clause (PostgreSQL), so that a component may do in one
// statement what takes a transaction elsewhere.
func (s *Store) WritableCTEs() bool { return s.d.name == Postgres }

// Arrays reports whether statements pass rows of values as one array a
// column, read back with [Unnest] (PostgreSQL): a statement whose text is
// the same whatever the number of rows, with a few arguments instead of
// one a value.
func (s *Store) Arrays() bool { return s.d.name == Postgres }

// In renders "col IN (?, …)" for the values, or on PostgreSQL
// "col = ANY(CAST(? AS TEXT[]))" with one array of them (see [Store.Arrays]),
// and appends its arguments to args.
func (s *Store) In(col string, values []string, args []any) (string, []any) {
	return s.d.in(col, values, args)
}

// Returning reports whether the database answers an INSERT, UPDATE or
// DELETE with the rows it wrote (RETURNING: PostgreSQL and SQLite), so
// that a component may write and read back what it wrote in one
// statement.
func (s *Store) Returning() bool { return s.d.name != MySQL }

// BeginTx starts a transaction on the store's database at READ COMMITTED,
// as the store's own are, whatever the dialect's default (MySQL's is
// REPEATABLE READ), so that a component's transactions see what other
// nodes committed and lock as the store's do.
func (s *Store) BeginTx(ctx context.Context) (*sql.Tx, error) {
	if s.d.name == MySQL {
		return s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	}
	return s.db.BeginTx(ctx, nil)
}

// IsUniqueViolation reports whether err, from a statement on the store's
// database, is a unique or primary key violation.
func (s *Store) IsUniqueViolation(err error) bool {
	return err != nil && s.d.classify(err).unique
}

// TablePrefix returns the prefix of the store's table names
// ([Options.TablePrefix]).
func (s *Store) TablePrefix() string { return s.prefix }

// SchedulerName returns the store's scheduler name
// ([Options.SchedulerName]). A component's rows should carry it, as the
// store's do, so that several schedulers can share one database.
func (s *Store) SchedulerName() string { return s.sched }
