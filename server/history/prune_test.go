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
	n, err := h.Prune(ctx, &history.PruneParams{OlderThan: cut, KeepPerJob: 4})
	if err != nil || n != 7 {
		t.Errorf("Prune(keep 4) = %d, %v; want 6 executions and 1 decision", n, err)
	}
	want := []string{"a-running", "a6", "a7", "a8", "a9", "b0", "b1", "b2", "c0", "c1", "c2", "c3", "c4"}
	equal(t, "after Prune(keep 4)", listIDs(t, h), want)
	if ds, err := h.Decisions(ctx, "", "", time.Time{}, time.Time{}, 0); err != nil || len(ds) != 1 || !ds[0].At.Equal(hour(100)) {
		t.Errorf("decisions after Prune: %+v, %v; want the young one", ds, err)
	}
	if n, err := h.Prune(ctx, &history.PruneParams{OlderThan: cut, KeepPerJob: 4}); err != nil || n != 0 {
		t.Errorf("second Prune(keep 4) = %d, %v; want 0", n, err)
	}

	// Bad params are refused, naming the field, and delete nothing.
	for _, tc := range []struct {
		name   string
		params *history.PruneParams
		want   string
	}{
		{"nil", nil, "PruneParams"},
		{"no time", &history.PruneParams{KeepPerJob: 4}, "PruneParams.OlderThan"},
		{"negative keep", &history.PruneParams{OlderThan: cut, KeepPerJob: -1}, "PruneParams.KeepPerJob"},
		{"negative cap", &history.PruneParams{OlderThan: cut, MaxPerJob: -1}, "PruneParams.MaxPerJob"},
		{"keep above cap", &history.PruneParams{OlderThan: cut, KeepPerJob: 3, MaxPerJob: 2}, "PruneParams.KeepPerJob 3 is more than PruneParams.MaxPerJob 2"},
	} {
		n, err := h.Prune(ctx, tc.params)
		wantInvalid(t, "Prune with "+tc.name, err, tc.want)
		if n != 0 {
			t.Errorf("Prune with %s deleted %d", tc.name, n)
		}
	}
	equal(t, "after refused Prunes", listIDs(t, h), want)

	// Keeping none, age alone decides.
	n, err = h.Prune(ctx, &history.PruneParams{OlderThan: cut})
	if err != nil || n != 7 {
		t.Errorf("Prune(keep 0) = %d, %v; want 7", n, err)
	}
	equal(t, "after Prune(keep 0)", listIDs(t, h), []string{"a-running", "c0", "c1", "c2", "c3", "c4"})
}

// testPruneCap checks MaxPerJob: executions beyond a job's newest
// MaxPerJob go however young, running ones excepted, and the floor and
// the age limit still apply within the cap.
func testPruneCap(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	hour := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Hour) }
	cut := hour(50)
	// f fires often: 12 young runs between two running ones.
	for i := range 12 {
		record(t, h, fmt.Sprintf("f%02d", i), "f", hour(100+i))
	}
	start(t, h, execution("f-run-old", "g", "f", hour(99)), execution("f-run-new", "g", "f", hour(200)))
	// m has old and young runs; r is rare and old; t's runs started at
	// one instant, so their IDs order them.
	for i := range 10 {
		record(t, h, fmt.Sprint("m", i), "m", hour(40+i+10*(i/6)))
	}
	record(t, h, "r0", "r", hour(0))
	record(t, h, "r1", "r", hour(1))
	for i := range 4 {
		record(t, h, fmt.Sprint("t", i), "t", hour(100))
	}

	// Keeping 3 to 5 per job: f keeps its newest 5 (f-run-new and f08-f11)
	// and its old running one; m keeps m6-m9 (m0-m4 beyond the cap, m5
	// old and beyond the floor); r keeps both runs however old; t has 4.
	params := &history.PruneParams{OlderThan: cut, KeepPerJob: 3, MaxPerJob: 5}
	n, err := h.Prune(ctx, params)
	if err != nil || n != 14 {
		t.Errorf("Prune(keep 3, max 5) = %d, %v; want 14", n, err)
	}
	equal(t, "after Prune(keep 3, max 5)", listIDs(t, h), []string{
		"f-run-new", "f-run-old", "f08", "f09", "f10", "f11", "m6", "m7", "m8", "m9", "r0", "r1", "t0", "t1", "t2", "t3",
	})
	if n, err := h.Prune(ctx, params); err != nil || n != 0 {
		t.Errorf("second Prune(keep 3, max 5) = %d, %v; want 0", n, err)
	}

	// At most 2 and no floor: r, within the cap, goes by age.
	n, err = h.Prune(ctx, &history.PruneParams{OlderThan: cut, MaxPerJob: 2})
	if err != nil || n != 9 {
		t.Errorf("Prune(max 2) = %d, %v; want 9", n, err)
	}
	equal(t, "after Prune(max 2)", listIDs(t, h), []string{"f-run-new", "f-run-old", "f11", "m8", "m9", "t2", "t3"})
}

