package dispatch

import (
	"context"
	"fmt"
	"strings"

	"github.com/chime-scheduler/chime/api"
)

// Bounds of the batches of results and of released runs.
const (
	// maxReportBatch bounds the results committed in one transaction.
	maxReportBatch = 64
	// maxReleaseBatch bounds the runs deleted by one statement.
	maxReleaseBatch = 500
)

// report is one result reported to this node, in its batch.
type report struct {
	executor, runID string
	r               api.ExecutorResult
	logs            any
	// err is what became of it: nil once recorded.
	err error
}

// Report records how a run ended, from the executor it is leased to,
// under its current token. Anything else is ErrStale, and nothing
// changes. The results reported to the node while it records others are
// recorded together, in one transaction (see combiner); each is fenced
// on its own.
func (s *Service) Report(ctx context.Context, executor, runID string, r api.ExecutorResult) error {
	if err := CheckResult(r); err != nil {
		return err
	}
	logs, err := encodeJSON(r.Logs)
	if err != nil {
		return err
	}
	rep := &report{executor: executor, runID: runID, r: r, logs: logs}
	s.reports.do(ctx, rep, maxReportBatch, s.commitReports)
	return rep.err
}

// commitReports records the results of batch in one transaction and
// tells each caller its result's fate. When the transaction fails, each
// result is recorded alone, so that one's error is not the others'. A
// result recorded whose run awaits its end on this node is delivered to
// its waiter at once; the others wake Watch.
func (s *Service) commitReports(ctx context.Context, batch []*report) {
	if err := s.reportTx(ctx, batch); err != nil {
		for i, rep := range batch {
			if len(batch) == 1 {
				rep.err = err
				break
			}
			if err := s.reportTx(ctx, batch[i:i+1]); err != nil {
				rep.err = err
			}
		}
	}
	nudge := false
	for _, rep := range batch {
		if rep.err == nil && !s.deliver(rep.runID, Update{
			State:      StateDone,
			Result:     Result{Outcome: rep.r.Outcome, Error: rep.r.Error, Output: rep.r.Output, Logs: rep.r.Logs},
			ExecutorID: rep.executor,
			Token:      rep.r.Token,
		}) {
			nudge = true
		}
	}
	if nudge {
		select {
		case s.nudge <- struct{}{}:
		default:
		}
	}
}

// reportTx records the results of batch in one transaction, setting the
// err of a result its run's fence refused to ErrStale. It returns the
// transaction's failure, and then nothing was recorded. A lone result is
// one statement, which is a transaction of its own: no BEGIN and COMMIT
// to send.
func (s *Service) reportTx(ctx context.Context, batch []*report) error {
	for _, rep := range batch {
		rep.err = nil
	}
	if len(batch) == 1 {
		return s.recordReport(ctx, s.db, batch[0])
	}
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("dispatch: recording results: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, rep := range batch {
		if err := s.recordReport(ctx, tx, rep); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("dispatch: committing results: %w", err)
	}
	return nil
}

// recordReport records one result with q, setting its err to ErrStale
// when its run's fence refused it. It returns the statement's failure.
func (s *Service) recordReport(ctx context.Context, q querier, rep *report) error {
	res, err := q.ExecContext(ctx, s.q.runReport, rep.r.Outcome, rep.r.Error, rep.r.Output, rep.logs, s.clockArg(),
		s.sched, rep.runID, rep.executor, rep.r.Token)
	if err != nil {
		return fmt.Errorf("dispatch: recording the result of run %s: %w", rep.runID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		rep.err = fmt.Errorf("%w: run %s, token %d", ErrStale, rep.runID, rep.r.Token)
	}
	return nil
}

// Release forgets, as Close does, a run whose end the node recorded and
// whose executor reported its result (the run is done): whatever the
// executor sends about it is refused already, the run having ended, so
// its row is deleted later, with others, by Watch's next pass.
func (s *Service) Release(runID string) {
	s.mu.Lock()
	s.released = append(s.released, runID)
	s.mu.Unlock()
}

// deleteReleased deletes the rows of the runs released, in batches.
func (s *Service) deleteReleased(ctx context.Context) error {
	s.mu.Lock()
	ids := s.released
	s.released = nil
	s.mu.Unlock()
	for len(ids) > 0 {
		n := min(len(ids), maxReleaseBatch)
		args := make([]any, 0, n+1)
		args = append(args, s.sched)
		for _, id := range ids[:n] {
			args = append(args, id)
		}
		del := s.st.SQL("DELETE FROM {p}dispatch_runs WHERE sched_name = ? AND id IN (" + strings.Repeat(", ?", n)[2:] + ")")
		if _, err := s.db.ExecContext(ctx, del, args...); err != nil {
			s.mu.Lock()
			s.released = append(s.released, ids...)
			s.mu.Unlock()
			return fmt.Errorf("dispatch: deleting the runs that ended: %w", err)
		}
		s.deleted.Add(int64(n))
		ids = ids[n:]
	}
	return nil
}
