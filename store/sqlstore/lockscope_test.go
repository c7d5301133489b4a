package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestMySQLBatchesWaitForNoOtherNodesRows checks, on MySQL, that a node's
// batch statements lock no row of another node's work in flight, when
// InnoDB's index statistics are those of the empty table, as they are for
// up to 10 s after a table is created and filled (a fresh install, a bulk
// insert of jobs, the benchmark's seeding). With such statistics MariaDB planned the correlated lookups by
// job as a scan of every row of the scheduler, in locking reads: a
// completion's orphan-job DELETE share-locked every trigger, waited for
// the other node's firings in flight and held up the next ones, long
// enough for both nodes to miss their check-ins (W1b missed 31,000 to
// 34,000 of 50,000 firings).
//
// Node a fires a batch of the triggers, node b claims another. A
// transaction holds one of b's claimed triggers as b's firing in flight
// does, and a's completion of its batch must finish without waiting for
// it (it did not before the lookups named their index); then one holds an
// execution of a, as a's completion in flight does, and b's release of
// its claims must not wait for it either.
func TestMySQLBatchesWaitForNoOtherNodesRows(t *testing.T) {
	t.Parallel()
	// Batches as the engine makes them, in a table of many triggers (on
	// a few thousand, MariaDB planned the lookups by job even without
	// statistics).
	const n, batch = 20000, 400
	url := dbtest.MySQLURL(t)
	prefix := "ls" + strings.ToLower(rand.Text()[:8]) + "_"
	s := open(t, url, &sqlstore.Options{TablePrefix: prefix})
	ctx := t.Context()
	tables := []string{"jobs", "triggers", "executions"}
	for _, table := range tables {
		// No recalculation of the statistics, which staleStatistics
		// writes.
		if _, err := s.DB().ExecContext(ctx, s.SQL("ALTER TABLE {p}"+table+" STATS_AUTO_RECALC = 0")); err != nil {
			t.Fatal(err)
		}
	}
	due := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	jobs := make([]store.JobInsert, n)
	for i := range jobs {
		jk := store.Key{Group: "g", Name: fmt.Sprintf("j%04d", i)}
		jobs[i] = store.JobInsert{
			Job: store.JobRecord{Key: jk, Type: "noop"},
			Triggers: []store.TriggerRecord{{
				Key: store.Key{Group: "g", Name: fmt.Sprintf("t%04d", i)}, JobKey: jk, Kind: "simple",
				Schedule: []byte(`{"repeatCount":0}`), StartTime: due, NextFireTime: due,
			}},
		}
	}
	if err := s.JobsInsert(ctx, &store.JobsInsertParams{Jobs: jobs}); err != nil {
		t.Fatalf("JobsInsert: %v", err)
	}
	a, b := register(t, s, "a"), register(t, s, "b")
	executions := fireAll(t, s, a, acquire(t, s, a, batch))
	claimed := acquire(t, s, b, batch)
	staleStatistics(t, s, tables)

	t.Run("completion", func(t *testing.T) {
		// b's firing in flight holds its trigger.
		holder := holdRow(t, s, "SELECT trigger_name FROM {p}triggers WHERE sched_name = ? AND trigger_group = ? "+
			"AND trigger_name = ? FOR UPDATE", s.SchedulerName(), claimed[0].Key.Group, claimed[0].Key.Name)
		completions := make([]store.ExecutionCompletion, len(executions))
		for i, id := range executions {
			completions[i] = store.ExecutionCompletion{ID: id, State: store.ExecutionSucceeded,
				FinishedTime: time.Now(), Instruction: store.InstructionDeleteTrigger}
		}
		mustNotWait(t, s, holder, prefix, func(ctx context.Context) error {
			errs, err := s.ExecutionsComplete(ctx, &store.ExecutionsCompleteParams{Lease: a, Completions: completions})
			for i, e := range errs {
				if e != nil && err == nil {
					err = fmt.Errorf("completion %d: %w", i, e)
				}
			}
			return err
		})
		var left int
		if err := s.DB().QueryRowContext(ctx, s.SQL("SELECT COUNT(*) FROM {p}jobs WHERE sched_name = ?"), s.SchedulerName()).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != n-len(executions) {
			t.Errorf("%d jobs left after completing %d of %d one-shot jobs, want %d", left, len(executions), n, n-len(executions))
		}
	})

	t.Run("release", func(t *testing.T) {
		// A completion of a in flight holds its execution.
		holder := holdRow(t, s, "SELECT id FROM {p}executions WHERE sched_name = ? AND id = ? FOR UPDATE",
			s.SchedulerName(), executions[0])
		keys := make([]store.Key, len(claimed))
		for i, tr := range claimed {
			keys[i] = tr.Key
		}
		mustNotWait(t, s, holder, prefix, func(ctx context.Context) error {
			released, err := s.TriggersRelease(ctx, &store.TriggersReleaseParams{Lease: b, Keys: keys})
			if err == nil && released != len(keys) {
				err = fmt.Errorf("released %d of %d claims", released, len(keys))
			}
			return err
		})
	})
}

