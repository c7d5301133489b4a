package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/store"
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
func (s *Server) migrateLegacyForms(ctx context.Context) error {
	jobs, err := s.store.JobList(ctx, &store.JobListParams{})
	if err != nil {
		return fmt.Errorf("server: migrating legacy job settings: %w", err)
	}
	moved := 0
	for i := range jobs {
		ok, err := s.migrateLegacyJob(ctx, jobs[i])
		if err != nil {
			return fmt.Errorf("server: migrating the legacy settings of job %s: %w", jobs[i].Key, err)
		}
		if ok {
			moved++
		}
	}
	triggers, err := s.store.TriggerList(ctx, &store.TriggerListParams{})
	if err != nil {
		return fmt.Errorf("server: migrating legacy run triggers: %w", err)
	}
	retagged := 0
	for i := range triggers {
		ok, err := s.migrateLegacyTrigger(ctx, triggers[i])
		if err != nil {
			return fmt.Errorf("server: migrating legacy run trigger %s: %w", triggers[i].Key, err)
		}
		if ok {
			retagged++
		}
	}
	if moved > 0 || retagged > 0 {
		s.log.Info("moved settings and run facts out of data maps", "jobs", moved, "triggers", retagged)
	}
	return nil
}

// migrateLegacyJob moves the settings of job rec from its data to its
// metadata, and reports whether it did. A job with metadata is in the
// new form already.
func (s *Server) migrateLegacyJob(ctx context.Context, rec store.JobRecord) (bool, error) {
	for range maxMigrateAttempts {
		if len(rec.Meta) > 0 {
			return false, nil
		}
		data, settings, ok := splitLegacy(rec.Data, legacySettingsKey, &jobSettings{})
		if !ok {
			return false, nil
		}
		rec.Data, rec.Meta = data, settings
		err := s.store.JobUpsert(ctx, &store.JobUpsertParams{Job: rec, IfVersion: rec.Version})
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, store.ErrJobNotFound):
			return false, nil
		case !errors.Is(err, store.ErrVersionMismatch):
			return false, err
		}
		cur, err := s.store.JobGet(ctx, rec.Key)
		if errors.Is(err, store.ErrJobNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		rec = *cur
	}
	return false, fmt.Errorf("the job changed under the migration %d times", maxMigrateAttempts)
}

// migrateLegacyTrigger gives trigger rec of a legacy group its origin and
// moves its run facts from its data to its metadata, and reports whether
// it did. It keeps the trigger's timing and its paused state.
func (s *Server) migrateLegacyTrigger(ctx context.Context, rec store.TriggerRecord) (bool, error) {
	origin, legacy := legacyOrigin(rec.Key.Group)
	if !legacy || (rec.Origin != "" && rec.Origin != string(chime.OriginSchedule)) {
		return false, nil
	}
	rec.Origin = string(origin)
	if data, facts, ok := splitLegacy(rec.Data, legacyFactsKey, &runFacts{}); ok && len(rec.Meta) == 0 {
		rec.Data, rec.Meta = data, facts
	}
	paused := rec.State == store.StatePaused || rec.State == store.StatePausedBlocked
	err := s.store.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: rec, Replace: true})
	switch {
	case errors.Is(err, store.ErrJobNotFound):
		return false, nil // deleted meanwhile
	case err != nil:
		return false, err
	}
	if paused {
		if _, err := s.store.TriggersPause(ctx, &store.TriggerSelector{Trigger: &rec.Key}); err != nil {
			return false, err
		}
	}
	return true, nil
}

// splitLegacy takes key out of the JSON object data when its value decodes
// strictly into v, what the server stored under it. It returns the data
// left (nil when empty) and the value.
func splitLegacy(data []byte, key string, v any) (rest, value []byte, ok bool) {
	if len(data) == 0 {
		return nil, nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, nil, false
	}
	raw, found := m[key]
	if !found {
		return nil, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, nil, false
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, nil, false
	}
	delete(m, key)
	if len(m) == 0 {
		return nil, compact.Bytes(), true
	}
	rest, err := json.Marshal(m)
	if err != nil {
		return nil, nil, false
	}
	return rest, compact.Bytes(), true
}
