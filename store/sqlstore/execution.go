package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// ExecutionComplete records the end of an execution this node runs; see
// [store.ExecutionStore]. An execution that exists but is not EXECUTING
// under p.Lease is reported as [store.ErrExecutionNotFound] too. An empty
// Instruction means [store.InstructionNoop]; a zero FinishedTime defaults
// to the database clock.
func (s *Store) ExecutionComplete(ctx context.Context, p *store.ExecutionCompleteParams) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	c := &store.ExecutionCompletion{ID: p.ID, State: p.State, Error: p.Error, FinishedTime: p.FinishedTime,
		Instruction: p.Instruction, JobData: p.JobData}
	if err := checkCompletion(c); err != nil {
		return err
	}
	err := s.write(ctx, "completing an execution", func(tx *txn) error {
		if err := tx.lease(p.Lease); err != nil {
			return err
		}
		e, err := scanExecution(tx.queryRow(sqlExecutionGetForUpdate, s.sched, p.ID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", store.ErrExecutionNotFound, p.ID)
		}
		if err != nil {
			return err
		}
		if err := runsUnder(&e, p.Lease); err != nil {
			return err
		}
		return tx.finish(&e, c)
	})
	return s.translate("completing execution "+p.ID, err, nil, nil)
}

// checkCompletion refuses a completion the store cannot record, before any
// transaction.
func checkCompletion(c *store.ExecutionCompletion) error {
	if !c.State.Done() {
		return fmt.Errorf("%w: completing execution %s: state %q is not a finished state", errInvalid, c.ID, c.State)
	}
	switch c.Instruction {
	case "", store.InstructionNoop, store.InstructionDeleteTrigger, store.InstructionSetTriggerComplete,
		store.InstructionSetAllJobTriggersComplete, store.InstructionSetTriggerError:
	default:
		return fmt.Errorf("%w: completing execution %s: unknown instruction %q", errInvalid, c.ID, c.Instruction)
	}
	if err := checkJSON("job data", c.JobData); err != nil {
		return err
	}
	return checkInstants("completing execution "+c.ID, c.FinishedTime)
}

// runsUnder reports ErrExecutionNotFound unless e is EXECUTING under l.
func runsUnder(e *store.ExecutionRecord, l store.Lease) error {
	if e.State != store.ExecutionExecuting || e.NodeID != l.NodeID || e.Epoch != l.Epoch {
		return fmt.Errorf("%w: %s is %s on node %q epoch %d", store.ErrExecutionNotFound, e.ID, e.State, e.NodeID, e.Epoch)
	}
	return nil
}

// finish records the end c of execution e, locked and running under the
// transaction's lease: it applies the instruction and the job data,
// unblocks the job's triggers and deletes the job when it is not durable
// and has no trigger left.
func (tx *txn) finish(e *store.ExecutionRecord, c *store.ExecutionCompletion) error {
	s := tx.s
	if _, err := tx.exec(sqlExecutionFinish, string(c.State), c.Error, nanos(c.FinishedTime), s.sched, c.ID); err != nil {
		return err
	}
	tk, jk := e.TriggerKey, e.JobKey
	if c.Rearm {
		end := c.FinishedTime
		if end.IsZero() {
			now, err := tx.now()
			if err != nil {
				return err
			}
			end = time.Unix(0, now)
		}
		if err := tx.rearm(tk, end); err != nil {
			return err
		}
	}
	var err error
	switch c.Instruction {
	case store.InstructionDeleteTrigger:
		_, err = tx.exec(sqlTriggerDelete, s.sched, tk.Group, tk.Name)
	case store.InstructionSetTriggerComplete:
		_, err = tx.exec(sqlTriggerSetState, string(store.StateComplete), s.sched, tk.Group, tk.Name)
	case store.InstructionSetTriggerError:
		_, err = tx.exec(sqlTriggerSetState, string(store.StateError), s.sched, tk.Group, tk.Name)
	case store.InstructionSetAllJobTriggersComplete:
		_, err = tx.exec(sqlJobTriggersComplete, s.sched, jk.Group, jk.Name)
	}
	if err != nil {
		return err
	}
	if c.JobData != nil {
		if _, err := tx.exec(sqlJobSetData, jsonArg(c.JobData), s.sched, jk.Group, jk.Name); err != nil {
			return err
		}
	}
	if err := tx.unblockJob(jk); err != nil {
		return err
	}
	return tx.deleteJobIfOrphan(jk)
}

// ExecutionList returns executions filtered by p, newest scheduled time
// first (then newest fired time, then by ID).
func (s *Store) ExecutionList(ctx context.Context, p *store.ExecutionListParams) ([]store.ExecutionRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	q := `SELECT ` + execCols + ` FROM {p}executions WHERE sched_name = ?`
	args := []any{s.sched}
	if p.JobKey != nil {
		q += ` AND job_group = ? AND job_name = ?`
		args = append(args, p.JobKey.Group, p.JobKey.Name)
	}
	if p.TriggerKey != nil {
		q += ` AND trigger_group = ? AND trigger_name = ?`
		args = append(args, p.TriggerKey.Group, p.TriggerKey.Name)
	}
	if p.NodeID != "" {
		q += ` AND node_id = ?`
		args = append(args, p.NodeID)
	}
	if p.Running {
		q += ` AND state IN ('EXECUTING', 'RECOVERABLE')`
	}
	q += ` ORDER BY scheduled_time DESC, fired_time DESC, id`
	if p.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, p.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	out, err := collect(rows, err, scanExecution)
	if err != nil {
		return nil, s.translate("listing executions", err, nil, nil)
	}
	return out, nil
}

