package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/dispatch"
	"github.com/chime-scheduler/chime/store/sqlstore"
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

// TestTakeHanded takes runs by their keys, as a Take does with the runs
// its node handed the executor, on every database: it starts only runs
// still assigned to that executor, each once, and none once the lease
// lapsed.
func TestTakeHanded(t *testing.T) {
	t.Parallel()
	forEachURL(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s, now, _ := newClockedService(t, url)
		e1 := register(t, s, "handed", nil, "h")
		now.Add(int64(time.Millisecond)) // registered after e1: RoutingFirst picks e1
		e2 := register(t, s, "handed", nil, "h")
		target := api.ExecutorTarget{Group: "handed", Routing: api.RoutingFirst, Handler: "h"}
		var ids []string
		for range 3 {
			a, err := handover(t, s, target, map[string]any{"n": len(ids)})
			if err != nil {
				t.Fatalf("Handover: %v", err)
			}
			if a.ExecutorID != e1.ID {
				t.Fatalf("handed to %s, want the first executor %s", a.ExecutorID, e1.ID)
			}
			ids = append(ids, a.RunID)
		}
		took := func(who *dispatch.Executor, ids ...string) []string {
			t.Helper()
			work, err := dispatch.TakeHanded(ctx, s, who.ID, ids...)
			if err != nil {
				t.Fatalf("TakeHanded: %v", err)
			}
			var got []string
			for _, r := range work.Runs {
				if r.Token != 1 || r.Handler != "h" || r.Params["n"] == nil {
					t.Errorf("run %+v: want token 1, handler h and its parameters", r)
				}
				got = append(got, r.ID)
			}
			slices.Sort(got)
			return got
		}
		if got := took(e2, ids[0]); len(got) != 0 {
			t.Errorf("another executor took %v of the first's runs", got)
		}
		if got, want := took(e1, ids[0], ids[1], "unknown"), slices.Sorted(slices.Values(ids[:2])); !slices.Equal(got, want) {
			t.Errorf("took %v, want %v", got, want)
		}
		if got := took(e1, ids[0], ids[1]); len(got) != 0 {
			t.Errorf("took %v again", got)
		}
		// The third is left assigned: a Take reads it.
		if work, err := s.Take(ctx, e1.ID, 10, 0); err != nil || len(work.Runs) != 1 || work.Runs[0].ID != ids[2] {
			t.Errorf("Take: %+v, %v; want run %s alone", work, err, ids[2])
		}
		a, err := handover(t, s, target, map[string]any{"n": 3})
		if err != nil {
			t.Fatalf("Handover: %v", err)
		}
		now.Add(int64(11 * time.Second))
		if got := took(e1, a.RunID); len(got) != 0 {
			t.Errorf("took %v after the lease lapsed", got)
		}
		if _, err := s.Take(ctx, e1.ID, 10, 0); !errors.Is(err, dispatch.ErrLeaseLost) {
			t.Errorf("Take after the lease lapsed: %v, want ErrLeaseLost", err)
		}
	})
}

