package dispatch

import (
	"context"
	"fmt"

	"github.com/chime-scheduler/chime/api"
)

// LiveExecutors returns the IDs of the group's live executors that
// advertise the target's handler and carry its labels, in registration
// order (registered time, then ID): the executors of a sharding_broadcast
// firing, item i going to the i-th. None is a *NoExecutorError.
func (s *Service) LiveExecutors(ctx context.Context, t api.ExecutorTarget) ([]string, error) {
	now, err := s.now(ctx, s.db)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q.executorsLive, s.sched, t.Group, nanos(now))
	if err != nil {
		return nil, fmt.Errorf("dispatch: reading the executors of group %q: %w", t.Group, err)
	}
	defer rows.Close()
	var ids []string
	live := 0
	for rows.Next() {
		e, err := scanExecutor(rows)
		if err != nil {
			return nil, fmt.Errorf("dispatch: reading the executors of group %q: %w", t.Group, err)
		}
		live++
		if serves(e, t.Handler, t.Labels) {
			ids = append(ids, e.ID)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dispatch: reading the executors of group %q: %w", t.Group, err)
	}
	if len(ids) == 0 {
		return nil, &NoExecutorError{Group: t.Group, Handler: t.Handler, Labels: t.Labels, Live: live}
	}
	return ids, nil
}

// pinnedOf returns the candidate whose ID is pin, if pin is set and the
// candidate is among cands.
func pinnedOf(cands []candidate, pin string) (candidate, bool) {
	if pin == "" {
		return candidate{}, false
	}
	for _, c := range cands {
		if c.id == pin {
			return c, true
		}
	}
	return candidate{}, false
}
