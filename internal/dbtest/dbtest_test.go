package dbtest_test

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/chime-scheduler/chime/internal/dbtest"
)

func TestSQLiteURL(t *testing.T) {
	t.Parallel()
	u := dbtest.SQLiteURL(t)
	path, ok := strings.CutPrefix(u, "sqlite:")
	if !ok || !filepath.IsAbs(path) {
		t.Fatalf("SQLiteURL = %q, want sqlite: and an absolute path", u)
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		t.Errorf("directory of %s: %v", path, err)
	}
	if u == dbtest.SQLiteURL(t) {
		t.Errorf("two calls returned the same URL %s", u)
	}
}

func TestPostgresURL(t *testing.T) {
	t.Parallel()
	var schema string
	t.Run("Create", func(t *testing.T) {
		u := dbtest.PostgresURL(t)
		conn, err := pgx.Connect(t.Context(), u)
		if err != nil {
			t.Fatalf("connecting to %s: %v", u, err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(t.Context(), "SELECT current_schema()").Scan(&schema); err != nil {
			t.Fatalf("current_schema: %v", err)
		}
		if !strings.HasPrefix(schema, "chime_") {
			t.Errorf("current_schema() = %q, want chime_…", schema)
		}
		if _, err := conn.Exec(t.Context(), "CREATE TABLE t (id int)"); err != nil {
			t.Fatalf("CREATE TABLE in the test schema: %v", err)
		}
	})
	if schema == "" {
		return // skipped or failed
	}
	conn, err := pgx.Connect(t.Context(), os.Getenv(dbtest.PostgresEnv))
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n); err != nil {
		t.Fatalf("counting schemas: %v", err)
	}
	if n != 0 {
		t.Errorf("schema %s still exists after the test", schema)
	}
}

func TestMySQLURL(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("Create", func(t *testing.T) {
		u := dbtest.MySQLURL(t)
		parsed, err := url.Parse(u)
		if err != nil || parsed.Scheme != "mysql" {
			t.Fatalf("MySQLURL = %q (%v), want a mysql:// URL", u, err)
		}
		name = strings.TrimPrefix(parsed.Path, "/")
		if !strings.HasPrefix(name, "chime_") {
			t.Errorf("database name = %q, want chime_…", name)
		}
		db := openMySQL(t)
		if _, err := db.ExecContext(t.Context(), "CREATE TABLE "+name+".t (id int)"); err != nil {
			t.Fatalf("CREATE TABLE in the test database: %v", err)
		}
	})
	if name == "" {
		return
	}
	db := openMySQL(t)
	var n int
	err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?", name).Scan(&n)
	if err != nil {
		t.Fatalf("counting databases: %v", err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after the test", name)
	}
}

func openMySQL(t *testing.T) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(os.Getenv(dbtest.MySQLEnv))
	if err != nil {
		t.Fatal(err)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestDatabases(t *testing.T) {
	t.Parallel()
	var names []string
	for _, db := range dbtest.Databases() {
		names = append(names, db.Name+"/"+db.Dialect)
	}
	if got, want := strings.Join(names, " "), "SQLite/sqlite Postgres/postgres MySQL/mysql"; got != want {
		t.Errorf("Databases = %s, want %s", got, want)
	}
}
