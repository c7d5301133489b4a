package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/alert"
)

// switchJob is a Go job type that fails while fail is set and succeeds
// otherwise.
type switchJob struct{ fail atomic.Bool }

func (j *switchJob) Execute(context.Context, *chime.JobContext) error {
	if j.fail.Load() {
		return errors.New("broken on purpose")
	}
	return nil
}

// runAndWait runs the job by hand and waits until the run has finished
// and its alert conditions were applied, returning its execution ID.
func runAndWait(t *testing.T, s *Server, group, name string) string {
	t.Helper()
	acc, err := s.RunJob(t.Context(), "alice", group, name, api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	id := acc.ExecutionIDs[0]
	waitExecution(t, s, id)
	return id
}

// collect returns the alerts the webhook received up to and including
// the first one of kind last.
func (w *webhook) collect(t *testing.T, last alert.Kind) []alert.WebhookPayload {
	t.Helper()
	var out []alert.WebhookPayload
	timeout := time.After(waitTimeout)
	for {
		select {
		case p := <-w.alerts:
			out = append(out, p)
			if p.Kind == last {
				return out
			}
		case <-timeout:
			t.Fatalf("no %s alert within %s; got %+v", last, waitTimeout, out)
		}
	}
}

// TestAfterFailuresCountsTheHistory checks that a job with
// after_failures 3 alerts once, on its third consecutive failed run, that
// later failures of the same streak do not alert again, and that a
// success starts the count over and, with recovered set, sends one
// recovery alert. One node delivers its alerts in order, so the alerts
// received up to the recovery are all the alerts raised before it.
func TestAfterFailuresCountsTheHistory(t *testing.T) {
	t.Parallel()
	hook := newWebhook(t)
	s := newServer(t, dbtest.SQLiteURL(t))
	job := &switchJob{}
	if err := s.RegisterJobType("switch", job); err != nil {
		t.Fatal(err)
	}
	start(t, s)
	if _, err := s.CreateJob(t.Context(), "alice", api.Job{Group: "g", Name: "flaky", Type: "switch",
		Alerts: &api.JobAlerts{Webhooks: []string{hook.URL}, AfterFailures: 3, Recovered: true}}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}

	job.fail.Store(true)
	var ids []string
	for range 5 {
		ids = append(ids, runAndWait(t, s, "g", "flaky"))
	}
	job.fail.Store(false)
	ok := runAndWait(t, s, "g", "flaky")

	got := hook.collect(t, alert.KindRecovered)
	if len(got) != 2 || got[0].Kind != alert.KindFailure || got[0].ExecutionID != ids[2] {
		t.Fatalf("alerts %+v, want a failure about the third run %s, then the recovery", got, ids[2])
	}
	if got[0].Detail != "3 consecutive failed runs (the job alerts after 3)." {
		t.Errorf("failure detail %q", got[0].Detail)
	}
	if got[1].ExecutionID != ok {
		t.Errorf("recovery about %s, want the successful run %s", got[1].ExecutionID, ok)
	}

	// The count starts over: two failures do not alert, the third does.
	job.fail.Store(true)
	for range 2 {
		runAndWait(t, s, "g", "flaky")
	}
	third := runAndWait(t, s, "g", "flaky")
	if p := hook.next(t, alert.KindFailure); p.ExecutionID != third {
		t.Errorf("second streak alerted about %s, want its third run %s", p.ExecutionID, third)
	}
}

// pagerDutyReceiver is a local PagerDuty Events API v2 endpoint.
type pagerDutyReceiver struct {
	*httptest.Server
	events chan pagerDutyEvent
}

// pagerDutyEvent mirrors the documented Events API v2 request.
type pagerDutyEvent struct {
	RoutingKey  string `json:"routing_key"`
	EventAction string `json:"event_action"`
	DedupKey    string `json:"dedup_key"`
	Payload     *struct {
		Summary  string `json:"summary"`
		Source   string `json:"source"`
		Severity string `json:"severity"`
	} `json:"payload"`
}

func newPagerDutyReceiver(t *testing.T) *pagerDutyReceiver {
	t.Helper()
	r := &pagerDutyReceiver{events: make(chan pagerDutyEvent, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev pagerDutyEvent
		if err := json.NewDecoder(req.Body).Decode(&ev); err != nil || ev.RoutingKey == "" || ev.DedupKey == "" {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		r.events <- ev
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *pagerDutyReceiver) next(t *testing.T) pagerDutyEvent {
	t.Helper()
	select {
	case ev := <-r.events:
		return ev
	case <-time.After(waitTimeout):
		t.Fatalf("no PagerDuty event within %s", waitTimeout)
		return pagerDutyEvent{}
	}
}

// TestRecoveredResolvesPagerDuty checks that a failure triggers a
// PagerDuty incident and the first success after it resolves the
// incident with the same dedup_key.
func TestRecoveredResolvesPagerDuty(t *testing.T) {
	t.Parallel()
	pd := newPagerDutyReceiver(t)
	s := newServer(t, dbtest.SQLiteURL(t), func(c *Config) { c.Alert.PagerDutyURL = pd.URL + "/v2/enqueue" })
	job := &switchJob{}
	if err := s.RegisterJobType("switch", job); err != nil {
		t.Fatal(err)
	}
	start(t, s)
	if _, err := s.CreateJob(t.Context(), "alice", api.Job{Group: "g", Name: "paged", Type: "switch",
		Alerts: &api.JobAlerts{PagerDuty: []api.PagerDutyTarget{{RoutingKey: "pd-key", Severity: "critical"}}, Recovered: true}}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	job.fail.Store(true)
	runAndWait(t, s, "g", "paged")
	trig := pd.next(t)
	if trig.EventAction != "trigger" || trig.Payload == nil || trig.Payload.Severity != "critical" || trig.RoutingKey != "pd-key" {
		t.Fatalf("first event %+v, want a critical trigger with the routing key", trig)
	}
	job.fail.Store(false)
	runAndWait(t, s, "g", "paged")
	runAndWait(t, s, "g", "paged") // a second success resolves nothing more
	res := pd.next(t)
	if res.EventAction != "resolve" || res.DedupKey != trig.DedupKey {
		t.Errorf("second event %+v, want resolve with dedup_key %q", res, trig.DedupKey)
	}
	select {
	case ev := <-pd.events:
		t.Errorf("a further event %+v after the resolve", ev)
	default:
	}
}

// TestRunningLongerThanAlertsOnceFromTwoNodes runs the running-longer-than
// sweep of two nodes sharing a database, each many times, while one
// execution runs past its job's threshold: exactly one alert goes out.
func TestRunningLongerThanAlertsOnceFromTwoNodes(t *testing.T) {
	t.Parallel()
	for _, db := range []testDB{{"Postgres", dbtest.PostgresURL}, {"MySQL", dbtest.MySQLURL}} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			url := db.url(t)
			hook := newWebhook(t)
			b := newBlocker()
			var nodes [2]*Server
			var stops [2]func() error
			for i, id := range []string{"node-a", "node-b"} {
				// The sweeps are run by hand below.
				nodes[i] = newServer(t, url, func(c *Config) { c.NodeID, c.DeadManInterval = id, time.Hour })
				if err := nodes[i].RegisterJobType("block", b); err != nil {
					t.Fatal(err)
				}
			}
			for i, n := range nodes {
				stops[i] = start(t, n)
			}
			a := nodes[0]
			if _, err := a.CreateJob(t.Context(), "alice", api.Job{Group: "g", Name: "slow", Type: "block",
				Alerts: &api.JobAlerts{Webhooks: []string{hook.URL}, RunningLongerThan: "100ms"}}); err != nil {
				t.Fatalf("CreateJob: %v", err)
			}
			if _, err := a.RunJob(t.Context(), "alice", "g", "slow", api.RunRequest{}); err != nil {
				t.Fatalf("RunJob: %v", err)
			}
			e := running(t, a, "g", "slow")
			waitFor(t, "the execution to run past 100ms", func() bool { return a.now().Sub(*e.StartedTime) > 200*time.Millisecond })

			var wg sync.WaitGroup
			for _, n := range nodes {
				for range 5 {
					wg.Go(func() {
						if err := n.checkDeadMenOnce(t.Context()); err != nil {
							t.Errorf("checkDeadMenOnce: %v", err)
						}
					})
				}
			}
			wg.Wait()
			close(b.release)
			waitExecution(t, a, e.ID)
			// Stopping delivers what each node queued.
			for _, stop := range stops {
				if err := stop(); err != nil {
					t.Fatalf("stop: %v", err)
				}
			}
			var long []alert.WebhookPayload
			for len(hook.alerts) > 0 {
				if p := <-hook.alerts; p.Kind == alert.KindRunningLong {
					long = append(long, p)
				}
			}
			if len(long) != 1 || long[0].ExecutionID != e.ID {
				t.Fatalf("running-long alerts %+v, want exactly one about %s", long, e.ID)
			}
		})
	}
}

// TestDeadManStateInTheDatabase runs the dead-man checkers of two
// servers on one database, and of a third opened later as a restarted
// node would be: each silent window alerts once in all, and the record
// (watching began, last alert) outlives the servers that wrote it.
func TestDeadManStateInTheDatabase(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		a, b := newServer(t, url), newServer(t, url)
		t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		watches := []alert.DeadManWatch{{JobGroup: "g", JobName: "nightly", Window: time.Hour}}
		count := func(s *Server, at time.Duration) int {
			t.Helper()
			evs, err := s.deadMan.Check(ctx, t0.Add(at), watches)
			if err != nil {
				t.Errorf("Check: %v", err) // not Fatal: it runs on goroutines too
			}
			return len(evs)
		}
		if n := count(a, 0) + count(b, 10*time.Minute); n != 0 {
			t.Fatalf("%d alerts before a window passed", n)
		}
		// b saw the watch later, but watching began when a first saw it.
		// Both check at once, four times each: one claim wins.
		var total atomic.Int64
		var wg sync.WaitGroup
		for _, s := range []*Server{a, b, a, b, a, b, a, b} {
			wg.Go(func() { total.Add(int64(count(s, time.Hour))) })
		}
		wg.Wait()
		if n := total.Load() + int64(count(b, time.Hour+time.Second)); n != 1 {
			t.Errorf("%d alerts for the first silent window from two nodes, want 1", n)
		}
		rec, err := a.alertState.DeadManLoad(ctx, alert.JobKey{Group: "g", Name: "nightly"}, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if !rec.FirstSeen.Equal(t0) || !rec.Base.Equal(t0) || rec.Windows != 1 || !rec.AlertedAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("record %+v, want first seen and base %v, 1 window, alerted at %v", rec, t0, t0.Add(time.Hour))
		}
		// A node started after both: it neither repeats the alert nor
		// misses the next window.
		c := newServer(t, url)
		if n := count(c, 90*time.Minute); n != 0 {
			t.Errorf("a new node repeated the alert of the window (%d)", n)
		}
		if n := count(c, 2*time.Hour) + count(a, 2*time.Hour) + count(b, 2*time.Hour); n != 1 {
			t.Errorf("%d alerts for the second silent window from three nodes, want 1", n)
		}
		// No longer watched: forgotten, so watching again starts over.
		if n := len(must(c.deadMan.Check(ctx, t0.Add(3*time.Hour), nil))); n != 0 {
			t.Fatalf("%d alerts without watches", n)
		}
		rec, err = b.alertState.DeadManLoad(ctx, alert.JobKey{Group: "g", Name: "nightly"}, t0.Add(3*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if !rec.FirstSeen.Equal(t0.Add(3*time.Hour)) || rec.Windows != 0 {
			t.Errorf("record after forgetting %+v, want a new one", rec)
		}
	})
}

// must returns v, failing on err through a panic the test reports.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestFailingMarkClaimsOnce checks the failing mark's claims on each
// database: one of two markers wins, and one of two clearers.
func TestFailingMarkClaimsOnce(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		a, b := newServer(t, url), newServer(t, url)
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		first, err1 := a.alertState.markFailing(ctx, "g", "j", now)
		second, err2 := b.alertState.markFailing(ctx, "g", "j", now)
		if err := errors.Join(err1, err2); err != nil || !first || second {
			t.Fatalf("markFailing = %v, %v (%v), want true then false", first, second, err)
		}
		c1, err1 := b.alertState.clearFailing(ctx, "g", "j")
		c2, err2 := a.alertState.clearFailing(ctx, "g", "j")
		if err := errors.Join(err1, err2); err != nil || !c1 || c2 {
			t.Fatalf("clearFailing = %v, %v (%v), want true then false", c1, c2, err)
		}
		w1, err1 := a.alertState.claim(ctx, "running_long/x", now)
		w2, err2 := b.alertState.claim(ctx, "running_long/x", now)
		if err := errors.Join(err1, err2); err != nil || !w1 || w2 {
			t.Fatalf("claim = %v, %v (%v), want true then false", w1, w2, err)
		}
		if err := a.alertState.pruneClaims(ctx, now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if again, err := b.alertState.claim(ctx, "running_long/x", now); err != nil || !again {
			t.Errorf("claim after pruning = %v, %v, want true", again, err)
		}
	})
}

func TestAlertConditionsValidation(t *testing.T) {
	t.Parallel()
	s := newServer(t, dbtest.SQLiteURL(t))
	tests := []struct {
		name   string
		alerts api.JobAlerts
		field  string
	}{
		{"slack URL", api.JobAlerts{Slack: []string{"https://hooks.slack.com/ok", "hooks.slack.com/x"}}, "alerts.slack[1]"},
		{"teams URL", api.JobAlerts{Teams: []string{"ftp://teams.example.com/x"}}, "alerts.teams[0]"},
		{"routing key", api.JobAlerts{PagerDuty: []api.PagerDutyTarget{{Severity: "error"}}}, "alerts.pagerduty[0].routing_key"},
		{"severity", api.JobAlerts{PagerDuty: []api.PagerDutyTarget{{RoutingKey: "k", Severity: "fatal"}}}, "alerts.pagerduty[0].severity"},
		{"after failures", api.JobAlerts{AfterFailures: -1}, "alerts.after_failures"},
		{"running longer than", api.JobAlerts{RunningLongerThan: "soon"}, "alerts.running_longer_than"},
		{"running longer than zero", api.JobAlerts{RunningLongerThan: "0s"}, "alerts.running_longer_than"},
		{"masked routing key", api.JobAlerts{PagerDuty: []api.PagerDutyTarget{{RoutingKey: "****"}}}, "alerts.pagerduty[0].routing_key"},
		{"slack egress", api.JobAlerts{Slack: []string{"http://169.254.169.254/hook"}}, "alerts.slack[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := s.CreateJob(t.Context(), "alice", api.Job{Group: "g", Name: "v", Type: "http",
				HTTP: httpSpec(t, map[string]any{"url": "https://example.com"}), Alerts: &tt.alerts})
			wantAPIError(t, err, api.CodeInvalidArgument, tt.field)
		})
	}
	if _, err := s.GetJob(t.Context(), "g", "v"); err == nil {
		t.Error("a refused job was stored")
	}
}

