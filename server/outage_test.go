package server

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/clustertest"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
)

// cutFailer is a Go job type that fails every attempt. Its first attempt
// tells the test it runs, and fails only once the test cut the database
// off, so that everything recorded after it meets the outage.
type cutFailer struct {
	runs    atomic.Int32
	started chan struct{}
	cut     chan struct{}
}

func (f *cutFailer) Execute(ctx context.Context, _ *chime.JobContext) error {
	if f.runs.Add(1) == 1 {
		close(f.started)
		select {
		case <-f.cut:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return errors.New("boom")
}

// TestDatabaseOutageAfterARunLosesNothing cuts the node off from its
// database while the first attempt of a job with three attempts fails,
// for less than DeadAfter and for several times DeadAfter, and checks that
// once the database is back the history is exact: three failed attempts
// linked to one firing, their decisions, the retries run, nothing left
// running.
func TestDatabaseOutageAfterARunLosesNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow: skipped with -short")
	}
	for _, db := range []testDB{{"Postgres", dbtest.PostgresURL}, {"MySQL", dbtest.MySQLURL}} {
		for _, outage := range []struct {
			name string
			cut  time.Duration
		}{{"Blip", 700 * time.Millisecond}, {"LongerThanDeadAfter", 4 * time.Second}} {
			t.Run(db.name+"/"+outage.name, func(t *testing.T) {
				t.Parallel()
				testOutageAfterARun(t, db.url(t), outage.cut)
			})
		}
	}
}

func testOutageAfterARun(t *testing.T, url string, cut time.Duration) {
	ctx := t.Context()
	proxy, viaProxy := dbProxy(t, url)
	s := newServer(t, viaProxy) // DeadAfter 1s
	job := &cutFailer{started: make(chan struct{}), cut: make(chan struct{})}
	if err := s.RegisterJobType("cut", job); err != nil {
		t.Fatal(err)
	}
	start(t, s)
	jitter := 0.0
	if _, err := s.CreateJob(ctx, "alice", api.Job{
		Group: "g", Name: "flaky", Type: "cut",
		Retry: &api.RetryPolicy{MaxAttempts: 3, Backoff: "fixed", Delay: "200ms", Jitter: &jitter},
	}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := s.RunJob(ctx, "alice", "g", "flaky", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	first := acc.ExecutionIDs[0]
	select {
	case <-job.started:
	case <-time.After(waitTimeout):
		t.Fatal("attempt 1 did not start")
	}
	proxy.Cut()
	close(job.cut)
	time.Sleep(cut)
	proxy.Restore()

	var attempts []api.Execution
	deadline := time.Now().Add(3 * waitTimeout)
	for {
		attempts, err = s.Attempts(ctx, first)
		if err == nil && len(attempts) == 3 && attempts[2].Outcome != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the outage: attempts of %s = %+v, %v; want 3 finished", first, attempts, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i, a := range attempts {
		if a.Attempt != i+1 || a.Outcome != "failed" || a.Error != "boom" {
			t.Errorf("attempt %d = %+v, want attempt %d failed with boom", i+1, a, i+1)
		}
	}
	if n := job.runs.Load(); n != 3 {
		t.Errorf("the job ran %d times, want 3", n)
	}
	running, err := s.ListExecutions(ctx, api.ExecutionQuery{Outcomes: []string{"running"}})
	if err != nil || len(running.Executions) != 0 {
		t.Errorf("running executions after the outage = %+v, %v; want none", running, err)
	}
	// The decision that no retry is left follows the last attempt's end.
	kinds := map[string]int{}
	waitFor(t, "the decisions about the three attempts", func() bool {
		ex, err := s.Explain(ctx, "g", "flaky", attempts[0].ScheduledTime)
		if err != nil {
			return false
		}
		kinds = map[string]int{}
		for _, d := range ex.Decisions {
			kinds[d.Kind]++
		}
		return kinds["retries_exhausted"] > 0
	})
	if kinds["retry_scheduled"] != 2 || kinds["retries_exhausted"] != 1 {
		t.Errorf("decisions = %v, want 2 retry_scheduled and 1 retries_exhausted", kinds)
	}
}

// leaseLapser is a Go job type whose first run lasts until its context is
// cancelled, and whose later runs succeed at once.
type leaseLapser struct {
	runs    atomic.Int32
	started chan struct{}
}

func (j *leaseLapser) Execute(ctx context.Context, _ *chime.JobContext) error {
	if j.runs.Add(1) > 1 {
		return nil
	}
	close(j.started)
	<-ctx.Done()
	return context.Cause(ctx)
}

// TestJobCancelledByADatabaseOutageIsRecovered cuts a lone node off from
// its database for four times DeadAfter while a job that requests recovery
// runs. The node's lease lapses and it cancels the job; when the database
// returns, no node declared it dead and it renews its lease. The history
// then holds the cancelled try, the decision to recover it and the
// recovered re-run, which succeeded: the firing is not lost.
func TestJobCancelledByADatabaseOutageIsRecovered(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow: skipped with -short")
	}
	for _, db := range []testDB{{"Postgres", dbtest.PostgresURL}, {"MySQL", dbtest.MySQLURL}} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			testJobCancelledByAnOutage(t, db.url(t))
		})
	}
}

