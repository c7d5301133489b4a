package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
)

// httpJob returns an http job against url with one cron trigger.
func httpJob(t *testing.T, group, name, url string) api.Job {
	t.Helper()
	return api.Job{
		Group: group, Name: name, Type: "http",
		HTTP:     httpSpec(t, map[string]any{"url": url}),
		Triggers: []api.Trigger{{Schedule: cronSchedule("0 0 2 * * ?")}},
	}
}

func TestPutJobVersionsAndReconciliation(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		j := httpJob(t, "reports", "nightly", "https://example.com/run")

		got, created, err := s.PutJob(ctx, "alice", j, 0, nil)
		if err != nil || !created {
			t.Fatalf("PutJob of a new job = created %v, %v; want created", created, err)
		}
		v1 := got.Version
		if v1 <= 0 || len(got.Triggers) != 1 || got.Triggers[0].Name != "nightly-0" || got.Triggers[0].NextFireTime == nil {
			t.Fatalf("stored job = %+v, want a version and trigger nightly-0 with a next fire time", got)
		}

		again, created, err := s.PutJob(ctx, "alice", j, v1, nil)
		if err != nil || created || again.Version != v1 {
			t.Fatalf("PutJob of the same job = version %d created %v, %v; want version %d unchanged", again.Version, created, err, v1)
		}

		j.Description = "every night"
		j.Triggers = append(j.Triggers, api.Trigger{Name: "noon", Schedule: cronSchedule("0 0 12 * * ?")})
		updated, _, err := s.PutJob(ctx, "alice", j, v1, nil)
		if err != nil {
			t.Fatalf("PutJob with the current version: %v", err)
		}
		if updated.Version <= v1 || updated.Description != "every night" || len(updated.Triggers) != 2 {
			t.Fatalf("updated job = %+v, want a newer version, the description and two triggers", updated)
		}

		stale := j
		stale.Description = "stale edit"
		_, _, err = s.PutJob(ctx, "bob", stale, v1, nil)
		wantAPIError(t, err, api.CodeVersionMismatch, "")
		if cur, _ := s.GetJob(ctx, "reports", "nightly"); cur.Version != updated.Version || cur.Description != "every night" {
			t.Fatalf("a refused PutJob changed the job: %+v", cur)
		}

		j.Triggers = j.Triggers[1:] // drop nightly-0
		reconciled, _, err := s.PutJob(ctx, "alice", j, 0, nil)
		if err != nil {
			t.Fatalf("PutJob without a precondition: %v", err)
		}
		if len(reconciled.Triggers) != 1 || reconciled.Triggers[0].Name != "noon" {
			t.Fatalf("triggers after dropping one = %+v, want only noon", reconciled.Triggers)
		}

		_, err = s.CreateJob(ctx, "alice", j)
		wantAPIError(t, err, api.CodeConflict, "")

		missing := httpJob(t, "reports", "missing", "https://example.com")
		_, _, err = s.PutJob(ctx, "alice", missing, 3, nil)
		wantAPIError(t, err, api.CodeVersionMismatch, "")
		_, err = s.GetJob(ctx, "reports", "missing")
		wantAPIError(t, err, api.CodeNotFound, "")

		other := httpJob(t, "reports", "other", "https://example.com")
		other.Triggers[0].Name = "noon"
		_, err = s.CreateJob(ctx, "alice", other)
		wantAPIError(t, err, api.CodeConflict, "triggers[0].name")
	})
}

