package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// watchDeadline bounds how long a test waits for a notification: a failure
// bound, not a speed claim.
const watchDeadline = 10 * time.Second

// TestWatchUnsupported checks that SQLite and MySQL stores report that
// they cannot push, so that the engine polls.
func TestWatchUnsupported(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		if db.Dialect == string(sqlstore.Postgres) {
			continue
		}
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			s := open(t, db.URL(t), nil)
			ch, err := s.WatchTriggers(t.Context())
			if !errors.Is(err, errors.ErrUnsupported) || ch != nil {
				t.Errorf("WatchTriggers = %v, %v; want nil, errors.ErrUnsupported", ch, err)
			}
		})
	}
}

// TestWatchPostgres checks that a watch on one store sees what another
// store (another node) does, for a store made by Open and one made by
// OpenDB, and that it survives losing its connection.
func TestWatchPostgres(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	sched := schedName()
	writer := open(t, url, &sqlstore.Options{SchedulerName: sched})
	other := open(t, url, nil) // another scheduler: its triggers are not ours to see
	tests := []struct {
		name  string
		watch func(t *testing.T) *sqlstore.Store
	}{
		{"Open", func(t *testing.T) *sqlstore.Store {
			return open(t, url, &sqlstore.Options{SchedulerName: sched})
		}},
		{"OpenDB", func(t *testing.T) *sqlstore.Store {
			cfg, err := pgx.ParseConfig(url)
			if err != nil {
				t.Fatal(err)
			}
			db := stdlib.OpenDB(*cfg)
			t.Cleanup(func() { _ = db.Close() })
			s, err := sqlstore.OpenDB(t.Context(), db, sqlstore.Postgres, &sqlstore.Options{SchedulerName: sched, Logger: quiet()})
			if err != nil {
				t.Fatalf("OpenDB: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 3*watchDeadline)
			defer cancel()
			watcher := tc.watch(t)
			ch, err := watcher.WatchTriggers(ctx)
			if err != nil {
				t.Fatalf("WatchTriggers: %v", err)
			}
			job := store.Key{Group: "watch", Name: tc.name}
			for _, s := range []*sqlstore.Store{writer, other} {
				if err := s.JobUpsert(ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: job, Durable: true}}); err != nil {
					t.Fatalf("JobUpsert: %v", err)
				}
			}
			// The subtests share the scheduler, so each sees the other's
			// triggers too; the other scheduler's triggers are all due in
			// 2040 and must never be seen.
			base := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
			foreign := time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)
			n := 0
			// newJobs makes insert add the writer's triggers with new jobs
			// of their own (JobWrite) rather than to the stored job.
			newJobs := false
			// insert adds a trigger on store s due one second after the
			// last, and returns its next fire time.
			insert := func(s *sqlstore.Store) time.Time {
				t.Helper()
				n++
				next := base.Add(time.Duration(n) * time.Second)
				if s == other {
					next = foreign.Add(time.Duration(n) * time.Second)
				}
				tr := store.TriggerRecord{
					Key: store.Key{Group: "watch", Name: fmt.Sprintf("%s-%d", tc.name, n)}, JobKey: job,
					Kind: "simple", Schedule: []byte(`{}`), StartTime: next, NextFireTime: next,
				}
				if s == writer && newJobs {
					own := store.Key{Group: "watch", Name: tr.Key.Name}
					tr.JobKey = own
					if _, err := s.JobWrite(ctx, &store.JobWriteParams{Job: store.JobRecord{Key: own}, Triggers: []store.TriggerRecord{tr}}); err != nil {
						t.Fatalf("JobWrite: %v", err)
					}
					return next
				}
				if err := s.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: tr}); err != nil {
					t.Fatalf("TriggerInsert: %v", err)
				}
				return next
			}
			// seen inserts triggers on the writer, one at a time, until the
			// watch delivers one of their fire times. The watch may start
			// listening after the first inserts: notifications sent before
			// are lost by design, so this retries within the deadline.
			seen := func(what string) {
				t.Helper()
				sent := make(map[time.Time]bool)
				deadline := time.After(watchDeadline)
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				insert(other) // must never be delivered
				sent[insert(writer)] = true
				for {
					select {
					case got, ok := <-ch:
						if !ok {
							t.Fatalf("%s: watch channel closed", what)
						}
						if sent[got] {
							return
						}
						if !got.Before(foreign) {
							t.Fatalf("%s: watch delivered %s, the fire time of another scheduler's trigger", what, got)
						}
					case <-tick.C:
						insert(other)
						sent[insert(writer)] = true
					case <-deadline:
						t.Fatalf("%s: no notification within %s", what, watchDeadline)
					}
				}
			}
			seen("first insert")
			newJobs = true
			seen("a new job's trigger")

			// The watch reconnects after its connection is killed.
			if tc.name == "Open" {
				killListeners(t, writer)
				seen("after the connection was killed")
			}

			cancel()
			for range ch {
			}
		})
	}
}

// killListeners terminates every backend of this database that LISTENs.
func killListeners(t *testing.T, s *sqlstore.Store) {
	t.Helper()
	var n int
	err := s.DB().QueryRowContext(t.Context(), `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`).Scan(&n)
	if err != nil || n == 0 {
		t.Fatalf("terminating listeners: %d terminated, %v", n, err)
	}
}

// TestWatchStopsOnClose checks that closing the store ends its watches.
func TestWatchStopsOnClose(t *testing.T) {
	t.Parallel()
	s := open(t, dbtest.PostgresURL(t), nil)
	ch, err := s.WatchTriggers(t.Context())
	if err != nil {
		t.Fatalf("WatchTriggers: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case _, ok := <-ch:
		if ok {
			t.Errorf("watch delivered a time after Close")
		}
	case <-time.After(watchDeadline):
		t.Fatalf("watch channel still open %s after Close", watchDeadline)
	}
}
