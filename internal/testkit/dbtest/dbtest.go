// Package dbtest gives each test a fresh, isolated database to run chime's
// SQL store against, and removes it when the test ends.
//
//   - [SQLiteURL] returns a database file in the test's temporary directory.
//   - [PostgresURL] creates a schema chime_<random> in the database named by
//     CHIME_TEST_POSTGRES_URL and returns that URL with search_path set to
//     it; the schema is dropped (CASCADE) in t.Cleanup.
//   - [MySQLURL] creates a database chime_<random> on the server named by
//     CHIME_TEST_MYSQL_DSN (a URL as chime server takes it, such as
//     mysql://root@127.0.0.1:3306/test, or a go-sql-driver DSN such as
//     root@tcp(127.0.0.1:3306)/test) and returns a mysql:// URL to it; the
//     database is dropped in t.Cleanup.
//
// Without its environment variable a PostgreSQL or MySQL test is skipped
// with a message naming the variable ("needs PostgreSQL: set
// CHIME_TEST_POSTGRES_URL"), which internal/testkit/testreport counts in its
// summary line, except when CI=true: then it fails, so that a CI job cannot
// pass by testing nothing.
//
// The URLs are in the form sqlstore.Open accepts. This package does not
// import sqlstore, so that sqlstore's own tests can use it.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// Environment variables naming the test databases.
const (
	// PostgresEnv holds a PostgreSQL URL, for example
	// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
	PostgresEnv = "CHIME_TEST_POSTGRES_URL"
	// MySQLEnv holds a MySQL or MariaDB URL in the form chime server takes,
	// for example mysql://root@127.0.0.1:3306/test, or a go-sql-driver/mysql
	// DSN, for example root@tcp(127.0.0.1:3306)/test.
	MySQLEnv = "CHIME_TEST_MYSQL_DSN"
)

// setupTimeout bounds creating and dropping a test database.
const setupTimeout = 30 * time.Second

// Database is one kind of test database, for table-driven tests over every
// dialect:
//
//	for _, db := range dbtest.Databases() {
//		t.Run(db.Name, func(t *testing.T) {
//			url := db.URL(t) // skips this subtest when the database is not configured
//			...
//		})
//	}
type Database struct {
	Name    string // subtest name: "SQLite", "Postgres" or "MySQL"
	Dialect string // sqlstore dialect name: "sqlite", "postgres" or "mysql"
	// URL creates a fresh database for t and returns its URL, skipping t
	// when the database is not configured; see the package documentation.
	URL func(t testing.TB) string
}

// Shared returns what gives each subtest of t its database URL: for
// PostgreSQL and MySQL one database, created here for all of them, which
// they keep apart by scheduler name; for SQLite a fresh file per subtest,
// since one file is one writer's. Like URL, it skips t when the database
// is not configured.
func (d Database) Shared(t testing.TB) func(t testing.TB) string {
	if d.Dialect == "sqlite" {
		return d.URL
	}
	url := d.URL(t)
	return func(testing.TB) string { return url }
}

// Databases returns SQLite, PostgreSQL and MySQL, in that order.
func Databases() []Database {
	return []Database{
		{Name: "SQLite", Dialect: "sqlite", URL: SQLiteURL},
		{Name: "Postgres", Dialect: "postgres", URL: PostgresURL},
		{Name: "MySQL", Dialect: "mysql", URL: MySQLURL},
	}
}

// SQLiteURL returns "sqlite:" and the path of a database file in
// t.TempDir(). The file does not exist yet.
func SQLiteURL(t testing.TB) string {
	t.Helper()
	return "sqlite:" + filepath.Join(t.TempDir(), "chime.db")
}

