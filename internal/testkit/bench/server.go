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

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

// How the nodes of a run schedule: Options.Via.
const (
	// ViaLibrary runs each node as `chime bench node`: a chime.Scheduler
	// on the store, as a Go service embedding the library would.
	ViaLibrary = "library"
	// ViaServer runs each node as `chime server`, the product: its
	// scheduler fires through the server's instrumented store and every
	// execution is recorded in the server's history.
	ViaServer = "server"
)

// ServerJobs are the benchmark's job types as a `chime server` node of a
// run registers them (the hidden flag --bench-fire-log): the same jobs as
// RunNode's, appending one line per execution to the node's fire log, and
// doing nothing else. They run through the server's job runner, so each
// execution also costs what a server execution costs: its history rows,
// metrics and alerts check.
type ServerJobs struct {
	out  *firelog.Writer
	jobs *jobs
}

// OpenServerJobs creates the fire log at path for node, whose ID the
// lines carry.
func OpenServerJobs(path, node string) (*ServerJobs, error) {
	if path == "" || node == "" {
		return nil, errors.New("bench: the fire log and the node ID are required")
	}
	out, err := firelog.Create(path)
	if err != nil {
		return nil, err
	}
	// No one stops the server when a line cannot be written: the job
	// fails instead, and the run counts its firing as missed.
	return &ServerJobs{out: out, jobs: &jobs{node: node, out: out}}, nil
}

// Register registers the job types with register, such as a server's
// RegisterJobType.
func (s *ServerJobs) Register(register func(name string, job chime.Job) error) error {
	if err := register(jobRecord, chime.JobFunc(s.jobs.record)); err != nil {
		return err
	}
	return register(jobLong, chime.JobFunc(s.jobs.long))
}

// Close closes the fire log.
func (s *ServerJobs) Close() error { return s.out.Close() }

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
