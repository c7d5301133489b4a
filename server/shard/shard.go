package shard

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrNotFound reports a parent or item that does not exist.
	ErrNotFound = errors.New("shard: no such sharded firing or item")
	// ErrDone reports an item that already ended: it must not run again.
	ErrDone = errors.New("shard: the item already ended")
	// ErrTaken reports an item that another firing of the same index
	// started: a duplicate trigger, which must not run.
	ErrTaken = errors.New("shard: the item was started by another firing")
	// ErrNotFailed reports a re-run of the failed items of a parent that
	// did not fail (it runs, or it succeeded).
	ErrNotFailed = errors.New("shard: the sharded firing did not fail")
)

// MaxTotal bounds the items of a firing.
const MaxTotal = 10000

// ParentState is the state of a sharded firing.
type ParentState string

// States of a parent.
const (
	// ParentCreating: its items are being scheduled.
	ParentCreating ParentState = "creating"
	// ParentRunning: its items are scheduled; some have not ended.
	ParentRunning ParentState = "running"
	// ParentSucceeded: every item succeeded.
	ParentSucceeded ParentState = "succeeded"
	// ParentFailed: every item ended, and some failed.
	ParentFailed ParentState = "failed"
)

// Decided reports whether the parent's outcome is known.
func (s ParentState) Decided() bool { return s == ParentSucceeded || s == ParentFailed }

// ItemState is the state of one item.
type ItemState string

// States of an item.
const (
	// ItemPending: its trigger has not started it.
	ItemPending ItemState = "pending"
	// ItemRunning: an attempt started; it may be retrying.
	ItemRunning ItemState = "running"
	// ItemSucceeded: an attempt succeeded. Final.
	ItemSucceeded ItemState = "succeeded"
	// ItemFailed: its last attempt failed with no retry left. Final
	// until a re-run of the failed items.
	ItemFailed ItemState = "failed"
)

// Parent is a sharded firing.
type Parent struct {
	// ID identifies the firing: the ID of its first attempt.
	ID string
	// ExecutionID is the parent's current attempt in the history, which
	// its decision ends.
	ExecutionID       string
	JobGroup, JobName string
	// Total counts its items, indexed 0 to Total-1.
	Total int
	// Round counts the re-runs of its failed items, from 0.
	Round int
	State ParentState
	// Remaining counts the items not ended, Failed those that failed.
	Remaining, Failed int
	// NodeID is the node that created it, or re-ran its failed items.
	NodeID string
	// Spec is what the creating node needs to schedule the items, opaque
	// to this package.
	Spec json.RawMessage
	// Created is when it was created; Decided when its outcome was
	// decided (zero before).
	Created, Decided time.Time
	// Recorded reports whether its decision is recorded in the history.
	Recorded bool
	// Error names the failed items of a failed parent.
	Error string
}

// Item is one item of a sharded firing.
type Item struct {
	ParentID string
	Index    int
	// Round is the parent's round the item last ran in.
	Round int
	State ItemState
	// FirstID is the item's firing (its first attempt) and ExecutionID its
	// latest attempt; both empty before it started.
	FirstID, ExecutionID string
	// NodeID is the node of its latest attempt.
	NodeID   string
	Attempts int
	// Started is when its latest attempt started, Finished when it ended
	// (zero before).
	Started, Finished time.Time
	// Error is the error of its last failed attempt.
	Error string
}

// Store keeps sharded firings in a SQL store's database. It is safe for
// concurrent use.
type Store struct {
	st    *sqlstore.Store
	db    *sql.DB
	sched string
	q     queries
}

// New migrates the package's tables on st's database and returns a Store.
func New(ctx context.Context, st *sqlstore.Store) (*Store, error) {
	if err := st.MigrateComponent(ctx, component, migrations()); err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	return &Store{st: st, db: st.DB(), sched: st.SchedulerName(), q: renderQueries(st.SQL)}, nil
}

type queries struct {
	insertParent, parentForUpdate, parent, setExecution, created, decide, recorded, stalled string
	items, itemForUpdate, startItem, endItem, rerunItems, rerunParent                       string
	prunable, deleteItems, deleteParent                                                     string
}

const (
	parentCols = "id, execution_id, job_group, job_name, total, round, state, remaining, failed, node_id, spec, created, decided, recorded, error_message"
	itemCols   = "parent_id, idx, round, state, first_id, execution_id, node_id, attempts, started, finished, error_message"
)

