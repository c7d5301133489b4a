package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// statementLog records the statements a pgx connection sends, begin and
// commit included: each is one round trip to PostgreSQL.
type statementLog struct {
	mu   sync.Mutex
	sent []string
}

// TraceQueryStart records a statement, but those of the store's one-time
// check of its tables' statistics (analyze.go), which its own goroutine
// sends at any moment of a firing and which are no part of the path.
func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.HasPrefix(d.SQL, "ANALYZE ") || strings.Contains(d.SQL, "FROM pg_stat_user_tables") {
		return ctx
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, d.SQL)
	return ctx
}

// TraceQueryEnd does nothing.
func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// take returns the statements sent since the last take and forgets them.
func (l *statementLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.sent
	l.sent = nil
	return out
}

// openCounted opens a PostgreSQL store whose statements log records.
func openCounted(t *testing.T) (*sqlstore.Store, *statementLog) {
	t.Helper()
	log := &statementLog{}
	s := openTraced(t, log)
	log.take()
	return s, log
}

// openTraced opens a PostgreSQL store, in a schema of the test's own,
// whose connections report their statements to tracer.
func openTraced(t *testing.T, tracer pgx.QueryTracer) *sqlstore.Store {
	t.Helper()
	cfg, err := pgx.ParseConfig(dbtest.PostgresURL(t))
	if err != nil {
		t.Fatalf("parsing the PostgreSQL URL: %v", err)
	}
	cfg.Tracer = tracer
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = db.Close() })
	s, err := sqlstore.OpenDB(t.Context(), db, sqlstore.Postgres, &sqlstore.Options{
		SchedulerName: schedName(),
		Logger:        slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("OpenDB: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// dueOneShots stores n one-shot triggers, each with its own job that is
// not durable and allows concurrency, all due an hour ago, registers a
// node and returns its lease.
func dueOneShots(t *testing.T, s *sqlstore.Store, n int) store.Lease {
	t.Helper()
	ctx := t.Context()
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
	node, err := s.NodeRegister(ctx, "n1")
	if err != nil {
		t.Fatalf("NodeRegister: %v", err)
	}
	return store.Lease{NodeID: node.ID, Epoch: node.Epoch}
}

// fireAndComplete claims the due triggers, fires them (their last firing)
// and completes their executions, each step in one store call, and
// returns the statements each step sent.
func fireAndComplete(t *testing.T, s *sqlstore.Store, log *statementLog, lease store.Lease, n int) (acquire, fire, complete []string) {
	t.Helper()
	ctx := t.Context()
	log.take()
	recs, err := s.TriggersAcquire(ctx, &store.TriggersAcquireParams{Lease: lease, NoLaterThan: time.Now(), Limit: n})
	if err != nil || len(recs) != n {
		t.Fatalf("TriggersAcquire = %d triggers, %v; want %d", len(recs), err, n)
	}
	acquire = log.take()
	firings := make([]store.TriggerFiring, n)
	for i, rec := range recs {
		advanced := rec
		advanced.PreviousFireTime, advanced.NextFireTime = rec.NextFireTime, time.Time{}
		advanced.TimesTriggered++
		firings[i] = store.TriggerFiring{Trigger: advanced, Execution: store.ExecutionRecord{
			TriggerKey: rec.Key, JobKey: rec.JobKey, ScheduledTime: rec.NextFireTime, FiredTime: time.Now(),
			NodeID: lease.NodeID, Epoch: lease.Epoch, State: store.ExecutionExecuting,
		}}
	}
	outs, err := s.TriggersFire(ctx, &store.TriggersFireParams{Lease: lease, Firings: firings})
	if err != nil {
		t.Fatalf("TriggersFire: %v", err)
	}
	fire = log.take()
	completions := make([]store.ExecutionCompletion, n)
	for i, o := range outs {
		if o.Err != nil {
			t.Fatalf("firing %d: %v", i, o.Err)
		}
		completions[i] = store.ExecutionCompletion{ID: firings[i].Execution.ID, State: store.ExecutionSucceeded,
			FinishedTime: time.Now(), Instruction: store.InstructionDeleteTrigger}
	}
	errs, err := s.ExecutionsComplete(ctx, &store.ExecutionsCompleteParams{Lease: lease, Completions: completions})
	if err != nil {
		t.Fatalf("ExecutionsComplete: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("completion %d: %v", i, err)
		}
	}
	complete = log.take()
	return acquire, fire, complete
}

// TestStatementsPerFiring counts the statements (round trips, begin and
// commit included) PostgreSQL receives to claim, fire and complete the
// last firing of one-shot triggers that are due, one firing at a time and
// fifty at once: a statement added to the path fails it. The number does
// not grow with the batch. Completing deletes the triggers and their jobs
// (not durable, left without a trigger) in one statement, and sends no
// unblocking UPDATE, since no trigger of theirs is BLOCKED.
func TestStatementsPerFiring(t *testing.T) {
	t.Parallel()
	const (
		// begin, lease check, claim, commit
		wantAcquire = 4
		// begin, lease check (which sets plan_cache_mode), locking read
		// of the triggers, read of the jobs, INSERT of the executions,
		// UPDATE of the triggers, commit
		wantFire = 7
		// begin, lease check (which sets plan_cache_mode), locking read
		// of the executions, read of the jobs (and whether they have a
		// BLOCKED trigger), UPDATE of the executions, DELETE of the
		// triggers and the jobs, commit
		wantComplete = 7
	)
	for _, n := range []int{1, 50} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			s, log := openCounted(t)
			lease := dueOneShots(t, s, n)
			acquire, fire, complete := fireAndComplete(t, s, log, lease, n)
			for _, step := range []struct {
				name string
				sent []string
				want int
			}{{"acquire", acquire, wantAcquire}, {"fire", fire, wantFire}, {"complete", complete, wantComplete}} {
				if len(step.sent) != step.want {
					t.Errorf("%s of %d firings sent %d statements, want %d:\n%s", step.name, n, len(step.sent), step.want,
						strings.Join(step.sent, "\n"))
				}
			}
			ctx := t.Context()
			for i := range n {
				if _, err := s.JobGet(ctx, store.Key{Group: "g", Name: fmt.Sprintf("j%04d", i)}); !errors.Is(err, store.ErrJobNotFound) {
					t.Fatalf("job %d after its last firing completed: %v, want ErrJobNotFound", i, err)
				}
			}
			trs, err := s.TriggerList(ctx, &store.TriggerListParams{})
			if err != nil || len(trs) != 0 {
				t.Fatalf("TriggerList after the last firings completed = %d triggers, %v; want none", len(trs), err)
			}
		})
	}
}

