package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Record is one write of a batch (see [History.RecordBatch]): the start
// of an execution, how one ended, or both at once.
type Record struct {
	// Start, when not nil, records an execution as running, as
	// [History.Start] does. With End, the execution is recorded once, in
	// its final state.
	Start *Execution
	// ID is the execution End is for, when Start is nil.
	ID string
	// End, when not nil, records how the execution ended, as
	// [History.Finish] does.
	End *Finish
}

// id returns the ID of the execution r is about.
func (r *Record) id() string {
	if r.Start != nil {
		return r.Start.ID
	}
	return r.ID
}

// batchChunk bounds the rows of one multi-row INSERT: 23 parameters a
// row keeps a statement under every driver's parameter limit.
const batchChunk = 50

// insertCols are the columns a multi-row INSERT of executions sets, in
// the order of startArgs; killed_by keeps its default.
const insertCols = "sched_name, id, first_id, attempt, job_group, job_name, trigger_group, trigger_name, node_id, " +
	"scheduled_time, started_time, finished_time, outcome, error_message, output, logs, output_truncated, " +
	"recovering, manual, params, executor_id, executor_instance, cause_id"

// insertRow is the placeholders of one row of insertCols.
const insertRow = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

// executionsInsert returns the INSERT of n executions, rendered for st.
// With ignore it leaves alone the rows whose ID is already recorded;
// without, such a row fails the statement with a unique violation.
func executionsInsert(st *sqlstore.Store, n int, ignore bool) string {
	stmt := "INSERT INTO {p}server_executions (" + insertCols + ") VALUES " + strings.Repeat(insertRow+", ", n-1) + insertRow
	if ignore {
		stmt += st.InsertIgnore("sched_name, id", "id")
	}
	return st.SQL(stmt)
}

// batchRow is a record of a batch, checked and in its stored form.
type batchRow struct {
	i      int // the record's index
	id     string
	start  *Execution
	params any
	end    *finishRow
}

// startArgs appends the parameters of r's row in insertCols order: its
// final state when it has an end, running otherwise.
func (r *batchRow) startArgs(args []any, sched string) []any {
	return r.appendValues(append(args, sched))
}

// appendValues appends the values of r's row in insertCols order but the
// scheduler's name: its final state when it has an end, running
// otherwise.
func (r *batchRow) appendValues(args []any) []any {
	x := r.start
	var (
		outcome      = OutcomeRunning
		finished     any
		errText, out string
		logs         any
		truncated    bool
	)
	if r.end != nil {
		outcome, finished, errText, out, logs, truncated = r.end.outcome, r.end.finished, r.end.errText, r.end.output, r.end.logs, r.end.truncated
	}
	return append(args, x.ID, x.FirstID, x.Attempt, x.JobGroup, x.JobName, x.TriggerGroup, x.TriggerName, x.NodeID,
		timeArg(x.ScheduledTime), x.StartedTime.UnixNano(), finished, string(outcome), errText, out, logs, truncated,
		x.Recovering, x.Manual, r.params, x.ExecutorID, x.ExecutorInstance, x.CauseID)
}

// insertColumns are insertCols but sched_name, as the arrays of
// executionsInsertArrays.
var insertColumns = []sqlstore.Column{
	{Name: "id", Type: sqlstore.ColumnText}, {Name: "first_id", Type: sqlstore.ColumnText},
	{Name: "attempt", Type: sqlstore.ColumnBigInt}, {Name: "job_group", Type: sqlstore.ColumnText},
	{Name: "job_name", Type: sqlstore.ColumnText}, {Name: "trigger_group", Type: sqlstore.ColumnText},
	{Name: "trigger_name", Type: sqlstore.ColumnText}, {Name: "node_id", Type: sqlstore.ColumnText},
	{Name: "scheduled_time", Type: sqlstore.ColumnBigInt}, {Name: "started_time", Type: sqlstore.ColumnBigInt},
	{Name: "finished_time", Type: sqlstore.ColumnBigInt}, {Name: "outcome", Type: sqlstore.ColumnText},
	{Name: "error_message", Type: sqlstore.ColumnText}, {Name: "output", Type: sqlstore.ColumnText},
	{Name: "logs", Type: sqlstore.ColumnJSON}, {Name: "output_truncated", Type: sqlstore.ColumnBool},
	{Name: "recovering", Type: sqlstore.ColumnBool}, {Name: "manual", Type: sqlstore.ColumnBool},
	{Name: "params", Type: sqlstore.ColumnJSON}, {Name: "executor_id", Type: sqlstore.ColumnText},
	{Name: "executor_instance", Type: sqlstore.ColumnText}, {Name: "cause_id", Type: sqlstore.ColumnText},
}

