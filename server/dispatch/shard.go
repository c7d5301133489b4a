package dispatch

import (
	"context"

	"github.com/chime-scheduler/chime/api"
)

// LiveExecutors returns the IDs of the group's live executors that
// advertise the target's handler and carry its labels, in registration
// order (registered time, then ID): the executors of a sharding_broadcast
// firing, item i going to the i-th. None is a *NoExecutorError.
func (s *Service) LiveExecutors(ctx context.Context, t api.ExecutorTarget) ([]string, error) {
	live, _, err := s.liveExecutorsAt(ctx, t.Group)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range live {
		if serves(e, t.Handler, t.Labels) {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return nil, &NoExecutorError{Group: t.Group, Handler: t.Handler, Labels: t.Labels, Live: len(live)}
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
