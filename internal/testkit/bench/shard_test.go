package bench

import (
	"context"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

// TestRunS1RunsEachItemOnce runs S1, cut down to 3 firings of 16 items,
// on two server nodes on every database, and checks that every item ran
// once and that the split adds up. It asserts nothing about timing or
// about how even the split is; it logs the line.
func TestRunS1RunsEachItemOnce(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			res, err := RunS1(context.Background(), S1Options{
				Firings:     3,
				Items:       16,
				DatabaseURL: db.URL(t),
				Executable:  executable(t),
				Timeout:     30 * time.Second,
				Logger:      testLogger(t),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s", db.Name, res)
			total := 0
			for _, n := range res.Split {
				total += n
			}
			if !res.OK() || total != 3*16 || res.Span <= 0 {
				t.Errorf("result %s: want each of %d items once, split over the nodes, and a span", res, 3*16)
			}
		})
	}
}

// TestMeasureS1 checks the split, duplicates and misses measureS1 takes
// from the items' records, and the line that prints them.
func TestMeasureS1(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(key, node string, after time.Duration) firelog.Record {
		return firelog.Record{Trigger: key, Node: node, Actual: t0.Add(after)}
	}
	res := &S1Result{Nodes: 2, Firings: 2, Items: 2, Split: map[string]int{}}
	// Item 1 of firing 0 ran twice (a recovery after its node recorded
	// it), item 1 of firing 1 never ran.
	measureS1(res, []firelog.Record{
		rec("s1.0.0", "n1", time.Second), rec("s1.0.1", "n2", time.Second), rec("s1.0.1", "n1", 2*time.Second),
		rec("s1.1.0", "n2", 3*time.Second),
	}, t0)
	want := "chime S1 nodes=2 firings=2 items=2 span=3s items/s=1 split=n1:2,n2:2 dup=1 miss=1"
	if got := res.String(); got != want {
		t.Errorf("line = %q\nwant     %q", got, want)
	}
	if res.OK() {
		t.Error("OK() = true with a duplicate and a miss")
	}
}
