package dispatch_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/dispatch"
)

// TestRunChangesAreHOTUpdates takes and reports runs on PostgreSQL and
// checks that each change of a run's state was a HOT update, one that
// writes no index entry: no index of the runs holds a column a take or a
// report changes (nor a cancel or a loss), and the fill factor leaves
// room in each page for both new versions of its rows, so that neither
// waits for the versions before to be pruned (which waits for every
// older transaction of the database, the other tests' too).
func TestRunChangesAreHOTUpdates(t *testing.T) {
	t.Parallel()
	const n = 100
	s, st := newServiceOn(t, dbtest.PostgresURL(t), nil)
	ctx := t.Context()
	stats := func() (upd, hot int64) {
		t.Helper()
		err := st.DB().QueryRowContext(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = $1::regclass`,
			st.SQL("{p}dispatch_runs")).Scan(&upd, &hot)
		if err != nil {
			t.Fatalf("reading the statistics of the runs: %v", err)
		}
		return upd, hot
	}
	e := register(t, s, "hot", nil, "h")
	target := api.ExecutorTarget{Group: "hot", Routing: api.RoutingFirst, Handler: "h"}
	for range n {
		if _, err := handover(t, s, target, nil); err != nil {
			t.Fatalf("Handover: %v", err)
		}
	}
	upd0, hot0 := stats()
	var taken []api.ExecutorRun
	for len(taken) < n {
		work, err := s.Take(ctx, e.ID, n, 0)
		if err != nil {
			t.Fatalf("Take: %v", err)
		}
		if len(work.Runs) == 0 {
			t.Fatalf("Take found no run after %d of %d", len(taken), n)
		}
		taken = append(taken, work.Runs...)
	}
	for _, r := range taken {
		if err := s.Report(ctx, e.ID, r.ID, api.ExecutorResult{Token: r.Token, Outcome: "succeeded"}); err != nil {
			t.Fatalf("Report: %v", err)
		}
	}
	// The counters of other sessions reach the statistics when those
	// sessions flush them: wait for the updates to show.
	const want = 2 * n
	deadline := time.Now().Add(time.Minute)
	upd, hot := stats()
	for upd-upd0 < want && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		upd, hot = stats()
	}
	if upd-upd0 != want {
		t.Fatalf("the runs table counted %d updates after %d takes and %d reports, want %d", upd-upd0, n, n, want)
	}
	if hot-hot0 != want {
		t.Errorf("%d of %d updates (takes, then reports) were HOT updates, want all", hot-hot0, want)
	}
}

// TestTakeLimit hands three runs to one executor and takes them two at a
// time: the first Take gets the two handed over first, the next the
// third, on every database.
func TestTakeLimit(t *testing.T) {
	t.Parallel()
	forEachDB(t, nil, func(t *testing.T, s *dispatch.Service) {
		e := register(t, s, "limit", nil, "h")
		target := api.ExecutorTarget{Group: "limit", Routing: api.RoutingFirst, Handler: "h"}
		var ids []string
		for range 3 {
			a, err := handover(t, s, target, nil)
			if err != nil {
				t.Fatalf("Handover: %v", err)
			}
			ids = append(ids, a.RunID)
		}
		for _, want := range [][]string{ids[:2], ids[2:]} {
			work, err := s.Take(t.Context(), e.ID, 2, 0)
			if err != nil {
				t.Fatalf("Take: %v", err)
			}
			var got []string
			for _, r := range work.Runs {
				got = append(got, r.ID)
			}
			slices.Sort(got)
			want = slices.Sorted(slices.Values(want))
			if !slices.Equal(got, want) {
				t.Errorf("Take with max 2 took %v, want %v", got, want)
			}
		}
	})
}

// TestFencesFindTheRunByKey plans the statements that fence a result
// and a log line, as PostgreSQL plans them once for every call (a
// generic plan), on a runs table it never analyzed: each reads its run
// by the primary key. Both also name the run's executor, and the
// executor's index looked as cheap to the planner: it took it, and every
// result walked every run the executor had had since the last vacuum.
func TestFencesFindTheRunByKey(t *testing.T) {
	t.Parallel()
	s, st := newServiceOn(t, dbtest.PostgresURL(t), nil)
	ctx := t.Context()
	conn, err := st.DB().Conn(ctx)
	if err != nil {
		t.Fatalf("Conn: %v", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatalf("SET: %v", err)
	}
	for _, c := range []struct {
		name, sql, execute string
	}{
		{"report", dispatch.ReportSQL(s), "EXECUTE report('succeeded', '', '', NULL, NULL, 's', 'r', 'e', 1)"},
		{"fence", dispatch.FenceSQL(s), "EXECUTE fence('s', 'r', 'e', 1)"},
	} {
		if _, err := conn.ExecContext(ctx, "PREPARE "+c.name+" AS "+c.sql); err != nil {
			t.Fatalf("PREPARE %s: %v", c.name, err)
		}
		rows, err := conn.QueryContext(ctx, "EXPLAIN "+c.execute)
		if err != nil {
			t.Fatalf("EXPLAIN %s: %v", c.name, err)
		}
		var plan strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatalf("reading the plan of %s: %v", c.name, err)
			}
			plan.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("reading the plan of %s: %v", c.name, err)
		}
		rows.Close()
		if !strings.Contains(plan.String(), "dispatch_runs_pkey") {
			t.Errorf("the %s statement does not read its run by the primary key:\n%s", c.name, plan.String())
		}
	}
}

// TestWatchVacuumsTheRuns checks that a node has PostgreSQL vacuum the
// runs' table once it deleted enough runs (here 10 instead of
// thousands), so that a busy queue does not wait for autovacuum's next
// visit, up to a minute away, while its dead rows pile up.
func TestWatchVacuumsTheRuns(t *testing.T) {
	t.Parallel()
	s, st := newServiceOn(t, dbtest.PostgresURL(t), &dispatch.Options{PollInterval: 20 * time.Millisecond})
	dispatch.SetVacuumAfter(s, 10)
	ctx, cancel := context.WithCancel(t.Context())
	watched := make(chan struct{})
	defer func() { cancel(); <-watched }()
	// Autovacuum would make the test pass without the node (it counts
	// apart, but may leave nothing to do).
	if _, err := st.DB().ExecContext(ctx, st.SQL("ALTER TABLE {p}dispatch_runs SET (autovacuum_enabled = false)")); err != nil {
		t.Fatalf("turning autovacuum off: %v", err)
	}
	vacuums := func() int64 {
		t.Helper()
		var n int64
		err := st.DB().QueryRowContext(ctx, `SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = $1::regclass`,
			st.SQL("{p}dispatch_runs")).Scan(&n)
		if err != nil {
			t.Fatalf("reading the statistics of the runs: %v", err)
		}
		return n
	}
	register(t, s, "vac", nil, "h")
	target := api.ExecutorTarget{Group: "vac", Routing: api.RoutingFirst, Handler: "h"}
	release := func(n int) {
		t.Helper()
		for range n {
			a, err := handover(t, s, target, nil)
			if err != nil {
				t.Fatalf("Handover: %v", err)
			}
			s.Release(a.RunID)
		}
	}
	go func() {
		defer close(watched)
		s.Watch(ctx, "node-a")
	}()
	release(9)
	// Nine deleted: no vacuum. Give Watch passes to delete them, and the
	// counters time to show.
	time.Sleep(time.Second)
	if n := vacuums(); n != 0 {
		t.Fatalf("the runs' table was vacuumed %d times after 9 runs deleted, want 0", n)
	}
	release(2)
	deadline := time.Now().Add(30 * time.Second)
	for vacuums() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := vacuums(); n != 1 {
		t.Fatalf("the runs' table was vacuumed %d times after 11 runs deleted, want 1", n)
	}
}
