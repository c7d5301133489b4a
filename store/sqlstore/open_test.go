package sqlstore_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name string
		url  string
		opts *sqlstore.Options
		want []string // substrings of the error
		not  string   // must not appear (a password)
	}{
		{"UnknownScheme", "redis://localhost:6379/0", nil, []string{`"redis"`, "postgres://", "mysql://", "sqlite:"}, ""},
		{"NoScheme", "chime.db", nil, []string{"no scheme", "sqlite:"}, ""},
		{"BadPrefix", "sqlite:" + filepath.Join(dir, "a.db"), &sqlstore.Options{TablePrefix: "Chime-"}, []string{"TablePrefix", `"Chime-"`}, ""},
		{"LongPrefix", "sqlite:" + filepath.Join(dir, "b.db"), &sqlstore.Options{TablePrefix: strings.Repeat("x", 33)}, []string{"TablePrefix"}, ""},
		{"LongSchedulerName", "sqlite:" + filepath.Join(dir, "c.db"), &sqlstore.Options{SchedulerName: strings.Repeat("s", 201)}, []string{"SchedulerName"}, ""},
		{"SQLiteMissingDirectory", "sqlite:" + filepath.Join(dir, "missing", "d.db"), nil, []string{"sqlite"}, ""},
		{"SQLiteNoPath", "sqlite:", nil, []string{"no file path"}, ""},
		{"PostgresUnreachable", "postgres://chime:s3cret@127.0.0.1:1/chime?sslmode=disable&connect_timeout=5", nil, []string{"postgres"}, "s3cret"},
		{"MySQLUnreachable", "mysql://chime:s3cret@127.0.0.1:1/chime?timeout=5s", nil, []string{"MySQL", "127.0.0.1:1"}, "s3cret"},
		{"MySQLNoDatabase", "mysql://chime@127.0.0.1:3306/", nil, []string{"must name one database"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			s, err := sqlstore.Open(ctx, tc.url, tc.opts)
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open(%q) succeeded, want an error", tc.url)
			}
			t.Logf("Open error: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open(%q) error = %q, want it to mention %q", tc.url, err, w)
				}
			}
			if tc.not != "" && strings.Contains(err.Error(), tc.not) {
				t.Errorf("Open(%q) error = %q, reveals %q", tc.url, err, tc.not)
			}
		})
	}
}

func TestOpenSQLiteURLForms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, url, file string
	}{
		{"SQLiteColon", "sqlite:" + filepath.Join(dir, "a.db"), "a.db"},
		{"SQLiteSlashes", "sqlite://" + filepath.Join(dir, "b.db"), "b.db"},
		{"File", "file:" + filepath.Join(dir, "c.db"), "c.db"},
		{"FileWithParams", "file:" + filepath.Join(dir, "d.db") + "?_pragma=cache_size(-4000)", "d.db"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t, tc.url, nil)
			if s.Dialect() != sqlstore.SQLite {
				t.Errorf("Dialect = %s, want sqlite", s.Dialect())
			}
			if _, err := os.Stat(filepath.Join(dir, tc.file)); err != nil {
				t.Errorf("database file: %v", err)
			}
			var mode string
			if err := s.DB().QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
				t.Errorf("journal_mode = %q, %v; want wal", mode, err)
			}
		})
	}
}

// TestOpenConcurrently starts eight stores at once on one empty database:
// every one must succeed, and the schema be migrated exactly once.
func TestOpenConcurrently(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			const n = 8
			stores := make([]*sqlstore.Store, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					stores[i], errs[i] = sqlstore.Open(t.Context(), url, &sqlstore.Options{MaxOpenConns: 2, Logger: quiet()})
				})
			}
			wg.Wait()
			for i, s := range stores {
				if errs[i] != nil {
					t.Errorf("Open #%d: %v", i, errs[i])
					continue
				}
				t.Cleanup(func() { _ = s.Close() })
			}
			if t.Failed() {
				return
			}
			var rows, latest int
			err := stores[0].DB().QueryRowContext(t.Context(),
				"SELECT COUNT(*), MAX(version) FROM chime_schema_migrations").Scan(&rows, &latest)
			if err != nil {
				t.Fatalf("reading chime_schema_migrations: %v", err)
			}
			if rows != sqlstore.SchemaVersion || latest != sqlstore.SchemaVersion {
				t.Errorf("chime_schema_migrations has %d rows up to version %d, want %d rows up to %d",
					rows, latest, sqlstore.SchemaVersion, sqlstore.SchemaVersion)
			}
			// Every store works on the migrated schema.
			for i, s := range stores {
				if _, err := s.NodeRegister(t.Context(), "node"); err != nil {
					t.Errorf("store #%d: NodeRegister: %v", i, err)
				}
			}
		})
	}
}

