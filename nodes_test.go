package chime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
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
