package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// How the nodes of a run schedule: Options.Via.
const (
	// ViaLibrary runs each node as `chime-bench node` (RunNode): a
	// chime.Scheduler on the store, as a Go service embedding the library
	// would.
	ViaLibrary = "library"
	// ViaServer runs each node as `chime-bench server-node`
	// (RunServerNode): the product's package server, as `chime server`
	// runs it; its scheduler fires through the server's instrumented store
	// and every execution is recorded in the server's history.
	ViaServer = "server"
)

// The hidden subcommands of cmd/chime-bench that run one node of a run;
// Run starts Options.Executable with one of them.
const (
	// NodeCommand runs RunNode, for ViaLibrary.
	NodeCommand = "node"
	// ServerNodeCommand runs RunServerNode, for ViaServer.
	ServerNodeCommand = "server-node"
)

// newNamespace creates a place of the run's own, called name, in the
// database at base, for nodes that cannot take a table prefix (chime
// server): a schema on PostgreSQL, a database on MySQL or MariaDB, a file
// in dir on SQLite. It returns the URL of the namespace and a function
// that removes it with everything in it.
func newNamespace(ctx context.Context, base, name, dir string) (string, func(context.Context) error, error) {
	scheme, _, _ := strings.Cut(base, ":")
	switch strings.ToLower(scheme) {
	case "sqlite", "file":
		path := filepath.Join(dir, name+".db")
		remove := func(context.Context) error {
			var errs []error
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		}
		return "sqlite:" + path, remove, nil
	case "postgres", "postgresql":
		u, err := url.Parse(base)
		if err != nil {
			return "", nil, fmt.Errorf("bench: parsing the PostgreSQL URL: %w", redactURLError(err))
		}
		if err := pgExec(ctx, base, "CREATE SCHEMA "+name); err != nil {
			return "", nil, fmt.Errorf("bench: creating the run's schema %s: %w", name, err)
		}
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		drop := func(ctx context.Context) error {
			if err := pgExec(ctx, base, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
				return fmt.Errorf("bench: dropping the run's schema %s: %w", name, err)
			}
			return nil
		}
		return u.String(), drop, nil
	case "mysql":
		u, err := url.Parse(base)
		if err != nil {
			return "", nil, fmt.Errorf("bench: parsing the MySQL URL: %w", redactURLError(err))
		}
		cfg := mysqlServer(u)
		if err := mysqlExec(ctx, cfg, "CREATE DATABASE "+name); err != nil {
			return "", nil, fmt.Errorf("bench: creating the run's database %s: %w", name, err)
		}
		drop := func(ctx context.Context) error {
			if err := mysqlExec(ctx, cfg, "DROP DATABASE IF EXISTS "+name); err != nil {
				return fmt.Errorf("bench: dropping the run's database %s: %w", name, err)
			}
			return nil
		}
		nu := *u
		nu.Path = "/" + name
		return nu.String(), drop, nil
	}
	return "", nil, fmt.Errorf("bench: unsupported database URL scheme %q (want sqlite:, postgres:// or mysql://)", scheme)
}

// pgExec runs one statement on a new PostgreSQL connection.
func pgExec(ctx context.Context, connString, stmt string) error {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, stmt)
	return err
}

// mysqlServer returns the server address and credentials of a mysql://
// URL as chime server takes it (user, password, host and port, or
// ?socket=PATH; the port defaults to 3306), without a database.
func mysqlServer(u *url.URL) *mysql.Config {
	cfg := mysql.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	switch {
	case u.Query().Get("socket") != "":
		cfg.Net, cfg.Addr = "unix", u.Query().Get("socket")
	case u.Hostname() == "":
		cfg.Net, cfg.Addr = "tcp", "127.0.0.1:3306"
	case u.Port() == "":
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(u.Hostname(), "3306")
	default:
		cfg.Net, cfg.Addr = "tcp", u.Host
	}
	return cfg
}

// mysqlExec runs one statement on a new connection to the MySQL server of
// cfg.
func mysqlExec(ctx context.Context, cfg *mysql.Config, stmt string) error {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// redactURLError drops the URL (and its password) from a url.Parse error.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
