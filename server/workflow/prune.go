package workflow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Prune deletes at most limit instances that ended before endedBefore,
// with their tasks, oldest end first, and returns how many it deleted.
// Each goes in its own transaction under its row's lock: an instance
// re-run meanwhile (running again, with no end) is kept, and several
// nodes may prune at once, each instance going once.
func (s *Store) Prune(ctx context.Context, endedBefore time.Time, limit int) (int, error) {
	rows, err := s.db.QueryContext(ctx, s.q.prunable, s.sched, endedBefore.UnixNano(), limit)
	if err != nil {
		return 0, fmt.Errorf("workflow: reading the instances to prune: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			_ = rows.Close()
			return 0, fmt.Errorf("workflow: reading the instances to prune: %w", err)
		}
		ids = append(ids, id)
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("workflow: reading the instances to prune: %w", err)
	}
	n := 0
	for _, id := range ids {
		deleted, err := s.pruneInstance(ctx, id, endedBefore)
		if err != nil {
			return n, fmt.Errorf("workflow: pruning instance %s: %w", id, err)
		}
		if deleted {
			n++
		}
	}
	return n, nil
}

// pruneInstance deletes instance id and its tasks when, read under its
// row's lock, it still ended before endedBefore.
func (s *Store) pruneInstance(ctx context.Context, id string, endedBefore time.Time) (deleted bool, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		in, err := scanInstance(tx.QueryRowContext(ctx, s.q.instLock, s.sched, id))
		if errors.Is(err, sql.ErrNoRows) {
			return nil // another node's prune took it
		}
		if err != nil {
			return err
		}
		if !in.State.Final() || in.Finished.IsZero() || !in.Finished.Before(endedBefore) {
			return nil
		}
		if _, err := tx.ExecContext(ctx, s.q.taskDelete, s.sched, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.instDelete, s.sched, id); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	return deleted, err
}