// TestIsolation checks that stores with different scheduler names on one
// set of tables, and stores with different table prefixes on one
// database, see nothing of each other.
func TestIsolation(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			stores := map[string]*sqlstore.Store{
				"a":       open(t, url, &sqlstore.Options{SchedulerName: "a"}),
				"b":       open(t, url, &sqlstore.Options{SchedulerName: "b"}),
				"other_a": open(t, url, &sqlstore.Options{SchedulerName: "a", TablePrefix: "other_"}),
			}
			ctx := t.Context()
			due := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			jk := store.Key{Group: "g", Name: "j"}
			tk := store.Key{Group: "t", Name: "1"}
			leases := make(map[string]store.Lease)
			// The same keys in every store, each with its own job type.
			for name, s := range stores {
				n, err := s.NodeRegister(ctx, "node")
				if err != nil {
					t.Fatalf("%s: NodeRegister: %v", name, err)
				}
				if n.Epoch != 1 {
					t.Errorf("%s: first registration of node has epoch %d, want 1", name, n.Epoch)
				}
				leases[name] = store.Lease{NodeID: n.ID, Epoch: n.Epoch}
				if err := s.JobUpsert(ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: jk, Type: name, Durable: true}}); err != nil {
					t.Fatalf("%s: JobUpsert: %v", name, err)
				}
				tr := store.TriggerRecord{Key: tk, JobKey: jk, Kind: "simple", Schedule: []byte(`{}`), StartTime: due, NextFireTime: due}
				if err := s.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: tr}); err != nil {
					t.Fatalf("%s: TriggerInsert: %v", name, err)
				}
			}
			// Pausing everything in a, and firing in b, leave the others alone.
			if _, err := stores["a"].TriggersPause(ctx, &store.TriggerSelector{All: true}); err != nil {
				t.Fatalf("a: TriggersPause: %v", err)
			}
			acq, err := stores["b"].TriggersAcquire(ctx, &store.TriggersAcquireParams{Lease: leases["b"], NoLaterThan: due, Limit: 10})
			if err != nil || len(acq) != 1 {
				t.Fatalf("b: TriggersAcquire = %d triggers, %v; want 1", len(acq), err)
			}
			fp := &store.TriggerFireParams{Lease: leases["b"], Trigger: acq[0], Execution: store.ExecutionRecord{ScheduledTime: due}}
			fp.Trigger.NextFireTime = due.Add(time.Hour)
			if _, err := stores["b"].TriggerFire(ctx, fp); err != nil {
				t.Fatalf("b: TriggerFire: %v", err)
			}
			want := map[string]struct {
				state      store.TriggerState
				executions int
				paused     bool
			}{
				"a":       {store.StatePaused, 0, true},
				"b":       {store.StateWaiting, 1, false},
				"other_a": {store.StateWaiting, 0, false},
			}
			for name, s := range stores {
				jobs, err := s.JobList(ctx, &store.JobListParams{})
				if err != nil || len(jobs) != 1 || jobs[0].Type != name {
					t.Errorf("%s: JobList = %+v, %v; want its own job only", name, jobs, err)
				}
				nodes, err := s.NodeList(ctx)
				if err != nil || len(nodes) != 1 || nodes[0].Epoch != 1 {
					t.Errorf("%s: NodeList = %+v, %v; want its own node only", name, nodes, err)
				}
				tr, err := s.TriggerGet(ctx, tk)
				if err != nil || tr.State != want[name].state {
					t.Errorf("%s: trigger = %+v, %v; want state %s", name, tr, err, want[name].state)
				}
				es, err := s.ExecutionList(ctx, &store.ExecutionListParams{})
				if err != nil || len(es) != want[name].executions {
					t.Errorf("%s: %d executions, %v; want %d", name, len(es), err, want[name].executions)
				}
				pg, err := s.PausedGroups(ctx)
				if err != nil || pg.All != want[name].paused {
					t.Errorf("%s: PausedGroups = %+v, %v; want All = %v", name, pg, err, want[name].paused)
				}
			}
		})
	}
}

