package dispatch

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/store/sqlstore"
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

// commitHandovers hands over a batch of round robin runs: it reads each
// group's live executors once, takes the turns of all its runs of the
// group (see takeTurns), and inserts all its runs in one statement.
// When the insert fails, each run of the batch is handed over alone, so
// that one's error is not the others'.
func (s *Service) commitHandovers(ctx context.Context, batch []*handover) {
	for _, ho := range batch {
		ho.e, ho.asg, ho.err = nil, nil, nil
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
	// The runs are assigned at the clock read with the first group's
	// executors; a group without any takes no turn, and needs none.
	var now time.Time
	for _, g := range groups {
		if at := s.takeTurns(ctx, g, byGroup[g]); now.IsZero() {
			now = at
		}
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
// by round robin (see nextTurn), each among the live executors that
// serve it, in the batch's order, as one after the other would. A
// hand-over no executor serves gets its *NoExecutorError; when the
// database fails, every one gets the error. It returns the clock it
// compared the executors' leases with, or the zero time when the group
// has no live executor or the database failed.
func (s *Service) takeTurns(ctx context.Context, group string, hos []*handover) time.Time {
	live, now, err := s.liveExecutorsAt(ctx, group)
	if err != nil {
		for _, ho := range hos {
			ho.e, ho.err = nil, err
		}
		return time.Time{}
	}
	for _, ho := range hos {
		cands, byID, err := fit(live, ho.h.Target)
		if err != nil {
			ho.err = err
			continue
		}
		ho.e = byID[s.nextTurn(group, cands, now).id]
	}
	return now
}

// insertHandovers inserts the runs of batch, assigned with token 1, in
// one statement, and counts the uses of the executors picked, which
// Watch records (see usesPending): no round robin pick reads them, and
// updating the executors' rows here made the batches of a busy node wait
// for each other's commits, every batch touching most of the executors.
func (s *Service) insertHandovers(ctx context.Context, now time.Time, batch []*handover) error {
	rows := 0
	args := make([]any, 0, len(batch)*runInsertParams)
	for _, ho := range batch {
		if ho.e == nil {
			continue
		}
		h := ho.h
		rows++
		args = append(args, s.sched, h.RunID, h.ExecutionID, h.Attempt, h.Target.Group,
			h.Target.Handler, h.JobGroup, h.JobName, nanos(h.ScheduledTime), ho.params, h.Recovering, int64(h.Timeout),
			ho.e.ID, h.NodeID, h.ShardIndex, h.ShardTotal, false, nanos(now))
	}
	if rows == 0 {
		return nil
	}
	insert := runInsertHead + sqlstore.Rows(runInsertRow, rows)
	if s.st.Arrays() {
		var err error
		if insert, args, err = handoverArrays(now, batch, s.sched); err != nil {
			return fmt.Errorf("dispatch: inserting %d runs: %w", rows, err)
		}
	}
	if s.channel != "" {
		// The other nodes hear of the runs in the same statement (see
		// announce): one notification per executor.
		insert = `WITH ins AS (` + insert + ` RETURNING executor_id, id)
			SELECT pg_notify(?, ? || '|' || executor_id || '|' || string_agg(id, ',')) FROM ins GROUP BY executor_id`
		args = append(args, s.channel, s.origin)
	}
	if _, err := s.db.ExecContext(ctx, s.st.SQL(insert), args...); err != nil {
		return fmt.Errorf("dispatch: inserting %d runs: %w", rows, err)
	}
	s.mu.Lock()
	for _, ho := range batch {
		if ho.e != nil {
			s.uses.add(ho.e.ID, 1, now)
		}
	}
	s.mu.Unlock()
	return nil
}

// runColumns are the columns of the runs a batch of hand-overs inserts
// that differ from one run to the next, as arrays (see handoverArrays).
var runColumns = []sqlstore.Column{
	{Name: "id", Type: sqlstore.ColumnText}, {Name: "execution_id", Type: sqlstore.ColumnText},
	{Name: "attempt", Type: sqlstore.ColumnBigInt}, {Name: "grp", Type: sqlstore.ColumnText},
	{Name: "handler", Type: sqlstore.ColumnText}, {Name: "job_group", Type: sqlstore.ColumnText},
	{Name: "job_name", Type: sqlstore.ColumnText}, {Name: "scheduled_time", Type: sqlstore.ColumnBigInt},
	{Name: "params", Type: sqlstore.ColumnJSON}, {Name: "recovering", Type: sqlstore.ColumnBool},
	{Name: "timeout_ns", Type: sqlstore.ColumnBigInt}, {Name: "executor_id", Type: sqlstore.ColumnText},
	{Name: "node_id", Type: sqlstore.ColumnText}, {Name: "shard_index", Type: sqlstore.ColumnBigInt},
	{Name: "shard_total", Type: sqlstore.ColumnBigInt},
}

// runInsertArrays is the INSERT of a batch of assigned runs, with token
// 1, from one array a column (see sqlstore.Store.Arrays), whatever the
// batch's size: its arguments are the scheduler's name, the assigned
// time, then the arrays of runColumns.
var runInsertArrays = `INSERT INTO {p}dispatch_runs (sched_name, ` + runCols + `, cancel_told, outcome, error_message, output, logs,
			assigned, started, finished)
		SELECT ?, v.id, v.execution_id, v.attempt, v.grp, v.handler, v.job_group, v.job_name, v.scheduled_time,
			CAST(v.params AS JSON), v.recovering, v.timeout_ns, v.executor_id, 1, v.node_id, 'assigned', v.shard_index,
			v.shard_total, FALSE, '', '', '', NULL, ?, NULL, NULL FROM ` + sqlstore.Unnest(runColumns)

// handoverArrays returns runInsertArrays and its arguments for the
// hand-overs of batch that picked an executor, assigned at now.
func handoverArrays(now time.Time, batch []*handover, sched string) (string, []any, error) {
	var rows [][]any
	for _, ho := range batch {
		if ho.e == nil {
			continue
		}
		h := ho.h
		rows = append(rows, []any{h.RunID, h.ExecutionID, h.Attempt, h.Target.Group, h.Target.Handler, h.JobGroup,
			h.JobName, nanos(h.ScheduledTime), ho.params, h.Recovering, int64(h.Timeout), ho.e.ID, h.NodeID,
			h.ShardIndex, h.ShardTotal})
	}
	arrays, err := sqlstore.ColumnArrays(runColumns, rows)
	if err != nil {
		return "", nil, err
	}
	return runInsertArrays, append([]any{sched, nanos(now)}, arrays...), nil
}

// usesPending are the uses of executors that round robin hand-overs made
// and Watch has not recorded yet, by executor ID: how many, and the last.
// LRU, LFU and busy_over read the uses, and record their own in their
// hand-over's transaction; they see round robin's of the same group up
// to a PollInterval late. Uses a node counted and did not record before
// it died are lost: they are statistics, and the routings they steer pick
// among live executors whatever they read.
type usesPending map[string]use

type use struct {
	n    int
	last time.Time
}

// add counts n uses of executor id, the last at last.
func (u *usesPending) add(id string, n int, last time.Time) {
	if *u == nil {
		*u = make(usesPending)
	}
	p := (*u)[id]
	p.n += n
	if last.After(p.last) {
		p.last = last
	}
	(*u)[id] = p
}

// recordUses records the uses pending, in one transaction, the
// executors' rows in the order of their IDs so that two nodes never wait
// for each other in a cycle. Uses it could not record stay pending.
func (s *Service) recordUses(ctx context.Context) error {
	s.mu.Lock()
	pending := s.uses
	s.uses = nil
	s.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	err := s.recordUsesTx(ctx, pending)
	if err != nil {
		s.mu.Lock()
		for id, p := range pending {
			s.uses.add(id, p.n, p.last)
		}
		s.mu.Unlock()
	}
	return err
}

func (s *Service) recordUsesTx(ctx context.Context, pending usesPending) error {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("dispatch: recording the uses of executors: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	ids := slices.Sorted(maps.Keys(pending))
	for chunk := range slices.Chunk(ids, maxUsesPerStatement) {
		q, args := s.usesUpdate(chunk, pending)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("dispatch: recording the uses of %d executors: %w", len(chunk), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("dispatch: recording the uses of executors: %w", err)
	}
	return nil
}

// maxUsesPerStatement bounds the executors of one UPDATE of usesUpdate:
// 5 bind parameters each, under every dialect's limit.
const maxUsesPerStatement = 200

// usesUpdate is the statement that records the pending uses of the
// executors ids (sorted), one UPDATE whose CASEs give each row its own
// values, which every dialect takes, rather than one a row: Watch records
// uses at every poll, and a busy node had one UPDATE an executor each
// time.
func (s *Service) usesUpdate(ids []string, pending usesPending) (string, []any) {
	var last, count strings.Builder
	args := make([]any, 0, 5*len(ids)+1)
	for _, id := range ids {
		last.WriteString(" WHEN ? THEN ?")
		args = append(args, id, nanos(pending[id].last))
	}
	for _, id := range ids {
		count.WriteString(" WHEN ? THEN ?")
		args = append(args, id, pending[id].n)
	}
	args = append(args, s.sched)
	for _, id := range ids {
		args = append(args, id)
	}
	return s.st.SQL(`UPDATE {p}dispatch_executors SET last_used = CASE id` + last.String() + ` ELSE last_used END, ` +
		`use_count = use_count + CASE id` + count.String() + ` ELSE 0 END ` +
		`WHERE sched_name = ? AND id IN (` + sqlstore.Placeholders(len(ids)) + `)`), args
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
