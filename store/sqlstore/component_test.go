package sqlstore_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// notesV1 is a component's first migration: one table with a unique index.
var notesV1 = sqlstore.Migration{
	Version:     1,
	Description: "notes",
	Tables: []sqlstore.Table{{
		Name: "notes_items",
		Columns: []string{
			"sched_name {key} NOT NULL",
			"id {key} NOT NULL",
			"title {key} NOT NULL",
			"body {text} NOT NULL",
			"meta {json}",
			"done {bool} NOT NULL",
			"created BIGINT NOT NULL",
		},
		Primary: "sched_name, id",
		Indexes: []sqlstore.Index{{Name: "notes_items_title", Unique: true, Cols: "title, sched_name"}},
	}},
}

// notesV2 adds a column with a statement.
var notesV2 = sqlstore.Migration{
	Version:     2,
	Description: "note authors",
	Statements:  []string{"ALTER TABLE {p}notes_items ADD COLUMN author {key}"},
}

// versions returns the versions recorded in a bookkeeping table.
func versions(t *testing.T, s *sqlstore.Store, table string) []int {
	t.Helper()
	rows, err := s.DB().QueryContext(t.Context(), s.SQL("SELECT version FROM {p}"+table+" ORDER BY version"))
	if err != nil {
		t.Fatalf("reading %s: %v", table, err)
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestMigrateComponentConcurrently starts a component on eight stores at
// once on one database: every call succeeds, each migration is applied
// once, and the component's table works with SQL rendered by the store.
func TestMigrateComponentConcurrently(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			const n = 8
			stores := make([]*sqlstore.Store, n)
			for i := range stores {
				stores[i] = open(t, url, &sqlstore.Options{MaxOpenConns: 2, SchedulerName: "s"})
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i, s := range stores {
				wg.Go(func() {
					errs[i] = s.MigrateComponent(t.Context(), "notes", []sqlstore.Migration{notesV1, notesV2})
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("MigrateComponent #%d: %v", i, err)
				}
			}
			if t.Failed() {
				return
			}
			s := stores[0]
			if got := versions(t, s, "notes_schema_migrations"); !slices.Equal(got, []int{1, 2}) {
				t.Errorf("notes_schema_migrations versions = %v, want [1 2]", got)
			}
			var want []int
			for v := 1; v <= sqlstore.SchemaVersion; v++ {
				want = append(want, v)
			}
			if got := versions(t, s, "schema_migrations"); !slices.Equal(got, want) {
				t.Errorf("the store's schema_migrations versions = %v, want %v", got, want)
			}
			insert := s.SQL("INSERT INTO {p}notes_items (sched_name, id, title, body, meta, done, created, author) VALUES (?, ?, ?, ?, ?, ?, {now}, ?)")
			if _, err := s.DB().ExecContext(t.Context(), insert, s.SchedulerName(), "1", "first", "text", `{"a": 1}`, true, "ann"); err != nil {
				t.Fatalf("inserting a note: %v", err)
			}
			_, err := s.DB().ExecContext(t.Context(), insert, s.SchedulerName(), "2", "first", "again", nil, false, "bob")
			if !s.IsUniqueViolation(err) {
				t.Errorf("inserting a second note titled %q: error %v, want a unique violation", "first", err)
			}
			var author string
			var created int64
			err = s.DB().QueryRowContext(t.Context(), s.SQL("SELECT author, created FROM {p}notes_items WHERE sched_name = ? AND id = ?"),
				s.SchedulerName(), "1").Scan(&author, &created)
			if err != nil || author != "ann" || created <= 0 {
				t.Errorf("reading the note: author %q, created %d, %v; want ann, a positive time", author, created, err)
			}
		})
	}
}

// TestMigrateComponentRerun checks that migrating again applies nothing,
// that a new migration is applied alone, and that two components keep
// their own versions.
func TestMigrateComponentRerun(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			s := open(t, db.URL(t), nil)
			ctx := t.Context()
			tasksV1 := sqlstore.Migration{Version: 1, Description: "tasks", Tables: []sqlstore.Table{{
				Name:    "tasks_list",
				Columns: []string{"sched_name {key} NOT NULL", "id {key} NOT NULL"},
				Primary: "sched_name, id",
			}}}
			for range 2 {
				if err := s.MigrateComponent(ctx, "notes", []sqlstore.Migration{notesV1}); err != nil {
					t.Fatalf("MigrateComponent(notes, v1): %v", err)
				}
				if err := s.MigrateComponent(ctx, "tasks", []sqlstore.Migration{tasksV1}); err != nil {
					t.Fatalf("MigrateComponent(tasks, v1): %v", err)
				}
			}
			if got := versions(t, s, "notes_schema_migrations"); !slices.Equal(got, []int{1}) {
				t.Errorf("notes versions = %v, want [1]", got)
			}
			// Version 2 of notes is applied once, and only to notes. Its
			// ALTER TABLE would fail if it ran twice.
			for range 2 {
				if err := s.MigrateComponent(ctx, "notes", []sqlstore.Migration{notesV1, notesV2}); err != nil {
					t.Fatalf("MigrateComponent(notes, v1 v2): %v", err)
				}
			}
			if got := versions(t, s, "notes_schema_migrations"); !slices.Equal(got, []int{1, 2}) {
				t.Errorf("notes versions = %v, want [1 2]", got)
			}
			if got := versions(t, s, "tasks_schema_migrations"); !slices.Equal(got, []int{1}) {
				t.Errorf("tasks versions = %v, want [1]", got)
			}
			// An older binary, knowing only version 1, runs on the newer
			// schema.
			if err := s.MigrateComponent(ctx, "notes", []sqlstore.Migration{notesV1}); err != nil {
				t.Errorf("MigrateComponent(notes, v1) on version 2: %v", err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Errorf("Migrate after components: %v", err)
			}
		})
	}
}

