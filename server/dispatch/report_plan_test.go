package dispatch

import (
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestReportsFindTheRunsByKey records a batch of results on a runs'
// table of 2,000 runs that PostgreSQL never analyzed, then plans the
// statement that records a batch (reportsSQL) as PostgreSQL plans it
// once for every call (a generic plan), for batches of 2, 8 and 64
// results: the first batch had the table analyzed, and each plan reads
// its runs by the primary key, on both of its columns, and never scans
// the table. Joined to its rows only, a batch of 64 was planned as a
// hash join with a sequential scan of the runs, which a busy node would
// pay for every batch; without statistics, every batch read all the
// scheduler's runs.
func TestReportsFindTheRunsByKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := sqlstore.Open(ctx, dbtest.PostgresURL(t), &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: log})
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s, err := New(ctx, st, &Options{Logger: log})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	const runs = 2000
	_, err = st.DB().ExecContext(ctx, st.SQL(`INSERT INTO {p}dispatch_runs (sched_name, `+runCols+`,
		cancel_told, outcome, error_message, output, logs, assigned)
		SELECT ?, 'r' || g, 'x' || g, 1, 'g', 'h', 'g', 'j', 0, NULL, FALSE, 0, 'e' || (g % 10), 1, 'n', 'running', 0, 0,
		FALSE, '', '', '', NULL, 0 FROM generate_series(1, CAST(? AS INTEGER)) AS g`), st.SchedulerName(), runs)
	if err != nil {
		t.Fatalf("inserting %d runs: %v", runs, err)
	}

	// A batch of two results, both refused (no executor e0 holds r1).
	batch := []*report{
		{executor: "e0", runID: "r1", r: api.ExecutorResult{Token: 1, Outcome: "succeeded"}},
		{executor: "e0", runID: "r2", r: api.ExecutorResult{Token: 1, Outcome: "succeeded"}},
	}
	if err := s.reportTx(ctx, batch); err != nil {
		t.Fatalf("recording a batch: %v", err)
	}
	for _, rep := range batch {
		if !errors.Is(rep.err, ErrStale) {
			t.Errorf("result of %s by %s: %v, want ErrStale", rep.runID, rep.executor, rep.err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var tuples float64
		err := st.DB().QueryRowContext(ctx, `SELECT reltuples FROM pg_class WHERE oid = $1::regclass`,
			st.SQL("{p}dispatch_runs")).Scan(&tuples)
		if err != nil {
			t.Fatalf("reading the statistics of the runs: %v", err)
		}
		if tuples > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the runs' table was not analyzed within 30s of the first batch")
		}
		time.Sleep(20 * time.Millisecond)
	}

	conn, err := st.DB().Conn(ctx)
	if err != nil {
		t.Fatalf("Conn: %v", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatalf("SET: %v", err)
	}
	byKey := regexp.MustCompile(`Index Cond: .*sched_name.* AND .*\bid\b`)
	for _, n := range []int{2, 8, 64} {
		// One array a column: index, run, executor, token, outcome,
		// error, output, log lines.
		cols := make([][]string, 8)
		for i := range n {
			for c, v := range []string{strconv.Itoa(i), fmt.Sprintf("r%d", 7*i+1), fmt.Sprintf("e%d", (7*i+1)%10), "1", "succeeded", "", "", "NULL"} {
				if v != "NULL" && c != 0 && c != 3 {
					v = quote(v)
				}
				cols[c] = append(cols[c], v)
			}
		}
		args := make([]string, len(cols))
		for c, vs := range cols {
			typ := "TEXT[]"
			if c == 0 || c == 3 {
				typ = "BIGINT[]"
			}
			args[c] = "CAST(ARRAY[" + strings.Join(vs, ", ") + "] AS " + typ + ")"
		}
		plan := explain(t, conn, st.SQL(reportsSQL), strings.Join(args, ", ")+", NULL, "+quote(st.SchedulerName()))
		if !strings.Contains(plan, "dispatch_runs_pkey") || !byKey.MatchString(plan) || strings.Contains(plan, "Seq Scan") {
			t.Errorf("%d results: the runs are not read by their key:\n%s", n, plan)
		}
	}
}

// explain returns the generic plan of stmt on conn, with args.
func explain(t *testing.T, conn *sql.Conn, stmt, args string) string {
	t.Helper()
	ctx := t.Context()
	if _, err := conn.ExecContext(ctx, "PREPARE reports AS "+stmt); err != nil {
		t.Fatalf("PREPARE: %v", err)
	}
	defer func() { _, _ = conn.ExecContext(ctx, "DEALLOCATE reports") }()
	rows, err := conn.QueryContext(ctx, "EXPLAIN (COSTS OFF) EXECUTE reports("+args+")")
	if err != nil {
		t.Fatalf("EXPLAIN: %v", err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatalf("reading the plan: %v", err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading the plan: %v", err)
	}
	return plan.String()
}

// quote is s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
