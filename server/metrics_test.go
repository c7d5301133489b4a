package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/schedule"
)

// scrape returns the text of s's /metrics.
func scrape(t *testing.T, s *Server) string {
	t.Helper()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d, %v", resp.StatusCode, err)
	}
	return string(body)
}

// jobSeries returns the lines of the per-job series of job g/n.
func jobSeries(metrics, group, name string) []string {
	var out []string
	for line := range strings.Lines(metrics) {
		if strings.HasPrefix(line, "chime_job_") && strings.Contains(line, `job_group="`+group+`",job_name="`+name+`"`) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// runOnce runs job g/n by hand on s and waits for its execution to finish.
func runOnce(t *testing.T, s *Server, group, name string) *api.Execution {
	t.Helper()
	acc, err := s.RunJob(t.Context(), "alice", group, name, api.RunRequest{})
	if err != nil || len(acc.ExecutionIDs) != 1 {
		t.Fatalf("RunJob(%s/%s) = %+v, %v", group, name, acc, err)
	}
	return waitExecution(t, s, acc.ExecutionIDs[0])
}

// TestJobMetrics scrapes a real node after real executions: the build
// info, executions by job and outcome, each job's last success, and the
// series of a deleted job gone, whether it was deleted through this node
// or through another node of the cluster.
func TestJobMetrics(t *testing.T) {
	t.Parallel()
	url := "sqlite:" + t.TempDir() + "/chime.db"
	fast := func(c *Config) { c.DeadManInterval = 50 * time.Millisecond }
	// Node b is not run, so that every execution is a's; its service
	// methods work on the shared database all the same.
	a, b := newServer(t, url, fast), newServer(t, url)
	start(t, a)
	ok, broken := newEndpoint(t, 200), newEndpoint(t, 500)
	for _, j := range []api.Job{
		{Group: "web", Name: "ok", Type: "http", HTTP: httpSpec(t, map[string]any{"url": ok.URL})},
		{Group: "web", Name: "broken", Type: "http", HTTP: httpSpec(t, map[string]any{"url": broken.URL})},
		{Group: "web", Name: "other", Type: "http", HTTP: httpSpec(t, map[string]any{"url": ok.URL})},
	} {
		if _, err := a.CreateJob(t.Context(), "alice", j); err != nil {
			t.Fatalf("CreateJob(%s): %v", j.Name, err)
		}
	}
	var last *api.Execution
	for range 2 {
		last = runOnce(t, a, "web", "ok")
	}
	runOnce(t, a, "web", "broken")
	runOnce(t, a, "web", "other")

	// The counters move after the history records the end: wait for them.
	var m string
	waitFor(t, "the per-job series", func() bool {
		m = scrape(t, a)
		return len(jobSeries(m, "web", "ok")) == 2 && len(jobSeries(m, "web", "broken")) == 1 && len(jobSeries(m, "web", "other")) == 2
	})
	build := ReadBuildInfo()
	for _, want := range []string{
		`chime_build_info{goversion="` + build.GoVersion + `",revision="` + build.Revision + `",version="` + build.Version + `"} 1`,
		`chime_job_executions_total{job_group="web",job_name="ok",outcome="succeeded"} 2`,
		`chime_job_executions_total{job_group="web",job_name="broken",outcome="failed"} 1`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	match := regexp.MustCompile(`(?m)^chime_job_last_success_timestamp_seconds\{job_group="web",job_name="ok"\} (\S+)$`).FindStringSubmatch(m)
	if match == nil {
		t.Fatalf("/metrics has no last success of web/ok:\n%s", strings.Join(jobSeries(m, "web", "ok"), "\n"))
	}
	got, err := strconv.ParseFloat(match[1], 64)
	if want := float64(last.FinishedTime.UnixNano()) / 1e9; err != nil || got < want-0.001 || got > want+0.001 {
		t.Errorf("last success of web/ok = %s, want %f (the second run's end, %v)", match[1], want, last.FinishedTime)
	}
	if s := jobSeries(m, "web", "broken"); strings.Contains(strings.Join(s, "\n"), "last_success") {
		t.Errorf("web/broken never succeeded, yet has a last success: %q", s)
	}

	// Deleted through this node: its series go at once.
	if err := a.DeleteJob(t.Context(), "alice", "web", "ok"); err != nil {
		t.Fatal(err)
	}
	m = scrape(t, a)
	if s := jobSeries(m, "web", "ok"); len(s) != 0 {
		t.Errorf("after DeleteJob, web/ok still has series: %q", s)
	}
	if s := jobSeries(m, "web", "broken"); len(s) != 1 {
		t.Errorf("after deleting web/ok, web/broken has series %q, want its one counter", s)
	}
	if !strings.Contains(m, `chime_executions_total{outcome="succeeded"} 3`+"\n") {
		t.Error("the node's executions_total lost the deleted job's executions")
	}

	// Deleted through another node: the node's next sweep drops them.
	if err := b.DeleteJob(t.Context(), "bob", "web", "broken"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "web/broken's series to go from node a", func() bool {
		m = scrape(t, a)
		return len(jobSeries(m, "web", "broken")) == 0
	})
	if s := jobSeries(m, "web", "other"); len(s) != 2 {
		t.Errorf("the sweep removed the series of web/other, which exists: %q", s)
	}
}

func TestJobMetricsDisabled(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", func(c *Config) { c.DisableJobMetrics = true })
	start(t, s)
	ok := newEndpoint(t, 200)
	if _, err := s.CreateJob(t.Context(), "alice", api.Job{Group: "web", Name: "ok", Type: "http", HTTP: httpSpec(t, map[string]any{"url": ok.URL})}); err != nil {
		t.Fatal(err)
	}
	runOnce(t, s, "web", "ok")
	var m string
	waitFor(t, "the execution to be counted", func() bool {
		m = scrape(t, s)
		return strings.Contains(m, `chime_executions_total{outcome="succeeded"} 1`+"\n")
	})
	if strings.Contains(m, "chime_job_") {
		t.Errorf("/metrics has per-job series with DisableJobMetrics:\n%s", m)
	}
}

// metricValue returns the value of the series named series (with its
// labels, as /metrics prints them) in the metrics text m, or -1 when m
// has no such series.
func metricValue(t *testing.T, m, series string) float64 {
	t.Helper()
	for line := range strings.Lines(m) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), series+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil {
			t.Fatalf("/metrics: %s has value %q: %v", series, rest, err)
		}
		return v
	}
	return -1
}

// TestServerFiresTriggersDueTogetherInBatches runs a real server on each
// database with triggers all due at one instant, and checks through
// /metrics that the scheduler fired them through the store's batch call,
// several per call: the product path must not fall back to one store call
// per firing.
func TestServerFiresTriggersDueTogetherInBatches(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		const triggers = 50
		s := newServer(t, url)
		ok := newEndpoint(t, 200)
		at := time.Now().Add(2 * time.Second).Truncate(time.Second)
		j := api.Job{Group: "batch", Name: "noop", Type: "http", HTTP: httpSpec(t, map[string]any{"url": ok.URL})}
		for i := range triggers {
			j.Triggers = append(j.Triggers, api.Trigger{Name: fmt.Sprintf("t%02d", i), Schedule: json.RawMessage(`{"kind":"once"}`), StartTime: &at})
		}
		if _, err := s.CreateJob(t.Context(), "alice", j); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		start(t, s)
		// A job runs after its firing was stored: once the endpoint saw
		// every request, every firing is in the metrics.
		waitFor(t, "every firing to reach the endpoint", func() bool { return ok.count() == triggers })
		m := scrape(t, s)
		calls := metricValue(t, m, "chime_store_fire_batch_size_count")
		single := metricValue(t, m, `chime_store_fire_batch_size_bucket{le="1"}`)
		if got := metricValue(t, m, "chime_store_fire_batch_size_sum"); got != triggers {
			t.Errorf("the store calls fired %v firings, want %d", got, triggers)
		}
		if single >= calls {
			t.Errorf("%v of %v store calls fired a single trigger, want some to fire several: the %d triggers due at one instant fired one call each", single, calls, triggers)
		}
		t.Logf("%d triggers due together fired in %v store calls", triggers, calls)
		if got := metricValue(t, m, "chime_store_fire_duration_seconds_count"); got != calls {
			t.Errorf("%v fire calls timed, want all %v", got, calls)
		}
	})
}

