package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chime-scheduler/chime/store"
)

// lastStatement keeps the last statement a pgx connection sent (that
// contains the text contains, when set), with its arguments, to plan it
// again.
type lastStatement struct {
	contains string
	mu       sync.Mutex
	sql      string
	args     []any
}

// TraceQueryStart keeps the statement.
func (l *lastStatement) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if !strings.Contains(d.SQL, l.contains) {
		return ctx
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sql, l.args = d.SQL, d.Args
	return ctx
}

// TraceQueryEnd does nothing.
func (l *lastStatement) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *lastStatement) get() (string, []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sql, l.args
}

// TestJobTriggersReadByIndexWithoutStatistics lists one job's triggers
// among 2,000 jobs' that PostgreSQL has no statistics of, as after a bulk
// of new jobs and before autovacuum analyzes the table (the server reads
// a new job's triggers back for its answer and its version), and plans
// the statement the store sent with its arguments: it reads the job's
// triggers through triggers_job. With ORDER BY on the trigger key it was
// planned as a walk of the primary key that filtered every trigger of
// the scheduler (18 ms a call at 4,760 triggers, growing with them). The
// triggers still come back in key order.
func TestJobTriggersReadByIndexWithoutStatistics(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	last := &lastStatement{}
	s := openTraced(t, last)
	db := s.DB()
	// The test's own schema holds the tables; autovacuum must not
	// analyze them during the test.
	if _, err := db.ExecContext(ctx, s.SQL(`ALTER TABLE {p}triggers SET (autovacuum_enabled = off)`)); err != nil {
		t.Fatalf("turning autovacuum off: %v", err)
	}

	due := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	trigger := func(job store.Key, name string) store.TriggerRecord {
		return store.TriggerRecord{Key: store.Key{Group: "g", Name: name}, JobKey: job, Kind: "simple",
			Schedule: []byte(`{"repeatCount":0}`), StartTime: due, NextFireTime: due}
	}
	jobs := make([]store.JobInsert, 2000)
	for i := range jobs {
		jk := store.Key{Group: "g", Name: fmt.Sprintf("j%04d", i)}
		jobs[i] = store.JobInsert{Job: store.JobRecord{Key: jk, Type: "noop"}, Triggers: []store.TriggerRecord{trigger(jk, fmt.Sprintf("t%04d", i))}}
	}
	// Job j1000 gets two more triggers, stored after its first and named
	// before it.
	j := jobs[1000].Job.Key
	jobs[1000].Triggers = append(jobs[1000].Triggers, trigger(j, "a2"), trigger(j, "a1"))
	if err := s.JobsInsert(ctx, &store.JobsInsertParams{Jobs: jobs}); err != nil {
		t.Fatalf("JobsInsert: %v", err)
	}

	got, err := s.TriggerList(ctx, &store.TriggerListParams{JobKey: &j})
	if err != nil {
		t.Fatalf("TriggerList: %v", err)
	}
	q, args := last.get()
	var names []string
	for _, tr := range got {
		names = append(names, tr.Key.Name)
	}
	if want := []string{"a1", "a2", "t1000"}; !slices.Equal(names, want) {
		t.Errorf("TriggerList of job %s: %v, want %v", j, names, want)
	}

	var never bool
	err = db.QueryRowContext(ctx, `SELECT last_analyze IS NULL AND last_autoanalyze IS NULL FROM pg_stat_user_tables WHERE relid = to_regclass($1)`,
		s.SQL("{p}triggers")).Scan(&never)
	if err != nil {
		t.Fatalf("reading whether the triggers were analyzed: %v", err)
	}
	if !never {
		t.Fatal("the triggers' table was analyzed: the test needs a table without statistics")
	}
	text := explain(t, db, q, args)
	if !strings.Contains(text, "triggers_job") || strings.Contains(text, "Filter:") {
		t.Errorf("the job's triggers are not read through triggers_job alone:\n%s\n%s", q, text)
	}
}

// explain returns PostgreSQL's plan of statement q with args, one line a
// node.
func explain(t *testing.T, db *sql.DB, q string, args []any) string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "EXPLAIN "+q, args...)
	if err != nil {
		t.Fatalf("planning %s: %v", q, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatalf("reading the plan: %v", err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading the plan: %v", err)
	}
	return strings.Join(plan, "\n")
}
