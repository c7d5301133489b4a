package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/alert"
)

// TestEndToEnd runs a node with scheduled http jobs: one that succeeds and
// one that fails and alerts, and reads the history, the status and the
// metrics.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		hook := newWebhook(t)
		ok, broken := newEndpoint(t, 200), newEndpoint(t, 500)
		s := newServer(t, url, func(c *Config) { c.Alert.DefaultWebhooks = []string{hook.URL} })
		start(t, s)
		every := []api.Trigger{{Schedule: cronSchedule("* * * * * ?")}}
		for _, j := range []api.Job{
			{Group: "web", Name: "ping", Type: "http", HTTP: httpSpec(t, map[string]any{"url": ok.URL + "/ping"}), Triggers: every},
			{Group: "web", Name: "broken", Type: "http", HTTP: httpSpec(t, map[string]any{"url": broken.URL}), Triggers: every},
		} {
			if _, err := s.CreateJob(ctx, "alice", j); err != nil {
				t.Fatalf("CreateJob(%s): %v", j.Name, err)
			}
		}

		var ran api.Execution
		waitFor(t, "a scheduled run of web/ping in the history", func() bool {
			list, err := s.ListExecutions(ctx, api.ExecutionQuery{JobGroup: "web", JobName: "ping", Outcomes: []string{"succeeded"}})
			if err != nil || len(list.Executions) == 0 {
				return false
			}
			ran = list.Executions[0]
			return true
		})
		if ran.TriggerName != "ping-0" || ran.Manual || ran.NodeID != s.NodeID() || ran.ScheduledTime.Nanosecond() != 0 {
			t.Errorf("scheduled run = %+v, want a run of trigger ping-0 at a whole second on this node", ran)
		}
		if p := hook.next(t, alert.KindFailure); p.Job.Name != "broken" || !strings.Contains(p.Error, "500") {
			t.Errorf("failure alert = %+v, want one about web/broken's 500", p)
		}
		job, err := s.GetJob(ctx, "web", "broken")
		if err != nil {
			t.Fatalf("GetJob: %v", err)
		}
		if st := job.Status; st == nil || !st.Failing || st.LastRun == nil || st.NextFireTime == nil {
			t.Errorf("status of the failing job = %+v, want failing with a last run and a next fire time", st)
		}
		failing, err := s.ListJobs(ctx, api.JobQuery{Failing: true})
		if err != nil || len(failing.Jobs) != 1 || failing.Jobs[0].Name != "broken" {
			t.Errorf("ListJobs(failing) = %+v, %v; want web/broken only", failing, err)
		}

		srv := httptest.NewServer(s.Handler())
		defer srv.Close()
		for path, want := range map[string]string{
			"/healthz": "",
			"/readyz":  "",
			"/metrics": `chime_executions_total{outcome="succeeded"}`,
		} {
			resp, err := http.Get(srv.URL + path)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
				t.Errorf("GET %s = %d %.300s, want 200 with %q", path, resp.StatusCode, body, want)
			}
		}
		for _, m := range []string{"chime_fire_lag_seconds_bucket", "chime_claim_duration_seconds_bucket", "chime_live_nodes", "chime_clock_offset_seconds", "chime_fires_total"} {
			resp, err := http.Get(srv.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), m) {
				t.Errorf("/metrics has no %s", m)
			}
		}
		// Stop the schedules, so the test ends on a quiet node.
		for _, name := range []string{"ping", "broken"} {
			if err := s.PauseJob(ctx, "alice", "web", name); err != nil {
				t.Fatalf("PauseJob: %v", err)
			}
		}
	})
}