func TestBadInputIsRefusedNamingTheFieldAndChangesNothing(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", func(c *Config) { c.MaxJobDataBytes = 4096 })
	ctx := t.Context()
	base := httpJob(t, "g", "existing", "https://example.com")
	stored, err := s.CreateJob(ctx, "alice", base)
	if err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	tests := []struct {
		name  string
		edit  func(j *api.Job)
		code  api.ErrorCode
		field string
	}{
		{"bad cron", func(j *api.Job) { j.Triggers[0].Schedule = cronSchedule("0 0 25 * * ?") }, api.CodeInvalidArgument, "triggers[0].schedule.expression"},
		{"unknown zone", func(j *api.Job) {
			j.Triggers[0].Schedule = json.RawMessage(`{"kind":"cron","expression":"0 0 2 * * ?","time_zone":"Mars/Olympus"}`)
		}, api.CodeInvalidArgument, "triggers[0].schedule.time_zone"},
		{"unknown schedule field", func(j *api.Job) {
			j.Triggers[0].Schedule = json.RawMessage(`{"kind":"cron","expresion":"0 0 2 * * ?"}`)
		}, api.CodeInvalidArgument, "triggers[0].schedule.expresion"},
		{"missing schedule", func(j *api.Job) { j.Triggers[0].Schedule = nil }, api.CodeInvalidArgument, "triggers[0].schedule"},
		{"interval as a number", func(j *api.Job) {
			j.Triggers[0].Schedule = json.RawMessage(`{"kind":"simple","interval":5}`)
		}, api.CodeInvalidArgument, "triggers[0].schedule.interval"},
		{"interval not a duration", func(j *api.Job) {
			j.Triggers[0].Schedule = json.RawMessage(`{"kind":"simple","interval":"5 minutes"}`)
		}, api.CodeInvalidArgument, "triggers[0].schedule.interval"},
		{"count without interval", func(j *api.Job) {
			j.Triggers[0].Schedule = json.RawMessage(`{"kind":"simple","repeat_count":3}`)
		}, api.CodeInvalidArgument, "triggers[0].schedule.interval"},
		{"misplaced schedule field", func(j *api.Job) {
			j.Triggers[0].Schedule = json.RawMessage(`{"kind":"simple","interval":"5s","time_zone":"UTC"}`)
		}, api.CodeInvalidArgument, "triggers[0].schedule.time_zone"},
		{"upper-case kind", func(j *api.Job) {
			j.Triggers[0].Schedule = json.RawMessage(`{"kind":"CRON","expression":"0 0 2 * * ?"}`)
		}, api.CodeInvalidArgument, "triggers[0].schedule.kind"},
		{"bad misfire", func(j *api.Job) { j.Triggers[0].Misfire = "SOMETIMES" }, api.CodeInvalidArgument, "triggers[0].misfire"},
		{"unknown calendar", func(j *api.Job) { j.Triggers[0].Calendar = "holidays" }, api.CodeInvalidArgument, "triggers[0].calendar"},
		{"duplicate trigger name", func(j *api.Job) {
			j.Triggers[0].Name = "daily"
			j.Triggers = append(j.Triggers, api.Trigger{Name: "daily", Schedule: cronSchedule("0 0 3 * * ?")})
		}, api.CodeInvalidArgument, "triggers[1].name"},
		{"trigger name ends with a space", func(j *api.Job) { j.Triggers[0].Name = "daily " }, api.CodeInvalidArgument, "triggers[0].name"},
		{"trigger priority beyond 32 bits", func(j *api.Job) {
			j.Triggers = append(j.Triggers, api.Trigger{Name: "high", Priority: 1 << 31, Schedule: cronSchedule("0 0 3 * * ?")})
		}, api.CodeInvalidArgument, "triggers[1].priority"},
		{"end time in 9999", func(j *api.Job) {
			j.Triggers = append(j.Triggers, api.Trigger{Name: "forever", Schedule: cronSchedule("0 0 3 * * ?"),
				EndTime: new(time.Date(9999, time.December, 31, 0, 0, 0, 0, time.UTC))})
		}, api.CodeInvalidArgument, "triggers[1].end_time"},
		{"start time before 1677", func(j *api.Job) {
			j.Triggers[0].StartTime = new(time.Date(1600, time.January, 1, 0, 0, 0, 0, time.UTC))
		}, api.CodeInvalidArgument, "triggers[0].start_time"},
		{"first fire time before the earliest instant", func(j *api.Job) {
			j.Triggers[0].Schedule = json.RawMessage(`{"kind":"once"}`)
			j.Triggers[0].StartTime = new(chime.EarliestTime())
		}, api.CodeInvalidArgument, "triggers[0].start_time"},
		{"unknown type", func(j *api.Job) { j.Type = "ftp" }, api.CodeInvalidArgument, "type"},
		{"shell disabled", func(j *api.Job) {
			j.Type, j.HTTP, j.Shell = "shell", nil, json.RawMessage(`{"argv":["true"]}`)
		}, api.CodeInvalidArgument, "type"},
		{"http missing", func(j *api.Job) { j.HTTP = nil }, api.CodeInvalidArgument, "http"},
		{"http bad url", func(j *api.Job) { j.HTTP = json.RawMessage(`{"url":"ftp://example.com"}`) }, api.CodeInvalidArgument, "http.url"},
		{"http unknown field", func(j *api.Job) { j.HTTP = json.RawMessage(`{"url":"https://example.com","verb":"GET"}`) }, api.CodeInvalidArgument, "http.verb"},
		{"oversized data", func(j *api.Job) { j.Data = map[string]any{"blob": strings.Repeat("x", 5000)} }, api.CodeInvalidArgument, "data"},
		{"bad timeout", func(j *api.Job) { j.Timeout = "soon" }, api.CodeInvalidArgument, "timeout"},
		{"bad retry", func(j *api.Job) { j.Retry = &api.RetryPolicy{MaxAttempts: 0} }, api.CodeInvalidArgument, "retry.max_attempts"},
		{"bad backoff", func(j *api.Job) { j.Retry = &api.RetryPolicy{MaxAttempts: 2, Backoff: "linear"} }, api.CodeInvalidArgument, "retry.backoff"},
		{"bad overlap", func(j *api.Job) { j.Overlap = "sometimes" }, api.CodeInvalidArgument, "overlap"},
		{"bad alert address", func(j *api.Job) { j.Alerts = &api.JobAlerts{Emails: []string{"not an address"}} }, api.CodeInvalidArgument, "alerts.emails"},
		{"name with slash", func(j *api.Job) { j.Name = "a/b" }, api.CodeInvalidArgument, "name"},
		{"trigger of another job", func(j *api.Job) { j.Triggers[0].Name = "existing-0" }, api.CodeConflict, "triggers[0].name"},
	}
	// These rows are about a new job's key: they do not apply to an update
	// of the existing job.
	newOnly := map[string]bool{"name with slash": true, "trigger of another job": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := httpJob(t, "g", "new", "https://example.com")
			tt.edit(&j)
			_, err := s.CreateJob(ctx, "alice", j)
			wantAPIError(t, err, tt.code, tt.field)
			_, _, err = s.PutJob(ctx, "alice", j, 0, nil)
			wantAPIError(t, err, tt.code, tt.field)
			if _, err := s.GetJob(ctx, "g", "new"); err == nil {
				t.Fatal("a refused job was stored")
			}
			if newOnly[tt.name] {
				return
			}
			edited := base
			edited.Triggers = append([]api.Trigger(nil), base.Triggers...)
			tt.edit(&edited)
			_, _, err = s.PutJob(ctx, "alice", edited, 0, nil)
			wantAPIError(t, err, tt.code, tt.field)
			cur, err := s.GetJob(ctx, "g", "existing")
			if err != nil {
				t.Fatalf("GetJob: %v", err)
			}
			if cur.Version != stored.Version || string(cur.HTTP) != string(stored.HTTP) || len(cur.Triggers) != 1 {
				t.Fatalf("a refused update changed the job: %+v", cur)
			}
		})
	}
}

