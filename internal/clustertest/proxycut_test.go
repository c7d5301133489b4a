package clustertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/clustertest/firelog"
	"github.com/chime-scheduler/chime/store"
)

// TestProxyCut cuts one node off from the database, through a TCP proxy,
// for three times DeadAfter while a load fires on every node. The others
// must declare it dead and take over its claims; its running job must see
// its context cancelled with ErrLeaseLost; when the proxy is restored it
// must rejoin and fire again; and no firing may be lost or doubled.
func TestProxyCut(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			if d.server == nil {
				t.Skipf("%s is a file opened by each node: no connection to cut", d.name)
			}
			testProxyCut(t, d)
		})
	}
}

func testProxyCut(t *testing.T, d dialect) {
	url := d.url(t)
	bin := binary(t)
	dir := t.TempDir()
	seeder, st := newSeeder(t, url)
	target, err := HostPort(url)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := NewProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	proxied, err := RewriteHost(url, proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}

	// Node p, behind the proxy, runs alone at first, so it takes the long
	// job. The load requests recovery: a firing p recorded in the store
	// but had not finished when it was cut off re-runs elsewhere.
	p := StartNode(t, bin, dir, nodeConfig("p", proxied))
	load := Load{Group: "load", Triggers: 200, Fires: 15, Interval: time.Second, Spread: time.Second, RequestsRecovery: true}
	load.Start = startIn(load.Triggers)
	seed(t, seeder, load)
	long := slowJob{name: "cut", recovers: false}
	scheduleSlow(t, seeder, long, time.Now().Add(time.Second).Truncate(time.Millisecond), time.Minute)
	WaitFor(t, 20*time.Second, "node p to start the long job", func() (bool, string, error) {
		recs, err := p.Records()
		for _, r := range recs {
			if long.startedOn(r) {
				return true, "", err
			}
		}
		return false, "not started", err
	})
	b := StartNode(t, bin, dir, nodeConfig("b", url))
	c := StartNode(t, bin, dir, nodeConfig("c", url))
	WaitFor(t, 20*time.Second, "the load to fire on every node", func() (bool, string, error) {
		recs, err := Records(p, b, c)
		nodes := map[string]bool{}
		for _, r := range recs {
			if r.IsFire() && r.Trigger != long.triggerKey().String() {
				nodes[r.Node] = true
			}
		}
		return len(nodes) == 3, fmt.Sprintf("fired on %v", nodes), err
	})

	proxy.Cut()
	cutAt := time.Now()
	const cutFor = 3 * deadAfter
	WaitFor(t, cutFor, "the cut-off node's long job to be cancelled", func() (bool, string, error) {
		recs, err := p.Records()
		for _, r := range recs {
			if long.is(r) && r.Event == firelog.EventCancel {
				if r.Detail != firelog.CauseLeaseLost {
					return false, "", fmt.Errorf("long job cancelled with cause %q, want %q", r.Detail, firelog.CauseLeaseLost)
				}
				return true, "", nil
			}
		}
		return false, "not cancelled", err
	})
	var recovery time.Duration
	WaitFor(t, cutFor, "the others to record the cut-off node's long job as failed", func() (bool, string, error) {
		execs := executions(t, st, long.storeKey())
		if len(execs) != 1 || execs[0].State != store.ExecutionFailed || execs[0].Error != "node lost" {
			return false, fmt.Sprintf("%+v", execs), nil
		}
		recovery = execs[0].FinishedTime.Sub(cutAt)
		return true, "", nil
	})
	// The cut lasts cutFor in all: the node must stay away well past its
	// lease while the others fire its share.
	time.Sleep(time.Until(cutAt.Add(cutFor)))
	proxy.Restore()
	restoredAt := time.Now()

	WaitFor(t, 30*time.Second, "the cut-off node to fire again", func() (bool, string, error) {
		recs, err := p.Records()
		for _, r := range recs {
			if r.IsFire() && r.Actual.After(restoredAt) {
				return true, "", err
			}
		}
		return false, "no firing since the restore", err
	})
	waitForLoad(t, load, nodesReader(p, b, c))
	stopNodes(t, p, b, c)

	all := records(t, p, b, c)
	for _, r := range all {
		if long.startedOn(r) && r.Node != "p" {
			t.Errorf("the long job, which does not request recovery, started again on %s", r.Node)
		}
	}
	checkRecovery(t, "the others recorded the cut-off node's job as failed", recovery)
	res := Check(all, load.Expected(), load.Group, CheckOptions{AllowRecoveryReruns: true})
	res.AssertExactlyOnce(t)
	rerunsOnlyOf(t, all, load.Group, "p")
	Report(t, Figures{Dialect: d.name, Scenario: "proxy_cut", Nodes: 3, Triggers: load.Triggers + 1, Result: res, Recovery: recovery})
}
