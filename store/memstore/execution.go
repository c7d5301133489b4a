package memstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// ExecutionComplete records the end of an execution this node runs; see
// [store.ExecutionStore]. An execution that exists but is not EXECUTING
// under p.Lease is reported as [store.ErrExecutionNotFound] too. An empty
// Instruction means [store.InstructionNoop]; a zero FinishedTime defaults
// to the store's clock.
func (s *Store) ExecutionComplete(ctx context.Context, p *store.ExecutionCompleteParams) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return err
	}
	return s.complete(p.Lease, &store.ExecutionCompletion{ID: p.ID, State: p.State, Error: p.Error,
		FinishedTime: p.FinishedTime, Instruction: p.Instruction, JobData: p.JobData})
}

// ExecutionsComplete records the end of several executions at once; see
// [store.Batcher]. The store's one lock makes the batch atomic.
func (s *Store) ExecutionsComplete(ctx context.Context, p *store.ExecutionsCompleteParams) ([]error, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return nil, err
	}
	errs := make([]error, len(p.Completions))
	for i := range p.Completions {
		errs[i] = s.complete(p.Lease, &p.Completions[i])
	}
	return errs, nil
}

// complete records the end of one execution under the store's lock, once
// the lease was checked.
func (s *Store) complete(l store.Lease, p *store.ExecutionCompletion) error {
	if !p.State.Done() {
		return fmt.Errorf("store: completing execution %s: state %q is not a finished state", p.ID, p.State)
	}
	switch p.Instruction {
	case "", store.InstructionNoop, store.InstructionDeleteTrigger, store.InstructionSetTriggerComplete,
		store.InstructionSetAllJobTriggersComplete, store.InstructionSetTriggerError:
	default:
		return fmt.Errorf("store: completing execution %s: unknown instruction %q", p.ID, p.Instruction)
	}
	e, ok := s.executions[p.ID]
	if !ok {
		return fmt.Errorf("%w: %s", store.ErrExecutionNotFound, p.ID)
	}
	if e.State != store.ExecutionExecuting || e.NodeID != l.NodeID || e.Epoch != l.Epoch {
		return fmt.Errorf("%w: %s is %s on node %q epoch %d", store.ErrExecutionNotFound, p.ID, e.State, e.NodeID, e.Epoch)
	}
	finished := p.FinishedTime
	if finished.IsZero() {
		finished = s.now()
	}
	s.finishExecution(e, p.State, p.Error, finished)
	if p.Rearm {
		s.rearm(e.TriggerKey, finished)
	}

	if t, ok := s.triggers[e.TriggerKey]; ok {
		switch p.Instruction {
		case store.InstructionDeleteTrigger:
			s.deleteTrigger(t)
		case store.InstructionSetTriggerComplete:
			s.setState(t, store.StateComplete)
		case store.InstructionSetTriggerError:
			s.setState(t, store.StateError)
		}
	}
	if p.Instruction == store.InstructionSetAllJobTriggersComplete {
		for tk := range s.jobTriggers[e.JobKey] {
			s.setState(s.triggers[tk], store.StateComplete)
		}
	}
	if j, ok := s.jobs[e.JobKey]; ok && p.JobData != nil {
		j.Data = bytes.Clone(p.JobData)
		j.Version++
	}
	s.unblockJob(e.JobKey)
	s.deleteJobIfOrphan(e.JobKey)
	return nil
}

// finishExecution moves a running execution to a finished state and out of
// the running indexes. It does not unblock the job's triggers.
func (s *Store) finishExecution(e *store.ExecutionRecord, st store.ExecutionState, reason string, at time.Time) {
	e.State = st
	e.Error = reason
	e.FinishedTime = at
	delete(s.running, e.ID)
	if s.runningJobs[e.JobKey]--; s.runningJobs[e.JobKey] <= 0 {
		delete(s.runningJobs, e.JobKey)
	}
}

