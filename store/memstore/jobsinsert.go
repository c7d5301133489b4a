package memstore

import (
	"context"

	"github.com/chime-scheduler/chime/store"
)

// JobsInsert stores new jobs with their triggers in one step; see
// [store.JobStore]. Everything is checked before anything changes, under
// the store's one lock.
func (s *Store) JobsInsert(ctx context.Context, p *store.JobsInsertParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for i := range p.Jobs {
		e := &p.Jobs[i]
		if err := s.checkUpsert(&e.Job, false, 0); err != nil {
			return err
		}
		for j := range e.Triggers {
			if err := s.checkInsert(&e.Triggers[j], false); err != nil {
				return err
			}
		}
	}
	for i := range p.Jobs {
		e := &p.Jobs[i]
		s.putJob(&e.Job)
		ts := make([]*trigger, 0, len(e.Triggers))
		for j := range e.Triggers {
			s.putTrigger(&e.Triggers[j])
			ts = append(ts, s.triggers[e.Triggers[j].Key])
		}
		switch e.Pause {
		case store.PauseTriggers:
			s.pauseTriggers(ts)
		case store.ResumeTriggers:
			s.resumeTriggers(ts)
		}
	}
	return nil
}