// TestClosed checks that every method fails with ErrClosed after Close,
// and that Close leaves a pool given to OpenDB open.
func TestClosed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := open(t, dbtest.SQLiteURL(t), nil)
	db := s.DB()
	owned, err := sqlstore.OpenDB(ctx, db, sqlstore.SQLite, &sqlstore.Options{Logger: quiet()})
	if err != nil {
		t.Fatalf("OpenDB: %v", err)
	}
	if err := owned.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("pool given to OpenDB after Close: %v", err)
	}
	if _, err := owned.NodeList(ctx); !errors.Is(err, store.ErrClosed) {
		t.Errorf("NodeList after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	l := store.Lease{NodeID: "n", Epoch: 1}
	k := store.Key{Group: "g", Name: "n"}
	calls := map[string]func() error{
		"JobUpsert":     func() error { return s.JobUpsert(ctx, &store.JobUpsertParams{}) },
		"JobDelete":     func() error { _, err := s.JobDelete(ctx, k); return err },
		"JobList":       func() error { _, err := s.JobList(ctx, &store.JobListParams{}); return err },
		"TriggerInsert": func() error { return s.TriggerInsert(ctx, &store.TriggerInsertParams{}) },
		"TriggerGet":    func() error { _, err := s.TriggerGet(ctx, k); return err },
		"TriggerDelete": func() error { _, err := s.TriggerDelete(ctx, k); return err },
		"TriggerList":   func() error { _, err := s.TriggerList(ctx, &store.TriggerListParams{}); return err },
		"TriggersPause": func() error { _, err := s.TriggersPause(ctx, &store.TriggerSelector{All: true}); return err },
		"TriggersResume": func() error {
			_, err := s.TriggersResume(ctx, &store.TriggerSelector{All: true})
			return err
		},
		"PausedGroups":   func() error { _, err := s.PausedGroups(ctx); return err },
		"TriggerRelease": func() error { return s.TriggerRelease(ctx, &store.TriggerReleaseParams{Lease: l, Key: k}) },
		"TriggerFire": func() error {
			_, err := s.TriggerFire(ctx, &store.TriggerFireParams{Lease: l, Execution: store.ExecutionRecord{ScheduledTime: time.Now()}})
			return err
		},
		"CalendarUpsert": func() error { return s.CalendarUpsert(ctx, &store.CalendarUpsertParams{}) },
		"CalendarGet":    func() error { _, err := s.CalendarGet(ctx, "c"); return err },
		"CalendarDelete": func() error { _, err := s.CalendarDelete(ctx, "c"); return err },
		"CalendarList":   func() error { _, err := s.CalendarList(ctx); return err },
		"ExecutionComplete": func() error {
			return s.ExecutionComplete(ctx, &store.ExecutionCompleteParams{Lease: l, State: store.ExecutionSucceeded})
		},
		"ExecutionList":   func() error { _, err := s.ExecutionList(ctx, &store.ExecutionListParams{}); return err },
		"ExecutionsPrune": func() error { _, err := s.ExecutionsPrune(ctx, time.Now()); return err },
		"ExecutionsAcquireRecoverable": func() error {
			_, err := s.ExecutionsAcquireRecoverable(ctx, &store.ExecutionsAcquireRecoverableParams{Lease: l, Limit: 1})
			return err
		},
		"NodeRegister":   func() error { _, err := s.NodeRegister(ctx, "n"); return err },
		"NodeCheckIn":    func() error { _, err := s.NodeCheckIn(ctx, l); return err },
		"NodeList":       func() error { _, err := s.NodeList(ctx); return err },
		"NodeUnregister": func() error { return s.NodeUnregister(ctx, l) },
		"NodesRecover": func() error {
			_, err := s.NodesRecover(ctx, &store.NodesRecoverParams{Lease: l, DeadAfter: time.Second})
			return err
		},
		"Reconcile":     func() error { _, err := s.Reconcile(ctx, l); return err },
		"Now":           func() error { _, err := s.Now(ctx); return err },
		"WatchTriggers": func() error { _, err := s.WatchTriggers(ctx); return err },
		"Migrate":       func() error { return s.Migrate(ctx) },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestIdleInTransactionTimeout checks that the pool Open creates has the
// database end a transaction its client left idle (a node cut off
// mid-transaction), that the default is set, and that a value in the URL
// wins.
func TestIdleInTransactionTimeout(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		if db.Name == "SQLite" {
			continue // one writer per file, no server-side sessions
		}
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			setting := func(s *sqlstore.Store) string {
				t.Helper()
				q := "SHOW idle_in_transaction_session_timeout"
				if s.Dialect() == sqlstore.MySQL {
					q = "SELECT @@SESSION.idle_transaction_timeout"
				}
				var v string
				if err := s.DB().QueryRowContext(t.Context(), q).Scan(&v); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return v
			}
			want := map[sqlstore.Dialect][2]string{sqlstore.Postgres: {"10s", "3s"}, sqlstore.MySQL: {"10", "3"}}
			def := open(t, url, nil)
			if got := setting(def); got != want[def.Dialect()][0] {
				t.Errorf("default setting = %q, want %q", got, want[def.Dialect()][0])
			}
			param := "idle_in_transaction_session_timeout=3000"
			if def.Dialect() == sqlstore.MySQL {
				param = "idle_transaction_timeout=3"
			}
			sep := "?"
			if strings.Contains(url, "?") {
				sep = "&"
			}
			if got := setting(open(t, url+sep+param, nil)); got != want[def.Dialect()][1] {
				t.Errorf("with %s in the URL, setting = %q, want %q", param, got, want[def.Dialect()][1])
			}

			s := open(t, url, &sqlstore.Options{IdleInTransactionTimeout: time.Second})
			tx, err := s.DB().BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			var one int
			if err := tx.QueryRowContext(t.Context(), "SELECT 1").Scan(&one); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2500 * time.Millisecond) // the client goes quiet inside the transaction
			if err := tx.QueryRowContext(t.Context(), "SELECT 1").Scan(&one); err == nil {
				t.Errorf("a transaction idle for 2.5s with a 1s timeout still runs statements")
			} else {
				t.Logf("the database ended the idle transaction: %v", err)
			}
		})
	}
}