// staleStatistics gives the tables the InnoDB statistics they have in the
// first seconds after they were created and filled: the right row count,
// and the index statistics of the empty tables (no recalculation since
// their creation; the background one runs at most every 10 s per table).
func staleStatistics(t *testing.T, s *sqlstore.Store, tables []string) {
	t.Helper()
	ctx := t.Context()
	for _, table := range tables {
		name := s.TablePrefix() + table
		var rows int64
		if err := s.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM "+name).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"UPDATE mysql.innodb_table_stats SET n_rows = ? WHERE database_name = DATABASE() AND table_name = ?", []any{rows, name}},
			{"FLUSH TABLE " + name, nil}, // InnoDB reads the statistics again
		} {
			if _, err := s.DB().ExecContext(ctx, q.sql, q.args...); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
	}
}

// register registers a node and returns its lease.
func register(t *testing.T, s *sqlstore.Store, id string) store.Lease {
	t.Helper()
	node, err := s.NodeRegister(t.Context(), id)
	if err != nil {
		t.Fatalf("NodeRegister: %v", err)
	}
	return store.Lease{NodeID: node.ID, Epoch: node.Epoch}
}

// acquire claims n due triggers for lease.
func acquire(t *testing.T, s *sqlstore.Store, lease store.Lease, n int) []store.TriggerRecord {
	t.Helper()
	recs, err := s.TriggersAcquire(t.Context(), &store.TriggersAcquireParams{Lease: lease, NoLaterThan: time.Now(), Limit: n})
	if err != nil || len(recs) != n {
		t.Fatalf("TriggersAcquire = %d triggers, %v; want %d", len(recs), err, n)
	}
	return recs
}

// fireAll fires the claimed one-shot triggers recs (their last firing) and
// returns the IDs of their executions.
func fireAll(t *testing.T, s *sqlstore.Store, lease store.Lease, recs []store.TriggerRecord) []string {
	t.Helper()
	firings := make([]store.TriggerFiring, len(recs))
	for i, rec := range recs {
		advanced := rec
		advanced.PreviousFireTime, advanced.NextFireTime = rec.NextFireTime, time.Time{}
		advanced.TimesTriggered++
		firings[i] = store.TriggerFiring{Trigger: advanced, Execution: store.ExecutionRecord{
			TriggerKey: rec.Key, JobKey: rec.JobKey, ScheduledTime: rec.NextFireTime, FiredTime: time.Now(),
			NodeID: lease.NodeID, Epoch: lease.Epoch, State: store.ExecutionExecuting,
		}}
	}
	outs, err := s.TriggersFire(t.Context(), &store.TriggersFireParams{Lease: lease, Firings: firings})
	if err != nil {
		t.Fatalf("TriggersFire: %v", err)
	}
	ids := make([]string, len(outs))
	for i, o := range outs {
		if o.Err != nil {
			t.Fatalf("firing %d: %v", i, o.Err)
		}
		ids[i] = firings[i].Execution.ID
	}
	return ids
}

// holdRow runs a locking read q ({p} rendered) in a transaction that it
// returns, open until the test ends at the latest.
func holdRow(t *testing.T, s *sqlstore.Store, q string, args ...any) *sql.Tx {
	t.Helper()
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	var got string
	if err := tx.QueryRowContext(t.Context(), s.SQL(q), args...).Scan(&got); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return tx
}

// mustNotWait runs op while holder holds its locks, and fails the test if
// a statement of the test's tables (named with prefix) waits for a lock
// meanwhile: the only transaction holding locks is holder. Then it ends
// holder, so that a waiting op can finish.
func mustNotWait(t *testing.T, s *sqlstore.Store, holder *sql.Tx, prefix string, op func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	done := make(chan error, 1)
	go func() { done <- op(ctx) }()
	var waited string
	for waited == "" {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			_ = holder.Rollback()
			return
		default:
		}
		err := s.DB().QueryRowContext(ctx, `SELECT trx_query FROM information_schema.innodb_trx
			WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ? LIMIT 1`, "%"+prefix+"%").Scan(&waited)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			time.Sleep(5 * time.Millisecond) // polling the server, which signals nothing
		case err != nil:
			t.Fatal(err)
		}
	}
	_ = holder.Rollback()
	err := <-done
	if len(waited) > 300 {
		waited = waited[:300] + "…"
	}
	t.Errorf("a statement waited for another node's row lock (then returned %v): %s", err, waited)
}