func renderQueries(sq func(string) string) queries {
	return queries{
		insertParent: sq(`INSERT INTO {p}shard_parents (sched_name, ` + parentCols + `)
			VALUES (?, ?, ?, ?, ?, ?, 0, 'creating', ?, 0, ?, ?, {now}, NULL, FALSE, '')`),
		parent:          sq(`SELECT ` + parentCols + ` FROM {p}shard_parents WHERE sched_name = ? AND id = ?`),
		parentForUpdate: sq(`SELECT ` + parentCols + ` FROM {p}shard_parents WHERE sched_name = ? AND id = ?{update}`),
		setExecution: sq(`UPDATE {p}shard_parents SET execution_id = ?
			WHERE sched_name = ? AND id = ? AND state IN ('creating', 'running')`),
		created: sq(`UPDATE {p}shard_parents SET state = 'running' WHERE sched_name = ? AND id = ? AND state = 'creating'`),
		decide: sq(`UPDATE {p}shard_parents SET remaining = ?, failed = ?, state = ?, decided = CASE WHEN ? THEN {now} ELSE NULL END,
			error_message = ? WHERE sched_name = ? AND id = ?`),
		recorded: sq(`UPDATE {p}shard_parents SET recorded = TRUE WHERE sched_name = ? AND id = ? AND execution_id = ?`),
		stalled: sq(`SELECT ` + parentCols + ` FROM {p}shard_parents WHERE sched_name = ?
			AND ((state = 'creating' AND created < ?) OR (state IN ('succeeded', 'failed') AND recorded = FALSE AND decided < ?))
			ORDER BY created LIMIT ?`),
		items:         sq(`SELECT ` + itemCols + ` FROM {p}shard_items WHERE sched_name = ? AND parent_id = ? ORDER BY idx`),
		itemForUpdate: sq(`SELECT ` + itemCols + ` FROM {p}shard_items WHERE sched_name = ? AND parent_id = ? AND idx = ?{update}`),
		startItem: sq(`UPDATE {p}shard_items SET state = 'running', first_id = ?, execution_id = ?, node_id = ?,
			attempts = attempts + 1, started = {now}, finished = NULL WHERE sched_name = ? AND parent_id = ? AND idx = ?`),
		endItem: sq(`UPDATE {p}shard_items SET state = ?, execution_id = ?, finished = {now}, error_message = ?
			WHERE sched_name = ? AND parent_id = ? AND idx = ?`),
		rerunItems: sq(`UPDATE {p}shard_items SET state = 'pending', round = ?, first_id = '', execution_id = '', node_id = '',
			started = NULL, finished = NULL WHERE sched_name = ? AND parent_id = ? AND state = 'failed'`),
		rerunParent: sq(`UPDATE {p}shard_parents SET state = 'creating', round = ?, remaining = failed, failed = 0, execution_id = ?,
			node_id = ?, created = {now}, decided = NULL, recorded = FALSE, error_message = '' WHERE sched_name = ? AND id = ?`),
		prunable: sq(`SELECT id FROM {p}shard_parents WHERE sched_name = ? AND state IN ('succeeded', 'failed')
			AND recorded = TRUE AND decided < ? ORDER BY decided LIMIT ?`),
		deleteItems:  sq(`DELETE FROM {p}shard_items WHERE sched_name = ? AND parent_id = ?`),
		deleteParent: sq(`DELETE FROM {p}shard_parents WHERE sched_name = ? AND id = ? AND state IN ('succeeded', 'failed')`),
	}
}

// insertItems renders the insert of n items.
func (s *Store) insertItems(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO {p}shard_items (sched_name, parent_id, idx, round, state, first_id, execution_id, node_id, attempts, error_message) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, 0, 'pending', '', '', '', 0, '')")
	}
	return s.st.SQL(b.String())
}

// itemBatch bounds the rows of one insert of items.
const itemBatch = 500

