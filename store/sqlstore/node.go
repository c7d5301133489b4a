package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// Errors of recovered executions.
const (
	reasonNodeLost    = store.ErrorNodeLost
	reasonNodeStopped = store.ErrorNodeStopped
)

// nodeCreateSQL adds a node row at epoch 0 unless it exists.
func (d *dialect) nodeCreateSQL() string {
	return `INSERT INTO {p}nodes (sched_name, node_id, epoch, last_checkin, dead, registered) ` +
		`VALUES (?, ?, 0, {now}, FALSE, FALSE)` + d.insertIgnore("sched_name, node_id", "node_id")
}

// NodeRegister registers a node with epoch 1, or re-registers a known ID
// with an epoch one greater than its last, first recovering whatever its
// previous incarnation left behind. It holds the node row's exclusive lock
// throughout.
func (s *Store) NodeRegister(ctx context.Context, nodeID string) (*store.NodeRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if nodeID == "" {
		return nil, fmt.Errorf("%w: registering a node: empty node ID", errInvalid)
	}
	var rec store.NodeRecord
	err := s.write(ctx, "registering a node", func(tx *txn) error {
		if _, err := tx.exec(s.d.nodeCreateSQL(), s.sched, nodeID); err != nil {
			return err
		}
		if _, err := scanNode(tx.queryRow(sqlNodeLock, s.sched, nodeID)); err != nil {
			return err
		}
		if _, err := tx.recoverNode(nodeID, reasonNodeLost); err != nil {
			return err
		}
		if _, err := tx.exec(sqlNodeRegister, s.sched, nodeID); err != nil {
			return err
		}
		var err error
		rec, err = scanNode(tx.queryRow(sqlNodeGet, s.sched, nodeID))
		return err
	})
	if err != nil {
		return nil, s.translate(fmt.Sprintf("registering node %q", nodeID), err, nil, nil)
	}
	return &rec, nil
}

// NodeCheckIn renews the node's lease on the database clock and returns
// that clock.
func (s *Store) NodeCheckIn(ctx context.Context, lease store.Lease) (time.Time, error) {
	if err := s.enter(ctx); err != nil {
		return time.Time{}, err
	}
	var now int64
	err := s.write(ctx, "checking in", func(tx *txn) error {
		if err := tx.checkLease(sqlNodeLeaseCheckIn, lease); err != nil {
			return err
		}
		var err error
		if now, err = tx.now(); err != nil {
			return err
		}
		_, err = tx.exec(sqlNodeCheckIn, now, s.sched, lease.NodeID)
		return err
	})
	if err != nil {
		return time.Time{}, s.translate(fmt.Sprintf("checking in node %q", lease.NodeID), err, nil, nil)
	}
	return time.Unix(0, now).UTC(), nil
}

// NodeList returns every registered node, dead ones included, ordered by ID.
func (s *Store) NodeList(ctx context.Context) ([]store.NodeRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(sqlNodeList), s.sched)
	nodes, err := collect(rows, err, scanNode)
	if err != nil {
		return nil, s.translate("listing nodes", err, nil, nil)
	}
	return nodes, nil
}

// NodeUnregister removes a node that stops; see [store.NodeStore].
func (s *Store) NodeUnregister(ctx context.Context, lease store.Lease) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	err := s.write(ctx, "unregistering a node", func(tx *txn) error {
		if err := tx.leaseForUpdate(lease); err != nil {
			return err
		}
		if _, err := tx.recoverNode(lease.NodeID, reasonNodeStopped); err != nil {
			return err
		}
		_, err := tx.exec(sqlNodeUnregister, s.sched, lease.NodeID)
		return err
	})
	return s.translate(fmt.Sprintf("unregistering node %q", lease.NodeID), err, nil, nil)
}