// PostgresURL creates an empty schema in the database named by
// CHIME_TEST_POSTGRES_URL and returns that URL with search_path set to the
// schema. The schema and everything in it is dropped in t.Cleanup.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := lookupEnv(t, PostgresEnv, "PostgreSQL")
	name := randomName(t)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := pgExec(ctx, base, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("dbtest: creating PostgreSQL schema %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if err := pgExec(ctx, base, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
			t.Errorf("dbtest: dropping PostgreSQL schema %s: %v", name, err)
		}
	})
	u, err := withSearchPath(base, name)
	if err != nil {
		t.Fatalf("dbtest: %s: %v", PostgresEnv, err)
	}
	return u
}

// withSearchPath adds search_path to a PostgreSQL URL or keyword/value
// connection string.
func withSearchPath(base, schema string) (string, error) {
	if !strings.HasPrefix(base, "postgres://") && !strings.HasPrefix(base, "postgresql://") {
		return base + " search_path=" + schema, nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// pgExec runs one statement on a new connection.
func pgExec(ctx context.Context, connString, stmt string) error {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, stmt)
	return err
}

// MySQLURL creates an empty database on the server named by
// CHIME_TEST_MYSQL_DSN and returns a mysql://user:password@host:port/name
// URL to it (with a socket parameter for a unix socket address). The
// database is dropped in t.Cleanup.
func MySQLURL(t testing.TB) string {
	t.Helper()
	cfg, err := mysqlServer(lookupEnv(t, MySQLEnv, "MySQL or MariaDB"))
	if err != nil {
		t.Fatalf("dbtest: %s: %v", MySQLEnv, err)
	}
	name := randomName(t)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := mysqlExec(ctx, cfg, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("dbtest: creating MySQL database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if err := mysqlExec(ctx, cfg, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("dbtest: dropping MySQL database %s: %v", name, err)
		}
	})
	u := url.URL{Scheme: "mysql", Path: "/" + name}
	if cfg.User != "" {
		if cfg.Passwd != "" {
			u.User = url.UserPassword(cfg.User, cfg.Passwd)
		} else {
			u.User = url.User(cfg.User)
		}
	}
	switch cfg.Net {
	case "unix":
		u.RawQuery = url.Values{"socket": {cfg.Addr}}.Encode()
	default:
		u.Host = cfg.Addr
	}
	return u.String()
}

// mysqlServer reads the server address and credentials from a mysql:// URL
// (user, password, host and port, or ?socket=PATH; the port defaults to
// 3306) or from a go-sql-driver DSN.
func mysqlServer(v string) (*mysql.Config, error) {
	if !strings.HasPrefix(v, "mysql://") {
		return mysql.ParseDSN(v)
	}
	u, err := url.Parse(v)
	if err != nil {
		return nil, err
	}
	cfg := mysql.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	switch host := u.Hostname(); {
	case u.Query().Get("socket") != "":
		cfg.Net, cfg.Addr = "unix", u.Query().Get("socket")
	case host == "":
		cfg.Net, cfg.Addr = "tcp", "127.0.0.1:3306"
	case u.Port() == "":
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, "3306")
	default:
		cfg.Net, cfg.Addr = "tcp", u.Host
	}
	return cfg, nil
}

// mysqlExec runs one statement on a new connection to the server of cfg.
func mysqlExec(ctx context.Context, cfg *mysql.Config, stmt string) error {
	c := cfg.Clone()
	c.DBName = ""
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// lookupEnv returns the environment variable, or skips the test when it is
// unset (fails it when CI=true). server names the database it points to.
func lookupEnv(t testing.TB, name, server string) string {
	t.Helper()
	v := os.Getenv(name)
	if v != "" {
		return v
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("dbtest: %s is not set and CI=true: the database tests must run in CI", name)
	}
	t.Skipf("needs %s: set %s", server, name)
	return ""
}

// randomName returns chime_ and 16 random hex digits: a valid, unquoted
// schema or database name on every dialect.
func randomName(t testing.TB) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return fmt.Sprintf("chime_%s", hex.EncodeToString(b[:]))
}