// Create stores a new parent in state creating with its p.Total items
// pending, in one transaction, and reports whether it created it. A
// parent with p.ID exists already: nothing is created, and while that
// parent runs, its execution becomes p.ExecutionID (a recovered attempt
// of the firing takes over).
func (s *Store) Create(ctx context.Context, p *Parent) (created bool, err error) {
	switch {
	case p.ID == "" || p.ExecutionID == "":
		return false, errors.New("shard: Create: ID and ExecutionID are required")
	case p.Total < 1 || p.Total > MaxTotal:
		return false, fmt.Errorf("shard: Create: %d items: want 1 to %d", p.Total, MaxTotal)
	}
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return false, fmt.Errorf("shard: creating %s: %w", p.ID, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	spec := p.Spec
	if len(spec) == 0 {
		spec = json.RawMessage("null")
	}
	if _, err = tx.ExecContext(ctx, s.q.insertParent, s.sched, p.ID, p.ExecutionID, p.JobGroup, p.JobName, p.Total, p.Total, p.NodeID, string(spec)); err != nil {
		_ = tx.Rollback()
		if !s.st.IsUniqueViolation(err) {
			return false, fmt.Errorf("shard: creating %s: %w", p.ID, err)
		}
		if _, err = s.db.ExecContext(ctx, s.q.setExecution, p.ExecutionID, s.sched, p.ID); err != nil {
			return false, fmt.Errorf("shard: taking over %s: %w", p.ID, err)
		}
		return false, nil
	}
	for from := 0; from < p.Total; from += itemBatch {
		n := min(itemBatch, p.Total-from)
		args := make([]any, 0, 3*n)
		for i := from; i < from+n; i++ {
			args = append(args, s.sched, p.ID, i)
		}
		if _, err = tx.ExecContext(ctx, s.insertItems(n), args...); err != nil {
			return false, fmt.Errorf("shard: creating the items of %s: %w", p.ID, err)
		}
	}
	if err = tx.Commit(); err != nil {
		return false, fmt.Errorf("shard: creating %s: %w", p.ID, err)
	}
	return true, nil
}

// Created marks a parent whose items are all scheduled running.
func (s *Store) Created(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, s.q.created, s.sched, id); err != nil {
		return fmt.Errorf("shard: marking %s created: %w", id, err)
	}
	return nil
}

// Get returns a parent.
func (s *Store) Get(ctx context.Context, id string) (*Parent, error) {
	p, err := scanParent(s.db.QueryRowContext(ctx, s.q.parent, s.sched, id))
	if err != nil {
		return nil, fmt.Errorf("shard: reading %s: %w", id, err)
	}
	return p, nil
}

// Items returns a parent's items by index; none for a parent that does
// not exist.
func (s *Store) Items(ctx context.Context, id string) ([]Item, error) {
	rows, err := s.db.QueryContext(ctx, s.q.items, s.sched, id)
	if err != nil {
		return nil, fmt.Errorf("shard: reading the items of %s: %w", id, err)
	}
	defer rows.Close()
	var out []Item
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, fmt.Errorf("shard: reading the items of %s: %w", id, err)
		}
		out = append(out, *it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("shard: reading the items of %s: %w", id, err)
	}
	return out, nil
}

