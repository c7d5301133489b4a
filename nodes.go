package chime

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// Node is a scheduler node of the cluster, as the store records it.
type Node struct {
	// ID names the node (Config.NodeID).
	ID string
	// Epoch is the node's lease epoch: it grows each time the node
	// registers, and when it is declared dead.
	Epoch int64
	// LastCheckIn is when the node last renewed its lease, on the store's
	// clock.
	LastCheckIn time.Time
	// Dead is set once a node declared this one dead and recovered its
	// work; it stays set until the node registers again.
	Dead bool
	// Alive reports that the node holds a live lease at the reading of
	// the store's clock the view was taken at: it is not dead, and it
	// checked in less than DeadAfter before.
	Alive bool
}

// ClusterView is the cluster's nodes judged at one reading of the
// store's clock.
type ClusterView struct {
	// Nodes are the registered nodes, dead ones included, ordered by ID.
	Nodes []Node
	// At is the store's clock reading their liveness was judged at.
	At time.Time
}

// Leader returns the ID of the live node with the smallest ID, or "" when
// no node is alive. Every node that reads the same view names the same
// leader, so it can pick the one node that does what must not be done by
// every node (sending a cluster-wide alert, say). Two views read a moment
// apart may name two leaders: a leader is a way to avoid duplicate work,
// not a lock.
func (v *ClusterView) Leader() string {
	for _, n := range v.Nodes {
		if n.Alive {
			return n.ID
		}
	}
	return ""
}

// Node returns the node with the ID, and whether it is registered.
func (v *ClusterView) Node(id string) (Node, bool) {
	for _, n := range v.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// Cluster returns the cluster's nodes, with their liveness judged on the
// store's clock with this scheduler's DeadAfter. It works before Start
// too.
func (s *Scheduler) Cluster(ctx context.Context) (*ClusterView, error) {
	recs, err := s.store.NodeList(ctx)
	if err != nil {
		return nil, fmt.Errorf("chime: list nodes: %w", err)
	}
	now, err := s.store.Now(ctx)
	if err != nil {
		return nil, fmt.Errorf("chime: read the store's clock: %w", err)
	}
	deadAfter := s.DeadAfter()
	v := &ClusterView{Nodes: make([]Node, 0, len(recs)), At: now}
	for _, r := range recs {
		v.Nodes = append(v.Nodes, Node{
			ID: r.ID, Epoch: r.Epoch, LastCheckIn: r.LastCheckIn, Dead: r.Dead,
			Alive: !r.Dead && now.Sub(r.LastCheckIn) < deadAfter,
		})
	}
	slices.SortFunc(v.Nodes, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	return v, nil
}

// DeadAfter returns how long a node may miss check-ins before the others
// declare it dead: Config.DeadAfter, or its default.
func (s *Scheduler) DeadAfter() time.Duration { return s.member.DeadAfter() }

// StoreTime returns the store's clock as this node estimates it: the
// node's clock corrected by ClockOffset, measured at each check-in (the
// node's own clock until the first). It reads no store, so it costs
// nothing and never fails.
//
// Successive calls on one Scheduler return increasing times, so that what
// a node stamps with them is in the order it happened. A check-in that
// measures a smaller offset than the one before (the measurement's error
// is up to half a check-in's round trip, tens of milliseconds on a loaded
// machine) would turn the estimate back: it holds instead, advancing a
// nanosecond a call, until the corrected clock passes it.
func (s *Scheduler) StoreTime() time.Time {
	now := s.cfg.Clock.Now().Add(s.member.Offset())
	for {
		last := s.lastStoreTime.Load()
		next := max(now.UnixNano(), last+1)
		if !s.lastStoreTime.CompareAndSwap(last, next) {
			continue
		}
		if next == now.UnixNano() {
			return now
		}
		return time.Unix(0, next).In(now.Location())
	}
}

// nodeRecoveryOf is the store's account of a dead node's recovery as
// EventNodeRecovered tells it. The store gives the node as it was before
// it was declared dead; the event gives it as it is now, dead.
func nodeRecoveryOf(r *store.NodeRecovery) *NodeRecovery {
	out := &NodeRecovery{
		Node:             Node{ID: r.Node.ID, Epoch: r.Node.Epoch, LastCheckIn: r.Node.LastCheckIn, Dead: true},
		ReleasedTriggers: r.ReleasedTriggers,
		Recoverable:      make([]Execution, 0, len(r.Recoverable)),
		Failed:           make([]Execution, 0, len(r.Failed)),
	}
	for i := range r.Recoverable {
		out.Recoverable = append(out.Recoverable, executionOf(&r.Recoverable[i]))
	}
	for i := range r.Failed {
		out.Failed = append(out.Failed, executionOf(&r.Failed[i]))
	}
	return out
}