// executionsInsertArrays returns the INSERT of any number of executions
// from one array a column (see sqlstore.Store.Arrays), rendered for st,
// with ignore as executionsInsert.
func executionsInsertArrays(st *sqlstore.Store, ignore bool) string {
	sel := make([]string, len(insertColumns))
	for i, c := range insertColumns {
		sel[i] = "v." + c.Name
		if c.Type == sqlstore.ColumnJSON {
			sel[i] = "CAST(v." + c.Name + " AS JSON)"
		}
	}
	stmt := "INSERT INTO {p}server_executions (" + insertCols + ") SELECT ?, " + strings.Join(sel, ", ") +
		" FROM " + sqlstore.Unnest(insertColumns)
	if ignore {
		stmt += st.InsertIgnore("sched_name, id", "id")
	}
	return st.SQL(stmt)
}

// insertChunk inserts the starts of rows in one statement, and returns
// how many rows it inserted: from one array a column where the store
// takes arrays (see sqlstore.Store.Arrays), otherwise as a multi-row
// VALUES of at most batchChunk rows.
func (h *History) insertChunk(ctx context.Context, tx *sql.Tx, rows []*batchRow, ignore bool) (int64, error) {
	var (
		stmt string
		args []any
	)
	if h.st.Arrays() {
		values := make([][]any, len(rows))
		for i, r := range rows {
			values[i] = r.appendValues(make([]any, 0, len(insertColumns)))
		}
		arrays, err := sqlstore.ColumnArrays(insertColumns, values)
		if err != nil {
			return 0, fmt.Errorf("history: %w", err)
		}
		stmt, args = h.q.executionsInsertArrays, append([]any{h.sched}, arrays...)
		if ignore {
			stmt = h.q.executionsInsertArraysIgnore
		}
	} else {
		stmt = h.q.executionsInsert
		if ignore {
			stmt = h.q.executionsInsertIgnore
		}
		if len(rows) < batchChunk {
			stmt = executionsInsert(h.st, len(rows), ignore)
		}
		args = make([]any, 0, 23*len(rows))
		for _, r := range rows {
			args = r.startArgs(args, h.sched)
		}
	}
	res, err := tx.ExecContext(ctx, stmt, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// RecordBatch writes recs in one transaction: the starts (one INSERT from
// arrays on PostgreSQL, elsewhere one multi-row INSERT per 50), then the
// ends. It is what a node that records many
// executions at once uses instead of one Start and one Finish each, so
// that they cost one commit between them.
//
// Each record is checked first, as Start and Finish check theirs; one
// that fails gets its error (wrapping [ErrInvalid]) in the returned slice,
// at its index, and is not written, and the others are. The outcome of
// each written record is there too:
//
//   - a Start alone whose ID is already recorded leaves that row as it is
//     and reports nil: a retry of a batch whose commit answer was lost
//     finds its rows there;
//   - an End alone reports [ErrNotRunning] for an execution that already
//     finished and [ErrNotFound] for an unknown one, and changes nothing;
//     an execution marked node_lost takes the outcome, as with Finish;
//   - a Start with an End inserts the execution in its final state; when
//     its ID is already recorded, the End applies to that row as an End
//     alone would, and an execution that already finished reports nil.
//
// The error is that of the transaction: when it is not nil, nothing was
// written and the per-record errors are those of the checks only.
func (h *History) RecordBatch(ctx context.Context, recs []Record) ([]error, error) {
	errs := make([]error, len(recs))
	var inserts, ends []*batchRow
	for i := range recs {
		r, err := h.prepareRecord(i, &recs[i])
		if err != nil {
			errs[i] = err
			continue
		}
		if r.start != nil {
			inserts = append(inserts, r)
		}
		if r.end != nil && r.start == nil {
			ends = append(ends, r)
		}
	}
	if len(inserts) == 0 && len(ends) == 0 {
		return errs, nil
	}
	// A plain INSERT first: an INSERT that ignores the rows already there
	// costs PostgreSQL a speculative insertion per row (a probe of the
	// primary key, and one WAL record more), about a third more for the
	// statement, and the rows are new but for the retry of a batch whose
	// commit answer was lost. That retry, or any batch that meets a row
	// already there, is written again with the ignoring INSERT.
	err := h.recordBatchTx(ctx, inserts, ends, errs, false)
	if h.st.IsUniqueViolation(err) {
		err = h.recordBatchTx(ctx, inserts, ends, errs, true)
	}
	return errs, err
}

// recordBatchTx writes a batch's inserts and ends in one transaction, and
// sets errs for the ends that applied to nothing. With ignore its INSERTs
// leave alone the rows whose ID is already recorded, and the ends of those
// rows apply to them; without, such a row fails the transaction with a
// unique violation, which it returns.
func (h *History) recordBatchTx(ctx context.Context, inserts, ends []*batchRow, errs []error, ignore bool) error {
	tx, err := h.st.BeginTx(ctx)
	if err != nil {
		return dbErr("recording a batch of executions", err)
	}
	defer func() { _ = tx.Rollback() }()

	// Finished executions whose INSERT met a row already there: their end
	// applies to that row.
	var conflicted []*batchRow
	chunkSize := batchChunk
	if h.st.Arrays() {
		chunkSize = max(len(inserts), 1) // one statement whatever the batch
	}
	for chunk := range slices.Chunk(inserts, chunkSize) {
		n, err := h.insertChunk(ctx, tx, chunk, ignore)
		if err != nil {
			return dbErr("recording a batch of executions", err)
		}
		if int(n) == len(chunk) {
			continue
		}
		for _, r := range chunk {
			if r.end != nil {
				conflicted = append(conflicted, r)
			}
		}
	}
	// Updated in ID order, so that two transactions that update the same
	// rows take their locks in one order.
	ends = append(slices.Clip(ends), conflicted...)
	slices.SortFunc(ends, func(a, b *batchRow) int { return strings.Compare(a.id, b.id) })
	for _, r := range ends {
		res, err := tx.ExecContext(ctx, h.q.executionFinish, r.end.args(h.sched, r.id)...)
		if err != nil {
			return dbErr("recording the end of execution "+r.id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return dbErr("recording the end of execution "+r.id, err)
		}
		if n > 0 || r.start != nil {
			// Updated; or inserted finished, by this batch or an earlier
			// try of it.
			continue
		}
		err = h.whyUnchangedOn(ctx, tx, r.id)
		if !errors.Is(err, ErrNotRunning) && !errors.Is(err, ErrNotFound) {
			return err
		}
		errs[r.i] = err
	}
	if err := tx.Commit(); err != nil {
		return dbErr("committing a batch of executions", err)
	}
	return nil
}

// prepareRecord checks the record at index i of a batch and returns it in
// its stored form.
func (h *History) prepareRecord(i int, rec *Record) (*batchRow, error) {
	r := &batchRow{i: i, id: rec.id()}
	switch {
	case rec.Start == nil && rec.End == nil:
		return nil, invalid(fmt.Sprintf("Record[%d]", i), "has neither Start nor End")
	case rec.Start != nil:
		x, params, err := prepareStart(rec.Start)
		if err != nil {
			return nil, err
		}
		r.start, r.params = &x, params
	default:
		if err := checkKey("ID", rec.ID, true); err != nil {
			return nil, err
		}
	}
	if rec.End != nil {
		end, err := h.prepareFinish(rec.End)
		if err != nil {
			return nil, err
		}
		r.end = &end
	}
	return r, nil
}
