package memstore

import (
	"context"
	"slices"
	"strings"

	"github.com/chime-scheduler/chime/store"
)

// Reconcile repairs claims and executions held by no live lease and
// triggers blocked by no running execution; see [store.Store]. The memory
// store changes state under one mutex, so on a correct store it finds
// nothing; it exists so that a bug cannot leave work stuck forever.
func (s *Store) Reconcile(ctx context.Context, lease store.Lease) (*store.Reconciliation, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(lease); err != nil {
		return nil, err
	}
	live := func(nodeID string, epoch int64) bool {
		n, ok := s.nodes[nodeID]
		return ok && n.registered && !n.rec.Dead && n.rec.Epoch == epoch
	}
	out := &store.Reconciliation{}
	for _, t := range s.triggers {
		if t.rec.State == store.StateAcquired && !live(t.rec.ClaimedBy, t.rec.ClaimEpoch) {
			s.setState(t, s.unpausedState(t.rec.JobKey))
			out.ReleasedTriggers = append(out.ReleasedTriggers, t.rec.Key)
		}
	}
	var lost []*store.ExecutionRecord
	for id := range s.running {
		if e := s.executions[id]; e.State == store.ExecutionExecuting && !live(e.NodeID, e.Epoch) {
			lost = append(lost, e)
		}
	}
	slices.SortFunc(lost, func(a, b *store.ExecutionRecord) int { return strings.Compare(a.ID, b.ID) })
	now := s.now()
	for _, e := range lost {
		if e.RequestsRecovery {
			e.State = store.ExecutionRecoverable
			e.NodeID = ""
			e.Epoch = 0
			out.Recoverable = append(out.Recoverable, *e)
			continue
		}
		s.finishExecution(e, store.ExecutionFailed, reasonNodeLost, now)
		out.Failed = append(out.Failed, *e)
	}
	runs := make(map[store.Key]bool, len(s.running))
	for id := range s.running {
		runs[s.executions[id].TriggerKey] = true
	}
	for _, t := range s.triggers {
		if awaitingRun(&t.rec) {
			if !runs[t.rec.Key] {
				s.rearm(t.rec.Key, now)
				out.UnblockedTriggers = append(out.UnblockedTriggers, t.rec.Key)
			}
			continue
		}
		blocked := t.rec.State == store.StateBlocked || t.rec.State == store.StatePausedBlocked
		if blocked && !s.jobBusy(t.rec.JobKey) {
			if t.rec.State == store.StateBlocked {
				s.setState(t, store.StateWaiting)
			} else {
				s.setState(t, store.StatePaused)
			}
			out.UnblockedTriggers = append(out.UnblockedTriggers, t.rec.Key)
		}
	}
	slices.SortFunc(out.ReleasedTriggers, keyCompare)
	slices.SortFunc(out.UnblockedTriggers, keyCompare)
	return out, nil
}
