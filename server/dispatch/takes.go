package dispatch

import (
	"context"
	"fmt"

	"github.com/chime-scheduler/chime/api"
)

// maxTakeBatch bounds the takes by key committed in one statement.
const maxTakeBatch = 64

// handedTake is one take by key (see takeHanded) in its batch.
type handedTake struct {
	executor string
	ids      []string
	// work and err are what became of it.
	work *api.ExecutorWork
	err  error
}

// takeHandedBatched is takeHanded, made together with the takes by key
// of other executors that this node's Takes make while others commit
// (see package combine): on PostgreSQL, a batch of them is one statement
// (see takesSQL), where each executor's runs are started as
// takeHanded starts them, while its own lease holds.
func (s *Service) takeHandedBatched(ctx context.Context, executor string, ids []string) (*api.ExecutorWork, error) {
	if !s.st.WritableCTEs() {
		return s.takeHanded(ctx, executor, ids)
	}
	t := &handedTake{executor: executor, ids: ids}
	s.handedTakes.Do(ctx, t, maxTakeBatch, s.commitTakes)
	return t.work, t.err
}

// commitTakes commits a batch of takes by key: one alone as takeHanded
// does, several in one statement. When the statement fails, each take is
// made alone, so that one's error is not the others'.
func (s *Service) commitTakes(ctx context.Context, batch []*handedTake) {
	if len(batch) > 1 {
		if err := s.takeBatch(ctx, batch); err == nil {
			return
		}
	}
	for _, t := range batch {
		t.work, t.err = s.takeHanded(ctx, t.executor, t.ids)
	}
}

// takesSQL is the UPDATE of takeBatch, on PostgreSQL, before rendering:
// its arguments are one array a column of the runs to take (the index in
// the batch of each run's take, which RETURNING gives back, the run's ID
// and the executor that takes it), then the clock's (NULL for the
// database's), the scheduler's name, the scheduler's name again and the
// clock's again, for the lease. Its text is the same for any number of
// runs.
//
// As in reportsSQL, the runs are found by their key (r.id = ANY (…)),
// and the executor is compared in a form no index serves (executorIs).
// The rows name their columns apart from the runs' (vid, vexec), so that
// RETURNING's runCols name the run's.
const takesSQL = `WITH v (vn, vid, vexec) AS (SELECT * FROM unnest(CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[])))
		UPDATE {p}dispatch_runs AS r SET state = 'running', started = COALESCE(CAST(? AS BIGINT), {now})
		FROM v WHERE r.sched_name = ? AND r.id = ANY (ARRAY (SELECT vid FROM v)) AND r.id = v.vid
		AND COALESCE(r.executor_id, '') = v.vexec AND r.state = 'assigned'
		AND EXISTS (SELECT 1 FROM {p}dispatch_executors AS e
			WHERE e.sched_name = ? AND e.id = v.vexec AND e.lease_until > COALESCE(CAST(? AS BIGINT), {now}))
		RETURNING v.vn, ` + runCols

// takeBatch makes the takes of batch in one statement (see takesSQL).
// Each take gets the runs it started, in the order of their scheduled
// times; one that got none was taken already or its executor's lease
// lapsed, which its caller's read then tells (see takeHanded).
func (s *Service) takeBatch(ctx context.Context, batch []*handedTake) error {
	s.st.AnalyzeOnce("dispatch_runs")
	var (
		index     []int64
		ids, exec []string
	)
	for n, t := range batch {
		for _, id := range t.ids {
			index = append(index, int64(n))
			ids = append(ids, id)
			exec = append(exec, t.executor)
		}
	}
	args := []any{index, ids, exec, s.clockArg(), s.sched, s.sched, s.clockArg()}
	rows, err := s.db.QueryContext(ctx, s.st.SQL(takesSQL), args...)
	if err != nil {
		return fmt.Errorf("dispatch: taking the runs of %d executors: %w", len(batch), err)
	}
	defer rows.Close()
	works := make([]*api.ExecutorWork, len(batch))
	for i := range works {
		works[i] = emptyWork()
	}
	for rows.Next() {
		var n int
		r, err := scanRun(prefixed{rows, &n})
		if err != nil {
			return fmt.Errorf("dispatch: taking the runs of %d executors: %w", len(batch), err)
		}
		if n < 0 || n >= len(batch) {
			return fmt.Errorf("dispatch: taking the runs of %d executors: the database returned take %d", len(batch), n)
		}
		works[n].Runs = append(works[n].Runs, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dispatch: taking the runs of %d executors: %w", len(batch), err)
	}
	for n, t := range batch {
		sortByScheduled(works[n].Runs)
		t.work, t.err = works[n], nil
	}
	return nil
}
