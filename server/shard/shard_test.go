package shard_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/shard"
	"github.com/chime-scheduler/chime/store/sqlstore"
	"github.com/google/go-cmp/cmp"
)

// TestStore runs every behaviour on every dialect.
func TestStore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, s *shard.Store)
	}{
		{"CreateIsIdempotent", testCreate},
		{"StartRefusesEndedAndTakenItems", testStart},
		{"ConcurrentEndsDecideOnce", testConcurrentEnds},
		{"FailedItemsAreNamedAndRerun", testRerun},
		{"Stalled", testStalled},
		{"Prune", testPrune},
	}
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			urlFor := db.Shared(t)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, open(t, urlFor(t)))
				})
			}
		})
	}
}

// open opens a store with a fresh scheduler name on url; it closes when
// the test ends.
func open(t *testing.T, url string) *shard.Store {
	t.Helper()
	o := &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: slog.New(slog.DiscardHandler)}
	if !strings.HasPrefix(url, "sqlite:") {
		o.MaxOpenConns = 8
	}
	st, err := sqlstore.Open(t.Context(), url, o)
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s, err := shard.New(t.Context(), st)
	if err != nil {
		t.Fatalf("shard.New: %v", err)
	}
	return s
}

func create(t *testing.T, s *shard.Store, id string, total int) {
	t.Helper()
	created, err := s.Create(t.Context(), &shard.Parent{ID: id, ExecutionID: id, JobGroup: "g", JobName: "n", Total: total, NodeID: "node-a", Spec: []byte(`{"x":1}`)})
	if err != nil || !created {
		t.Fatalf("Create(%s) = %v, %v; want true, nil", id, created, err)
	}
}