// Start records that attempt executionID of the item's firing firstID
// starts on node. It refuses an item that ended (ErrDone) and one that
// another firing started (ErrTaken): neither must run.
func (s *Store) Start(ctx context.Context, parentID string, index int, firstID, executionID, node string) (err error) {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("shard: starting item %d of %s: %w", index, parentID, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	it, err := scanItem(tx.QueryRowContext(ctx, s.q.itemForUpdate, s.sched, parentID, index))
	switch {
	case err != nil:
		return fmt.Errorf("shard: starting item %d of %s: %w", index, parentID, err)
	case it.State == ItemSucceeded || it.State == ItemFailed:
		return fmt.Errorf("shard: item %d of %s is %s: %w", index, parentID, it.State, ErrDone)
	case it.FirstID != "" && it.FirstID != firstID:
		return fmt.Errorf("shard: item %d of %s runs as firing %s: %w", index, parentID, it.FirstID, ErrTaken)
	}
	if _, err = tx.ExecContext(ctx, s.q.startItem, firstID, executionID, node, s.sched, parentID, index); err != nil {
		return fmt.Errorf("shard: starting item %d of %s: %w", index, parentID, err)
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("shard: starting item %d of %s: %w", index, parentID, err)
	}
	return nil
}

// End records the final end of an item's attempt executionID: succeeded,
// or failed with msg and no retry left. In the same transaction it counts
// the parent's items left, and the end that leaves none decides the
// parent: End then returns the decided parent, which the caller records
// in the history (then calls Recorded). It returns nil otherwise, and
// for an item that had ended already, which it leaves as it was.
func (s *Store) End(ctx context.Context, parentID string, index int, executionID string, succeeded bool, msg string) (decided *Parent, err error) {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return nil, fmt.Errorf("shard: ending item %d of %s: %w", index, parentID, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	// The parent's row first: every end of its items queues on it, so
	// that the counts are exact and one end decides.
	p, err := scanParent(tx.QueryRowContext(ctx, s.q.parentForUpdate, s.sched, parentID))
	if err != nil {
		return nil, fmt.Errorf("shard: ending item %d of %s: %w", index, parentID, err)
	}
	it, err := scanItem(tx.QueryRowContext(ctx, s.q.itemForUpdate, s.sched, parentID, index))
	if err != nil {
		return nil, fmt.Errorf("shard: ending item %d of %s: %w", index, parentID, err)
	}
	if it.State == ItemSucceeded || it.State == ItemFailed {
		return nil, tx.Rollback()
	}
	state := ItemSucceeded
	if !succeeded {
		state, p.Failed = ItemFailed, p.Failed+1
	}
	if _, err = tx.ExecContext(ctx, s.q.endItem, string(state), executionID, msg, s.sched, parentID, index); err != nil {
		return nil, fmt.Errorf("shard: ending item %d of %s: %w", index, parentID, err)
	}
	p.Remaining--
	done := p.Remaining <= 0
	if done {
		p.State, p.Error = ParentSucceeded, ""
		if p.Failed > 0 {
			failed, err := s.failedTx(ctx, tx, parentID)
			if err != nil {
				return nil, err
			}
			p.State, p.Error = ParentFailed, failedMessage(failed, p.Total)
		}
		p.Recorded = false
	}
	if _, err = tx.ExecContext(ctx, s.q.decide, p.Remaining, p.Failed, string(p.State), done, p.Error, s.sched, parentID); err != nil {
		return nil, fmt.Errorf("shard: deciding %s: %w", parentID, err)
	}
	if err = tx.Commit(); err != nil {
		return nil, fmt.Errorf("shard: ending item %d of %s: %w", index, parentID, err)
	}
	if !done {
		return nil, nil
	}
	return p, nil
}

// failedTx returns the indexes of a parent's failed items.
func (s *Store) failedTx(ctx context.Context, tx *sql.Tx, parentID string) ([]int, error) {
	rows, err := tx.QueryContext(ctx, s.q.items, s.sched, parentID)
	if err != nil {
		return nil, fmt.Errorf("shard: reading the failed items of %s: %w", parentID, err)
	}
	defer rows.Close()
	var failed []int
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, fmt.Errorf("shard: reading the failed items of %s: %w", parentID, err)
		}
		if it.State == ItemFailed {
			failed = append(failed, it.Index)
		}
	}
	return failed, rows.Err()
}

// failedMessage names the failed items, the first 20 of them.
func failedMessage(failed []int, total int) string {
	const show = 20
	parts := make([]string, 0, min(len(failed), show))
	for _, i := range failed[:min(len(failed), show)] {
		parts = append(parts, strconv.Itoa(i))
	}
	msg := fmt.Sprintf("%d of %d items failed: %s", len(failed), total, strings.Join(parts, ", "))
	if len(failed) > show {
		msg += fmt.Sprintf(" and %d more", len(failed)-show)
	}
	return msg
}

// Recorded marks a decided parent's decision recorded in the history
// under its execution executionID.
func (s *Store) Recorded(ctx context.Context, id, executionID string) error {
	if _, err := s.db.ExecContext(ctx, s.q.recorded, s.sched, id, executionID); err != nil {
		return fmt.Errorf("shard: marking %s recorded: %w", id, err)
	}
	return nil
}

