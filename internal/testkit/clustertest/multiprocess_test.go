package clustertest

import (
	"testing"
	"time"
)

// TestMultiProcess runs three testnode processes on one database (for
// SQLite, one file) and checks that each of thousands of scheduled firings
// runs exactly once.
func TestMultiProcess(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) { testMultiProcess(t, d) })
	}
}

func testMultiProcess(t *testing.T, d dialect) {
	url := d.url(t)
	bin := binary(t)
	dir := t.TempDir()
	seeder, _ := newSeeder(t, url)

	load := Load{Group: "load", Triggers: 300, Fires: 10, Interval: time.Second, Spread: time.Second}
	load.Start = startIn(load.Triggers)
	seed(t, seeder, load)
	var nodes []*Node
	for _, id := range []string{"a", "b", "c"} {
		nodes = append(nodes, StartNode(t, bin, dir, nodeConfig(id, url)))
	}
	waitForLoad(t, load, nodesReader(nodes...))
	stopNodes(t, nodes...)

	res := Check(records(t, nodes...), load.Expected(), load.Group, CheckOptions{})
	assertExactlyOnce(t, res)
	Report(t, Figures{Dialect: d.name, Scenario: "multi_process", Nodes: len(nodes), Triggers: load.Triggers, Result: res})
}
