package alert_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/logtest"
	"github.com/chime-scheduler/chime/server/alert"
)

// failureEvent is a typical final failure.
func failureEvent() alert.Event {
	return alert.Event{
		Kind:          alert.KindFailure,
		JobGroup:      "billing",
		JobName:       "invoice",
		ExecutionID:   "exec-42",
		Attempt:       3,
		ScheduledTime: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC),
		At:            time.Date(2025, 3, 1, 9, 0, 7, 0, time.UTC),
		NodeID:        "node-a",
		Error:         "upstream answered 502 <Bad Gateway>",
	}
}

// newNotifier builds a Notifier for cfg, with fast retries and a log
// recorder unless cfg says otherwise, and stops it when the test ends.
func newNotifier(t *testing.T, cfg alert.Config) (*alert.Notifier, *logtest.Recorder) {
	t.Helper()
	rec, log := logtest.New(slog.LevelDebug)
	if cfg.Logger == nil {
		cfg.Logger = log
	}
	if cfg.HTTPClient == nil {
		// A transport of its own: httptest.Server.Close closes the idle
		// connections of http.DefaultTransport, which could cut another
		// test's request after the server read it and so cause a retry.
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		cfg.HTTPClient = &http.Client{Transport: tr}
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = time.Millisecond // retries are tested, not their pace
	}
	n, err := alert.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := n.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return n, rec
}

// deliver starts n, queues evs and stops n, which returns once every
// delivery is done.
func deliver(t *testing.T, n *alert.Notifier, evs ...alert.Event) {
	t.Helper()
	if err := n.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	for _, ev := range evs {
		n.Notify(ev)
	}
	if err := n.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// hookServer is a real HTTP server standing in for a chat webhook. It
// keeps every request and answers with the statuses it is given in turn,
// then 200.
type hookServer struct {
	*httptest.Server

	arrived chan struct{} // gets a value as each request arrives

	mu       sync.Mutex
	statuses []int
	requests []hookRequest
}

type hookRequest struct {
	Method  string
	Path    string
	Header  http.Header
	Payload alert.WebhookPayload
	Raw     map[string]any
}

func startHookServer(t *testing.T, statuses ...int) *hookServer {
	t.Helper()
	hs := &hookServer{statuses: statuses, arrived: make(chan struct{}, 100)}
	hs.Server = httptest.NewServer(http.HandlerFunc(hs.serve))
	t.Cleanup(hs.Close)
	return hs
}

func (hs *hookServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := hookRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	if err := json.Unmarshal(body, &req.Payload); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := json.Unmarshal(body, &req.Raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	hs.mu.Lock()
	hs.requests = append(hs.requests, req)
	status := http.StatusOK
	if len(hs.statuses) > 0 {
		status, hs.statuses = hs.statuses[0], hs.statuses[1:]
	}
	hs.mu.Unlock()
	select {
	case hs.arrived <- struct{}{}:
	default:
	}
	w.WriteHeader(status)
}

// Requests returns the requests received so far.
func (hs *hookServer) Requests() []hookRequest {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return append([]hookRequest(nil), hs.requests...)
}

// warnings returns the Warn records with message msg.
func warnings(rec *logtest.Recorder, msg string) []logtest.Record {
	var out []logtest.Record
	for _, r := range rec.Messages(msg) {
		if r.Level == slog.LevelWarn {
			out = append(out, r)
		}
	}
	return out
}

// fakeClock is a settable clock for Config.Now.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// missing returns the strings of want that s lacks.
func missing(s string, want ...string) []string {
	var out []string
	for _, w := range want {
		if !strings.Contains(s, w) {
			out = append(out, w)
		}
	}
	return out
}