// TestBusyTakeHearsOtherNodesCancels: a Take takes the runs its node
// handed by their keys, which tells no cancel request, so a cancel
// request made on another node must still reach an executor kept busy
// with new runs, within a few PollIntervals.
func TestBusyTakeHearsOtherNodesCancels(t *testing.T) {
	t.Parallel()
	forEachURL(t, func(t *testing.T, url string) {
		ctx := t.Context()
		opts := &dispatch.Options{PollInterval: 20 * time.Millisecond}
		a, st := newServiceOn(t, url, opts)
		b := newPeer(t, url, st, opts)
		e := register(t, a, "busy", nil, "h")
		target := api.ExecutorTarget{Group: "busy", Routing: api.RoutingFirst, Handler: "h"}
		first, err := handover(t, a, target, nil)
		if err != nil {
			t.Fatalf("Handover: %v", err)
		}
		if w, err := a.Take(ctx, e.ID, 10, 0); err != nil || len(w.Runs) != 1 {
			t.Fatalf("Take: %+v, %v; want the first run", w, err)
		}
		if err := b.RequestCancel(ctx, first); err != nil {
			t.Fatalf("RequestCancel on the other node: %v", err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for takes := 0; ; takes++ {
			if _, err := handover(t, a, target, nil); err != nil {
				t.Fatalf("Handover: %v", err)
			}
			w, err := a.Take(ctx, e.ID, 10, 0)
			if err != nil {
				t.Fatalf("Take: %v", err)
			}
			if len(w.Cancel) == 1 && w.Cancel[0].ID == first.RunID {
				t.Logf("told after %d takes", takes)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("a busy executor was not told of a cancel request made on another node in %d takes", takes)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// newPeer is another node's Service on st's database and scheduler.
func newPeer(t *testing.T, url string, st *sqlstore.Store, opts *dispatch.Options) *dispatch.Service {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	peer, err := sqlstore.Open(t.Context(), url, &sqlstore.Options{SchedulerName: st.SchedulerName(), Logger: log})
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = peer.Close() })
	o := *opts
	o.Logger = log
	s, err := dispatch.New(t.Context(), peer, &o)
	if err != nil {
		t.Fatalf("dispatch.New: %v", err)
	}
	return s
}

// TestOtherNodesHandoverWakesTake: on PostgreSQL a node tells the others
// of the runs it hands over and the cancels it requests, so that a Take
// waiting on another node returns them at once rather than at its next
// read (here a minute away).
func TestOtherNodesHandoverWakesTake(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	ctx := t.Context()
	opts := &dispatch.Options{PollInterval: time.Minute}
	a, st := newServiceOn(t, url, opts)
	b := newPeer(t, url, st, opts)
	watchCtx, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); b.Watch(watchCtx, "node-b") }()
	t.Cleanup(func() { stop(); <-watched })
	e := register(t, a, "woken", nil, "h")
	target := api.ExecutorTarget{Group: "woken", Routing: api.RoutingRoundRobin, Handler: "h"}
	// wait starts a Take on b, and gives it time to find nothing.
	wait := func() <-chan *api.ExecutorWork {
		got := make(chan *api.ExecutorWork, 1)
		go func() {
			w, err := b.Take(ctx, e.ID, 10, 30*time.Second)
			if err != nil {
				t.Errorf("Take: %v", err)
			}
			got <- w
		}()
		time.Sleep(200 * time.Millisecond)
		return got
	}
	// b's listener may not be listening yet: hand over until its Take
	// hears of a run.
	got := wait()
	var w *api.ExecutorWork
	for deadline := time.Now().Add(10 * time.Second); w == nil; {
		if time.Now().After(deadline) {
			t.Fatal("a Take on another node did not hear of a hand-over in 10s")
		}
		if _, err := handover(t, a, target, nil); err != nil {
			t.Fatalf("Handover: %v", err)
		}
		select {
		case w = <-got:
		case <-time.After(time.Second):
		}
	}
	if len(w.Runs) == 0 {
		t.Fatalf("the Take on the other node returned %+v, want a run", w)
	}
	run := w.Runs[0]
	got = wait()
	if err := a.RequestCancel(ctx, &dispatch.Assignment{RunID: run.ID, Token: run.Token, ExecutorID: e.ID}); err != nil {
		t.Fatalf("RequestCancel: %v", err)
	}
	select {
	case w := <-got:
		if len(w.Cancel) != 1 || w.Cancel[0].ID != run.ID {
			t.Errorf("the Take on the other node returned %+v, want the cancel of %s", w, run.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a Take on another node did not hear of the cancel request")
	}
}

// TestTakesOfSeveralExecutorsTogether makes the takes by key of several
// executors as one batch: each executor gets the runs handed to it that
// are still assigned, and only those, while its lease holds; on
// PostgreSQL one statement makes them all.
func TestTakesOfSeveralExecutorsTogether(t *testing.T) {
	t.Parallel()
	forEachURL(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s, now, _ := newClockedService(t, url)
		var execs []*dispatch.Executor
		runs := make(map[string][]string) // by executor ID
		for i := range 4 {
			e := register(t, s, fmt.Sprintf("together-%d", i), nil, "h")
			execs = append(execs, e)
			target := api.ExecutorTarget{Group: fmt.Sprintf("together-%d", i), Routing: api.RoutingFirst, Handler: "h"}
			for range 2 {
				a, err := handover(t, s, target, map[string]any{"n": i})
				if err != nil {
					t.Fatalf("Handover: %v", err)
				}
				runs[e.ID] = append(runs[e.ID], a.RunID)
			}
		}
		// The last executor's lease lapses; the others heartbeat.
		now.Add(int64(9 * time.Second))
		for _, e := range execs[:3] {
			if _, err := s.Heartbeat(ctx, e.ID, nil); err != nil {
				t.Fatalf("Heartbeat: %v", err)
			}
		}
		now.Add(int64(2 * time.Second))
		// Executor 1's first run is taken already.
		if w, err := dispatch.TakeHanded(ctx, s, execs[1].ID, runs[execs[1].ID][0]); err != nil || len(w.Runs) != 1 {
			t.Fatalf("TakeHanded: %+v, %v", w, err)
		}

		works, errs, batched := dispatch.TakeTogether(ctx, s,
			dispatch.HandedTake{Executor: execs[0].ID, IDs: runs[execs[0].ID]},
			dispatch.HandedTake{Executor: execs[1].ID, IDs: runs[execs[1].ID]},
			dispatch.HandedTake{Executor: execs[2].ID, IDs: append([]string{runs[execs[0].ID][0]}, runs[execs[2].ID][1])},
			dispatch.HandedTake{Executor: execs[3].ID, IDs: runs[execs[3].ID]},
		)
		if pg := dispatch.WritableCTEs(s); pg != batched {
			t.Errorf("the takes were made in one statement: %v, want %v (on PostgreSQL only)", batched, pg)
		}
		want := [][]string{
			runs[execs[0].ID],      // both
			runs[execs[1].ID][1:],  // the one not taken before
			{runs[execs[2].ID][1]}, // its own run, not executor 0's
			nil,                    // lease lapsed
		}
		for i := range want {
			if errs[i] != nil {
				t.Errorf("take %d: %v", i, errs[i])
				continue
			}
			var got []string
			for _, r := range works[i].Runs {
				if r.Token != 1 || r.Handler != "h" || r.Params["n"] != float64(i) {
					t.Errorf("take %d: run %+v, want token 1, handler h and n=%d", i, r, i)
				}
				got = append(got, r.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, slices.Sorted(slices.Values(want[i]))) {
				t.Errorf("take %d (executor %d): took %v, want %v", i, i, got, want[i])
			}
		}
		// Runs not taken are still assigned to their executors.
		if w, err := s.Take(ctx, execs[2].ID, 10, 0); err != nil || len(w.Runs) != 1 || w.Runs[0].ID != runs[execs[2].ID][0] {
			t.Errorf("Take of executor 2: %+v, %v; want its first run, left assigned", w, err)
		}
	})
}
