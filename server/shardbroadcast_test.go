package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
)

// TestShardingBroadcast runs a job routed sharding_broadcast on three
// examples/executor processes: each firing gives every live executor of
// the group one item, item i to the i-th registered with index i of 3.
// Once one process is killed and its lease lapsed, a firing has two
// items, one for each executor left.
func TestShardingBroadcast(t *testing.T) {
	t.Parallel()
	bin := nodeproc.NewBinary("github.com/chime-scheduler/chime/examples/executor", t.TempDir())
	forEachDB(t, func(t *testing.T, url string) {
		// A lease long enough that a live executor's heartbeat is not late
		// under CI's load (a lapsed one's item would be re-run on another,
		// rightly, and the placement checked below would differ), short
		// enough that the killed one's lapses soon.
		f := newExecutorFixture(t, url, func(c *Config) { c.ExecutorLease = 3 * time.Second })
		instances := []string{"bc-1", "bc-2", "bc-3"}
		procs := make([]*executorProcess, len(instances))
		for i, in := range instances {
			procs[i] = f.startExecutorProcess(t, bin, in) // one at a time: registration order is theirs
		}
		j := executorJob("broadcast", "echo", true, func(j *api.Job) { j.Executor.Routing = api.RoutingShardingBroadcast })
		check := func(id string, want []string) {
			t.Helper()
			parent := waitExecution(t, f.s, id)
			if parent.Outcome != "succeeded" {
				t.Fatalf("parent = %+v; want succeeded", parent)
			}
			si, err := f.s.ShardItems(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if si.Total != len(want) || len(si.Items) != len(want) {
				t.Fatalf("%d items; want one per live executor, %d", len(si.Items), len(want))
			}
			for i, it := range si.Items {
				e, err := f.s.GetExecution(t.Context(), it.ExecutionID)
				if err != nil {
					t.Fatal(err)
				}
				if e.Outcome != "succeeded" || e.ExecutorInstance != want[i] || !strings.Contains(e.Output, fmt.Sprintf("shard: %d/%d\n", i, len(want))) {
					t.Errorf("item %d ran on %s with output %q (%s); want %s, shard %d/%d", i, e.ExecutorInstance, e.Output, e.Outcome, want[i], i, len(want))
				}
			}
		}
		check(f.runOnce(t, j, nil), instances)

		if err := procs[1].cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the killed executor's lease to lapse", func() bool {
			list, err := f.s.ListExecutors(t.Context())
			if err != nil {
				return false
			}
			live := 0
			for _, e := range list {
				if e.Live {
					live++
				}
			}
			return live == 2
		})
		acc, err := f.s.RunJob(t.Context(), "admin", j.Group, j.Name, api.RunRequest{})
		if err != nil {
			t.Fatal(err)
		}
		check(acc.ExecutionIDs[0], []string{"bc-1", "bc-3"})
	})
}
