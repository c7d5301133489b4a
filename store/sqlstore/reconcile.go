package sqlstore

import (
	"context"
	"slices"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// Reconcile repairs claims and executions held by no live lease and
// triggers blocked by no running execution; see [store.Store]. Each kind of
// repair runs in its own transaction that locks the rows its check found
// (FOR UPDATE), so the check and the repair are one atomic step:
//
//   - stale claims (sqlStaleClaims, sqlReleaseClaim): a claim whose lease
//     is stale stays stale, since epochs only grow;
//   - stale executions (sqlStaleExecutions): likewise;
//   - idle blocked jobs (sqlBlockedIdleJobs, then per job sqlBlockedOfIdleJob
//     and sqlJobUnblock under the job's row lock, the lock TriggerFire takes
//     before starting a non-concurrent job).
//
// Released claims and unblocked triggers are reported sorted by key,
// executions by ID.
func (s *Store) Reconcile(ctx context.Context, lease store.Lease) (*store.Reconciliation, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	out := &store.Reconciliation{}
	err := s.write(ctx, "releasing stale claims", func(tx *txn) error {
		out.ReleasedTriggers = nil
		if err := tx.lease(lease); err != nil {
			return err
		}
		rows, err := tx.query(sqlStaleClaims, s.sched)
		keys, err := collect(rows, err, scanKey)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := tx.execWake(sqlReleaseClaim, s.sched, k.Group, k.Name); err != nil {
				return err
			}
		}
		out.ReleasedTriggers = keys
		return nil
	})
	if err != nil {
		return nil, s.translate("reconciling claims", err, nil, nil)
	}

	err = s.write(ctx, "recovering stale executions", func(tx *txn) error {
		out.Recoverable, out.Failed = nil, nil
		if err := tx.lease(lease); err != nil {
			return err
		}
		rows, err := tx.query(sqlStaleExecutions, s.sched)
		lost, err := collect(rows, err, scanExecution)
		if err != nil || len(lost) == 0 {
			return err
		}
		now, err := tx.now()
		if err != nil {
			return err
		}
		for _, e := range lost {
			if e.RequestsRecovery {
				if _, err := tx.exec(sqlExecutionRecoverable, s.sched, e.ID); err != nil {
					return err
				}
				e.State, e.NodeID, e.Epoch = store.ExecutionRecoverable, "", 0
				out.Recoverable = append(out.Recoverable, e)
				continue
			}
			if _, err := tx.exec(sqlExecutionFail, reasonNodeLost, now, s.sched, e.ID); err != nil {
				return err
			}
			e.State, e.Error, e.FinishedTime = store.ExecutionFailed, reasonNodeLost, time.Unix(0, now).UTC()
			out.Failed = append(out.Failed, e)
		}
		return nil
	})
	if err != nil {
		return nil, s.translate("reconciling executions", err, nil, nil)
	}

	var jobs []store.Key
	err = s.write(ctx, "finding idle blocked jobs", func(tx *txn) error {
		if err := tx.lease(lease); err != nil {
			return err
		}
		rows, err := tx.query(sqlBlockedIdleJobs, s.sched)
		jobs, err = collect(rows, err, scanKey)
		return err
	})
	if err != nil {
		return nil, s.translate("reconciling blocked triggers", err, nil, nil)
	}
	for _, jk := range jobs {
		var unblocked []store.Key
		err := s.write(ctx, "unblocking triggers", func(tx *txn) error {
			unblocked = nil
			if err := tx.lease(lease); err != nil {
				return err
			}
			if _, err := tx.lockJob(jk); err != nil {
				return err
			}
			rows, err := tx.query(sqlBlockedOfIdleJob, s.sched, jk.Group, jk.Name)
			keys, err := collect(rows, err, scanKey)
			if err != nil || len(keys) == 0 {
				return err
			}
			if _, err := tx.execWake(sqlJobUnblock, s.sched, jk.Group, jk.Name); err != nil {
				return err
			}
			unblocked = keys
			return nil
		})
		if err != nil {
			return nil, s.translate("reconciling blocked triggers of job "+jk.String(), err, nil, nil)
		}
		out.UnblockedTriggers = append(out.UnblockedTriggers, unblocked...)
	}
	// Fixed-delay triggers awaiting a run that ended with no re-arm.
	var rearmed []store.Key
	err = s.write(ctx, "re-arming fixed-delay triggers", func(tx *txn) error {
		rearmed = nil
		if err := tx.lease(lease); err != nil {
			return err
		}
		rows, err := tx.query(sqlAwaitingIdle, s.sched)
		keys, err := collect(rows, err, scanKey)
		if err != nil || len(keys) == 0 {
			return err
		}
		now, err := tx.now()
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := tx.rearm(k, time.Unix(0, now)); err != nil {
				return err
			}
		}
		rearmed = keys
		return nil
	})
	if err != nil {
		return nil, s.translate("re-arming fixed-delay triggers", err, nil, nil)
	}
	out.UnblockedTriggers = append(out.UnblockedTriggers, rearmed...)
	slices.SortFunc(out.UnblockedTriggers, keyCompare)
	return out, nil
}
