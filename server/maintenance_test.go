package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/schedule"
)

// jobPaused reports whether the job g/name shows as paused.
func jobPaused(t *testing.T, s *Server, group, name string) bool {
	t.Helper()
	j, err := s.GetJob(t.Context(), group, name)
	if err != nil {
		t.Fatalf("GetJob(%s/%s): %v", group, name, err)
	}
	return j.Paused
}

// wantPaused checks which of the jobs ("group/name") show as paused.
func wantPaused(t *testing.T, s *Server, when string, want map[string]bool) {
	t.Helper()
	for key, paused := range want {
		group, name, _ := strings.Cut(key, "/")
		if got := jobPaused(t, s, group, name); got != paused {
			t.Errorf("%s: job %s paused = %v, want %v", when, key, got, paused)
		}
	}
}

// TestMaintenanceOfEverything checks, on every database, a maintenance
// window on every job: bad input is refused naming its field; the window
// pauses every job, new ones included, and every node reads it; a second
// window is refused; ending it resumes the jobs but not those paused by
// hand, before or during the window; the audit log records both.
func TestMaintenanceOfEverything(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url)
		ctx := t.Context()
		every := []api.Trigger{{Schedule: cronSchedule("0 0 * * * ?")}}
		for _, k := range [][2]string{{"billing", "invoice"}, {"billing", "dunning"}, {"reports", "daily"}, {"reports", "weekly"}} {
			if _, err := s.CreateJob(ctx, "alice", api.Job{Group: k[0], Name: k[1], Type: typeHTTP, HTTP: httpSpec(t, map[string]any{"url": "http://127.0.0.1:1/"}), Triggers: every}); err != nil {
				t.Fatalf("CreateJob(%s/%s): %v", k[0], k[1], err)
			}
		}
		if err := s.PauseJob(ctx, "alice", "billing", "dunning"); err != nil {
			t.Fatalf("PauseJob: %v", err)
		}

		_, err := s.StartMaintenance(ctx, "olga", api.MaintenanceRequest{Reason: "  "})
		wantAPIError(t, err, api.CodeInvalidArgument, "reason")
		_, err = s.StartMaintenance(ctx, "olga", api.MaintenanceRequest{Reason: string(make([]byte, api.MaxMaintenanceReasonLen+1))})
		wantAPIError(t, err, api.CodeInvalidArgument, "reason")
		_, err = s.StartMaintenance(ctx, "olga", api.MaintenanceRequest{Group: "nosuch", Reason: "upgrade"})
		wantAPIError(t, err, api.CodeInvalidArgument, "group")
		err = s.EndMaintenance(ctx, "olga")
		wantAPIError(t, err, api.CodeConflict, "")
		if m, err := s.Maintenance(ctx); err != nil || m.Active {
			t.Fatalf("Maintenance after refused requests = %+v, %v; want none active", m, err)
		}

		before := time.Now().Add(-time.Second)
		m, err := s.StartMaintenance(ctx, "olga", api.MaintenanceRequest{Reason: " database upgrade "})
		if err != nil {
			t.Fatalf("StartMaintenance: %v", err)
		}
		if !m.Active || m.Group != "" || m.Reason != "database upgrade" || m.By != "olga" || m.Since == nil || m.Since.Before(before) {
			t.Errorf("StartMaintenance = %+v, want active on everything, by olga, reason trimmed, since now", m)
		}
		_, err = s.StartMaintenance(ctx, "alice", api.MaintenanceRequest{Group: "reports", Reason: "another"})
		wantAPIError(t, err, api.CodeConflict, "")

		// Another node, or this one restarted, reads the same window.
		other := newServer(t, url)
		if got, err := other.Maintenance(ctx); err != nil || got.Reason != m.Reason || got.By != "olga" || !got.Since.Equal(*m.Since) {
			t.Errorf("another node's Maintenance = %+v, %v; want %+v", got, err, m)
		}

		// A job created during the window starts paused; one paused by
		// hand during it stays paused after.
		if _, err := s.CreateJob(ctx, "alice", api.Job{Group: "reports", Name: "new", Type: typeHTTP, HTTP: httpSpec(t, map[string]any{"url": "http://127.0.0.1:1/"}), Triggers: every}); err != nil {
			t.Fatalf("CreateJob during maintenance: %v", err)
		}
		if err := s.PauseJob(ctx, "alice", "reports", "weekly"); err != nil {
			t.Fatalf("PauseJob during maintenance: %v", err)
		}
		wantPaused(t, s, "during maintenance", map[string]bool{
			"billing/invoice": true, "billing/dunning": true, "reports/daily": true, "reports/weekly": true, "reports/new": true,
		})

		if err := other.EndMaintenance(ctx, "otto"); err != nil {
			t.Fatalf("EndMaintenance: %v", err)
		}
		wantPaused(t, s, "after maintenance", map[string]bool{
			"billing/invoice": false, "billing/dunning": true, "reports/daily": false, "reports/weekly": true, "reports/new": false,
		})
		if m, err := s.Maintenance(ctx); err != nil || m.Active {
			t.Errorf("Maintenance after the end = %+v, %v; want none active", m, err)
		}
		wantAPIError(t, s.EndMaintenance(ctx, "otto"), api.CodeConflict, "")

		audit, err := s.ListAudit(ctx, api.AuditQuery{Target: maintenanceAuditTarget})
		if err != nil {
			t.Fatalf("ListAudit: %v", err)
		}
		var got []string
		for _, e := range audit.Entries {
			got = append(got, e.Actor+" "+e.Action)
		}
		if want := []string{"otto maintenance.end", "olga maintenance.start"}; !slices.Equal(got, want) {
			t.Errorf("audit entries = %v, want %v", got, want)
		}
	})
}