func testJobCancelledByAnOutage(t *testing.T, url string) {
	ctx := t.Context()
	proxy, viaProxy := dbProxy(t, url)
	s := newServer(t, viaProxy) // DeadAfter 1s
	job := &leaseLapser{started: make(chan struct{})}
	if err := s.RegisterJobType("lapse", job); err != nil {
		t.Fatal(err)
	}
	start(t, s)
	if _, err := s.CreateJob(ctx, "alice", api.Job{Group: "g", Name: "recover", Type: "lapse", RequestsRecovery: true}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := s.RunJob(ctx, "alice", "g", "recover", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	first := acc.ExecutionIDs[0]
	select {
	case <-job.started:
	case <-time.After(waitTimeout):
		t.Fatal("the job did not start")
	}
	proxy.Cut()
	time.Sleep(4 * time.Second)
	proxy.Restore()

	var attempts []api.Execution
	deadline := time.Now().Add(3 * waitTimeout)
	for {
		attempts, err = s.Attempts(ctx, first)
		if err == nil && len(attempts) == 2 && attempts[1].Outcome != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the outage: attempts of %s = %+v, %v; want the cancelled try and its recovery", first, attempts, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if a := attempts[0]; a.Attempt != 1 || a.Outcome != "cancelled" || !strings.Contains(a.Error, chime.ErrLeaseLost.Error()) || a.Recovering {
		t.Errorf("attempt 1 = %+v, want cancelled for the lost lease", a)
	}
	if a := attempts[1]; a.Attempt != 2 || a.Outcome != "succeeded" || !a.Recovering {
		t.Errorf("attempt 2 = %+v, want a recovering re-run that succeeded", a)
	}
	if n := job.runs.Load(); n != 2 {
		t.Errorf("the job ran %d times, want twice", n)
	}
	ex, err := s.Explain(ctx, "g", "recover", attempts[0].ScheduledTime)
	if err != nil {
		t.Fatalf("Explain: %v", err)
	}
	kinds := map[string]int{}
	for _, d := range ex.Decisions {
		kinds[d.Kind]++
		if d.Kind == "recovered" && !strings.Contains(d.Reason, "lease lapsed") {
			t.Errorf("recovered decision's reason = %q, want it to say the node cancelled the run when its lease lapsed", d.Reason)
		}
	}
	if kinds["recovered"] != 1 {
		t.Errorf("decisions = %v, want one recovered", kinds)
	}
	running, err := s.ListExecutions(ctx, api.ExecutionQuery{Outcomes: []string{"running"}})
	if err != nil || len(running.Executions) != 0 {
		t.Errorf("running executions after the outage = %+v, %v; want none", running, err)
	}
}

// dbProxy starts a proxy to the database of url, which a test can cut and
// restore, closed when the test ends, and returns it with the URL that
// goes through it.
func dbProxy(t *testing.T, url string) (*clustertest.Proxy, string) {
	t.Helper()
	target, err := clustertest.HostPort(url)
	if err != nil {
		t.Fatalf("the database URL: %v", err)
	}
	proxy, err := clustertest.NewProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	viaProxy, err := clustertest.RewriteHost(url, proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	return proxy, viaProxy
}
