package dispatch

import (
	"context"
	"fmt"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/store/sqlstore"
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
// recorded together, in one transaction (see package combine); each is fenced
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
	s.reports.Do(ctx, rep, maxReportBatch, s.commitReports)
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
// to send; so is a batch on PostgreSQL (see recordReports).
func (s *Service) reportTx(ctx context.Context, batch []*report) error {
	for _, rep := range batch {
		rep.err = nil
	}
	if len(batch) == 1 {
		return s.recordReport(ctx, s.db, batch[0])
	}
	if s.st.WritableCTEs() {
		return s.recordReports(ctx, batch)
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

// reportKey is what a result's fence compares with its run's row: two
// results of a batch with the same key are the same result sent twice.
type reportKey struct {
	runID, executor string
	token           int64
}

// reportsSQL is the UPDATE of recordReports, on PostgreSQL, before
// rendering: its arguments are one array a column of the results (their
// index in the batch, run, executor, token, outcome, error, output, log
// lines as JSON text), the clock's (NULL for the database's, as
// runReport's), then the scheduler's name. RETURNING gives back each
// recorded result's index. Its text is the same for any number of
// results.
//
// The runs are found by their key: r.id = ANY (…) repeats the join's
// run IDs as a condition of the runs alone, which PostgreSQL reads with
// the primary key whatever the batch's size, once it has statistics of
// the runs' table (recordReports makes sure it has). Joined to the rows
// only, a batch of 64 results on a table of 2,000 runs was planned as a
// hash join with a sequential scan of the table (see
// TestReportsFindTheRunsByKey).
const reportsSQL = `WITH v (n, id, executor, token, outcome, err, output, logs) AS (SELECT * FROM unnest(
		CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]),
		CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[])))
		UPDATE {p}dispatch_runs AS r SET state = 'done', outcome = v.outcome, error_message = v.err,
		output = v.output, logs = CAST(v.logs AS JSON), finished = COALESCE(CAST(? AS BIGINT), {now})
		FROM v WHERE r.sched_name = ? AND r.id = ANY (ARRAY (SELECT id FROM v)) AND r.id = v.id
		AND COALESCE(r.executor_id, '') = v.executor AND r.token = v.token AND r.state IN ` + active + ` RETURNING v.n`

// reportColumns are the arrays of reportsSQL.
var reportColumns = []sqlstore.Column{
	{Name: "n", Type: sqlstore.ColumnBigInt}, {Name: "id", Type: sqlstore.ColumnText},
	{Name: "executor", Type: sqlstore.ColumnText}, {Name: "token", Type: sqlstore.ColumnBigInt},
	{Name: "outcome", Type: sqlstore.ColumnText}, {Name: "err", Type: sqlstore.ColumnText},
	{Name: "output", Type: sqlstore.ColumnText}, {Name: "logs", Type: sqlstore.ColumnJSON},
}

// recordReports records the results of batch, on PostgreSQL, with one
// UPDATE … FROM unnest(…) (see reportsSQL) that returns the results it
// recorded: one statement and one round trip whatever the batch's size,
// instead of one a result in a transaction. Each result is fenced as
// runReport fences it, by the run's key (COALESCE keeps the executor's
// index out of the plan, see executorIs); a result not returned is
// ErrStale.
//
// Unlike runReport, which names the whole key of one run, the statement
// is planned by the statistics of the runs' table: until PostgreSQL has
// some, it estimates the runs of a scheduler at a handful, and reads
// every one of them for each batch (see [sqlstore.Store.AnalyzeOnce]).
// So the first batch has the table analyzed, if PostgreSQL never did:
// whatever the queue holds then, the statistics say that sched_name is
// one value for all rows, which is all the plan needs.
//
// A result sent twice (an executor retrying its request, see
// TestResultSentManyTimesAtOnce) may meet its copy in a batch, and an
// UPDATE … FROM joined to both would change the run once, with either.
// Only the first copy is sent: the others are ErrStale, as they are when
// recorded one after the other, the first having ended the run or been
// refused for the same reason. Results of one run under different
// executors or tokens are all sent: the run's row matches one of them at
// most, the one the fence would accept in any order.
func (s *Service) recordReports(ctx context.Context, batch []*report) error {
	sent := make([]*report, 0, len(batch))
	seen := make(map[reportKey]bool, len(batch))
	for _, rep := range batch {
		k := reportKey{rep.runID, rep.executor, rep.r.Token}
		if seen[k] {
			rep.err = fmt.Errorf("%w: run %s, token %d", ErrStale, rep.runID, rep.r.Token)
			continue
		}
		seen[k] = true
		sent = append(sent, rep)
	}
	if len(sent) == 1 {
		return s.recordReport(ctx, s.db, sent[0])
	}
	s.st.AnalyzeOnce("dispatch_runs")
	values := make([][]any, len(sent))
	for i, rep := range sent {
		values[i] = []any{i, rep.runID, rep.executor, rep.r.Token, rep.r.Outcome, rep.r.Error, rep.r.Output, rep.logs}
	}
	args, err := sqlstore.ColumnArrays(reportColumns, values)
	if err != nil {
		return fmt.Errorf("dispatch: recording %d results: %w", len(sent), err)
	}
	args = append(args, s.clockArg(), s.sched)
	rows, err := s.db.QueryContext(ctx, s.st.SQL(reportsSQL), args...)
	if err != nil {
		return fmt.Errorf("dispatch: recording %d results: %w", len(sent), err)
	}
	defer rows.Close()
	recorded := make([]bool, len(sent))
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			return fmt.Errorf("dispatch: recording %d results: %w", len(sent), err)
		}
		if n < 0 || n >= len(sent) {
			return fmt.Errorf("dispatch: recording %d results: the database returned result %d", len(sent), n)
		}
		recorded[n] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dispatch: recording %d results: %w", len(sent), err)
	}
	for i, rep := range sent {
		if !recorded[i] {
			rep.err = fmt.Errorf("%w: run %s, token %d", ErrStale, rep.runID, rep.r.Token)
		}
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
		in, args := s.st.In("id", ids[:n], []any{s.sched})
		del := s.st.SQL("DELETE FROM {p}dispatch_runs WHERE sched_name = ? AND " + in)
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