// TestMaintenanceOfOneGroup checks, on every database, that a window on a
// job group pauses that group only, and that its end leaves the group's
// job paused by hand paused.
func TestMaintenanceOfOneGroup(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url)
		ctx := t.Context()
		every := []api.Trigger{{Schedule: cronSchedule("0 0 * * * ?")}}
		for _, k := range [][2]string{{"billing", "invoice"}, {"billing", "dunning"}, {"reports", "daily"}} {
			if _, err := s.CreateJob(ctx, "alice", api.Job{Group: k[0], Name: k[1], Type: typeHTTP, HTTP: httpSpec(t, map[string]any{"url": "http://127.0.0.1:1/"}), Triggers: every}); err != nil {
				t.Fatalf("CreateJob(%s/%s): %v", k[0], k[1], err)
			}
		}
		if err := s.PauseJob(ctx, "alice", "billing", "dunning"); err != nil {
			t.Fatalf("PauseJob: %v", err)
		}
		m, err := s.StartMaintenance(ctx, "olga", api.MaintenanceRequest{Group: "billing", Reason: "ledger migration"})
		if err != nil {
			t.Fatalf("StartMaintenance: %v", err)
		}
		if m.Group != "billing" {
			t.Errorf("StartMaintenance = %+v, want group billing", m)
		}
		wantPaused(t, s, "during maintenance", map[string]bool{"billing/invoice": true, "billing/dunning": true, "reports/daily": false})
		if err := s.EndMaintenance(ctx, "olga"); err != nil {
			t.Fatalf("EndMaintenance: %v", err)
		}
		wantPaused(t, s, "after maintenance", map[string]bool{"billing/invoice": false, "billing/dunning": true, "reports/daily": false})
	})
}

// TestMaintenanceEndAppliesMisfirePolicies checks, on every database, that
// the fire times a maintenance window held back follow each trigger's
// misfire instruction when it ends: IGNORE_MISFIRE_POLICY runs each of
// them, DO_NOTHING none.
func TestMaintenanceEndAppliesMisfirePolicies(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url, func(c *Config) { c.MisfireThreshold = 100 * time.Millisecond })
		ignore, nothing := &recorder{}, &recorder{}
		for typ, r := range map[string]*recorder{"ignore": ignore, "nothing": nothing} {
			if err := s.RegisterJobType(typ, r); err != nil {
				t.Fatalf("RegisterJobType: %v", err)
			}
		}
		start(t, s)
		ctx := t.Context()
		for typ, m := range map[string]schedule.MisfireInstruction{"ignore": schedule.MisfireIgnore, "nothing": schedule.MisfireDoNothing} {
			j := api.Job{Group: "g", Name: typ, Type: typ, Triggers: []api.Trigger{{Schedule: cronSchedule("* * * * * ?"), Misfire: string(m)}}}
			if _, err := s.CreateJob(ctx, "alice", j); err != nil {
				t.Fatalf("CreateJob(%s): %v", typ, err)
			}
		}
		if _, err := s.StartMaintenance(ctx, "olga", api.MaintenanceRequest{Reason: "upgrade"}); err != nil {
			t.Fatalf("StartMaintenance: %v", err)
		}
		// Fire times in (paused, resumed] passed during the window; the
		// second's margin each side keeps out a firing claimed before the
		// pause and one late by less than the misfire threshold.
		paused := time.Now().Add(time.Second)
		resumed := paused.Add(3 * time.Second)
		waitFor(t, "fire times to pass during maintenance", func() bool { return time.Now().After(resumed.Add(time.Second)) })
		if err := s.EndMaintenance(ctx, "olga"); err != nil {
			t.Fatalf("EndMaintenance: %v", err)
		}
		var missed []time.Time
		for at := paused.Truncate(time.Second).Add(time.Second); !at.After(resumed); at = at.Add(time.Second) {
			missed = append(missed, at.UTC())
		}
		held := func(r *recorder) (in []time.Time, after bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, at := range r.times {
				if at.After(paused) && !at.After(resumed) {
					in = append(in, at.UTC())
				}
				after = after || at.After(resumed.Add(time.Second))
			}
			return in, after
		}
		waitFor(t, "both jobs to fire after maintenance", func() bool {
			in, ignoreAfter := held(ignore)
			_, nothingAfter := held(nothing)
			return len(in) >= len(missed) && ignoreAfter && nothingAfter
		})
		in, _ := held(ignore)
		slices.SortFunc(in, time.Time.Compare) // the missed firings run at once, in any order
		if !slices.Equal(in, missed) {
			t.Errorf("IGNORE_MISFIRE_POLICY ran the held-back fire times %v, want %v", in, missed)
		}
		if in, _ := held(nothing); len(in) != 0 {
			t.Errorf("DO_NOTHING ran the held-back fire times %v, want none", in)
		}
	})
}

