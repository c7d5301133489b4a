package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/logtest"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/history"
)

func TestRunNowWithParams(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		start(t, s)
		ep := newEndpoint(t, 200)
		j := api.Job{
			Group: "deploy", Name: "hook", Type: "http",
			HTTP: httpSpec(t, map[string]any{
				"method": "POST",
				"url":    ep.URL + "/deploy?region={{urlquery .Params.region}}",
				"body":   `{"job":{{json .JobName}},"attempt":{{.Attempt}},"env":{{json .Params.env}}}`,
			}),
			Data: map[string]any{"env": "prod", "region": "eu"},
		}
		if _, err := s.CreateJob(ctx, "alice", j); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		acc, err := s.RunJob(ctx, "alice", "deploy", "hook", api.RunRequest{Params: map[string]any{"region": "us-east"}})
		if err != nil || acc.Count != 1 || len(acc.ExecutionIDs) != 1 {
			t.Fatalf("RunJob = %+v, %v; want one execution", acc, err)
		}
		e := waitExecution(t, s, acc.ExecutionIDs[0])
		if e.Outcome != "succeeded" || !e.Manual || e.Attempt != 1 || e.FirstID != e.ID {
			t.Fatalf("execution = %+v, want a succeeded manual first attempt", e)
		}
		if e.Params["region"] != "us-east" || e.Params["env"] != "prod" {
			t.Errorf("recorded params = %v, want region us-east over the job's env prod", e.Params)
		}
		if !strings.Contains(e.Output, "200") || !strings.Contains(e.Output, "hello from the endpoint") {
			t.Errorf("recorded output = %q, want the status line and the body", e.Output)
		}
		if ep.count() != 1 {
			t.Fatalf("endpoint got %d requests, want 1", ep.count())
		}
		if got := ep.request(0).URL.Query().Get("region"); got != "us-east" {
			t.Errorf("request region = %q, want us-east", got)
		}
		if want := `{"job":"hook","attempt":1,"env":"prod"}`; ep.bodies[0] != want {
			t.Errorf("request body = %s, want %s", ep.bodies[0], want)
		}
		_, err = s.RunJob(ctx, "alice", "deploy", "nope", api.RunRequest{})
		wantAPIError(t, err, api.CodeNotFound, "")
		// The keys the server once kept its facts under are a user's to
		// use: parameters are only data.
		acc, err = s.RunJob(ctx, "alice", "deploy", "hook", api.RunRequest{Params: map[string]any{"chime:run": "mine", "chime:server": 1}})
		if err != nil {
			t.Fatalf("RunJob with chime:run and chime:server parameters: %v", err)
		}
		e = waitExecution(t, s, acc.ExecutionIDs[0])
		if e.Outcome != "succeeded" || !e.Manual || e.Params["chime:run"] != "mine" || e.Params["chime:server"] != json.Number("1") {
			t.Errorf("execution = %+v, want a succeeded manual run with the parameters chime:run and chime:server", e)
		}
	})
}

// recorder is a Go job type that records the scheduled times it ran for.
type recorder struct {
	mu    sync.Mutex
	times []time.Time
	data  []chime.JobData
}

func (r *recorder) Execute(_ context.Context, jc *chime.JobContext) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.times = append(r.times, jc.ScheduledFireTime)
	r.data = append(r.data, jc.MergedData)
	jc.Logger.Info("recorded", "n", len(r.times))
	return nil
}

