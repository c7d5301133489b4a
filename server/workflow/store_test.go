package workflow_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/workflow"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// forEachDB runs fn on a fresh Store on every database.
func forEachDB(t *testing.T, fn func(t *testing.T, s *workflow.Store)) {
	t.Helper()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			st, err := sqlstore.Open(t.Context(), db.URL(t), &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: log})
			if err != nil {
				t.Fatalf("sqlstore.Open: %v", err)
			}
			t.Cleanup(func() { _ = st.Close() })
			s, err := workflow.New(t.Context(), st)
			if err != nil {
				t.Fatalf("workflow.New: %v", err)
			}
			fn(t, s)
		})
	}
}

// diamond is a -> (b, c) -> d, plus e after d only when d fails.
var diamond = workflow.Graph{
	Tasks: []string{"a", "b", "c", "d", "e"},
	Edges: []workflow.Edge{{From: "a", To: "b"}, {From: "a", To: "c"}, {From: "b", To: "d"}, {From: "c", To: "d"}, {From: "d", To: "e", On: api.OnFailure}},
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func states(t *testing.T, s *workflow.Store, id string) (workflow.InstanceState, string) {
	t.Helper()
	in, err := s.Instance(t.Context(), id)
	if err != nil {
		t.Fatalf("Instance: %v", err)
	}
	got := ""
	for _, task := range in.Tasks {
		got += fmt.Sprintf("%s=%s ", task.Name, task.State)
	}
	return in.State, got
}

func run(t *testing.T, s *workflow.Store, id, task string, ok bool) []string {
	t.Helper()
	exec := id + "-" + task + "-" + rand.Text()
	started, err := s.TaskStarted(t.Context(), workflow.TaskRef{Instance: id, Task: task}, exec, t0)
	if err != nil || !started {
		t.Fatalf("TaskStarted(%s) = %v, %v; want true", task, started, err)
	}
	ready, err := s.TaskEnded(t.Context(), workflow.TaskRef{Instance: id, Task: task}, exec, ok, "boom", t0.Add(time.Second))
	if err != nil {
		t.Fatalf("TaskEnded(%s): %v", task, err)
	}
	return names(ready)
}

// names returns the tasks of ready.
func names(ready []workflow.Ready) []string {
	out := []string{}
	for _, r := range ready {
		out = append(out, r.Task)
	}
	return out
}

func TestStoreStateMachine(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, s *workflow.Store) {
		ctx := t.Context()
		ready, err := s.Start(ctx, workflow.StartParams{ID: "i1", Workflow: "w", Graph: diamond, Params: map[string]any{"day": "mon"}, Now: t0})
		if err != nil || !slices.Equal(names(ready), []string{"a"}) {
			t.Fatalf("Start = %v, %v; want [a]", ready, err)
		}
		if _, err := s.Start(ctx, workflow.StartParams{ID: "i1", Workflow: "w", Graph: diamond, Now: t0}); !errors.Is(err, workflow.ErrExists) {
			t.Fatalf("second Start of i1 = %v, want ErrExists", err)
		}
		if got := run(t, s, "i1", "a", true); !slices.Equal(got, []string{"b", "c"}) {
			t.Fatalf("after a: ready %v, want [b c]", got)
		}
		if got := run(t, s, "i1", "b", true); len(got) != 0 {
			t.Fatalf("after b: ready %v, want none (d waits for c)", got)
		}
		// The instance is paused: c, ready, does not start (it stays
		// ready); once it runs, its end while paused readies d, which
		// waits.
		if err := s.Pause(ctx, "i1"); err != nil {
			t.Fatalf("Pause: %v", err)
		}
		c := workflow.TaskRef{Instance: "i1", Task: "c"}
		if started, err := s.TaskStarted(ctx, c, "i1-c-held", t0); started || !errors.Is(err, workflow.ErrPaused) {
			t.Fatalf("TaskStarted(c) while paused = %v, %v; want false, ErrPaused", started, err)
		}
		if _, tasks := states(t, s, "i1"); !strings.Contains(tasks, "c=ready ") {
			t.Fatalf("tasks after a start refused by the pause = %q, want c ready", tasks)
		}
		if got, err := s.Resume(ctx, "i1"); err != nil || !slices.Equal(names(got), []string{"c"}) {
			t.Fatalf("Resume = %v, %v; want [c]", got, err)
		}
		if started, err := s.TaskStarted(ctx, c, "i1-c", t0); !started || err != nil {
			t.Fatalf("TaskStarted(c) after the resume = %v, %v; want true", started, err)
		}
		if err := s.Pause(ctx, "i1"); err != nil {
			t.Fatalf("Pause: %v", err)
		}
		if got, err := s.TaskEnded(ctx, c, "i1-c", true, "", t0.Add(time.Second)); err != nil || len(got) != 0 {
			t.Fatalf("TaskEnded(c) while paused: ready %v, %v; want none", names(got), err)
		}
		if got, err := s.Resume(ctx, "i1"); err != nil || !slices.Equal(names(got), []string{"d"}) {
			t.Fatalf("Resume = %v, %v; want [d]", got, err)
		}
		if _, err := s.Resume(ctx, "i1"); !errors.Is(err, workflow.ErrConflict) {
			t.Fatalf("second Resume = %v, want ErrConflict", err)
		}
		if got := run(t, s, "i1", "d", false); !slices.Equal(got, []string{"e"}) {
			t.Fatalf("after d failed: ready %v, want [e] (on failure)", got)
		}
		run(t, s, "i1", "e", true)
		st, tasks := states(t, s, "i1")
		if want := "a=succeeded b=succeeded c=succeeded d=failed e=succeeded "; st != workflow.InstanceFailed || tasks != want {
			t.Fatalf("instance = %s %q, want failed %q", st, tasks, want)
		}
		// A re-run starts again from the failed task; e, which ran on d's
		// failure, waits for d again.
		if got, err := s.Rerun(ctx, "i1", t0); err != nil || !slices.Equal(names(got), []string{"d"}) {
			t.Fatalf("Rerun = %v, %v; want [d]", got, err)
		}
		run(t, s, "i1", "d", true)
		st, tasks = states(t, s, "i1")
		if want := "a=succeeded b=succeeded c=succeeded d=succeeded e=skipped "; st != workflow.InstanceSucceeded || tasks != want {
			t.Fatalf("instance = %s %q, want succeeded %q", st, tasks, want)
		}
		if _, err := s.Rerun(ctx, "i1", t0); !errors.Is(err, workflow.ErrConflict) {
			t.Fatalf("Rerun of a succeeded instance = %v, want ErrConflict", err)
		}
	})
}