// NodesRecover declares dead the nodes other than the caller whose last
// check-in is DeadAfter or more behind the database clock; see
// [store.NodeStore]. Each dead node is recovered in its own transaction,
// holding its node row's exclusive lock: it waits for the node's own
// writes in flight (which hold the shared lock) and fences the later ones.
// Recoveries are ordered by node ID.
func (s *Store) NodesRecover(ctx context.Context, p *store.NodesRecoverParams) ([]store.NodeRecovery, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if p.DeadAfter <= 0 {
		return nil, fmt.Errorf("%w: recovering nodes: DeadAfter %s is not positive", errInvalid, p.DeadAfter)
	}
	var silent []string
	err := s.write(ctx, "finding dead nodes", func(tx *txn) error {
		silent = nil
		if err := tx.lease(p.Lease); err != nil {
			return err
		}
		rows, err := tx.query(sqlNodesSilent, s.sched, p.Lease.NodeID, int64(p.DeadAfter))
		silent, err = collect(rows, err, func(sc scanner) (string, error) {
			var id string
			return id, sc.Scan(&id)
		})
		return err
	})
	if err != nil {
		return nil, s.translate("finding dead nodes", err, nil, nil)
	}
	var out []store.NodeRecovery
	for _, id := range silent {
		var (
			r     store.NodeRecovery
			found bool
		)
		err := s.write(ctx, "recovering a node", func(tx *txn) error {
			found = false
			if err := tx.lease(p.Lease); err != nil {
				return err
			}
			n, err := scanNode(tx.queryRow(sqlNodeLockSilent, s.sched, id, int64(p.DeadAfter)))
			if errors.Is(err, sql.ErrNoRows) {
				return nil // checked in, or recovered by another node, meanwhile
			}
			if err != nil {
				return err
			}
			r = store.NodeRecovery{Node: n}
			rec, err := tx.recoverNode(id, reasonNodeLost)
			if err != nil {
				return err
			}
			r.ReleasedTriggers, r.Recoverable, r.Failed = rec.released, rec.recoverable, rec.failed
			if _, err := tx.exec(sqlNodeDeclareDead, s.sched, id); err != nil {
				return err
			}
			found = true
			return nil
		})
		if err != nil {
			return out, s.translate(fmt.Sprintf("recovering node %q", id), err, nil, nil)
		}
		if found {
			out = append(out, r)
		}
	}
	return out, nil
}

// recovery is what recoverNode did.
type recovery struct {
	released    int
	recoverable []store.ExecutionRecord
	failed      []store.ExecutionRecord
}

// recoverNode takes back the work of a node that is gone: its ACQUIRED
// triggers become WAITING (BLOCKED when their job is busy) and its
// EXECUTING executions become RECOVERABLE when they request recovery,
// FAILED with reason otherwise. A non-concurrent job stays blocked while it
// has a RECOVERABLE execution, which will run again; the jobs of failed
// executions are unblocked. The caller holds the node row's exclusive lock;
// recoverNode does not change the node row.
func (tx *txn) recoverNode(id, reason string) (recovery, error) {
	var r recovery
	n, err := tx.execWake(sqlReleaseClaimsOfNode, tx.s.sched, id)
	if err != nil {
		return r, err
	}
	r.released = int(n)
	rows, err := tx.query(sqlRunningOfNode, tx.s.sched, id)
	lost, err := collect(rows, err, scanExecution)
	if err != nil || len(lost) == 0 {
		return r, err
	}
	now, err := tx.now()
	if err != nil {
		return r, err
	}
	unblock := make(map[store.Key]bool)
	var jobs []store.Key
	for _, e := range lost {
		if e.RequestsRecovery {
			if _, err := tx.exec(sqlExecutionRecoverable, tx.s.sched, e.ID); err != nil {
				return r, err
			}
			e.State, e.NodeID, e.Epoch = store.ExecutionRecoverable, "", 0
			r.recoverable = append(r.recoverable, e)
			continue
		}
		if _, err := tx.exec(sqlExecutionFail, reason, now, tx.s.sched, e.ID); err != nil {
			return r, err
		}
		e.State, e.Error, e.FinishedTime = store.ExecutionFailed, reason, time.Unix(0, now).UTC()
		r.failed = append(r.failed, e)
		if err := tx.rearm(e.TriggerKey, e.FinishedTime); err != nil {
			return r, err
		}
		if !unblock[e.JobKey] {
			unblock[e.JobKey] = true
			jobs = append(jobs, e.JobKey)
		}
	}
	for _, jk := range jobs {
		if err := tx.unblockJob(jk); err != nil {
			return r, err
		}
	}
	return r, nil
}