func testCreate(t *testing.T, s *shard.Store) {
	ctx := t.Context()
	create(t, s, "p1", 3)
	created, err := s.Create(ctx, &shard.Parent{ID: "p1", ExecutionID: "p1-attempt2", JobGroup: "g", JobName: "n", Total: 3})
	if err != nil || created {
		t.Fatalf("second Create = %v, %v; want false, nil", created, err)
	}
	p, err := s.Get(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if p.State != shard.ParentCreating || p.ExecutionID != "p1-attempt2" || p.Remaining != 3 || p.Total != 3 || string(p.Spec) != `{"x":1}` {
		t.Errorf("Get = %+v; want creating, taken over by p1-attempt2, 3 remaining", p)
	}
	if err := s.Created(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	items, err := s.Items(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, fmt.Sprintf("%d:%s", it.Index, it.State))
	}
	if diff := cmp.Diff([]string{"0:pending", "1:pending", "2:pending"}, got); diff != "" {
		t.Errorf("Items (-want +got):\n%s", diff)
	}
	if p, _ := s.Get(ctx, "p1"); p.State != shard.ParentRunning {
		t.Errorf("state after Created = %s; want running", p.State)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, shard.ErrNotFound) {
		t.Errorf("Get(nope) = %v; want ErrNotFound", err)
	}
}

func testStart(t *testing.T, s *shard.Store) {
	ctx := t.Context()
	create(t, s, "p", 2)
	if err := s.Start(ctx, "p", 0, "f0", "f0", "node-a"); err != nil {
		t.Fatal(err)
	}
	// A retry or a recovery of the same firing starts it again.
	if err := s.Start(ctx, "p", 0, "f0", "f0-2", "node-b"); err != nil {
		t.Fatalf("Start of the same firing again: %v", err)
	}
	if err := s.Start(ctx, "p", 0, "other", "other", "node-c"); !errors.Is(err, shard.ErrTaken) {
		t.Errorf("Start of another firing = %v; want ErrTaken", err)
	}
	if _, err := s.End(ctx, "p", 0, "f0-2", true, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, "p", 0, "f0", "f0-3", "node-a"); !errors.Is(err, shard.ErrDone) {
		t.Errorf("Start of a succeeded item = %v; want ErrDone", err)
	}
	if err := s.Start(ctx, "p", 7, "f7", "f7", "node-a"); !errors.Is(err, shard.ErrNotFound) {
		t.Errorf("Start of item 7 of 2 = %v; want ErrNotFound", err)
	}
	items, err := s.Items(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	it := items[0]
	if it.State != shard.ItemSucceeded || it.Attempts != 2 || it.NodeID != "node-b" || it.ExecutionID != "f0-2" || it.Started.IsZero() || it.Finished.IsZero() {
		t.Errorf("item 0 = %+v; want succeeded after 2 attempts, last on node-b", it)
	}
}

func testConcurrentEnds(t *testing.T, s *shard.Store) {
	ctx := t.Context()
	const n = 40
	create(t, s, "p", n)
	var mu sync.Mutex
	var decisions []*shard.Parent
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprint("f", i)
			if err := s.Start(ctx, "p", i, id, id, "node"); err != nil {
				t.Error(err)
				return
			}
			// Every item ends twice, as a late end of a lost attempt would.
			for range 2 {
				p, err := s.End(ctx, "p", i, id, true, "")
				if err != nil {
					t.Error(err)
					return
				}
				if p != nil {
					mu.Lock()
					decisions = append(decisions, p)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(decisions) != 1 {
		t.Fatalf("%d ends decided the parent; want exactly 1", len(decisions))
	}
	if d := decisions[0]; d.State != shard.ParentSucceeded || d.Remaining != 0 || d.Failed != 0 {
		t.Errorf("decision = %+v; want succeeded", d)
	}
	p, err := s.Get(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if p.State != shard.ParentSucceeded || p.Decided.IsZero() || p.Recorded {
		t.Errorf("stored parent = %+v; want succeeded, decided, not recorded", p)
	}
	if err := s.Recorded(ctx, "p", "p"); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Get(ctx, "p"); !p.Recorded {
		t.Error("Recorded did not mark the parent recorded")
	}
}

func testRerun(t *testing.T, s *shard.Store) {
	ctx := t.Context()
	create(t, s, "p", 4)
	if _, _, err := s.RerunFailed(ctx, "p", "x", "node"); !errors.Is(err, shard.ErrNotFailed) {
		t.Errorf("RerunFailed of a running parent = %v; want ErrNotFailed", err)
	}
	var decided *shard.Parent
	for i, ok := range []bool{true, false, true, false} {
		id := fmt.Sprint("f", i)
		if err := s.Start(ctx, "p", i, id, id, "node"); err != nil {
			t.Fatal(err)
		}
		p, err := s.End(ctx, "p", i, id, ok, "boom")
		if err != nil {
			t.Fatal(err)
		}
		if p != nil {
			decided = p
		}
	}
	if decided == nil || decided.State != shard.ParentFailed || decided.Error != "2 of 4 items failed: 1, 3" {
		t.Fatalf("decision = %+v; want failed naming items 1 and 3", decided)
	}
	p, items, err := s.RerunFailed(ctx, "p", "p-2", "node-b")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 3}, items); diff != "" {
		t.Errorf("items to re-run (-want +got):\n%s", diff)
	}
	if p.Round != 1 || p.State != shard.ParentCreating || p.Remaining != 2 {
		t.Errorf("parent after RerunFailed = %+v; want round 1, creating, 2 remaining", p)
	}
	// A new firing of item 1 may start it; item 0 stays done.
	if err := s.Start(ctx, "p", 1, "g1", "g1", "node"); err != nil {
		t.Errorf("Start of a re-run item: %v", err)
	}
	if err := s.Start(ctx, "p", 0, "g0", "g0", "node"); !errors.Is(err, shard.ErrDone) {
		t.Errorf("Start of a succeeded item after the re-run = %v; want ErrDone", err)
	}
	if d, err := s.End(ctx, "p", 1, "g1", true, ""); err != nil || d != nil {
		t.Fatalf("End of item 1 = %v, %v; want undecided", d, err)
	}
	if err := s.Start(ctx, "p", 3, "g3", "g3", "node"); err != nil {
		t.Fatal(err)
	}
	d, err := s.End(ctx, "p", 3, "g3", true, "")
	if err != nil || d == nil || d.State != shard.ParentSucceeded || d.ExecutionID != "p-2" {
		t.Fatalf("End of item 3 = %+v, %v; want the parent succeeded as p-2", d, err)
	}
}

func testStalled(t *testing.T, s *shard.Store) {
	ctx := t.Context()
	create(t, s, "creating", 1)
	create(t, s, "running", 1)
	if err := s.Created(ctx, "running"); err != nil {
		t.Fatal(err)
	}
	create(t, s, "decided", 1)
	if err := s.Start(ctx, "decided", 0, "f", "f", "node"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.End(ctx, "decided", 0, "f", true, ""); err != nil {
		t.Fatal(err)
	}
	// The database's clock may run ahead of this process's: an hour on
	// covers it.
	future := time.Now().Add(time.Hour)
	ids := func(created, decided time.Time) []string {
		ps, err := s.Stalled(ctx, created, decided, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	if diff := cmp.Diff([]string{"creating", "decided"}, ids(future, future)); diff != "" {
		t.Errorf("Stalled (-want +got):\n%s", diff)
	}
	past := time.Now().Add(-time.Hour)
	if got := ids(past, past); len(got) != 0 {
		t.Errorf("Stalled before anything was made = %v; want none", got)
	}
	if err := s.Recorded(ctx, "decided", "decided"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"creating"}, ids(future, future)); diff != "" {
		t.Errorf("Stalled after Recorded (-want +got):\n%s", diff)
	}
}

func testPrune(t *testing.T, s *shard.Store) {
	ctx := t.Context()
	create(t, s, "old", 2)
	create(t, s, "running", 1)
	for i := range 2 {
		id := fmt.Sprint("f", i)
		if err := s.Start(ctx, "old", i, id, id, "node"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.End(ctx, "old", i, id, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	future := time.Now().Add(time.Hour)
	// Decided but not recorded: kept, so that its end reaches the history.
	if n, err := s.Prune(ctx, future, 10); err != nil || n != 0 {
		t.Fatalf("Prune before Recorded = %d, %v; want 0", n, err)
	}
	if err := s.Recorded(ctx, "old", "old"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Prune(ctx, time.Now().Add(-time.Hour), 10); err != nil || n != 0 {
		t.Fatalf("Prune of what was decided an hour ago = %d, %v; want 0", n, err)
	}
	if n, err := s.Prune(ctx, future, 10); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	if _, err := s.Get(ctx, "old"); !errors.Is(err, shard.ErrNotFound) {
		t.Errorf("Get of a pruned parent = %v; want ErrNotFound", err)
	}
	if items, err := s.Items(ctx, "old"); err != nil || len(items) != 0 {
		t.Errorf("Items of a pruned parent = %v, %v; want none", items, err)
	}
	if _, err := s.Get(ctx, "running"); err != nil {
		t.Errorf("the running parent was pruned: %v", err)
	}
}