func TestStoreStartedEndedOnce(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, s *workflow.Store) {
		ctx := t.Context()
		if _, err := s.Start(ctx, workflow.StartParams{ID: "i2", Workflow: "w", Graph: diamond, Now: t0}); err != nil {
			t.Fatalf("Start: %v", err)
		}
		a := workflow.TaskRef{Instance: "i2", Task: "a"}
		if ok, err := s.TaskStarted(ctx, workflow.TaskRef{Instance: "i2", Task: "b"}, "x", t0); ok || err != nil {
			t.Fatalf("TaskStarted of a pending task = %v, %v; want false", ok, err)
		}
		if ok, _ := s.TaskStarted(ctx, a, "e1", t0); !ok {
			t.Fatal("TaskStarted(a, e1) = false")
		}
		// A recovery re-runs it as e2; the lost e1's late end changes nothing.
		if ok, _ := s.TaskStarted(ctx, a, "e2", t0); !ok {
			t.Fatal("TaskStarted(a, e2) = false")
		}
		if ready, err := s.TaskEnded(ctx, a, "e1", true, "", t0); err != nil || len(ready) != 0 {
			t.Fatalf("TaskEnded of a stale execution = %v, %v; want nothing", ready, err)
		}
		// Two nodes record the same end at once: one readies b and c.
		var wg sync.WaitGroup
		results := make([][]workflow.Ready, 2)
		for i := range results {
			wg.Go(func() {
				r, err := s.TaskEnded(ctx, a, "e2", true, "", t0)
				if err != nil {
					t.Errorf("TaskEnded: %v", err)
				}
				results[i] = r
			})
		}
		wg.Wait()
		if n := len(results[0]) + len(results[1]); n != 2 {
			t.Fatalf("TaskEnded twice readied %v and %v; want b and c once", results[0], results[1])
		}
		if ok, _ := s.TaskStarted(ctx, a, "e3", t0); ok {
			t.Fatal("TaskStarted of a task that succeeded = true; want false")
		}
		refs, err := s.ReadyTasks(ctx, t0.Add(time.Second), 10)
		if err != nil || len(refs) != 2 {
			t.Fatalf("ReadyTasks = %v, %v; want b and c", refs, err)
		}
		running, err := s.Kill(ctx, "i2", t0)
		if err != nil || len(running) != 0 {
			t.Fatalf("Kill = %v, %v", running, err)
		}
		st, tasks := states(t, s, "i2")
		if want := "a=succeeded b=cancelled c=cancelled d=cancelled e=cancelled "; st != workflow.InstanceKilled || tasks != want {
			t.Fatalf("instance = %s %q, want killed %q", st, tasks, want)
		}
		if refs, _ := s.ReadyTasks(ctx, t0.Add(time.Second), 10); len(refs) != 0 {
			t.Fatalf("ReadyTasks after Kill = %v, want none", refs)
		}
	})
}