// TestPassingJobsGetNoSeriesOfTheirOwn runs, on a server node, one-shot
// jobs created through the library (not durable: each goes with its
// trigger's only firing) and a library job that repeats: the one-shot
// jobs count in the totals by outcome but leave no per-job series, which
// would be stale at once; the repeating job, and the last run of a job
// that already has series, keep theirs.
func TestPassingJobsGetNoSeriesOfTheirOwn(t *testing.T) {
	t.Parallel()
	a := newServer(t, "sqlite:"+t.TempDir()+"/chime.db")
	ran := make(chan string, 16)
	if err := a.RegisterJobType("noop", chime.JobFunc(func(_ context.Context, jc *chime.JobContext) error {
		ran <- jc.Job.Key.Name
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	start(t, a)
	ctx := t.Context()
	now := time.Now()
	for i := range 3 {
		name := fmt.Sprintf("once-%d", i)
		job := chime.JobDetail{Key: chime.NewJobKey("lib", name), Type: "noop"}
		tr := chime.Trigger{Key: chime.NewTriggerKey("lib", name), Schedule: &schedule.Simple{}, StartTime: now}
		if err := a.sched.ScheduleJob(ctx, job, []chime.Trigger{tr}, nil); err != nil {
			t.Fatalf("ScheduleJob(%s): %v", name, err)
		}
	}
	// Fires three times: its first two runs create its series, its last
	// one counts in them.
	thrice := chime.JobDetail{Key: chime.NewJobKey("lib", "thrice"), Type: "noop"}
	tr := chime.Trigger{Key: chime.NewTriggerKey("lib", "thrice"), StartTime: now,
		Schedule: &schedule.Simple{RepeatCount: 2, RepeatInterval: 100 * time.Millisecond}}
	if err := a.sched.ScheduleJob(ctx, thrice, []chime.Trigger{tr}, nil); err != nil {
		t.Fatalf("ScheduleJob(thrice): %v", err)
	}

	var m string
	waitFor(t, "the six runs counted", func() bool {
		m = scrape(t, a)
		return strings.Contains(m, `chime_executions_total{outcome="succeeded"} 6`+"\n")
	})
	for i := range 3 {
		if s := jobSeries(m, "lib", fmt.Sprintf("once-%d", i)); len(s) != 0 {
			t.Errorf("one-shot library job once-%d has series %q, want none", i, s)
		}
	}
	if !strings.Contains(m, `chime_job_executions_total{job_group="lib",job_name="thrice",outcome="succeeded"} 3`+"\n") {
		t.Errorf("the repeating job's series lack its three runs: %q", jobSeries(m, "lib", "thrice"))
	}
}