func TestBackfillRunsOncePerFireTimeInTheRange(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		rec := &recorder{}
		if err := s.RegisterJobType("record", rec); err != nil {
			t.Fatalf("RegisterJobType: %v", err)
		}
		start(t, s)
		j := api.Job{Group: "etl", Name: "hourly", Type: "record", Data: map[string]any{"table": "orders"},
			Triggers: []api.Trigger{{Schedule: cronSchedule("0 0 * * * ?")}}}
		if _, err := s.CreateJob(ctx, "alice", j); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		from := time.Date(2024, 5, 1, 0, 30, 0, 0, time.UTC)
		acc, err := s.Backfill(ctx, "alice", "etl", "hourly", api.BackfillRequest{From: from, To: from.Add(3 * time.Hour)})
		if err != nil || acc.Count != 3 {
			t.Fatalf("Backfill = %+v, %v; want 3 runs", acc, err)
		}
		want := []time.Time{from.Add(30 * time.Minute), from.Add(90 * time.Minute), from.Add(150 * time.Minute)}
		got := make(map[time.Time]bool)
		for _, id := range acc.ExecutionIDs {
			e := waitExecution(t, s, id)
			if e.Outcome != "succeeded" || e.TriggerName != "hourly-0" || !e.Manual {
				t.Errorf("backfilled execution = %+v, want succeeded for trigger hourly-0", e)
			}
			if len(e.Logs) == 0 || e.Logs[0].Message != "recorded" {
				t.Errorf("execution logs = %+v, want the job's log line", e.Logs)
			}
			got[e.ScheduledTime.UTC()] = true
		}
		for _, w := range want {
			if !got[w] {
				t.Errorf("no backfilled run for %s; got %v", w, got)
			}
		}
		rec.mu.Lock()
		for _, d := range rec.data {
			if len(d) != 1 || d["table"] != "orders" {
				t.Errorf("the Go job saw data %v, want its own data without the server's settings", d)
			}
		}
		rec.mu.Unlock()
		_, err = s.Backfill(ctx, "alice", "etl", "hourly", api.BackfillRequest{From: from, To: from.Add(2000 * time.Hour)})
		wantAPIError(t, err, api.CodeInvalidArgument, "to")
		_, err = s.Backfill(ctx, "alice", "etl", "hourly", api.BackfillRequest{From: from, To: from.Add(time.Hour), Trigger: "nope"})
		wantAPIError(t, err, api.CodeInvalidArgument, "trigger")
	})
}

func TestRetriesAreLinkedAndTheFinalFailureAlerts(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		hook := newWebhook(t)
		s := newServer(t, url)
		start(t, s)
		if err := s.PutAlertSettings(ctx, "admin", api.AlertSettings{DefaultWebhooks: []string{hook.URL}}); err != nil {
			t.Fatalf("PutAlertSettings: %v", err)
		}
		ep := newEndpoint(t, 503)
		jitter := 0.0
		j := api.Job{
			Group: "billing", Name: "invoice", Type: "http",
			HTTP:  httpSpec(t, map[string]any{"url": ep.URL + "/attempt/{{.Attempt}}"}),
			Retry: &api.RetryPolicy{MaxAttempts: 3, Backoff: "exponential", Delay: "100ms", MaxDelay: "1s", Jitter: &jitter},
		}
		if _, err := s.CreateJob(ctx, "alice", j); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		acc, err := s.RunJob(ctx, "alice", "billing", "invoice", api.RunRequest{})
		if err != nil {
			t.Fatalf("RunJob: %v", err)
		}
		first := acc.ExecutionIDs[0]
		var attempts []api.Execution
		waitFor(t, "three finished attempts", func() bool {
			attempts, err = s.Attempts(ctx, first)
			return err == nil && len(attempts) == 3 && attempts[2].Outcome != "running"
		})
		for i, a := range attempts {
			if a.Attempt != i+1 || a.FirstID != first || a.Outcome != "failed" || !strings.Contains(a.Error, "503") {
				t.Errorf("attempt %d = %+v, want attempt %d of %s failed with the 503", i, a, i+1, first)
			}
			if i > 0 && !a.StartedTime.After(*attempts[i-1].FinishedTime) {
				t.Errorf("attempt %d started at %s, before attempt %d finished at %s", i+1, a.StartedTime, i, attempts[i-1].FinishedTime)
			}
		}
		for i := range 3 {
			if path := ep.request(i).URL.Path; path != "/attempt/"+string(rune('1'+i)) {
				t.Errorf("request %d went to %s, want /attempt/%d", i, path, i+1)
			}
		}
		p := hook.next(t, alert.KindFailure)
		if p.Job.Group != "billing" || p.Job.Name != "invoice" || p.Attempt != 3 || p.ExecutionID != attempts[2].ID {
			t.Errorf("failure alert = %+v, want one about attempt 3 of billing/invoice", p)
		}
		ex, err := s.Explain(ctx, "billing", "invoice", attempts[0].ScheduledTime)
		if err != nil {
			t.Fatalf("Explain: %v", err)
		}
		kinds := map[string]int{}
		for _, d := range ex.Decisions {
			kinds[d.Kind]++
		}
		if kinds["retry_scheduled"] != 2 || kinds["retries_exhausted"] != 1 {
			t.Errorf("decisions = %v, want 2 retry_scheduled and 1 retries_exhausted", kinds)
		}
		if ep.count() != 3 {
			t.Errorf("endpoint got %d requests, want 3", ep.count())
		}

		retry, err := s.RetryExecution(ctx, "operator", attempts[2].ID)
		if err != nil {
			t.Fatalf("RetryExecution: %v", err)
		}
		fourth := waitExecution(t, s, retry.ExecutionIDs[0])
		if fourth.Attempt != 4 || fourth.FirstID != first || !fourth.Manual {
			t.Errorf("operator retry = %+v, want manual attempt 4 of %s", fourth, first)
		}
	})
}

