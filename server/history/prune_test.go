package history_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/history"
)

// listIDs returns the IDs of every recorded execution, sorted.
func listIDs(t *testing.T, h *history.History) []string {
	t.Helper()
	p, err := h.List(t.Context(), &history.Query{Limit: history.MaxLimit})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	out := ids(p.Executions)
	slices.Sort(out)
	return out
}

// record starts and finishes (succeeded, a second later) an execution.
func record(t *testing.T, h *history.History, id, job string, started time.Time) {
	t.Helper()
	start(t, h, execution(id, "g", job, started))
	finish(t, h, id, history.OutcomeSucceeded, started.Add(time.Second))
}

func decide(t *testing.T, h *history.History, job string, at time.Time) {
	t.Helper()
	if err := h.RecordDecision(t.Context(), &history.Decision{JobGroup: "g", JobName: job, At: at, Kind: history.DecisionFired}); err != nil {
		t.Fatalf("RecordDecision: %v", err)
	}
}

func testPruneRule(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	hour := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Hour) }
	for i := range 10 {
		record(t, h, fmt.Sprint("a", i), "a", hour(i))
	}
	start(t, h, execution("a-running", "g", "a", hour(-1))) // oldest of a, and running
	for i := range 3 {
		record(t, h, fmt.Sprint("b", i), "b", hour(i))
	}
	for i := range 5 {
		record(t, h, fmt.Sprint("c", i), "c", hour(100+i))
	}
	decide(t, h, "a", hour(0))
	decide(t, h, "a", hour(100))
	cut := hour(50)

	// Keeping 4 per job: a loses a0-a5 (old and beyond its newest 4, which
	// are a6-a9); its running execution stays; b has only 3; c is young.
	n, err := h.Prune(ctx, cut, 4)
	if err != nil || n != 7 {
		t.Errorf("Prune(keep 4) = %d, %v; want 6 executions and 1 decision", n, err)
	}
	equal(t, "after Prune(keep 4)", listIDs(t, h),
		[]string{"a-running", "a6", "a7", "a8", "a9", "b0", "b1", "b2", "c0", "c1", "c2", "c3", "c4"})
	if ds, err := h.Decisions(ctx, "", "", time.Time{}, time.Time{}, 0); err != nil || len(ds) != 1 || !ds[0].At.Equal(hour(100)) {
		t.Errorf("decisions after Prune: %+v, %v; want the young one", ds, err)
	}
	if n, err := h.Prune(ctx, cut, 4); err != nil || n != 0 {
		t.Errorf("second Prune(keep 4) = %d, %v; want 0", n, err)
	}
	// Keeping none, age alone decides.
	n, err = h.Prune(ctx, cut, 0)
	if err != nil || n != 7 {
		t.Errorf("Prune(keep 0) = %d, %v; want 7", n, err)
	}
	equal(t, "after Prune(keep 0)", listIDs(t, h), []string{"a-running", "c0", "c1", "c2", "c3", "c4"})

	_, err = h.Prune(ctx, time.Time{}, 4)
	wantInvalid(t, "Prune without a time", err, "olderThan")
	_, err = h.Prune(ctx, cut, -1)
	wantInvalid(t, "Prune keeping -1", err, "keepPerJob")
}

func testPruneBatches(t *testing.T, open opener) {
	h := open(nil)
	h.SetPruneBatch(3)
	for i := range 20 {
		record(t, h, fmt.Sprintf("x%02d", i), "job", t0.Add(time.Duration(i)*time.Minute))
	}
	for i := range 7 {
		decide(t, h, "job", t0.Add(time.Duration(i)*time.Minute))
	}
	n, err := h.Prune(t.Context(), t0.Add(time.Hour), 2)
	if err != nil || n != 25 {
		t.Errorf("Prune = %d, %v; want 18 executions and 7 decisions", n, err)
	}
	equal(t, "after Prune", listIDs(t, h), []string{"x18", "x19"})
}

func testPruner(t *testing.T, open opener) {
	h := open(nil)
	p, err := history.NewPruner(h, &history.PrunerOptions{Interval: 20 * time.Millisecond, KeepPerJob: -1})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	long := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	record(t, h, "old1", "job", long)
	record(t, h, "new", "job", now)
	// The pruner reports nothing; the test watches the table until it
	// shows the pruner's work.
	waitFor := func(what string, want []string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			got := listIDs(t, h)
			if slices.Equal(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: executions %v, want %v", what, got, want)
			}
			time.Sleep(10 * time.Millisecond) // nothing to wait on but the database
		}
	}
	if err := p.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := p.Start(); err == nil {
		t.Error("second Start succeeded")
	}
	waitFor("first run", []string{"new"})
	// A later run prunes what has aged since.
	record(t, h, "old2", "job", long)
	waitFor("later run", []string{"new"})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if err := p.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	// Stopped, it prunes nothing; started again, it does.
	record(t, h, "old3", "job", long)
	if got := listIDs(t, h); !slices.Equal(got, []string{"new", "old3"}) {
		t.Errorf("after Stop: %v", got)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("Start after Stop: %v", err)
	}
	waitFor("restarted", []string{"new"})
	if err := p.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

func TestPrunerOptions(t *testing.T) {
	t.Parallel()
	h := newHistory(t, "sqlite:"+t.TempDir()+"/p.db", nil)
	tests := []struct {
		name string
		opts history.PrunerOptions
		want string
	}{
		{"NegativeAge", history.PrunerOptions{MaxAge: -time.Hour}, "MaxAge"},
		{"KeepBelowMinusOne", history.PrunerOptions{KeepPerJob: -2}, "KeepPerJob"},
		{"NegativeInterval", history.PrunerOptions{Interval: -time.Second}, "Interval"},
	}
	for _, tc := range tests {
		_, err := history.NewPruner(h, &tc.opts)
		wantInvalid(t, tc.name, err, tc.want)
	}
	if _, err := history.NewPruner(nil, nil); err == nil {
		t.Error("NewPruner(nil) succeeded")
	}
	if _, err := history.NewPruner(h, nil); err != nil {
		t.Errorf("NewPruner with defaults: %v", err)
	}
}