// Stalled returns, oldest first and at most limit, the parents that
// should have moved on by now: those still creating that were created
// before createdBefore (their node may have died while scheduling their
// items), and those decided before decidedBefore whose decision is not
// recorded (their node may have died while recording it).
func (s *Store) Stalled(ctx context.Context, createdBefore, decidedBefore time.Time, limit int) ([]Parent, error) {
	rows, err := s.db.QueryContext(ctx, s.q.stalled, s.sched, createdBefore.UnixNano(), decidedBefore.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("shard: reading stalled parents: %w", err)
	}
	defer rows.Close()
	var out []Parent
	for rows.Next() {
		p, err := scanParent(rows)
		if err != nil {
			return nil, fmt.Errorf("shard: reading stalled parents: %w", err)
		}
		out = append(out, *p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("shard: reading stalled parents: %w", err)
	}
	return out, nil
}

// RerunFailed turns a failed parent back to creating in its next round,
// as attempt executionID, created by node, with its failed items pending
// again, in one transaction. It returns the parent and the items to
// schedule again. A parent that did not fail is ErrNotFailed.
func (s *Store) RerunFailed(ctx context.Context, id, executionID, node string) (p *Parent, items []int, err error) {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("shard: re-running %s: %w", id, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if p, err = scanParent(tx.QueryRowContext(ctx, s.q.parentForUpdate, s.sched, id)); err != nil {
		return nil, nil, fmt.Errorf("shard: re-running %s: %w", id, err)
	}
	if p.State != ParentFailed {
		return nil, nil, fmt.Errorf("shard: re-running %s, which is %s: %w", id, p.State, ErrNotFailed)
	}
	if items, err = s.failedTx(ctx, tx, id); err != nil {
		return nil, nil, err
	}
	p.Round++
	if _, err = tx.ExecContext(ctx, s.q.rerunItems, p.Round, s.sched, id); err != nil {
		return nil, nil, fmt.Errorf("shard: re-running the items of %s: %w", id, err)
	}
	if _, err = tx.ExecContext(ctx, s.q.rerunParent, p.Round, executionID, node, s.sched, id); err != nil {
		return nil, nil, fmt.Errorf("shard: re-running %s: %w", id, err)
	}
	if err = tx.Commit(); err != nil {
		return nil, nil, fmt.Errorf("shard: re-running %s: %w", id, err)
	}
	p.State, p.ExecutionID, p.NodeID = ParentCreating, executionID, node
	p.Remaining, p.Failed, p.Decided, p.Recorded, p.Error = len(items), 0, time.Time{}, false, ""
	return p, items, nil
}

// Prune deletes at most limit parents decided before decidedBefore, and
// recorded, with their items, oldest first, and returns how many it
// deleted. A parent whose failed items are re-run meanwhile is kept.
func (s *Store) Prune(ctx context.Context, decidedBefore time.Time, limit int) (int, error) {
	rows, err := s.db.QueryContext(ctx, s.q.prunable, s.sched, decidedBefore.UnixNano(), limit)
	if err != nil {
		return 0, fmt.Errorf("shard: reading the parents to prune: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("shard: reading the parents to prune: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("shard: reading the parents to prune: %w", err)
	}
	n := 0
	for _, id := range ids {
		deleted, err := s.prune(ctx, id)
		if err != nil {
			return n, err
		}
		if deleted {
			n++
		}
	}
	return n, nil
}

// prune deletes one decided parent and its items in one transaction.
func (s *Store) prune(ctx context.Context, id string) (deleted bool, err error) {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return false, fmt.Errorf("shard: pruning %s: %w", id, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	p, err := scanParent(tx.QueryRowContext(ctx, s.q.parentForUpdate, s.sched, id))
	if errors.Is(err, ErrNotFound) {
		return false, tx.Rollback()
	}
	if err != nil {
		return false, fmt.Errorf("shard: pruning %s: %w", id, err)
	}
	if !p.State.Decided() {
		return false, tx.Rollback()
	}
	if _, err = tx.ExecContext(ctx, s.q.deleteItems, s.sched, id); err != nil {
		return false, fmt.Errorf("shard: pruning the items of %s: %w", id, err)
	}
	if _, err = tx.ExecContext(ctx, s.q.deleteParent, s.sched, id); err != nil {
		return false, fmt.Errorf("shard: pruning %s: %w", id, err)
	}
	if err = tx.Commit(); err != nil {
		return false, fmt.Errorf("shard: pruning %s: %w", id, err)
	}
	return true, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanParent(sc scanner) (*Parent, error) {
	var p Parent
	var state, spec string
	var created int64
	var decided sql.NullInt64
	err := sc.Scan(&p.ID, &p.ExecutionID, &p.JobGroup, &p.JobName, &p.Total, &p.Round, &state, &p.Remaining, &p.Failed,
		&p.NodeID, &spec, &created, &decided, &p.Recorded, &p.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	p.State = ParentState(state)
	if spec != "" && spec != "null" {
		p.Spec = json.RawMessage(spec)
	}
	p.Created = time.Unix(0, created).UTC()
	if decided.Valid {
		p.Decided = time.Unix(0, decided.Int64).UTC()
	}
	return &p, nil
}

func scanItem(sc scanner) (*Item, error) {
	var it Item
	var state string
	var started, finished sql.NullInt64
	err := sc.Scan(&it.ParentID, &it.Index, &it.Round, &state, &it.FirstID, &it.ExecutionID, &it.NodeID, &it.Attempts,
		&started, &finished, &it.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	it.State = ItemState(state)
	if started.Valid {
		it.Started = time.Unix(0, started.Int64).UTC()
	}
	if finished.Valid {
		it.Finished = time.Unix(0, finished.Int64).UTC()
	}
	return &it, nil
}
