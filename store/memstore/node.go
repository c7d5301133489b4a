package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// Errors of recovered executions.
const (
	reasonNodeLost    = store.ErrorNodeLost
	reasonNodeStopped = store.ErrorNodeStopped
)

// NodeRegister registers a node with epoch 1, or re-registers a known ID
// with an epoch one greater than its last, first recovering whatever its
// previous incarnation left behind.
func (s *Store) NodeRegister(ctx context.Context, nodeID string) (*store.NodeRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if nodeID == "" {
		return nil, errors.New("store: registering a node: empty node ID")
	}
	n, ok := s.nodes[nodeID]
	if !ok {
		n = &node{rec: store.NodeRecord{ID: nodeID}}
		s.nodes[nodeID] = n
	}
	s.recoverNode(nodeID, reasonNodeLost)
	n.rec.Epoch++
	n.rec.Dead = false
	n.rec.LastCheckIn = s.now()
	n.registered = true
	rec := n.rec
	return &rec, nil
}

// NodeCheckIn renews the node's lease and returns the store's clock.
func (s *Store) NodeCheckIn(ctx context.Context, lease store.Lease) (time.Time, error) {
	if err := s.lock(ctx); err != nil {
		return time.Time{}, err
	}
	defer s.mu.Unlock()
	n, err := s.checkLease(lease)
	if err != nil {
		return time.Time{}, err
	}
	n.rec.LastCheckIn = s.now()
	return n.rec.LastCheckIn, nil
}

// NodeList returns every registered node, dead ones included, ordered by ID.
func (s *Store) NodeList(ctx context.Context) ([]store.NodeRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []store.NodeRecord
	for _, n := range s.nodes {
		if n.registered {
			out = append(out, n.rec)
		}
	}
	slices.SortFunc(out, func(a, b store.NodeRecord) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// NodeUnregister removes a node that stops; see [store.NodeStore].
func (s *Store) NodeUnregister(ctx context.Context, lease store.Lease) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	n, err := s.checkLease(lease)
	if err != nil {
		return err
	}
	s.recoverNode(n.rec.ID, reasonNodeStopped)
	n.registered = false
	return nil
}

// NodesRecover declares dead the nodes other than the caller whose last
// check-in is DeadAfter or more behind the store's clock; see
// [store.NodeStore]. Recoveries are ordered by node ID.
func (s *Store) NodesRecover(ctx context.Context, p *store.NodesRecoverParams) ([]store.NodeRecovery, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return nil, err
	}
	if p.DeadAfter <= 0 {
		return nil, fmt.Errorf("store: recovering nodes: DeadAfter %s is not positive", p.DeadAfter)
	}
	now := s.now()
	var out []store.NodeRecovery
	for id, n := range s.nodes {
		if id == p.Lease.NodeID || !n.registered || n.rec.Dead || now.Sub(n.rec.LastCheckIn) < p.DeadAfter {
			continue
		}
		r := store.NodeRecovery{Node: n.rec}
		r.ReleasedTriggers, r.Recoverable, r.Failed = s.recoverNode(id, reasonNodeLost)
		n.rec.Epoch++
		n.rec.Dead = true
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b store.NodeRecovery) int { return strings.Compare(a.Node.ID, b.Node.ID) })
	return out, nil
}

// recoverNode takes back the work of a node that is gone: its ACQUIRED
// triggers become WAITING (BLOCKED when their job is busy) and its EXECUTING
// executions become RECOVERABLE when they request recovery, FAILED with
// reason otherwise. A non-concurrent job stays blocked while it has a
// RECOVERABLE execution, which will run again; the others are unblocked.
// It does not change the node record.
func (s *Store) recoverNode(id, reason string) (released int, recoverable, failed []store.ExecutionRecord) {
	var acquired []*trigger
	for _, t := range s.triggers {
		if t.rec.State == store.StateAcquired && t.rec.ClaimedBy == id {
			acquired = append(acquired, t)
		}
	}
	for _, t := range acquired {
		s.setState(t, s.unpausedState(t.rec.JobKey))
	}
	var lost []*store.ExecutionRecord
	for eid := range s.running {
		if e := s.executions[eid]; e.State == store.ExecutionExecuting && e.NodeID == id {
			lost = append(lost, e)
		}
	}
	slices.SortFunc(lost, func(a, b *store.ExecutionRecord) int {
		if c := a.ScheduledTime.Compare(b.ScheduledTime); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	now := s.now()
	for _, e := range lost {
		if e.RequestsRecovery {
			e.State = store.ExecutionRecoverable
			e.NodeID = ""
			e.Epoch = 0
			recoverable = append(recoverable, *e)
			continue
		}
		s.finishExecution(e, store.ExecutionFailed, reason, now)
		s.rearm(e.TriggerKey, now)
		s.unblockJob(e.JobKey)
		failed = append(failed, *e)
	}
	return len(acquired), recoverable, failed
}