// TestPausedJobFiringIsVetoed checks, on every database, that a firing of
// a job paused by hand whose triggers were resumed underneath (as in the
// moment between the resume and the pause again that end a maintenance
// window) does not run, and is recorded as not run because paused.
func TestPausedJobFiringIsVetoed(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url)
		r := &recorder{}
		if err := s.RegisterJobType("record", r); err != nil {
			t.Fatalf("RegisterJobType: %v", err)
		}
		start(t, s)
		ctx := t.Context()
		j := api.Job{Group: "g", Name: "held", Type: "record", Triggers: []api.Trigger{{Schedule: cronSchedule("* * * * * ?")}}}
		if _, err := s.CreateJob(ctx, "alice", j); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		if err := s.PauseJob(ctx, "alice", "g", "held"); err != nil {
			t.Fatalf("PauseJob: %v", err)
		}
		resumed := time.Now()
		if err := s.sched.ResumeJob(ctx, chime.NewJobKey("g", "held")); err != nil {
			t.Fatalf("the library's ResumeJob: %v", err)
		}
		target := resumed.UTC().Truncate(time.Second).Add(2 * time.Second)
		waitFor(t, "the firing at "+target.Format(time.RFC3339)+" to be recorded as not run", func() bool {
			ex, err := s.Explain(ctx, "g", "held", target)
			if err != nil {
				t.Fatalf("Explain: %v", err)
			}
			return slices.ContainsFunc(ex.Decisions, func(d api.Decision) bool {
				return d.Kind == "paused" && d.ScheduledTime.Equal(target) && strings.Contains(d.Reason, "the job is paused")
			})
		})
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, at := range r.times {
			if at.After(resumed) {
				t.Errorf("the paused job ran for %s", at)
			}
		}
	})
}

// TestVetoPausedReadsThePausedSetting asks the veto of paused jobs about
// firings of a schedule: it stops the firing of a job whose settings say
// paused (whatever their other fields and their order), and lets run a
// job whose settings do not, or that has none, and a run someone asked
// for.
func TestVetoPausedReadsThePausedSetting(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db")
	meta := func(st jobSettings) json.RawMessage {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name   string
		meta   json.RawMessage
		origin chime.TriggerOrigin
		want   bool
	}{
		{"Paused", meta(jobSettings{Paused: true, Retry: &api.RetryPolicy{MaxAttempts: 2}}), chime.OriginSchedule, true},
		{"PausedLast", json.RawMessage(`{"overlap":"skip","pool":"p","paused":true}`), chime.OriginSchedule, true},
		{"NotPaused", meta(jobSettings{Retry: &api.RetryPolicy{MaxAttempts: 2}}), chime.OriginSchedule, false},
		{"PausedFalse", json.RawMessage(`{"paused":false}`), chime.OriginSchedule, false},
		{"NoSettings", nil, chime.OriginSchedule, false},
		{"AskedFor", meta(jobSettings{Paused: true}), chime.OriginManual, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jc := &chime.JobContext{
				Job:     &chime.JobDetail{Key: chime.NewJobKey("g", tc.name), Type: typeHTTP, Durable: true, Metadata: tc.meta},
				Trigger: &chime.Trigger{Key: chime.NewTriggerKey("g", tc.name), Origin: tc.origin},
				Logger:  quietLogger,
			}
			if got := s.vetoPaused(t.Context(), jc); got != tc.want {
				t.Errorf("vetoPaused(settings %s, origin %s) = %v, want %v", tc.meta, tc.origin, got, tc.want)
			}
		})
	}
}