// TestMigrateComponentBadInput checks that bad names and migration lists
// are refused, naming the problem, before anything is created.
func TestMigrateComponentBadInput(t *testing.T) {
	t.Parallel()
	s := open(t, "sqlite:"+filepath.Join(t.TempDir(), "bad.db"), nil)
	table := func(name string) []sqlstore.Table {
		return []sqlstore.Table{{Name: name, Columns: []string{"id {key} NOT NULL"}, Primary: "id"}}
	}
	tests := []struct {
		name       string
		component  string
		migrations []sqlstore.Migration
		want       string
	}{
		{"EmptyName", "", []sqlstore.Migration{notesV1}, `component name ""`},
		{"UpperCase", "Notes", []sqlstore.Migration{notesV1}, `component name "Notes"`},
		{"Dash", "my-notes", []sqlstore.Migration{notesV1}, `component name "my-notes"`},
		{"LongName", strings.Repeat("n", 33), []sqlstore.Migration{notesV1}, "component name"},
		{"NoMigrations", "notes", nil, "no migrations"},
		{"ZeroVersion", "notes", []sqlstore.Migration{{Version: 0, Description: "x", Tables: table("notes_x")}}, "Version 0"},
		{"DecreasingVersions", "notes", []sqlstore.Migration{notesV2, notesV1}, "Version 1"},
		{"NoDescription", "notes", []sqlstore.Migration{{Version: 1, Tables: table("notes_x")}}, "Description"},
		{"LongDescription", "notes", []sqlstore.Migration{{Version: 1, Description: strings.Repeat("d", 201), Tables: table("notes_x")}}, "Description"},
		{"Empty", "notes", []sqlstore.Migration{{Version: 1, Description: "x"}}, "no Tables, no Reindex and no Statements"},
		{"ReindexOtherTable", "notes", []sqlstore.Migration{notesV1, {Version: 2, Description: "x",
			Reindex: []sqlstore.Reindex{{Table: "jobs", Drop: []string{"notes_x"}}}}}, `Reindex[0].Table "jobs"`},
		{"ReindexOtherIndex", "notes", []sqlstore.Migration{notesV1, {Version: 2, Description: "x",
			Reindex: []sqlstore.Reindex{{Table: "notes_x", Add: []sqlstore.Index{{Name: "jobs_x", Cols: "id"}}}}}}, `index "jobs_x"`},
		{"ForeignTable", "notes", []sqlstore.Migration{{Version: 1, Description: "x", Tables: table("jobs")}}, `"jobs"`},
		{"BookkeepingTable", "notes", []sqlstore.Migration{{Version: 1, Description: "x", Tables: table("notes_schema_migrations")}}, "bookkeeping"},
		{"NoPrimary", "notes", []sqlstore.Migration{{Version: 1, Description: "x", Tables: []sqlstore.Table{{Name: "notes_x", Columns: []string{"id INTEGER"}}}}}, "Primary"},
		{"ForeignIndex", "notes", []sqlstore.Migration{{Version: 1, Description: "x", Tables: []sqlstore.Table{{
			Name: "notes_x", Columns: []string{"id INTEGER"}, Primary: "id", Indexes: []sqlstore.Index{{Name: "x_id", Cols: "id"}},
		}}}}, `"x_id"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.MigrateComponent(t.Context(), tc.component, tc.migrations)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("MigrateComponent(%q) error = %v, want it to mention %s", tc.component, err, tc.want)
			}
		})
	}
	var n int
	err := s.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%notes%'").Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("objects named like notes after refused migrations: %d, %v; want none", n, err)
	}
}

// TestMigrateComponentFailure checks that a failing statement is reported
// with the component and version, and that on the transactional dialects
// nothing of the failed migration is left.
func TestMigrateComponentFailure(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			s := open(t, db.URL(t), nil)
			bad := notesV1
			bad.Statements = []string{"ALTER TABLE {p}notes_missing ADD COLUMN x INTEGER"}
			err := s.MigrateComponent(t.Context(), "notes", []sqlstore.Migration{bad})
			if err == nil || !strings.Contains(err.Error(), `component "notes"`) || !strings.Contains(err.Error(), "migration 1") {
				t.Fatalf("MigrateComponent with a bad statement: error %v, want one naming the component and migration 1", err)
			}
			if s.Dialect() == sqlstore.MySQL {
				return // DDL commits by itself: the table stays, version 1 is not recorded
			}
			// The whole transaction rolled back, bookkeeping table included.
			for _, table := range []string{"notes_items", "notes_schema_migrations"} {
				if _, err := s.DB().ExecContext(t.Context(), s.SQL("SELECT COUNT(*) FROM {p}"+table)); err == nil {
					t.Errorf("%s exists after the migration failed", table)
				}
			}
		})
	}
}

func TestSQLRendering(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			s := open(t, db.URL(t), &sqlstore.Options{TablePrefix: "tp_", SchedulerName: "sn"})
			if s.TablePrefix() != "tp_" || s.SchedulerName() != "sn" {
				t.Errorf("TablePrefix, SchedulerName = %q, %q; want tp_, sn", s.TablePrefix(), s.SchedulerName())
			}
			q := s.SQL("SELECT COUNT(*), {now} FROM {p}jobs WHERE sched_name = ? AND job_group = ?")
			if !strings.Contains(q, "tp_jobs") || strings.Contains(q, "{") {
				t.Errorf("SQL rendered %q, want tokens replaced", q)
			}
			var n, now int64
			if err := s.DB().QueryRowContext(t.Context(), q, "sn", "g").Scan(&n, &now); err != nil || n != 0 || now <= 0 {
				t.Errorf("running %q: %d, %d, %v", q, n, now, err)
			}
			if s.IsUniqueViolation(nil) || s.IsUniqueViolation(errors.New("duplicate")) {
				t.Errorf("IsUniqueViolation is true for nil or a non-driver error")
			}
		})
	}
}

// TestComponentDialectHelpers checks the methods that let a component
// write its SQL without asking which database it talks to.
func TestComponentDialectHelpers(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			s := openNotes(t, db.URL(t))
			ctx := t.Context()
			if got, want := s.SingleWriter(), s.Dialect() == sqlstore.SQLite; got != want {
				t.Errorf("SingleWriter() = %v on %s, want %v", got, db.Name, want)
			}
			// WritableCTEs is true where, and only where, an UPDATE …
			// RETURNING runs inside WITH.
			_, err := s.DB().ExecContext(ctx, s.SQL("WITH u AS (UPDATE {p}notes_items SET title = title WHERE sched_name = ? RETURNING id) SELECT COUNT(*) FROM u"), "none")
			if ran := err == nil; ran != s.WritableCTEs() {
				t.Errorf("WritableCTEs() = %v on %s, but the statement's error is %v", s.WritableCTEs(), db.Name, err)
			}
			// Returning is true where, and only where, an UPDATE answers
			// with RETURNING.
			rows, err := s.DB().QueryContext(ctx, s.SQL("UPDATE {p}notes_items SET title = title WHERE sched_name = ? RETURNING id"), "none")
			if err == nil {
				err = rows.Close()
			}
			if ran := err == nil; ran != s.Returning() {
				t.Errorf("Returning() = %v on %s, but the statement's error is %v", s.Returning(), db.Name, err)
			}

			// InsertIgnore leaves a taken key's row as it was, counting no row.
			insert := s.SQL("INSERT INTO {p}notes_items (sched_name, id, title, body, done, created) VALUES (?, ?, ?, ?, ?, ?)" +
				s.InsertIgnore("sched_name, id", "id"))
			for i, title := range []string{"first", "second"} {
				res, err := s.DB().ExecContext(ctx, insert, s.SchedulerName(), "n1", title, "", false, 0)
				if err != nil {
					t.Fatalf("insert %d: %v", i, err)
				}
				if n, err := res.RowsAffected(); err != nil || n != int64(1-i) {
					t.Errorf("insert %d affected %d rows (%v), want %d", i, n, err, 1-i)
				}
			}
			var title string
			if err := s.DB().QueryRowContext(ctx, s.SQL("SELECT title FROM {p}notes_items WHERE id = ?"), "n1").Scan(&title); err != nil || title != "first" {
				t.Errorf("title after the ignored insert = %q (%v), want first", title, err)
			}
		})
	}
}

// TestAnalyzeOnce checks that AnalyzeOnce has PostgreSQL analyze a
// component's table it never analyzed, once, on the store's own
// goroutine, and that a call after Close is harmless.
func TestAnalyzeOnce(t *testing.T) {
	t.Parallel()
	s := openNotes(t, dbtest.PostgresURL(t))
	ctx := t.Context()
	table := s.SQL("{p}notes_items")
	// Autovacuum, which may analyze it too, would make the test pass
	// without the store.
	if _, err := s.DB().ExecContext(ctx, "ALTER TABLE "+table+" SET (autovacuum_enabled = false)"); err != nil {
		t.Fatalf("turning autovacuum off: %v", err)
	}
	analyzes := func() int64 {
		t.Helper()
		var n int64
		err := s.DB().QueryRowContext(ctx, `SELECT analyze_count FROM pg_stat_user_tables WHERE relid = $1::regclass`, table).Scan(&n)
		if err != nil {
			t.Fatalf("reading the statistics of %s: %v", table, err)
		}
		return n
	}
	if n := analyzes(); n != 0 {
		t.Fatalf("the new table was analyzed %d times before AnalyzeOnce", n)
	}
	s.AnalyzeOnce("notes_items")
	deadline := time.Now().Add(30 * time.Second)
	for analyzes() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := analyzes(); n != 1 {
		t.Fatalf("the table was analyzed %d times after AnalyzeOnce, want 1", n)
	}
	// Once per store: a second call analyzes nothing more. The counters
	// of other sessions show late, so give them a while.
	s.AnalyzeOnce("notes_items")
	time.Sleep(time.Second)
	if n := analyzes(); n != 1 {
		t.Errorf("the table was analyzed %d times after a second AnalyzeOnce, want 1", n)
	}
	// A closed store starts nothing: Close has waited for its goroutines,
	// and one started now would outlive it (and the race detector, or
	// the WaitGroup, would tell).
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s.AnalyzeOnce("notes_other")
}

// TestVacuum checks that Vacuum has PostgreSQL vacuum a component's
// table, does nothing on the other databases, and refuses a name that is
// not a table's.
func TestVacuum(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			s := openNotes(t, db.URL(t))
			ctx := t.Context()
			if err := s.Vacuum(ctx, "notes_items"); err != nil {
				t.Fatalf("Vacuum: %v", err)
			}
			if err := s.Vacuum(ctx, "notes_items; DROP TABLE x"); err == nil {
				t.Errorf("Vacuum of a bad name: no error")
			}
			if s.Dialect() != sqlstore.Postgres {
				return
			}
			table := s.SQL("{p}notes_items")
			var n int64
			deadline := time.Now().Add(30 * time.Second)
			for n == 0 && time.Now().Before(deadline) {
				err := s.DB().QueryRowContext(ctx, `SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = $1::regclass`, table).Scan(&n)
				if err != nil {
					t.Fatalf("reading the statistics of %s: %v", table, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if n != 1 {
				t.Errorf("the table was vacuumed %d times, want 1", n)
			}
		})
	}
}

// openNotes opens a store on url with the notes component's tables.
func openNotes(t *testing.T, url string) *sqlstore.Store {
	t.Helper()
	s := open(t, url, nil)
	if err := s.MigrateComponent(t.Context(), "notes", []sqlstore.Migration{notesV1}); err != nil {
		t.Fatalf("MigrateComponent: %v", err)
	}
	return s
}
