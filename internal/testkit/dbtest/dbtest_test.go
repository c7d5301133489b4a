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

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
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

// TestMySQLURL runs with CHIME_TEST_MYSQL_DSN in both forms it takes: the
// mysql:// URL chime server takes, and a go-sql-driver DSN.
func TestMySQLURL(t *testing.T) {
	env := os.Getenv(dbtest.MySQLEnv)
	if env == "" {
		dbtest.MySQLURL(t) // skips, or fails under CI=true
		return
	}
	server := serverOf(t, env)
	forms := map[string]string{
		"URL": (&url.URL{Scheme: "mysql", User: url.UserPassword(server.User, server.Passwd), Host: server.Addr, Path: "/test"}).String(),
		"DSN": server.FormatDSN(),
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			t.Setenv(dbtest.MySQLEnv, form)
			var dbName string
			t.Run("Create", func(t *testing.T) {
				u := dbtest.MySQLURL(t)
				cfg := serverOf(t, u)
				dbName = cfg.DBName
				if !strings.HasPrefix(dbName, "chime_") {
					t.Errorf("database name = %q, want chime_…", dbName)
				}
				db := openMySQL(t, cfg)
				if _, err := db.ExecContext(t.Context(), "CREATE TABLE "+dbName+".t (id int)"); err != nil {
					t.Fatalf("CREATE TABLE in the test database: %v", err)
				}
			})
			if dbName == "" {
				return
			}
			var n int
			err := openMySQL(t, server).QueryRowContext(t.Context(), "SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?", dbName).Scan(&n)
			if err != nil {
				t.Fatalf("counting databases: %v", err)
			}
			if n != 0 {
				t.Errorf("database %s still exists after the test", dbName)
			}
		})
	}
}

// serverOf parses a mysql://user:password@host:port/name URL (TCP only, as
// MySQLURL returns for a TCP server) or a go-sql-driver DSN.
func serverOf(t *testing.T, v string) *mysql.Config {
	t.Helper()
	if !strings.HasPrefix(v, "mysql://") {
		cfg, err := mysql.ParseDSN(v)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	u, err := url.Parse(v)
	if err != nil {
		t.Fatalf("MySQLURL = %q: %v", v, err)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr = "tcp", u.Host
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	return cfg
}

func openMySQL(t *testing.T, cfg *mysql.Config) *sql.DB {
	t.Helper()
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
