package sqlstore_test

import (
	"crypto/rand"
	"log/slog"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
	"github.com/chime-scheduler/chime/store/storetest"
)

// testConns is the pool size of every store in the tests: enough for
// concurrency, small enough for PostgreSQL's connection limit while the
// suite runs in parallel.
const testConns = 4

// open opens a store on url for the test and closes it at its end.
func open(t testing.TB, url string, opts *sqlstore.Options) *sqlstore.Store {
	t.Helper()
	var o sqlstore.Options
	if opts != nil {
		o = *opts
	}
	if o.MaxOpenConns == 0 && !strings.HasPrefix(url, "sqlite:") {
		o.MaxOpenConns = testConns // SQLite keeps its default: one writer
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.SchedulerName == "" {
		o.SchedulerName = schedName()
	}
	s, err := sqlstore.Open(t.Context(), url, &o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// schedName returns a fresh scheduler name, so that tests sharing one
// database see nothing of each other.
func schedName() string { return "test-" + rand.Text() }

// TestStore runs the store suite on every dialect. PostgreSQL and MySQL
// get one database each, and each test of the suite its own scheduler name
// on it, which also checks that scheduler names isolate. Each SQLite test
// gets its own file: SQLite has one writer at a time per file, and the
// suite's parallel tests would otherwise wait on each other.
func TestStore(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			if db.Dialect == string(sqlstore.SQLite) {
				storetest.Run(t, func(t *testing.T) store.Store {
					return open(t, db.URL(t), nil)
				})
				return
			}
			url := db.URL(t)
			open(t, url, nil) // migrate once, before the parallel tests
			storetest.Run(t, func(t *testing.T) store.Store {
				return open(t, url, nil)
			})
		})
	}
}
