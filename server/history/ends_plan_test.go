package history

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestEndsFindTheExecutionsByKey writes 5,000 executions to a history
// PostgreSQL never analyzed: a batch's ends are then written one by one,
// and the table is analyzed. Once it is, they are written with one
// statement (endsSQL), which this plans as PostgreSQL plans it once for
// every call (a generic plan), for batches of 2, 8 and 64 ends: each reads
// the executions by the primary key, on both of its columns, and never
// scans the table or one of its other indexes. (Before the analysis, the
// same plans read every execution of the scheduler.)
func TestEndsFindTheExecutionsByKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := sqlstore.Open(ctx, dbtest.PostgresURL(t), &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: log})
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h, err := New(ctx, st, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	const executions = 5000
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var recs []Record
	for i := range executions {
		recs = append(recs, Record{Start: &Execution{
			ID: fmt.Sprintf("x%05d", i), JobGroup: "g", JobName: "j", TriggerGroup: "g", TriggerName: "j",
			NodeID: "n1", ScheduledTime: t0, StartedTime: t0.Add(time.Duration(i) * time.Millisecond),
		}})
	}
	if _, err := h.RecordBatch(ctx, recs); err != nil {
		t.Fatalf("RecordBatch: %v", err)
	}

	if h.endsAtOnce(ctx) {
		t.Fatal("ends written with one statement on a history PostgreSQL never analyzed")
	}
	deadline := time.Now().Add(30 * time.Second)
	for !h.endsAtOnce(ctx) {
		if time.Now().After(deadline) {
			t.Fatal("the history was not analyzed within 30s of the first batch of ends")
		}
		time.Sleep(50 * time.Millisecond)
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
		args := make([]string, n)
		for i := range args {
			args[i] = fmt.Sprintf("'x%05d', 'succeeded', 1, '', '', FALSE, NULL", 7*i+1)
		}
		if _, err := conn.ExecContext(ctx, "PREPARE ends AS "+st.SQL(endsSQL(n))); err != nil {
			t.Fatalf("PREPARE: %v", err)
		}
		var plan strings.Builder
		rows, err := conn.QueryContext(ctx, "EXPLAIN (COSTS OFF) EXECUTE ends("+strings.Join(args, ", ")+", '"+st.SchedulerName()+"')")
		if err != nil {
			t.Fatalf("EXPLAIN: %v", err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatalf("reading the plan: %v", err)
			}
			plan.WriteString(line + "\n")
		}
		_ = rows.Close()
		if _, err := conn.ExecContext(ctx, "DEALLOCATE ends"); err != nil {
			t.Fatalf("DEALLOCATE: %v", err)
		}
		p := plan.String()
		if !strings.Contains(p, "server_executions_pkey") || !byKey.MatchString(p) || strings.Contains(p, "Seq Scan") ||
			strings.Contains(p, "Bitmap") || strings.Contains(p, "server_executions_outcome") {
			t.Errorf("%d ends: the executions are not read by their key:\n%s", n, p)
		}
	}
}

// TestEndsAtOnce writes a batch's ends with one statement, on an analyzed
// history, and checks that they apply as they do one by one: to running
// and node_lost executions, not to an ended one (ErrNotRunning) or an
// unknown one (ErrNotFound), and to the row already there of an execution
// recorded whole; two ends of one execution in a batch apply one after the
// other, the second finding it ended.
func TestEndsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := sqlstore.Open(ctx, dbtest.PostgresURL(t), &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: log})
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h, err := New(ctx, st, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	exec := func(id string) *Execution {
		return &Execution{ID: id, JobGroup: "g", JobName: "j", TriggerGroup: "g", TriggerName: "j", NodeID: "n1", ScheduledTime: t0, StartedTime: t0}
	}
	for _, id := range []string{"a", "b", "c", "ended", "lost", "whole", "twice"} {
		if err := h.Start(ctx, exec(id)); err != nil {
			t.Fatalf("Start(%s): %v", id, err)
		}
	}
	if err := h.Finish(ctx, "ended", Finish{Outcome: OutcomeSucceeded, FinishedTime: t0.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := h.MarkLost(ctx, "lost", t0.Add(time.Second), "node n1 lost"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(ctx, "ANALYZE "+st.SQL("{p}server_executions")); err != nil {
		t.Fatalf("ANALYZE: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !h.endsAtOnce(ctx) {
		if time.Now().After(deadline) {
			t.Fatal("endsAtOnce still false 10s after ANALYZE")
		}
		time.Sleep(50 * time.Millisecond)
	}

	end := func(o Outcome, out string) *Finish {
		return &Finish{Outcome: o, FinishedTime: t0.Add(2 * time.Second), Error: "e-" + string(o), Output: out}
	}
	recs := []Record{
		{ID: "c", End: end(OutcomeFailed, "c-out")},
		{ID: "a", End: end(OutcomeSucceeded, "a-out")},
		{ID: "ended", End: end(OutcomeFailed, "")},
		{ID: "unknown", End: end(OutcomeFailed, "")},
		{ID: "lost", End: end(OutcomeSucceeded, "late")},
		{Start: exec("whole"), End: end(OutcomeTimedOut, "")},
		{ID: "b", End: end(OutcomeKilled, "")},
	}
	errs, err := h.RecordBatch(ctx, recs)
	if err != nil {
		t.Fatalf("RecordBatch: %v", err)
	}
	for i, want := range []error{nil, nil, ErrNotRunning, ErrNotFound, nil, nil, nil} {
		if !errors.Is(errs[i], want) || (want == nil && errs[i] != nil) {
			t.Errorf("record %d (%s): error %v, want %v", i, recs[i].ID, errs[i], want)
		}
	}
	for id, want := range map[string]struct {
		outcome Outcome
		output  string
	}{
		"a": {OutcomeSucceeded, "a-out"}, "b": {OutcomeKilled, ""}, "c": {OutcomeFailed, "c-out"},
		"ended": {OutcomeSucceeded, ""}, "lost": {OutcomeSucceeded, "late"}, "whole": {OutcomeTimedOut, ""},
	} {
		got, err := h.Get(ctx, id)
		if err != nil || got.Outcome != want.outcome || got.Output != want.output {
			t.Errorf("%s = %+v, %v; want %s with output %q", id, got, err, want.outcome, want.output)
		}
	}

	errs, err = h.RecordBatch(ctx, []Record{{ID: "twice", End: end(OutcomeFailed, "first")}, {ID: "twice", End: end(OutcomeSucceeded, "second")}})
	if err != nil || errs[0] != nil || !errors.Is(errs[1], ErrNotRunning) {
		t.Errorf("two ends of one execution: %v, %v; want the second ErrNotRunning", errs, err)
	}
	if got, err := h.Get(ctx, "twice"); err != nil || got.Outcome != OutcomeFailed || got.Output != "first" {
		t.Errorf("twice = %+v, %v; want the first end", got, err)
	}
}