func TestStorePut(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, s *workflow.Store) {
		ctx := t.Context()
		v, changed, err := s.Put(ctx, "w", []byte(`{"a":1}`), 0, t0)
		if err != nil || v != 1 || !changed {
			t.Fatalf("Put = %d, %v, %v; want 1, true", v, changed, err)
		}
		if v, changed, _ := s.Put(ctx, "w", []byte(`{"a":1}`), 0, t0); v != 1 || changed {
			t.Fatalf("same Put = %d, %v; want 1, false", v, changed)
		}
		if _, _, err := s.Put(ctx, "w", []byte(`{"a":2}`), 7, t0); !errors.Is(err, workflow.ErrConflict) {
			t.Fatalf("Put with a stale If-Match = %v, want ErrConflict", err)
		}
		if v, _, _ := s.Put(ctx, "w", []byte(`{"a":2}`), 1, t0); v != 2 {
			t.Fatalf("Put = version %d, want 2", v)
		}
		d, err := s.Get(ctx, "w")
		if err != nil || string(d.Spec) != `{"a":2}` {
			t.Fatalf("Get = %+v, %v", d, err)
		}
		if ok, _ := s.Delete(ctx, "w"); !ok {
			t.Fatal("Delete = false")
		}
		if _, err := s.Get(ctx, "w"); !errors.Is(err, workflow.ErrNotFound) {
			t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
		}
	})
}

func TestStoreTasksStartedInOneBatch(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, s *workflow.Store) {
		ctx := t.Context()
		for _, id := range []string{"i3", "i4", "i5", "i6"} {
			if _, err := s.Start(ctx, workflow.StartParams{ID: id, Workflow: "w", Graph: diamond, Now: t0}); err != nil {
				t.Fatalf("Start(%s): %v", id, err)
			}
		}
		run(t, s, "i3", "a", true) // b and c ready
		if _, err := s.Kill(ctx, "i5", t0); err != nil {
			t.Fatalf("Kill: %v", err)
		}
		if err := s.Pause(ctx, "i6"); err != nil {
			t.Fatalf("Pause: %v", err)
		}
		// i3's b and c, and i4's a, start; i4's b is pending, i5 was
		// killed, i9 does not exist, i6 is paused (its a is held). i4's a
		// is listed twice, as a retry of one start: it counts once.
		starts := []workflow.TaskStart{
			{TaskRef: workflow.TaskRef{Instance: "i4", Task: "a"}, ExecutionID: "x1"},
			{TaskRef: workflow.TaskRef{Instance: "i3", Task: "b"}, ExecutionID: "x2"},
			{TaskRef: workflow.TaskRef{Instance: "i4", Task: "b"}, ExecutionID: "x3"},
			{TaskRef: workflow.TaskRef{Instance: "i5", Task: "a"}, ExecutionID: "x4"},
			{TaskRef: workflow.TaskRef{Instance: "i9", Task: "a"}, ExecutionID: "x5"},
			{TaskRef: workflow.TaskRef{Instance: "i3", Task: "c"}, ExecutionID: "x6"},
			{TaskRef: workflow.TaskRef{Instance: "i4", Task: "a"}, ExecutionID: "x1"},
			{TaskRef: workflow.TaskRef{Instance: "i6", Task: "a"}, ExecutionID: "x7"},
		}
		got, err := s.TasksStarted(ctx, starts, t0.Add(2*time.Second))
		if err != nil {
			t.Fatalf("TasksStarted: %v", err)
		}
		run, refused, held := workflow.StartRun, workflow.StartRefused, workflow.StartHeld
		if want := []workflow.StartVerdict{run, run, refused, refused, refused, run, run, held}; !slices.Equal(got, want) {
			t.Fatalf("TasksStarted = %v, want %v", got, want)
		}
		in, err := s.Instance(ctx, "i4")
		if err != nil {
			t.Fatalf("Instance: %v", err)
		}
		if a := in.Tasks[0]; a.State != workflow.TaskRunning || a.ExecutionID != "x1" || a.Attempts != 1 || !a.Started.Equal(t0.Add(2*time.Second)) {
			t.Errorf("task a of i4 = %+v, want running x1, 1 attempt, started at %s", a, t0.Add(2*time.Second))
		}
		if _, tasks := states(t, s, "i3"); tasks != "a=succeeded b=running c=running d=pending e=pending " {
			t.Errorf("i3's tasks = %q, want b and c running", tasks)
		}
		// The ends of the executions the batch recorded count.
		if ready, err := s.TaskEnded(ctx, workflow.TaskRef{Instance: "i3", Task: "b"}, "x2", true, "", t0); err != nil || len(ready) != 0 {
			t.Fatalf("TaskEnded(b, x2) = %v, %v; want nothing ready (d waits for c)", ready, err)
		}
		if ready, err := s.TaskEnded(ctx, workflow.TaskRef{Instance: "i3", Task: "c"}, "x6", true, "", t0); err != nil || !slices.Equal(names(ready), []string{"d"}) {
			t.Fatalf("TaskEnded(c, x6) = %v, %v; want [d]", ready, err)
		}
		if st, tasks := states(t, s, "i5"); st != workflow.InstanceKilled || tasks != "a=cancelled b=cancelled c=cancelled d=cancelled e=cancelled " {
			t.Errorf("i5 = %s %q, want killed with every task cancelled", st, tasks)
		}
	})
}