// ExecutionsPrune deletes finished executions that finished before before,
// and returns how many it deleted. Their (trigger, scheduled time) keys are
// freed with them.
func (s *Store) ExecutionsPrune(ctx context.Context, before time.Time) (int, error) {
	if err := s.enter(ctx); err != nil {
		return 0, err
	}
	var n int64
	err := s.write(ctx, "pruning executions", func(tx *txn) error {
		var err error
		n, err = tx.exec(sqlExecutionsPrune, s.sched, boundNanos(before))
		return err
	})
	if err != nil {
		return 0, s.translate("pruning executions", err, nil, nil)
	}
	return int(n), nil
}

// ExecutionsAcquireRecoverable claims up to Limit RECOVERABLE executions,
// oldest scheduled time first, then highest priority, skipping those other
// nodes are claiming. A claimed execution gets the lease, Recovering, and
// the database clock as FiredTime. Executions whose job was deleted cannot
// be re-run: they are recorded FAILED with Error "job not found" and not
// returned.
func (s *Store) ExecutionsAcquireRecoverable(ctx context.Context, p *store.ExecutionsAcquireRecoverableParams) ([]store.RecoverableExecution, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	var out []store.RecoverableExecution
	err := s.write(ctx, "acquiring recoverable executions", func(tx *txn) error {
		out = nil
		if err := tx.lease(p.Lease); err != nil {
			return err
		}
		if p.Limit <= 0 {
			return nil
		}
		now, err := tx.now()
		if err != nil {
			return err
		}
		if _, err := tx.exec(sqlRecoverableJobless, now, s.sched); err != nil {
			return err
		}
		args := []any{s.sched}
		for _, typ := range p.ExcludeJobTypes {
			args = append(args, typ)
		}
		rows, err := tx.query(withoutJobTypes(sqlRecoverableClaim, "{p}executions", len(p.ExcludeJobTypes)),
			append(args, p.Limit)...)
		claimed, err := collect(rows, err, scanExecution)
		if err != nil {
			return err
		}
		for _, e := range claimed {
			if _, err := tx.exec(sqlExecutionResume, p.Lease.NodeID, p.Lease.Epoch, now, s.sched, e.ID); err != nil {
				return err
			}
			e.State = store.ExecutionExecuting
			e.NodeID = p.Lease.NodeID
			e.Epoch = p.Lease.Epoch
			e.Recovering = true
			e.FiredTime = time.Unix(0, now).UTC()
			r := store.RecoverableExecution{Execution: e}
			if r.Job, err = scanJob(tx.queryRow(sqlJobGet, s.sched, e.JobKey.Group, e.JobKey.Name)); err != nil {
				return fmt.Errorf("reading job %s of execution %s: %w", e.JobKey, e.ID, err)
			}
			t, err := scanTrigger(tx.queryRow(sqlTriggerGet, s.sched, e.TriggerKey.Group, e.TriggerKey.Name))
			switch {
			case err == nil:
				r.Trigger = &t
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, s.translate("acquiring recoverable executions", err, nil, nil)
	}
	return out, nil
}

// ExecutionsRelease hands executions this node ran back to the cluster for
// recovery; see [store.ExecutionStore]. Under the shared lock on the node's
// row that every write takes, it locks each execution and makes it
// RECOVERABLE with the statement NodesRecover uses, so that a recovery of
// this node, which locks the same row, either runs first and fences the
// release or finds the executions released.
func (s *Store) ExecutionsRelease(ctx context.Context, p *store.ExecutionsReleaseParams) ([]error, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	errs := make([]error, len(p.IDs))
	err := s.write(ctx, "releasing executions", func(tx *txn) error {
		clear(errs)
		if err := tx.lease(p.Lease); err != nil {
			return err
		}
		for i, id := range p.IDs {
			e, err := scanExecution(tx.queryRow(sqlExecutionGetForUpdate, s.sched, id))
			if errors.Is(err, sql.ErrNoRows) {
				errs[i] = fmt.Errorf("%w: %s", store.ErrExecutionNotFound, id)
				continue
			}
			if err != nil {
				return err
			}
			if err := releasable(&e, p.Lease); err != nil {
				errs[i] = err
				continue
			}
			if _, err := tx.exec(sqlExecutionRecoverable, s.sched, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.translate("releasing executions", err, nil, nil)
	}
	return errs, nil
}

// releasable reports ErrExecutionNotFound unless e is EXECUTING under l and
// requests recovery.
func releasable(e *store.ExecutionRecord, l store.Lease) error {
	if err := runsUnder(e, l); err != nil {
		return err
	}
	if !e.RequestsRecovery {
		return fmt.Errorf("%w: %s does not request recovery", store.ErrExecutionNotFound, e.ID)
	}
	return nil
}