// ExecutionList returns executions filtered by p, newest scheduled time
// first (then newest fired time, then by ID).
func (s *Store) ExecutionList(ctx context.Context, p *store.ExecutionListParams) ([]store.ExecutionRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	match := func(e *store.ExecutionRecord) bool {
		return (p.JobKey == nil || e.JobKey == *p.JobKey) &&
			(p.TriggerKey == nil || e.TriggerKey == *p.TriggerKey) &&
			(p.NodeID == "" || e.NodeID == p.NodeID)
	}
	var out []store.ExecutionRecord
	if p.Running {
		for id := range s.running {
			if e := s.executions[id]; match(e) {
				out = append(out, *e)
			}
		}
	} else {
		for _, e := range s.executions {
			if match(e) {
				out = append(out, *e)
			}
		}
	}
	slices.SortFunc(out, func(a, b store.ExecutionRecord) int {
		if c := b.ScheduledTime.Compare(a.ScheduledTime); c != 0 {
			return c
		}
		if c := b.FiredTime.Compare(a.FiredTime); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if p.Limit > 0 && len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out, nil
}

// ExecutionsPrune deletes finished executions that finished before before,
// and returns how many it deleted. Their (trigger, scheduled time) keys are
// freed with them.
func (s *Store) ExecutionsPrune(ctx context.Context, before time.Time) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for id, e := range s.executions {
		if e.State.Done() && e.FinishedTime.Before(before) {
			delete(s.executions, id)
			delete(s.fired, firedKey{trigger: e.TriggerKey, scheduled: e.ScheduledTime.UnixNano()})
			n++
		}
	}
	return n, nil
}

// ExecutionsAcquireRecoverable claims up to Limit RECOVERABLE executions,
// oldest scheduled time first, then highest priority. A claimed execution
// gets the lease, Recovering, and the store's clock as FiredTime. One whose
// job was deleted meanwhile cannot be re-run: it is recorded FAILED with
// Error "job not found" and not returned.
func (s *Store) ExecutionsAcquireRecoverable(ctx context.Context, p *store.ExecutionsAcquireRecoverableParams) ([]store.RecoverableExecution, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return nil, err
	}
	var cands []*store.ExecutionRecord
	for id := range s.running {
		if e := s.executions[id]; e.State == store.ExecutionRecoverable {
			cands = append(cands, e)
		}
	}
	slices.SortFunc(cands, func(a, b *store.ExecutionRecord) int {
		if c := a.ScheduledTime.Compare(b.ScheduledTime); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	now := s.now()
	var out []store.RecoverableExecution
	for _, e := range cands {
		if len(out) >= p.Limit {
			break
		}
		j, ok := s.jobs[e.JobKey]
		if !ok {
			s.finishExecution(e, store.ExecutionFailed, "job not found", now)
			continue
		}
		if slices.Contains(p.ExcludeJobTypes, j.Type) {
			continue
		}
		e.State = store.ExecutionExecuting
		e.NodeID = p.Lease.NodeID
		e.Epoch = p.Lease.Epoch
		e.Recovering = true
		e.FiredTime = now
		r := store.RecoverableExecution{Execution: *e, Job: copyJob(j)}
		if t, ok := s.triggers[e.TriggerKey]; ok {
			c := copyTrigger(&t.rec)
			r.Trigger = &c
		}
		out = append(out, r)
	}
	return out, nil
}

// ExecutionsRelease hands executions this node ran back to the cluster for
// recovery; see [store.ExecutionStore]. Each becomes RECOVERABLE as a dead
// node's does in NodesRecover; the store's one lock makes the batch atomic.
func (s *Store) ExecutionsRelease(ctx context.Context, p *store.ExecutionsReleaseParams) ([]error, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return nil, err
	}
	errs := make([]error, len(p.IDs))
	for i, id := range p.IDs {
		e, ok := s.executions[id]
		switch {
		case !ok:
			errs[i] = fmt.Errorf("%w: %s", store.ErrExecutionNotFound, id)
		case e.State != store.ExecutionExecuting || e.NodeID != p.Lease.NodeID || e.Epoch != p.Lease.Epoch:
			errs[i] = fmt.Errorf("%w: %s is %s on node %q epoch %d", store.ErrExecutionNotFound, id, e.State, e.NodeID, e.Epoch)
		case !e.RequestsRecovery:
			errs[i] = fmt.Errorf("%w: %s does not request recovery", store.ErrExecutionNotFound, id)
		default:
			e.State, e.NodeID, e.Epoch = store.ExecutionRecoverable, "", 0
		}
	}
	return errs, nil
}
