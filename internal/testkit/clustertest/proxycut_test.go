package clustertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/firelog"
	"github.com/chime-scheduler/chime/store"
)

// disconnection is a way of cutting a node off from the database.
type disconnection struct {
	scenario string
	start    func(*Proxy)
}

var (
	// cut closes the node's connections and refuses new ones: its store
	// calls fail at once.
	cut = disconnection{scenario: "proxy_cut", start: (*Proxy).Cut}
	// partition holds every byte: the node's store calls hang until the
	// network heals, and its open transactions stay open on the server.
	// The node must still learn by its own clock that its lease lapsed.
	partition = disconnection{scenario: "proxy_partition", start: (*Proxy).Partition}
)

// TestProxyCut cuts one node off from the database, through a TCP proxy
// that closes its connections, for three times DeadAfter while a load fires
// on every node. See testDisconnection.
func TestProxyCut(t *testing.T) {
	t.Parallel()
	testDisconnection(t, cut)
}

// TestProxyPartition is TestProxyCut with a silent network partition: the
// node's store calls neither succeed nor fail until it heals.
func TestProxyPartition(t *testing.T) {
	t.Parallel()
	testDisconnection(t, partition)
}

// testDisconnection cuts node p off from the database for three times
// DeadAfter while it runs two long jobs and a load fires on every node. The
// others must declare p dead and take over its work: its long job that
// requests recovery re-runs on one of them (marked recovering, for its
// original scheduled time), the other is recorded as failed with "node
// lost", and they go on firing the load meanwhile. p must learn it lost its
// lease by its own clock and cancel its jobs with ErrLeaseLost, without
// waiting for the database to answer. When the network is back p must
// rejoin and fire again, and no firing of the load may be lost or doubled.
func testDisconnection(t *testing.T, how disconnection) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			if d.server == nil {
				t.Skipf("%s is a file opened by each node: no connection to cut", d.name)
			}
			testDisconnectionOn(t, d, how)
		})
	}
}

