package server

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/store"
)

// A fixed-delay trigger is created through the API, served back in the
// same form, and stored with its re-arm delay, on every database.
func TestPutJobWithAFixedDelaySchedule(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		j := httpJob(t, "sync", "mirror", "https://example.com/sync")
		j.Triggers = []api.Trigger{{Name: "after-each", StartTime: &start,
			Schedule: json.RawMessage(`{"kind":"fixed_delay","delay":"1m30s"}`)}}
		if _, _, err := s.PutJob(ctx, "alice", j, 0, nil); err != nil {
			t.Fatalf("PutJob: %v", err)
		}
		got, err := s.GetJob(ctx, "sync", "mirror")
		if err != nil {
			t.Fatalf("GetJob: %v", err)
		}
		if len(got.Triggers) != 1 {
			t.Fatalf("triggers %+v, want one", got.Triggers)
		}
		tr := got.Triggers[0]
		if string(tr.Schedule) != `{"kind":"fixed_delay","delay":"1m30s"}` {
			t.Errorf("schedule served as %s", tr.Schedule)
		}
		if tr.NextFireTime == nil || !tr.NextFireTime.Equal(start) {
			t.Errorf("next fire time %v, want the start time %s", tr.NextFireTime, start)
		}
		rec, err := s.store.TriggerGet(ctx, store.Key{Group: "sync", Name: "after-each"})
		if err != nil {
			t.Fatalf("TriggerGet: %v", err)
		}
		if rec.Kind != "fixed_delay" || rec.RearmDelay != 90*time.Second {
			t.Errorf("stored kind %q, re-arm delay %s; want fixed_delay, 1m30s", rec.Kind, rec.RearmDelay)
		}

		// Put back as served: nothing changes.
		again, _, err := s.PutJob(ctx, "alice", j, got.Version, nil)
		if err != nil || again.Version != got.Version {
			t.Errorf("PutJob of the same job: version %d, %v; want %d unchanged", again.Version, err, got.Version)
		}
	})
}
