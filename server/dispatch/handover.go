package dispatch

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// maxHandoverBatch bounds the runs handed over in one batch.
const maxHandoverBatch = 64

// handover is one round robin hand-over in its batch.
type handover struct {
	h      Handover
	params any
	// e is the executor picked, asg and err what became of the
	// hand-over.
	e   *Executor
	asg *Assignment
	err error
}

// commitHandovers hands over a batch of round robin runs. Alone, a
// round robin hand-over costs two transactions, the turn (which holds
// the lock of the group's row until it commits) and the run's insert,
// so that the group's hand-overs are serialized on that lock. A batch
// reads each group's live executors once, takes the turns of all its
// runs of the group in one short transaction (one lock, the cursor
// advanced to the last pick, committed without waiting for the WAL flush
// on PostgreSQL, as turn does), and inserts all its runs in one
// transaction. Each run gets the executor its turn picks among those
// that serve it, in the batch's order, as one after the other would.
// When the insert fails, each run of the batch is handed over alone, so
// that one's error is not the others'.
func (s *Service) commitHandovers(ctx context.Context, batch []*handover) {
	for _, ho := range batch {
		ho.e, ho.asg, ho.err = nil, nil, nil
	}
	now, err := s.now(ctx, s.db)
	if err != nil {
		for _, ho := range batch {
			ho.err = err
		}
		return
	}
	var groups []string
	byGroup := make(map[string][]*handover)
	for _, ho := range batch {
		g := ho.h.Target.Group
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], ho)
	}
	for _, g := range groups {
		s.takeTurns(ctx, now, g, byGroup[g])
	}
	if err := s.insertHandovers(ctx, now, batch); err != nil {
		for _, ho := range batch {
			if ho.e == nil {
				continue
			}
			ho.e = nil
			if len(batch) == 1 {
				ho.err = err
				break
			}
			ho.asg, ho.err = s.handoverOne(ctx, ho.h, ho.params)
		}
		return
	}
	for _, ho := range batch {
		if ho.e != nil {
			ho.asg = &Assignment{RunID: ho.h.RunID, Token: 1, ExecutorID: ho.e.ID, Instance: ho.e.Instance}
		}
	}
}

// takeTurns picks the executors of hos, the batch's hand-overs to group,
// by round robin, and advances the group's cursor past them, in one
// transaction holding the lock of the group's row. A hand-over no
// executor serves gets its *NoExecutorError; when the database fails,
// every one gets the error.
func (s *Service) takeTurns(ctx context.Context, now time.Time, group string, hos []*handover) {
	fail := func(err error) {
		for _, ho := range hos {
			ho.e, ho.err = nil, err
		}
	}
	live, err := s.liveExecutors(ctx, s.db, now, group)
	if err != nil {
		fail(err)
		return
	}
	tx, rrLast, err := s.lockGroup(ctx, group, true)
	if err != nil {
		fail(fmt.Errorf("dispatch: locking group %q: %w", group, err))
		return
	}
	defer func() { _ = tx.Rollback() }()
	picked := false
	for _, ho := range hos {
		t := ho.h.Target
		cands, byID, err := fit(live, t)
		if err != nil {
			ho.err = err
			continue
		}
		c := pick(cands, pickInput{routing: t.Routing, rrLast: rrLast, now: now, heartbeat: s.HeartbeatInterval()})
		ho.e, rrLast, picked = byID[c.id], c.id, true
	}
	if !picked {
		return
	}
	if _, err := tx.ExecContext(ctx, s.q.groupSetRR, rrLast, s.sched, group); err != nil {
		fail(fmt.Errorf("dispatch: recording the round robin of group %q: %w", group, err))
		return
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("dispatch: recording the round robin of group %q: %w", group, err))
	}
}

// insertHandovers records the uses of the executors picked for batch and
// inserts their runs, assigned with token 1, in one transaction. The
// executors' rows are updated in the order of their IDs, so that two
// nodes' batches never wait for each other in a cycle.
func (s *Service) insertHandovers(ctx context.Context, now time.Time, batch []*handover) error {
	uses := make(map[string]int)
	for _, ho := range batch {
		if ho.e != nil {
			uses[ho.e.ID]++
		}
	}
	if len(uses) == 0 {
		return nil
	}
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("dispatch: handing runs over: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	ids := make([]string, 0, len(uses))
	for id := range uses {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, s.q.executorUse, nanos(now), uses[id], s.sched, id); err != nil {
			return fmt.Errorf("dispatch: recording the use of executor %s: %w", id, err)
		}
	}
	for _, ho := range batch {
		if ho.e == nil {
			continue
		}
		h := ho.h
		if _, err := tx.ExecContext(ctx, s.q.runInsert, s.sched, h.RunID, h.ExecutionID, h.Attempt, h.Target.Group,
			h.Target.Handler, h.JobGroup, h.JobName, nanos(h.ScheduledTime), ho.params, h.Recovering, int64(h.Timeout),
			ho.e.ID, h.NodeID, h.ShardIndex, h.ShardTotal, false, nanos(now)); err != nil {
			return fmt.Errorf("dispatch: inserting run %s: %w", h.RunID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("dispatch: committing hand-overs: %w", err)
	}
	return nil
}

// fit returns, among live (the group's live executors), the candidates
// that serve target t, in registration order; none is a
// *NoExecutorError.
func fit(live []*Executor, t api.ExecutorTarget) ([]candidate, map[string]*Executor, error) {
	var cands []candidate
	byID := make(map[string]*Executor)
	for _, e := range live {
		if serves(e, t.Handler, t.Labels) {
			cands = append(cands, candidate{id: e.ID, registered: e.Registered, lastHeartbeat: e.LastHeartbeat,
				lastUsed: e.LastUsed, useCount: e.UseCount})
			byID[e.ID] = e
		}
	}
	if len(cands) == 0 {
		return nil, nil, &NoExecutorError{Group: t.Group, Handler: t.Handler, Labels: t.Labels, Live: len(live)}
	}
	return cands, byID, nil
}