// TestDefaultChannelsFromTheSettings sets Slack, Teams and PagerDuty
// defaults through the API and checks that a failing job without
// recipients of its own alerts all three.
func TestDefaultChannelsFromTheSettings(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pd := newPagerDutyReceiver(t)
	chat := make(chan string, 10) // the paths of the Slack and Teams posts
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if _, ok := body["blocks"]; ok && r.URL.Path == "/slack" {
			chat <- "slack"
		}
		if body["type"] == "message" && r.URL.Path == "/teams" {
			chat <- "teams"
		}
	}))
	t.Cleanup(hooks.Close)
	s := newServer(t, dbtest.SQLiteURL(t), func(c *Config) { c.Alert.PagerDutyURL = pd.URL })
	start(t, s)

	err := s.PutAlertSettings(ctx, "admin", api.AlertSettings{DefaultPagerDuty: []api.PagerDutyTarget{{RoutingKey: "k", Severity: "loud"}}})
	wantAPIError(t, err, api.CodeInvalidArgument, "default_pagerduty[0].severity")
	err = s.PutAlertSettings(ctx, "admin", api.AlertSettings{DefaultSlack: []string{"slack.example.com"}})
	wantAPIError(t, err, api.CodeInvalidArgument, "default_slack[0]")
	if err := s.PutAlertSettings(ctx, "admin", api.AlertSettings{
		DefaultSlack: []string{hooks.URL + "/slack"}, DefaultTeams: []string{hooks.URL + "/teams"},
		DefaultPagerDuty: []api.PagerDutyTarget{{RoutingKey: "default-key"}},
	}); err != nil {
		t.Fatalf("PutAlertSettings: %v", err)
	}
	got, err := s.AlertSettings(ctx)
	if err != nil || len(got.DefaultSlack) != 1 || len(got.DefaultTeams) != 1 || len(got.DefaultPagerDuty) != 1 ||
		got.DefaultPagerDuty[0].RoutingKey != "default-key" {
		t.Fatalf("AlertSettings = %+v, %v; want the defaults just set", got, err)
	}
	if _, err := s.CreateJob(ctx, "alice", api.Job{Group: "g", Name: "down", Type: "http",
		HTTP: httpSpec(t, map[string]any{"url": newEndpoint(t, 500).URL})}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	runAndWait(t, s, "g", "down")
	if ev := pd.next(t); ev.RoutingKey != "default-key" || ev.EventAction != "trigger" || ev.Payload.Severity != "error" {
		t.Errorf("PagerDuty event %+v, want a trigger with the default key and severity error", ev)
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case c := <-chat:
			seen[c] = true
		case <-time.After(waitTimeout):
			t.Fatalf("chat posts %v, want slack and teams", seen)
		}
	}
}

func TestConfiguredChatDefaultsAreChecked(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		cfg   alert.Config
		field string
	}{
		{"slack", alert.Config{DefaultSlack: []string{"hooks.slack.com/x"}}, "Alert.DefaultSlack[0]"},
		{"pagerduty", alert.Config{DefaultPagerDuty: []alert.PagerDutyTarget{{Severity: "error"}}}, "Alert.DefaultPagerDuty[0].routing_key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(t.Context(), Config{DatabaseURL: dbtest.SQLiteURL(t), Logger: quietLogger, Alert: tt.cfg})
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("New = %v, want ErrInvalidConfig naming %s", err, tt.field)
			}
		})
	}
}
