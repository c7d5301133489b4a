package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/executor"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
)

// TestExecutorReusesConnections runs 100 runs on one SDK executor, in
// bursts of 10, and counts the TCP connections it opened to the server: it
// keeps an idle connection for each request it may send at once (its
// results, its poll, its heartbeat), so it opens about as many as it
// sends at once rather than one for most results, as with the 2 idle
// connections of http.DefaultTransport.
func TestExecutorReusesConnections(t *testing.T) {
	t.Parallel()
	const bursts, burst, concurrency = 10, 10, 20
	f := newExecutorFixture(t, dbtest.SQLiteURL(t))
	var opened atomic.Int64
	ts := httptest.NewUnstartedServer(f.s.Handler())
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			opened.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	ex := newSDKExecutor(t, executor.Config{
		Server: ts.URL, Token: f.token, Group: "billing", Instance: "conns", Labels: map[string]string{"region": "eu"},
		Concurrency: concurrency, PollWait: 5 * time.Second, ShutdownTimeout: 5 * time.Second, Logger: quietLogger,
	})
	var done atomic.Int64
	ex.Handle("nap", func(ctx context.Context, _ *executor.Run) error {
		defer done.Add(1)
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	})
	runExecutor(t, ex)
	if _, err := f.s.CreateJob(t.Context(), "admin", executorJob("nap", "nap", false)); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	// Bursts of 10 runs of 20 ms, whose results are sent at about the
	// same time, fewer than the executor may run at once, so that it
	// never polls for cancel requests only.
	for i := range bursts {
		for j := range burst {
			if _, err := f.s.RunJob(t.Context(), "admin", "billing", "nap", api.RunRequest{Params: map[string]any{"i": fmt.Sprint(i*burst + j)}}); err != nil {
				t.Fatalf("RunJob: %v", err)
			}
		}
		want := int64((i + 1) * burst)
		waitFor(t, "the burst's runs to end", func() bool { return done.Load() == want })
	}
	// The results of a burst's 10 runs, the poll, the heartbeat and the
	// registration may each need a connection of their own.
	if n := opened.Load(); n > burst+3 {
		t.Errorf("the executor opened %d connections for %d runs, %d at once; want at most %d", n, bursts*burst, burst, burst+3)
	}
}

// TestExecutorAtCapacityTakesRunsOnceOneEnds runs an executor of one
// slot and two runs: the second starts as soon as the first ends, not
// when the poll the executor sent while its slot was taken (for cancel
// requests only, with a wait of 30 s) returns.
func TestExecutorAtCapacityTakesRunsOnceOneEnds(t *testing.T) {
	t.Parallel()
	f := newExecutorFixture(t, dbtest.SQLiteURL(t))
	ex := newSDKExecutor(t, executor.Config{
		Server: f.url, Token: f.token, Group: "billing", Instance: "one-slot", Labels: map[string]string{"region": "eu"},
		Concurrency: 1, PollWait: 30 * time.Second, ShutdownTimeout: 5 * time.Second, Logger: quietLogger,
	})
	var (
		mu     sync.Mutex
		starts []time.Time
		ends   []time.Time
	)
	ex.Handle("nap", func(ctx context.Context, _ *executor.Run) error {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
		}
		mu.Lock()
		ends = append(ends, time.Now())
		mu.Unlock()
		return nil
	})
	runExecutor(t, ex)
	if _, err := f.s.CreateJob(t.Context(), "admin", executorJob("nap", "nap", false)); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	for range 2 {
		if _, err := f.s.RunJob(t.Context(), "admin", "billing", "nap", api.RunRequest{}); err != nil {
			t.Fatalf("RunJob: %v", err)
		}
	}
	waitFor(t, "both runs to start", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(starts) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	// Generous against a busy machine, far below the 30 s of the poll.
	if gap := starts[1].Sub(ends[0]); gap > 10*time.Second {
		t.Errorf("the second run started %v after the first ended, want at once", gap)
	}
}
