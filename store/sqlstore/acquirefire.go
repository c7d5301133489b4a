package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/chime-scheduler/chime/store"
)

// TriggersAcquireFire claims due triggers and fires those p.Fire asks to
// fire, in one transaction; see [store.Batcher]. Its statements do not grow
// with the batch: one lease check, one locking read of the due triggers
// (FOR UPDATE SKIP LOCKED on PostgreSQL and MySQL, as TriggersAcquire's),
// one read of their jobs, then one UPDATE that marks ACQUIRED the triggers
// it does not fire, one INSERT of the executions and one UPDATE of the
// fired triggers' timing. A fired trigger goes from WAITING to its state
// after the firing in one write of its row, never ACQUIRED in between: its
// row lock, held to the commit, is what keeps other nodes from claiming it
// meanwhile, as ACQUIRED does for the triggers left claimed.
//
// Triggers whose job disallows concurrency are left claimed whatever Fire
// says (TriggersFire locks their job and may block them instead). When an
// execution hits the unique key on (trigger, scheduled time), which the
// row locks make impossible unless something else failed, the transaction
// is rolled back and the triggers are claimed by TriggersAcquire instead,
// to be fired by TriggersFire, which tells which firing was made already.
func (s *Store) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	var res *store.TriggersAcquireFireResult
	err := s.write(ctx, "claiming and firing triggers", func(tx *txn) error {
		res = &store.TriggersAcquireFireResult{}
		if err := tx.leaseCustomPlans(p.Lease); err != nil {
			return err
		}
		if p.Limit <= 0 || p.NoLaterThan.IsZero() {
			return nil
		}
		return tx.acquireFire(p, res)
	})
	if errors.Is(err, errBatchConflict) {
		claimed, err := s.TriggersAcquire(ctx, &p.TriggersAcquireParams)
		if err != nil {
			return nil, err
		}
		return &store.TriggersAcquireFireResult{Claimed: claimed}, nil
	}
	if err != nil {
		return nil, s.translate("claiming and firing triggers", err, nil, nil)
	}
	s.sawClaims(len(res.Claimed))
	s.sawFirings(len(res.Firings))
	return res, nil
}

// acquireFire locks the due triggers, claims those it does not fire and
// fires the others, filling res.
func (tx *txn) acquireFire(p *store.TriggersAcquireFireParams, res *store.TriggersAcquireFireResult) error {
	s, l := tx.s, p.Lease
	args := []any{s.sched, boundNanos(p.NoLaterThan)}
	for _, typ := range p.ExcludeJobTypes {
		args = append(args, typ)
	}
	args = append(args, p.Limit)
	rows, err := tx.query(withoutJobTypes(sqlAcquireSelect, "{p}triggers", len(p.ExcludeJobTypes)), args...)
	locked, err := collect(rows, err, scanTrigger)
	if err != nil || len(locked) == 0 {
		return err
	}
	slices.SortFunc(locked, dueOrder)
	jobKeys := make([]store.Key, len(locked))
	for i := range locked {
		jobKeys[i] = locked[i].JobKey
	}
	jobs, err := tx.jobs(jobKeys)
	if err != nil {
		return err
	}
	triggers := make(map[store.Key]store.TriggerRecord, len(locked))
	var claim []store.Key
	for _, t := range locked {
		t.State, t.ClaimedBy, t.ClaimEpoch = store.StateAcquired, l.NodeID, l.Epoch
		t.Version++
		if job, ok := jobs[t.JobKey]; ok && !job.DisallowConcurrent && p.Fire != nil {
			if f, fire := p.Fire(t); fire && f.Trigger.Key == t.Key && checkFiring(&f) == nil {
				res.Firings = append(res.Firings, f)
				triggers[t.Key] = t
				continue
			}
		}
		claim = append(claim, t.Key)
		res.Claimed = append(res.Claimed, t)
	}
	if len(claim) > 0 {
		where, args := s.d.keysWhere("trigger_group", "trigger_name", claim, []any{l.NodeID, l.Epoch, s.sched})
		n, err := tx.ExecContext(tx.ctx, s.d.render(s.prefix, acquireClaimSQL+where), args...)
		if err != nil {
			return err
		}
		if got, _ := n.RowsAffected(); got != int64(len(claim)) {
			return fmt.Errorf("claimed %d of the %d triggers locked", got, len(claim))
		}
	}
	if len(res.Firings) == 0 {
		return nil
	}
	batch := make([]int, len(res.Firings))
	ids := make([]string, len(res.Firings))
	for i := range res.Firings {
		batch[i] = i
		ids[i] = res.Firings[i].Execution.ID
		if ids[i] == "" {
			ids[i] = newExecutionID()
		}
	}
	if err := tx.insertExecutions(l, res.Firings, batch, triggers, jobs, ids); err != nil {
		return err
	}
	if err := tx.setTimings(res.Firings, batch, jobs, triggers); err != nil {
		return err
	}
	res.Outcomes = make([]store.TriggerFireOutcome, len(res.Firings))
	for i := range res.Firings {
		res.Firings[i].Execution.ID = ids[i]
		res.Outcomes[i].Result = &store.TriggerFireResult{Job: jobs[triggers[res.Firings[i].Trigger.Key].JobKey]}
	}
	return nil
}
