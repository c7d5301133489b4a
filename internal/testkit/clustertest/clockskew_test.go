package clustertest

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

// TestClockSkew runs a node whose clock is five minutes ahead, one five
// minutes behind and one on time. Nodes fire on the store's clock,
// corrected by their measured offset, so every firing must run exactly
// once and near its scheduled time on true time.
func TestClockSkew(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) { testClockSkew(t, d) })
	}
}

// Correctness bounds on the lag of every firing, on true time. An
// uncorrected clock five minutes off would fire five minutes early or late.
// Early has no other cause, so its bound is tight (the offset estimate is
// good to half a check-in's round trip); late also comes from a loaded
// machine (on two cores running other tests, seconds of backlog were
// seen), so its bound is loose, yet ten times below five minutes.
const (
	earlyBound = time.Second
	lateBound  = 30 * time.Second
)

func testClockSkew(t *testing.T, d dialect) {
	url := d.url(t)
	bin := binary(t)
	dir := t.TempDir()
	seeder, _ := newSeeder(t, url)

	load := Load{Group: "load", Triggers: 300, Fires: 10, Interval: time.Second, Spread: time.Second}
	load.Start = startIn(load.Triggers)
	seed(t, seeder, load)
	var nodes []*Node
	for _, n := range []struct {
		id   string
		skew time.Duration
	}{{"ahead", 5 * time.Minute}, {"behind", -5 * time.Minute}, {"ontime", 0}} {
		cfg := nodeConfig(n.id, url)
		cfg.ClockSkew = n.skew
		nodes = append(nodes, StartNode(t, bin, dir, cfg))
	}
	waitForLoad(t, load, nodesReader(nodes...))
	stopNodes(t, nodes...)

	all := records(t, nodes...)
	res := Check(all, load.Expected(), load.Group, CheckOptions{})
	assertExactlyOnce(t, res)
	perNode := map[string][]firelog.Record{}
	for _, r := range all {
		if !r.IsFire() {
			continue
		}
		perNode[r.Node] = append(perNode[r.Node], r)
		if lag := r.Lag(); lag < -earlyBound || lag > lateBound {
			t.Errorf("node %s fired %s at %s on true time, %s after its scheduled time: outside [-%s, %s]", r.Node, r.Trigger, r.Actual.Format(time.RFC3339Nano), lag, earlyBound, lateBound)
		}
	}
	for node, recs := range perNode {
		r := Check(recs, load.Expected(), load.Group, CheckOptions{})
		t.Logf("node %s: %d firings, lag min %s p50 %s max %s", node, r.Fires, r.MinLag(), r.Percentile(50), r.MaxLag())
	}
	Report(t, Figures{Dialect: d.name, Scenario: "clock_skew", Nodes: len(nodes), Triggers: load.Triggers, Result: res})
}