// TestCompletionIsHOTUpdate checks on PostgreSQL that completing an
// execution writes no index entry: each completion is a HOT update of
// the executions table (n_tup_hot_upd grows by one per completion),
// because no index of the table holds a column a completion changes and
// the table's pages keep room for the new row version.
func TestCompletionIsHOTUpdate(t *testing.T) {
	t.Parallel()
	const n = 200
	s, log := openCounted(t)
	lease := dueOneShots(t, s, n)
	ctx := t.Context()
	stats := func() (upd, hot int64) {
		t.Helper()
		// The counters of other sessions reach the statistics when those
		// sessions flush them: wait for the updates to show.
		err := s.DB().QueryRowContext(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = $1::regclass`,
			s.SQL("{p}executions")).Scan(&upd, &hot)
		if err != nil {
			t.Fatalf("reading the statistics of the executions: %v", err)
		}
		return upd, hot
	}
	upd0, hot0 := stats()
	fireAndComplete(t, s, log, lease, n)
	deadline := time.Now().Add(time.Minute)
	upd, hot := stats()
	for upd-upd0 < n && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		upd, hot = stats()
	}
	if upd-upd0 != n {
		t.Fatalf("the executions table counted %d updates after %d completions", upd-upd0, n)
	}
	if hot-hot0 != n {
		t.Errorf("%d of %d completions were HOT updates, want all", hot-hot0, n)
	}
}