func testPruneBatches(t *testing.T, open opener) {
	h := open(nil)
	h.SetPruneBatch(3)
	for i := range 20 {
		record(t, h, fmt.Sprintf("x%02d", i), "old", t0.Add(time.Duration(i)*time.Minute))
		record(t, h, fmt.Sprintf("y%02d", i), "young", t0.Add(24*time.Hour+time.Duration(i)*time.Minute))
	}
	for i := range 7 {
		decide(t, h, "old", t0.Add(time.Duration(i)*time.Minute))
	}
	// old: 16 beyond the cap, 2 more old beyond the floor; young: 16
	// beyond the cap.
	n, err := h.Prune(t.Context(), &history.PruneParams{OlderThan: t0.Add(time.Hour), KeepPerJob: 2, MaxPerJob: 4})
	if err != nil || n != 41 {
		t.Errorf("Prune = %d, %v; want 34 executions and 7 decisions", n, err)
	}
	equal(t, "after Prune", listIDs(t, h), []string{"x18", "x19", "y16", "y17", "y18", "y19"})
}

func testPruner(t *testing.T, open opener) {
	h := open(nil)
	p, err := history.NewPruner(h, &history.PrunerOptions{Interval: 20 * time.Millisecond, KeepPerJob: -1, MaxPerJob: 2})
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
	// A later run prunes what has aged since, and what is beyond the cap.
	record(t, h, "old2", "job", long)
	record(t, h, "new2", "job", now.Add(time.Second))
	record(t, h, "new3", "job", now.Add(2*time.Second))
	waitFor("later run", []string{"new2", "new3"})
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
	if got := listIDs(t, h); !slices.Equal(got, []string{"new2", "new3", "old3"}) {
		t.Errorf("after Stop: %v", got)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("Start after Stop: %v", err)
	}
	waitFor("restarted", []string{"new2", "new3"})
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
		{"MaxBelowMinusOne", history.PrunerOptions{MaxPerJob: -2}, "MaxPerJob"},
		{"KeepAboveMax", history.PrunerOptions{KeepPerJob: 200, MaxPerJob: 100}, "PrunerOptions.KeepPerJob 200 is more than PrunerOptions.MaxPerJob 100"},
		{"NegativeInterval", history.PrunerOptions{Interval: -time.Second}, "Interval"},
	}
	for _, tc := range tests {
		_, err := history.NewPruner(h, &tc.opts)
		wantInvalid(t, tc.name, err, tc.want)
	}
	if _, err := history.NewPruner(nil, nil); err == nil {
		t.Error("NewPruner(nil) succeeded")
	}
	for _, opts := range []*history.PrunerOptions{
		nil,
		{MaxPerJob: 50},                    // the floor's default follows the cap down
		{KeepPerJob: 20000, MaxPerJob: -1}, // no cap, any floor
	} {
		if _, err := history.NewPruner(h, opts); err != nil {
			t.Errorf("NewPruner(%+v): %v", opts, err)
		}
	}
}
