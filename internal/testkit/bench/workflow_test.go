package bench

import (
	"context"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

// TestRunD1RunsEachTaskOnce runs D1, cut down to 20 instances, on two
// server nodes on every database, and checks that every task ran once
// and succeeded. It asserts nothing about timing; it logs the line.
func TestRunD1RunsEachTaskOnce(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			res, err := RunD1(context.Background(), D1Options{
				Instances:   20,
				DatabaseURL: db.URL(t),
				Executable:  executable(t),
				Timeout:     30 * time.Second,
				Logger:      testLogger(t),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s", db.Name, res)
			if !res.OK() || res.Tasks != 20*D1Tasks || res.Span <= 0 || res.Max < res.P50 {
				t.Errorf("result %s: want every one of %d tasks once, a span and ordered lags", res, 20*D1Tasks)
			}
		})
	}
}

// TestMeasureD1 checks the figures measureD1 takes from instances and
// the tasks' records: the lag from a task's last upstream end to its
// start, duplicates and misses.
func TestMeasureD1(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }
	task := func(name string, started, finished int) api.WorkflowTaskRun {
		return api.WorkflowTaskRun{Task: name, State: "succeeded", Started: at(started), Finished: at(finished)}
	}
	edges := []api.WorkflowEdge{{From: "a", To: "c"}, {From: "b", To: "c"}}
	instances := []*api.WorkflowInstance{
		// c starts 30 ms after b, its last upstream task, ended.
		{Created: t0, Edges: edges, Tasks: []api.WorkflowTaskRun{task("a", 0, 10), task("b", 0, 20), task("c", 50, 60)}},
		// c starts 10 ms after a; b ran twice; c has no record, so it
		// is a miss and its end is not in the span.
		{Created: t0.Add(time.Millisecond), Edges: edges, Tasks: []api.WorkflowTaskRun{
			task("a", 0, 100), task("b", 0, 90), task("c", 110, 200),
		}},
	}
	var records []firelog.Record
	for _, key := range []string{"d1.0.a", "d1.0.b", "d1.0.c", "d1.1.a", "d1.1.b", "d1.1.b"} {
		records = append(records, firelog.Record{Trigger: key})
	}
	res := &D1Result{Instances: 2}
	measureD1(res, instances, records)
	want := D1Result{Instances: 2, Span: 100 * time.Millisecond, P50: 30 * time.Millisecond, P99: 30 * time.Millisecond, Max: 30 * time.Millisecond, Duplicates: 1, Misses: 1}
	if *res != want {
		t.Errorf("measureD1 = %+v, want %+v", *res, want)
	}
}
