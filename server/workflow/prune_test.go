package workflow_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/workflow"
)

// TestStorePrune checks that Prune deletes the instances that ended
// before the cut, with their tasks, a batch at a time, and keeps those
// running, paused, re-run or ended after it.
func TestStorePrune(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, s *workflow.Store) {
		ctx := t.Context()
		one := workflow.Graph{Tasks: []string{"a"}}
		start := func(id string) {
			t.Helper()
			if _, err := s.Start(ctx, workflow.StartParams{ID: id, Workflow: "w", Graph: one, Now: t0}); err != nil {
				t.Fatalf("Start(%s): %v", id, err)
			}
		}
		start("succeeded") // ends at t0+1s
		run(t, s, "succeeded", "a", true)
		start("failed")
		run(t, s, "failed", "a", false)
		start("killed")
		if _, err := s.Kill(ctx, "killed", t0.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		start("rerun")
		run(t, s, "rerun", "a", false)
		if _, err := s.Rerun(ctx, "rerun", t0.Add(3*time.Second)); err != nil {
			t.Fatal(err)
		}
		start("running")
		start("paused")
		if err := s.Pause(ctx, "paused"); err != nil {
			t.Fatal(err)
		}
		start("late") // ends after the cut
		started, err := s.TaskStarted(ctx, workflow.TaskRef{Instance: "late", Task: "a"}, "late-a", t0)
		if err != nil || !started {
			t.Fatalf("TaskStarted = %v, %v", started, err)
		}
		if _, err := s.TaskEnded(ctx, workflow.TaskRef{Instance: "late", Task: "a"}, "late-a", true, "", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}

		cut := t0.Add(time.Minute)
		if n, err := s.Prune(ctx, t0, 100); err != nil || n != 0 {
			t.Fatalf("Prune before every end = %d, %v; want 0", n, err)
		}
		if n, err := s.Prune(ctx, cut, 2); err != nil || n != 2 {
			t.Fatalf("Prune with limit 2 = %d, %v; want 2", n, err)
		}
		if n, err := s.Prune(ctx, cut, 100); err != nil || n != 1 {
			t.Fatalf("second Prune = %d, %v; want the third ended instance", n, err)
		}
		if n, err := s.Prune(ctx, cut, 100); err != nil || n != 0 {
			t.Fatalf("third Prune = %d, %v; want 0", n, err)
		}
		for _, id := range []string{"succeeded", "failed", "killed"} {
			if _, err := s.Instance(ctx, id); !errors.Is(err, workflow.ErrNotFound) {
				t.Errorf("Instance(%s) after the prune: %v, want ErrNotFound", id, err)
			}
		}
		list, err := s.Instances(ctx, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for _, in := range list {
			kept = append(kept, in.ID)
		}
		slices.Sort(kept)
		if want := []string{"late", "paused", "rerun", "running"}; !slices.Equal(kept, want) {
			t.Errorf("instances after the prune = %v, want %v", kept, want)
		}
		// Starting an instance with a pruned one's ID finds no task left
		// of it: its tasks went with it.
		start("succeeded")
		if state, tasks := states(t, s, "succeeded"); state != workflow.InstanceRunning || tasks != "a=ready " {
			t.Errorf("a new instance with a pruned one's ID = %s %q, want running with a=ready", state, tasks)
		}
	})
}
