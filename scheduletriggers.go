package chime

import (
	"context"
	"errors"
	"fmt"

	"github.com/chime-scheduler/chime/store"
)

// ScheduleTriggersOptions are options of ScheduleTriggers.
type ScheduleTriggersOptions struct {
	// SkipExisting leaves a trigger whose key is taken as it is and stores
	// the others, instead of failing the call with ErrTriggerExists. Use
	// it for triggers whose key names the work they do (a one-shot
	// trigger per task of a workflow, say), so that making them twice is
	// harmless.
	SkipExisting bool
}

// ScheduleTriggers adds triggers for stored jobs in one atomic step:
// either every trigger is stored, or, on any error, none (but those
// SkipExisting leaves as they are). It is Schedule for many triggers at
// once: SQL stores write the batch in one commit, which costs the
// database a fraction of one Schedule per trigger. Use it to fire many
// stored jobs at once, with one-shot triggers, or to gather the triggers
// of many requests into one write.
//
// Each trigger is validated as Schedule validates its argument; a
// *ValidationError names it by its index, as in "triggers[3].Key.Name".
// Two triggers with one key are refused. A job that does not exist fails
// the whole call with ErrJobNotFound, a calendar that does not exist with
// ErrCalendarNotFound, and a trigger key that is taken with
// ErrTriggerExists unless opts.SkipExisting; the error names the key. It
// returns the keys of the triggers it stored, in the order of triggers,
// and listeners hear of each (EventJobScheduled) once they are stored.
func (s *Scheduler) ScheduleTriggers(ctx context.Context, triggers []Trigger, opts *ScheduleTriggersOptions) ([]TriggerKey, error) {
	if len(triggers) == 0 {
		return nil, nil
	}
	p := &store.TriggersInsertParams{Triggers: make([]store.TriggerRecord, 0, len(triggers))}
	if opts != nil {
		p.SkipExisting = opts.SkipExisting
	}
	seen := make(map[store.Key]int, len(triggers))
	for i, t := range triggers {
		rec, err := s.triggerRecord(ctx, t)
		if err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				return nil, ve.underIndex("triggers", i)
			}
			return nil, fmt.Errorf("chime: triggers[%d]: %w", i, err)
		}
		if first, dup := seen[rec.Key]; dup {
			return nil, &ValidationError{Field: fmt.Sprintf("triggers[%d].Key", i), Reason: fmt.Sprintf("%s is also the key of triggers[%d]", rec.Key, first)}
		}
		seen[rec.Key] = i
		p.Triggers = append(p.Triggers, rec)
	}
	stored, err := s.store.TriggersInsert(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("chime: schedule %d triggers: %w", len(triggers), err)
	}
	jobOf := make(map[store.Key]store.Key, len(p.Triggers))
	for _, rec := range p.Triggers {
		jobOf[rec.Key] = rec.JobKey
	}
	keys := make([]TriggerKey, 0, len(stored))
	for _, k := range stored {
		tk := triggerKeyOf(k)
		keys = append(keys, tk)
		s.emit(SchedulerEvent{Type: EventJobScheduled, JobKey: jobKeyOf(jobOf[k]), TriggerKey: tk})
	}
	if len(stored) > 0 {
		s.engine.Wake()
	}
	return keys, nil
}
