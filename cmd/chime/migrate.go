package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// envDatabaseURL is the environment variable chime migrate (like chime
// server) reads when --database-url is not given.
const envDatabaseURL = "CHIME_DATABASE_URL"

// defaultDatabaseURL is chime server's default database: an SQLite file in
// the working directory.
const defaultDatabaseURL = "sqlite:chime.db"

// newMigrateCmd is `chime migrate`: bring a database's schema up to date
// without starting a server.
func newMigrateCmd() *cobra.Command {
	var databaseURL string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade chime's tables in a database, and print their schema versions",
		Long: `Create or upgrade chime's tables in a database without starting a server: the
scheduler store's tables and those of the server's components (execution
history, runner state, users, executors, pools, sharded firings, workflows,
the alert outbox and the rest). chime server does the same at
start; run this first to upgrade a database ahead of a rolling deployment, or
to check its versions. Safe to run while nodes are up and from several places
at once.`,
		Example: `  chime migrate --database-url 'postgres://chime@db.example.com/chime'`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			databaseURL = firstNonEmpty(databaseURL, os.Getenv(envDatabaseURL), defaultDatabaseURL)
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			return migrate(cmd.Context(), cmd, databaseURL, log)
		},
	}
	cmd.Flags().StringVar(&databaseURL, "database-url", "",
		fmt.Sprintf("sqlite:PATH, postgres://… or mysql://… (env %s; default %s)", envDatabaseURL, defaultDatabaseURL))
	return cmd
}

// schema is one versioned set of tables: the store's or a server
// component's.
type schema struct {
	name        string // as shown
	table       string // its migrations table, without the prefix
	description string
}

// migrate creates or upgrades every table chime server keeps, exactly as
// its start does (server.New migrates the store and every component),
// then prints the version of each schema.
func migrate(ctx context.Context, cmd *cobra.Command, databaseURL string, log *slog.Logger) error {
	srv, err := server.New(ctx, server.Config{DatabaseURL: databaseURL, Logger: log})
	if err != nil {
		return err
	}
	defer srv.Close()
	// The versions are read on a store of their own: the server does not
	// lend out its store.
	st, err := sqlstore.Open(ctx, databaseURL, &sqlstore.Options{Logger: log})
	if err != nil {
		return err
	}
	defer st.Close()
	schemas := []schema{
		{"store", "schema_migrations", "jobs, triggers, calendars, executions, nodes"},
		{"history", "server_schema_migrations", "execution history, decisions, audit log"},
		{"runner", "runner_schema_migrations", "overlap markers, server settings, node clocks"},
		{"auth", "auth_schema_migrations", "users, sessions, API tokens"},
		{"dispatch", "dispatch_schema_migrations", "executors, executor groups, runs handed to executors"},
		{"catalog", "executor_catalog_schema_migrations", "the handlers executors advertised"},
		{"livelog", "livelog_schema_migrations", "log lines of running executions"},
		{"secrets", "secrets_schema_migrations", "encrypted secrets"},
		{"versions", "versions_schema_migrations", "job versions"},
		{"pool", "pool_schema_migrations", "concurrency pools and their slots"},
		{"shard", "shard_schema_migrations", "sharded firings and their items"},
		{"workflow", "workflow_schema_migrations", "workflows, instances and their tasks"},
		{"outbox", "outbox_schema_migrations", "alerts waiting for delivery"},
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Database %s (%s, tables %s*) is up to date.\n\n", redactURL(databaseURL), st.Dialect(), st.TablePrefix())
	t := newTable(w, "SCHEMA", "VERSION", "TABLES")
	for _, sc := range schemas {
		v, err := schemaVersion(ctx, st, sc.table)
		if err != nil {
			return fmt.Errorf("reading the %s schema version: %w", sc.name, err)
		}
		t.row(sc.name, strconv.Itoa(v), sc.description)
	}
	return t.flush()
}

// schemaVersion reads the latest applied version from a migrations table,
// {prefix}<table> (see sqlstore.Store.MigrateComponent).
func schemaVersion(ctx context.Context, st *sqlstore.Store, table string) (int, error) {
	var v sql.NullInt64
	err := st.DB().QueryRowContext(ctx, st.SQL("SELECT MAX(version) FROM {p}"+table)).Scan(&v)
	return int(v.Int64), err
}

// redactURL hides the password of a database URL.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
