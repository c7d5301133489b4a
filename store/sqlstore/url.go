package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// supportedSchemes is the list Open's error names.
const supportedSchemes = "sqlite:PATH, sqlite://PATH, file:PATH, postgres://…, postgresql://…, mysql://…"

// sqliteParams are the connection parameters of every SQLite connection:
// write transactions take the write lock at BEGIN (so they never deadlock
// upgrading a read lock), a writer waits up to 10 s for another process's
// write lock, and readers never block the writer (WAL).
const sqliteParams = "_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"

// pool is an opened connection pool and what Open learned about it.
type pool struct {
	db      *sql.DB
	dialect Dialect
	// pgConfig is the PostgreSQL connection configuration, for the
	// dedicated connection of WatchTriggers.
	pgConfig *pgx.ConnConfig
	// readCommitted: the pool's sessions already use READ COMMITTED, so
	// MySQL transactions need not set it one by one.
	readCommitted bool
	// describe names the database in errors, without credentials.
	describe string
}

// openPool opens a pool for databaseURL whose sessions end transactions
// left idle for idleTx (none when idleTx < 0; see
// Options.IdleInTransactionTimeout). It does not connect, except to learn
// which MySQL flavour it talks to.
func openPool(ctx context.Context, databaseURL string, maxOpen int, idleTx time.Duration) (*pool, error) {
	scheme, rest, ok := strings.Cut(databaseURL, ":")
	if !ok {
		return nil, fmt.Errorf("sqlstore: database URL has no scheme (supported: %s)", supportedSchemes)
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "file":
		return openSQLite(rest, maxOpen)
	case "postgres", "postgresql":
		cfg, err := pgx.ParseConfig(databaseURL)
		if err != nil {
			// pgx's errors do not repeat the password.
			return nil, fmt.Errorf("sqlstore: parsing PostgreSQL URL: %w", err)
		}
		const idleVar = "idle_in_transaction_session_timeout"
		if _, set := cfg.RuntimeParams[idleVar]; !set && idleTx > 0 {
			cfg.RuntimeParams[idleVar] = strconv.FormatInt(idleTx.Milliseconds(), 10)
		}
		db := stdlib.OpenDB(*cfg)
		db.SetMaxOpenConns(maxOpen)
		db.SetMaxIdleConns(maxOpen)
		describe := fmt.Sprintf("PostgreSQL database %s on %s:%d", cfg.Database, cfg.Host, cfg.Port)
		return &pool{db: db, dialect: Postgres, pgConfig: cfg, describe: describe}, nil
	case "mysql":
		return openMySQL(ctx, databaseURL, maxOpen, idleTx)
	}
	return nil, fmt.Errorf("sqlstore: unsupported database URL scheme %q (supported: %s)", scheme, supportedSchemes)
}

// sqlitePath returns the file path of a sqlite: or file: URL without its
// scheme, and the query string to pass on to the driver.
//
//	sqlite:data/chime.db      -> data/chime.db
//	sqlite://data/chime.db    -> data/chime.db
//	sqlite:///var/chime.db    -> /var/chime.db
//	file:chime.db?_pragma=…   -> chime.db, _pragma=…
func sqlitePath(rest string) (path, query string) {
	path, query, _ = strings.Cut(rest, "?")
	path = strings.TrimPrefix(path, "//")
	return path, query
}

func openSQLite(rest string, maxOpen int) (*pool, error) {
	path, query := sqlitePath(rest)
	if path == "" {
		return nil, fmt.Errorf("sqlstore: SQLite URL has no file path")
	}
	dsn := "file:" + path + "?" + sqliteParams
	if query != "" {
		dsn += "&" + query
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: opening SQLite file %s: %w", path, err)
	}
	db.SetMaxOpenConns(maxOpen)
	db.SetMaxIdleConns(maxOpen)
	db.SetConnMaxIdleTime(0)
	return &pool{db: db, dialect: SQLite, describe: "SQLite file " + path}, nil
}

// mysqlConfig converts mysql://user:password@host:port/dbname?params to a
// go-sql-driver configuration. Every query parameter is a go-sql-driver DSN
// parameter, except socket=PATH, which connects to a unix socket instead of
// host:port. The store sets interpolateParams (one round trip per
// statement) and parseTime.
func mysqlConfig(databaseURL string) (*mysql.Config, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: parsing MySQL URL: %w", redactURLError(err))
	}
	q := u.Query()
	socket := q.Get("socket")
	q.Del("socket")
	dbName := strings.TrimPrefix(u.Path, "/")
	if dbName == "" || strings.Contains(dbName, "/") {
		return nil, fmt.Errorf("sqlstore: MySQL URL must name one database: mysql://user:password@host:port/dbname")
	}
	dsn := "/" + dbName
	if len(q) > 0 {
		dsn += "?" + q.Encode()
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: MySQL URL parameters: %w", err)
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	switch {
	case socket != "":
		cfg.Net, cfg.Addr = "unix", socket
	case u.Host == "":
		cfg.Net, cfg.Addr = "tcp", "127.0.0.1:3306"
	case u.Port() == "":
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(u.Hostname(), "3306")
	default:
		cfg.Net, cfg.Addr = "tcp", u.Host
	}
	cfg.ParseTime = true
	cfg.InterpolateParams = true
	return cfg, nil
}

// redactURLError drops the URL (and its password) from a url.Parse error.
func redactURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// openMySQL opens a MySQL or MariaDB pool whose sessions use READ
// COMMITTED and, on MariaDB, end transactions left idle for idleTx. The
// variable that sets the isolation differs (MySQL 8: transaction_
// isolation; MariaDB before 11.1: tx_isolation only) and only MariaDB has
// an idle-in-transaction timeout, so it first asks the server what it is.
func openMySQL(ctx context.Context, databaseURL string, maxOpen int, idleTx time.Duration) (*pool, error) {
	cfg, err := mysqlConfig(databaseURL)
	if err != nil {
		return nil, err
	}
	probe, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: MySQL URL: %w", err)
	}
	pdb := sql.OpenDB(probe)
	var version string
	err = pdb.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version)
	_ = pdb.Close()
	if err != nil {
		return nil, fmt.Errorf("sqlstore: connecting to MySQL at %s: %w", cfg.Addr, err)
	}
	mariaDB := strings.Contains(strings.ToLower(version), "mariadb")
	isoVar := "transaction_isolation"
	if mariaDB {
		isoVar = "tx_isolation"
	}
	if cfg.Params == nil {
		cfg.Params = make(map[string]string)
	}
	cfg.Params[isoVar] = "'READ-COMMITTED'"
	const idleVar = "idle_transaction_timeout"
	if _, set := cfg.Params[idleVar]; !set && mariaDB && idleTx > 0 {
		secs := (idleTx + time.Second - 1) / time.Second
		cfg.Params[idleVar] = strconv.FormatInt(int64(secs), 10)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: MySQL URL: %w", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(maxOpen)
	db.SetMaxIdleConns(maxOpen)
	describe := fmt.Sprintf("MySQL database %s at %s", cfg.DBName, cfg.Addr)
	return &pool{db: db, dialect: MySQL, readCommitted: true, describe: describe}, nil
}