// TestDataHasNoReservedKeys stores a job whose data uses the keys the
// server once kept its settings and run facts under: they are the user's
// data, kept and shown as such, and the settings are the job's own.
func TestDataHasNoReservedKeys(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		j := httpJob(t, "reports", "keys", "https://example.com/run")
		j.Retry = &api.RetryPolicy{MaxAttempts: 2}
		j.Data = map[string]any{"chime:server": map[string]any{"retry": map[string]any{"max_attempts": 9}}, "chime:run": "x"}
		if _, err := s.CreateJob(ctx, "alice", j); err != nil {
			t.Fatalf("CreateJob with chime:server and chime:run data keys: %v", err)
		}
		got, err := s.GetJob(ctx, "reports", "keys")
		if err != nil {
			t.Fatalf("GetJob: %v", err)
		}
		want, _ := json.Marshal(j.Data)
		have, _ := json.Marshal(got.Data)
		if string(have) != string(want) || got.Retry == nil || got.Retry.MaxAttempts != 2 {
			t.Errorf("stored job = data %s retry %+v, want data %s and the job's own retry of 2 attempts", have, got.Retry, want)
		}
		d, err := s.sched.Job(ctx, chime.NewJobKey("reports", "keys"))
		if err != nil {
			t.Fatal(err)
		}
		if st, err := settingsOf(d); err != nil || st.Retry == nil || st.Retry.MaxAttempts != 2 {
			t.Errorf("settings in the job's metadata = %+v, %v; want the retry of 2 attempts", st, err)
		}
	})
}