func testDisconnectionOn(t *testing.T, d dialect, how disconnection) {
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
	// jobs. They are due before anything else: a node that is behind claims
	// the earliest fire times first, so long jobs due after a load it has
	// not caught up with (seeding is slow on a loaded machine) would wait
	// for the whole load. They run long enough to outlast seeding the load
	// and the cut-off node's lease.
	lost := slowJob{name: "lost", recovers: false}
	moved := slowJob{name: "moved", recovers: true}
	const longRun = 25 * time.Second
	longAt := time.Now().Add(time.Second).Truncate(time.Millisecond)
	for _, j := range []slowJob{lost, moved} {
		scheduleSlow(t, seeder, j, longAt, longRun)
	}
	p := StartNode(t, bin, dir, nodeConfig("p", withSessionTimeouts(d.name, proxied, true)))
	WaitFor(t, 20*time.Second, "node p to start the long jobs", func() (bool, string, error) {
		recs, err := p.Records()
		started := 0
		for _, r := range recs {
			if lost.startedOn(r) || moved.startedOn(r) {
				started++
			}
		}
		return started == 2, fmt.Sprintf("%d of 2 started", started), err
	})
	// The load requests recovery: a firing p recorded in the store but had
	// not finished when it was cut off re-runs elsewhere.
	load := Load{Group: "load", Triggers: 200, Fires: 15, Interval: time.Second, Spread: time.Second, RequestsRecovery: true}
	load.Start = startIn(load.Triggers)
	seed(t, seeder, load)
	b := StartNode(t, bin, dir, nodeConfig("b", withSessionTimeouts(d.name, url, false)))
	c := StartNode(t, bin, dir, nodeConfig("c", withSessionTimeouts(d.name, url, false)))

	how.start(proxy)
	outAt := time.Now()
	const outFor = 3 * deadAfter
	// p must notice by its own clock; the bound is the one on the others'
	// recovery, which also waits for DeadAfter and a check-in.
	var cancelled time.Duration
	waitCancelled := func(within time.Duration) {
		t.Helper()
		WaitFor(t, within, "node p to cancel its long jobs", func() (bool, string, error) {
			recs, err := p.Records()
			n := 0
			for _, r := range recs {
				if (lost.is(r) || moved.is(r)) && r.Event == firelog.EventCancel {
					if r.Detail != firelog.CauseLeaseLost {
						return false, "", fmt.Errorf("%s cancelled with cause %q, want %q", r.Trigger, r.Detail, firelog.CauseLeaseLost)
					}
					n++
					cancelled = max(cancelled, r.Actual.Sub(outAt))
				}
			}
			return n == 2, fmt.Sprintf("%d of 2 cancelled", n), err
		})
	}
	waitCancelled(recoveryBound)
	var recovery time.Duration
	WaitFor(t, recoveryBound, "the others to record p's long job as failed", func() (bool, string, error) {
		execs := executions(t, st, lost.storeKey())
		if len(execs) != 1 || execs[0].State != store.ExecutionFailed || execs[0].Error != "node lost" {
			return false, fmt.Sprintf("%+v", execs), nil
		}
		recovery = execs[0].FinishedTime.Sub(outAt)
		return true, "", nil
	})
	// The others go on firing while p is away.
	progressFrom := time.Now()
	WaitFor(t, time.Until(outAt.Add(outFor)), "the others to fire while p is away", func() (bool, string, error) {
		recs, err := Records(b, c)
		for _, r := range recs {
			if r.IsFire() && r.Actual.After(progressFrom) {
				return true, "", err
			}
		}
		return false, "no firing", err
	})
	// The outage lasts outFor in all: p stays away well past its lease
	// while the others fire its share.
	time.Sleep(time.Until(outAt.Add(outFor)))
	proxy.Restore()
	restoredAt := time.Now()

	WaitFor(t, 30*time.Second, "node p to fire again", func() (bool, string, error) {
		recs, err := p.Records()
		for _, r := range recs {
			if r.IsFire() && r.Actual.After(restoredAt) {
				return true, "", err
			}
		}
		return false, "no firing since the network came back", err
	})
	WaitFor(t, 30*time.Second+longRun, "the recovered long job to re-run to its end", func() (bool, string, error) {
		recs, err := Records(p, b, c)
		for _, r := range recs {
			if moved.is(r) && r.Recovering && r.Event == firelog.EventEnd {
				return true, "", err
			}
		}
		return false, "not ended", err
	})
	waitForLoad(t, load, nodesReader(p, b, c))
	stopNodes(t, p, b, c)

	all := records(t, p, b, c)
	var original, originalStop *firelog.Record
	var reruns []firelog.Record
	for _, r := range all {
		switch {
		case lost.startedOn(r) && r.Node != "p":
			t.Errorf("the long job that does not request recovery started again on %s", r.Node)
		case moved.startedOn(r) && r.Recovering:
			reruns = append(reruns, r)
		case moved.startedOn(r):
			original = &r
		case moved.is(r) && !r.Recovering:
			originalStop = &r
		}
	}
	var overlap time.Duration
	if original == nil || originalStop == nil || len(reruns) != 1 || !reruns[0].Scheduled.Equal(original.Scheduled) {
		t.Errorf("recovering long job: original %+v ending %+v, recovering runs %+v; want one re-run for the original scheduled time", original, originalStop, reruns)
	} else {
		// How long the original and its recovered re-run ran at once.
		overlap = max(0, originalStop.Actual.Sub(reruns[0].Actual))
	}
	checkRecovery(t, "the others recorded p's job as failed", recovery)

	res := Check(all, load.Expected(), load.Group, CheckOptions{AllowRecoveryReruns: true})
	assertExactlyOnce(t, res)
	rerunsOnlyOf(t, all, load.Group, "p")
	t.Logf("p cancelled its jobs %s after it was cut off; the others recovered its work after %s; the recovering job ran twice at once for %s", cancelled, recovery, overlap)
	Report(t, Figures{Dialect: d.name, Scenario: how.scenario, Nodes: 3, Triggers: load.Triggers + 2, Result: res, Recovery: recovery, Overlap: overlap})
}

// withSessionTimeouts adds to a node's database URL the server-side
// timeouts docs/cluster.md asks operators to set (see "Faults"). A node cut
// off in the middle of a transaction (cutOff) leaves it open on the server,
// holding the lock on its node row that recovery must take: the database has
// to end it (PostgreSQL's idle_in_transaction_session_timeout, MariaDB's
// idle_transaction_timeout). And MySQL does not stop a statement whose client
// gave up, so a survivor's recovery that timed out waiting would hold its own
// node row until its lock wait ends (innodb_lock_wait_timeout); pgx cancels
// the statement on the server.
func withSessionTimeouts(dialect, url string, cutOff bool) string {
	var params []string
	switch {
	case dialect == "postgres" && cutOff:
		params = append(params, "idle_in_transaction_session_timeout=1000")
	case dialect == "mariadb" && cutOff:
		params = append(params, "idle_transaction_timeout=1")
	case dialect == "mariadb":
		params = append(params, "innodb_lock_wait_timeout=1")
	}
	if len(params) == 0 {
		return url
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + strings.Join(params, "&")
}
