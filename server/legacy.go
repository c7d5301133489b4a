package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/chime-scheduler/chime"
)

// Before jobs had metadata and triggers origins, the server kept a job's
// settings in its data map under the key legacySettingsKey, and the facts
// of a run it asked for in its one-shot trigger's data map under
// legacyFactsKey; the trigger's group told what made it. These names
// appear nowhere but here, where the rows stored that way are moved to
// the new form.
const (
	legacySettingsKey = "chime:server"
	legacyFactsKey    = "chime:run"
)

// legacyOrigin returns the origin a trigger group stood for, and false
// for a group of schedules.
func legacyOrigin(group string) (chime.TriggerOrigin, bool) {
	switch group {
	case chime.ManualTriggerGroup:
		return chime.OriginManual, true
	case retryGroup:
		return chime.OriginRetry, true
	case backfillGroup:
		return chime.OriginBackfill, true
	}
	return chime.OriginSchedule, false
}

// maxMigrateAttempts bounds the rewrites of one job that others change
// meanwhile.
const maxMigrateAttempts = 5

// migrateLegacyForms moves what older servers stored in data maps to
// where it is kept now: a job's settings to its metadata, a one-shot
// trigger's run facts to its metadata, with the origin its group stood
// for. It runs at every start and changes only rows still in the old
// form, so it is idempotent, and it runs safely on many nodes at once: a
// job is rewritten only at the version read, and a trigger rewritten
// twice is rewritten alike. A data map value that does not decode as
// what the server stored is left alone, as the user's data.
//
// The jobs are read a page of pageSize at a time, so that a start holds
// no more than a page of them in memory however many are stored.
func (s *Server) migrateLegacyForms(ctx context.Context, pageSize int) error {
	moved := 0
	err := s.eachJob(ctx, "", pageSize, func(d *chime.JobDetail) error {
		ok, err := s.migrateLegacyJob(ctx, d)
		if err != nil {
			return fmt.Errorf("of job %s: %w", d.Key, err)
		}
		if ok {
			moved++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("server: migrating legacy job settings: %w", err)
	}
	retagged := 0
	for _, group := range []string{chime.ManualTriggerGroup, retryGroup, backfillGroup} {
		triggers, err := s.sched.Triggers(ctx, &chime.TriggerFilter{Group: group})
		if err != nil {
			return fmt.Errorf("server: migrating legacy run triggers: %w", err)
		}
		for i := range triggers {
			ok, err := s.migrateLegacyTrigger(ctx, &triggers[i])
			if err != nil {
				return fmt.Errorf("server: migrating legacy run trigger %s: %w", triggers[i].Key, err)
			}
			if ok {
				retagged++
			}
		}
	}
	if moved > 0 || retagged > 0 {
		s.log.Info("moved settings and run facts out of data maps", "jobs", moved, "triggers", retagged)
	}
	return nil
}

// migrateLegacyJob moves the settings of job d from its data to its
// metadata, and reports whether it did. A job with metadata is in the
// new form already, and a job that is not durable is no server's.
func (s *Server) migrateLegacyJob(ctx context.Context, d *chime.JobDetail) (bool, error) {
	for range maxMigrateAttempts {
		if len(d.Metadata) > 0 || !d.Durable {
			return false, nil
		}
		data, settings, ok := splitLegacy(d.Data, legacySettingsKey, &jobSettings{})
		if !ok {
			return false, nil
		}
		moved := *d
		moved.Data, moved.Metadata = data, settings
		err := s.sched.AddJob(ctx, moved, &chime.AddJobOptions{IfVersion: d.Version})
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, chime.ErrJobNotFound):
			return false, nil
		case !errors.Is(err, chime.ErrVersionMismatch):
			return false, err
		}
		cur, err := s.sched.Job(ctx, d.Key)
		if errors.Is(err, chime.ErrJobNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		d = cur
	}
	return false, fmt.Errorf("the job changed under the migration %d times", maxMigrateAttempts)
}

// migrateLegacyTrigger gives trigger t of a legacy group its origin and
// moves its run facts from its data to its metadata, and reports whether
// it did. It keeps the trigger's timing and its paused state.
func (s *Server) migrateLegacyTrigger(ctx context.Context, t *chime.TriggerInfo) (bool, error) {
	origin, legacy := legacyOrigin(t.Key.Group)
	if !legacy || t.Origin != chime.OriginSchedule {
		return false, nil
	}
	moved := t.Trigger
	moved.Origin = origin
	if data, facts, ok := splitLegacy(t.Data, legacyFactsKey, &runFacts{}); ok && len(t.Metadata) == 0 {
		moved.Data, moved.Metadata = data, facts
	}
	_, err := s.sched.Reschedule(ctx, t.Key, moved)
	switch {
	case errors.Is(err, chime.ErrTriggerNotFound), errors.Is(err, chime.ErrJobNotFound):
		return false, nil // deleted meanwhile
	case err != nil:
		return false, err
	}
	if t.State == chime.TriggerPaused {
		if err := s.sched.PauseTrigger(ctx, t.Key); err != nil {
			return false, err
		}
	}
	return true, nil
}

// splitLegacy takes key out of data when its value decodes strictly into
// v, what the server stored under it. It returns the data left (nil when
// empty) and the value as compact JSON.
func splitLegacy(data chime.JobData, key string, v any) (rest chime.JobData, value json.RawMessage, ok bool) {
	stored, found := data[key]
	if !found {
		return nil, nil, false
	}
	raw, err := json.Marshal(stored)
	if err != nil {
		return nil, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, nil, false
	}
	if len(data) == 1 {
		return nil, raw, true
	}
	rest = maps.Clone(data)
	delete(rest, key)
	return rest, raw, true
}
