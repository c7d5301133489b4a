package chime_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// TestClusterJudgesLivenessOnTheStoresClock has a node that joined and
// never checked in again: the live scheduler declares it dead after
// DeadAfter, and Cluster shows it dead, the scheduler alive and the
// leader, although the dead node's ID sorts first.
func TestClusterJudgesLivenessOnTheStoresClock(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := memstore.New(nil)
	if _, err := st.NodeRegister(ctx, "a-ghost"); err != nil {
		t.Fatal(err)
	}
	s, err := chime.New(chime.Config{Store: st, NodeID: "b-live", Logger: quietLogger,
		CheckInInterval: 20 * time.Millisecond, DeadAfter: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.DeadAfter(); got != 100*time.Millisecond {
		t.Errorf("DeadAfter = %s, want 100ms", got)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	deadline := time.Now().Add(10 * time.Second)
	var v *chime.ClusterView
	for {
		v, err = s.Cluster(ctx)
		if err != nil {
			t.Fatalf("Cluster: %v", err)
		}
		if ghost, _ := v.Node("a-ghost"); ghost.Dead || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(v.Nodes) != 2 || v.Nodes[0].ID != "a-ghost" || v.Nodes[1].ID != "b-live" {
		t.Fatalf("nodes = %+v, want a-ghost then b-live", v.Nodes)
	}
	if g := v.Nodes[0]; !g.Dead || g.Alive {
		t.Errorf("a-ghost = %+v, want dead, not alive", g)
	}
	if l := v.Nodes[1]; l.Dead || !l.Alive {
		t.Errorf("b-live = %+v, want alive", l)
	}
	if got := v.Leader(); got != "b-live" {
		t.Errorf("Leader = %q, want b-live, the live node with the smallest ID", got)
	}
	if _, ok := v.Node("c-absent"); ok {
		t.Error("Node(c-absent) found a node")
	}
	now, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := s.StoreTime().Sub(now); d < -time.Second || d > time.Second {
		t.Errorf("StoreTime is %s off the store's clock", d)
	}
}

// Cluster tells which nodes hold a live lease; Leader names the one of
// them that does what one node of the cluster does alone.
func ExampleScheduler_Cluster() {
	ctx := context.Background()
	s, err := chime.New(chime.Config{Store: memstore.New(nil), NodeID: "node-1", Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	defer s.Stop(ctx)
	v, err := s.Cluster(ctx)
	if err != nil {
		panic(err)
	}
	for _, n := range v.Nodes {
		fmt.Printf("%s alive=%t\n", n.ID, n.Alive)
	}
	fmt.Println("leader:", v.Leader())
	// Output:
	// node-1 alive=true
	// leader: node-1
}

// TestNodeRecoveredEvent has a node fire two jobs, one that requests
// recovery, and never check in again: the live scheduler declares it dead
// and tells its scheduler listeners once, with the dead node and which of
// its executions it will re-run and which it recorded failed.
func TestNodeRecoveredEvent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := memstore.New(nil)
	s, _ := newScheduler(t, chime.Config{Store: st, NodeID: "watcher",
		CheckInInterval: 20 * time.Millisecond, DeadAfter: 100 * time.Millisecond})
	day := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"lost", "recovered"} {
		j := job(name)
		j.RequestsRecovery = name == "recovered"
		tr := trig(name, &schedule.Simple{})
		tr.StartTime = day
		scheduleJob(t, s, j, tr)
	}
	node, err := st.NodeRegister(ctx, "ghost")
	if err != nil {
		t.Fatalf("NodeRegister: %v", err)
	}
	fired := ghostFire(t, st, store.Lease{NodeID: node.ID, Epoch: node.Epoch}, day.Add(time.Hour))
	if len(fired) != 2 {
		t.Fatalf("the ghost fired %d triggers, want 2", len(fired))
	}

	events := make(chan chime.SchedulerEvent, 10)
	s.AddSchedulerListener("test", func(_ context.Context, ev chime.SchedulerEvent) {
		if ev.Type == chime.EventNodeRecovered {
			events <- ev
		}
	})
	start(t, s)
	t.Cleanup(func() { stop(t, s) })

	var ev chime.SchedulerEvent
	select {
	case ev = <-events:
	case <-time.After(10 * time.Second):
		t.Fatal("no NODE_RECOVERED event within 10s of the ghost's death")
	}
	r := ev.Recovered
	if r == nil {
		t.Fatal("NODE_RECOVERED without Recovered")
	}
	if r.Node.ID != "ghost" || r.Node.Epoch != node.Epoch || !r.Node.Dead || r.Node.Alive {
		t.Errorf("Node = %+v, want ghost of epoch %d, dead", r.Node, node.Epoch)
	}
	ids := func(es []chime.Execution) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	if got, want := ids(r.Recoverable), []string{fired["recovered"].ID}; !slices.Equal(got, want) {
		t.Errorf("Recoverable = %v, want %v", got, want)
	}
	if got, want := ids(r.Failed), []string{fired["lost"].ID}; !slices.Equal(got, want) {
		t.Errorf("Failed = %v, want %v", got, want)
	}
	select {
	case ev := <-events:
		t.Errorf("a second NODE_RECOVERED event: %+v", ev.Recovered.Node)
	case <-time.After(300 * time.Millisecond):
	}
}