// sleeper is a Go job type that waits for its context to end.
type sleeper struct{}

func (sleeper) Execute(ctx context.Context, _ *chime.JobContext) error {
	<-ctx.Done()
	return context.Cause(ctx)
}

func TestTimeoutRecordsTimedOutAndAlerts(t *testing.T) {
	t.Parallel()
	hook := newWebhook(t)
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db")
	if err := s.RegisterJobType("sleep", sleeper{}); err != nil {
		t.Fatalf("RegisterJobType: %v", err)
	}
	start(t, s)
	ctx := t.Context()
	j := api.Job{Group: "g", Name: "slow", Type: "sleep", Timeout: "200ms", Alerts: &api.JobAlerts{Webhooks: []string{hook.URL}}}
	if _, err := s.CreateJob(ctx, "alice", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := s.RunJob(ctx, "alice", "g", "slow", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	e := waitExecution(t, s, acc.ExecutionIDs[0])
	if e.Outcome != "timed_out" || !strings.Contains(e.Error, "timed out after 200ms") {
		t.Fatalf("execution = %+v, want timed_out", e)
	}
	if p := hook.next(t, alert.KindTimeout); p.ExecutionID != e.ID {
		t.Errorf("timeout alert = %+v, want one about %s", p, e.ID)
	}
}

func TestRegisterJobType(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db")
	if err := s.RegisterJobType("http", sleeper{}); !errors.Is(err, ErrReservedType) {
		t.Errorf("RegisterJobType(http) = %v, want ErrReservedType", err)
	}
	if err := s.RegisterJobType("sleep", sleeper{}); err != nil {
		t.Fatalf("RegisterJobType: %v", err)
	}
	if err := s.RegisterJobType("sleep", sleeper{}); err == nil {
		t.Error("registering a type twice succeeded")
	}
	start(t, s)
	if err := s.RegisterJobType("late", sleeper{}); !errors.Is(err, ErrStarted) {
		t.Errorf("RegisterJobType after Run = %v, want ErrStarted", err)
	}
}

func TestShellJobRunsWhenEnabled(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", func(c *Config) { c.EnableShellJobs, c.ShellAllow = true, []string{"*"} })
	start(t, s)
	ctx := t.Context()
	j := api.Job{Group: "ops", Name: "echo", Type: "shell",
		Shell: []byte(`{"argv":["echo","{{.JobName}} attempt {{.Attempt}} in {{.Params.region}}"]}`),
		Data:  map[string]any{"region": "eu"}}
	if _, err := s.CreateJob(ctx, "alice", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := s.RunJob(ctx, "alice", "ops", "echo", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	e := waitExecution(t, s, acc.ExecutionIDs[0])
	if e.Outcome != "succeeded" || !strings.Contains(e.Output, "echo attempt 1 in eu") {
		t.Fatalf("shell execution = %+v, want succeeded with the expanded argv's output", e)
	}
}

func TestDeadManAlertsAboutASilentJob(t *testing.T) {
	t.Parallel()
	hook := newWebhook(t)
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", func(c *Config) { c.DeadManInterval = 100 * time.Millisecond })
	start(t, s)
	j := api.Job{Group: "g", Name: "heartbeat", Type: "http", HTTP: httpSpec(t, map[string]any{"url": "https://example.com"}),
		Alerts: &api.JobAlerts{Webhooks: []string{hook.URL}, DeadMan: "300ms"}}
	if _, err := s.CreateJob(t.Context(), "alice", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if p := hook.next(t, alert.KindDeadMan); p.Job.Name != "heartbeat" {
		t.Errorf("dead-man alert = %+v, want one about g/heartbeat", p)
	}
}

// failer is a Go job type that logs the execution ID it was given and
// fails.
type failer struct{}

func (failer) Execute(_ context.Context, jc *chime.JobContext) error {
	jc.Logger.Info("working", "job_sees", jc.ExecutionID)
	return errors.New("boom")
}

// TestOneExecutionIDEverywhere checks that a first attempt, its retry, a
// run by hand and its retry each have one ID: the API's, the one the job
// sees, the one of its log records (the job's and the scheduler's "job
// failed"), and the one of its alert.
func TestOneExecutionIDEverywhere(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	logs, logger := logtest.New(slog.LevelInfo)
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range logs.Records() {
				t.Logf("log: %s %s %v", r.Level, r.Message, r.Attrs)
			}
		}
	})
	hook := newWebhook(t)
	s := newServer(t, dbtest.SQLiteURL(t), func(c *Config) {
		c.Logger = logger
		// One node alone: a lease lost to a loaded machine would only re-run
		// attempts, which the test counts.
		c.CheckInInterval, c.DeadAfter = time.Second, time.Minute
	})
	if err := s.RegisterJobType("fail", failer{}); err != nil {
		t.Fatal(err)
	}
	start(t, s)
	// A cron trigger every second, ending within 2s: one or two firings.
	begin := time.Now()
	end := begin.Add(2 * time.Second)
	j := api.Job{
		Group: "ids", Name: "flaky", Type: "fail",
		Triggers: []api.Trigger{{Schedule: []byte(`{"kind":"cron","expression":"* * * * * ?","time_zone":"UTC"}`), StartTime: &begin, EndTime: &end}},
		Retry:    &api.RetryPolicy{MaxAttempts: 2, Delay: "10ms"},
		Alerts:   &api.JobAlerts{Webhooks: []string{hook.URL}},
	}
	if _, err := s.CreateJob(ctx, "alice", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	var fired api.Execution
	waitFor(t, "a scheduled firing", func() bool {
		list, err := s.ListExecutions(ctx, api.ExecutionQuery{JobGroup: "ids", JobName: "flaky"})
		for _, e := range list.Executions {
			if err == nil && e.Attempt == 1 && !e.Manual {
				fired = e
				return true
			}
		}
		return false
	})
	attempts := func(first string) []api.Execution {
		var list []api.Execution
		waitFor(t, "both attempts of "+first+" to fail", func() bool {
			var err error
			list, err = s.Attempts(ctx, first)
			return err == nil && len(list) == 2 && list[1].Outcome == "failed"
		})
		return list
	}
	executions := attempts(fired.ID)
	acc, err := s.RunJob(ctx, "alice", "ids", "flaky", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	executions = append(executions, attempts(acc.ExecutionIDs[0])...)
	idFormat := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, e := range executions {
		if !idFormat.MatchString(e.ID) {
			t.Errorf("execution ID %q (attempt %d, manual %v) is not 32 hex digits, the scheduler's format", e.ID, e.Attempt, e.Manual)
		}
	}
	byID := map[string]api.Execution{}
	for _, e := range executions {
		byID[e.ID] = e
	}
	if len(byID) != 4 {
		t.Fatalf("executions %+v: want four different IDs", executions)
	}
	for _, e := range executions {
		// The scheduler logs "job failed" once the execution is recorded.
		waitFor(t, "the job failed record of "+e.ID, func() bool {
			for _, r := range logs.Messages("job failed") {
				if r.Attrs["execution_id"].String() == e.ID {
					return true
				}
			}
			return false
		})
		var working int
		for _, r := range logs.Messages("working") {
			if r.Attrs["execution_id"].String() == e.ID {
				working++
				if got := r.Attrs["job_sees"].String(); got != e.ID {
					t.Errorf("execution %s: the job saw ID %s", e.ID, got)
				}
			}
		}
		if working != 1 {
			t.Errorf("execution %s (attempt %d, manual %v): %d log records of the job, want 1", e.ID, e.Attempt, e.Manual, working)
		}
	}
	for _, r := range logs.Records() {
		if r.Attrs["job_key"].String() != "ids.flaky" {
			continue
		}
		id := r.Attrs["execution_id"].String()
		if e, ok := byID[id]; !ok && (r.Message == "working" || r.Message == "job failed") {
			// The trigger's other firing is fine, if the API knows it.
			if _, err := s.GetExecution(ctx, id); err != nil {
				t.Errorf("record %q names execution %q, which the API does not know: %v", r.Message, id, err)
			}
		} else if n, has := r.Attrs["attempt"]; ok && has && n.String() != strconv.Itoa(e.Attempt) {
			t.Errorf("record %q of %s says attempt %v, want %d", r.Message, id, n, e.Attempt)
		}
	}
	// Each firing's final failure alerts, naming its second attempt.
	want := map[string]bool{executions[1].ID: true, executions[3].ID: true}
	timeout := time.After(waitTimeout)
	for len(want) > 0 {
		select {
		case p := <-hook.alerts:
			e, err := s.GetExecution(ctx, p.ExecutionID)
			if err != nil || e.Attempt != p.Attempt || e.Outcome != "failed" {
				t.Errorf("%s alert names execution %s attempt %d; the API has %+v, %v", p.Kind, p.ExecutionID, p.Attempt, e, err)
			}
			delete(want, p.ExecutionID)
		case <-timeout:
			t.Fatalf("no alert about %v within %s", want, waitTimeout)
		}
	}
}

// TestOldExecutionIDsAreServed checks that executions recorded by earlier
// versions, whose IDs had other formats, are still served and found.
func TestOldExecutionIDsAreServed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newServer(t, dbtest.SQLiteURL(t))
	// A retry's ID was 26 base32 characters, a recovery's its first
	// attempt's ID with the refire count and a random suffix.
	first, retry, recovered := "52f367ebb2d51b9023640c3b69830e58", "KQ4ZGT7MZQOZCK2FQFRQ5GDH7Y", "52f367ebb2d51b9023640c3b69830e58-1-a1b2c3d4"
	at := time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC)
	for i, id := range []string{first, retry, recovered} {
		if err := s.history.Start(ctx, &history.Execution{
			ID: id, FirstID: first, Attempt: i + 1, JobGroup: "old", JobName: "job",
			NodeID: "node-a", ScheduledTime: at, StartedTime: at.Add(time.Duration(i) * time.Minute),
		}); err != nil {
			t.Fatalf("recording %s: %v", id, err)
		}
	}
	for _, id := range []string{first, retry, recovered} {
		e, err := s.GetExecution(ctx, id)
		if err != nil || e.ID != id || e.FirstID != first {
			t.Fatalf("GetExecution(%s) = %+v, %v; want it, of firing %s", id, e, err, first)
		}
		attempts, err := s.Attempts(ctx, id)
		if err != nil || len(attempts) != 3 || attempts[2].ID != recovered {
			t.Errorf("Attempts(%s) = %+v, %v; want the three, %s last", id, attempts, err, recovered)
		}
	}
}
