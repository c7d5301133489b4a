package alert_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/alert"
)

func TestStartStop(t *testing.T) {
	t.Parallel()
	n, rec := newNotifier(t, alert.Config{})
	if err := n.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := n.Start(t.Context()); !errors.Is(err, alert.ErrStarted) {
		t.Errorf("second Start = %v, want ErrStarted", err)
	}
	if err := n.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := n.Stop(t.Context()); err != nil {
		t.Errorf("second Stop = %v, want nil", err)
	}
	if err := n.Start(t.Context()); !errors.Is(err, alert.ErrStopped) {
		t.Errorf("Start after Stop = %v, want ErrStopped", err)
	}
	n.Notify(failureEvent())
	if got := n.Stats(); got.Dropped != 1 {
		t.Errorf("Stats = %+v, want the alert after Stop dropped", got)
	}
	if got := warnings(rec, "alert dropped: notifier stopped"); len(got) != 1 {
		t.Errorf("logged %d drop warnings, want 1", len(got))
	}
}

func TestQueueFullDrops(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	n, rec := newNotifier(t, alert.Config{
		DefaultWebhooks: []string{hook.URL},
		QueueSize:       2,
		RateLimit:       alert.RateLimit{Alerts: -1},
	})
	// Not started yet, so nothing drains the queue: the third alert
	// finds it full.
	for range 3 {
		n.Notify(failureEvent())
	}
	if got := n.Stats(); got.Dropped != 1 {
		t.Errorf("Stats = %+v, want 1 dropped", got)
	}
	if got := warnings(rec, "alert dropped: queue full"); len(got) != 1 {
		t.Errorf("logged %d queue-full warnings, want 1", len(got))
	}

	deliver(t, n)

	if got := len(hook.Requests()); got != 2 {
		t.Errorf("webhook received %d requests, want the 2 queued", got)
	}
}

// TestQueueFullCountsDroppedAsSuppressed shows that an alert the rate
// limit let through but the full queue dropped is mentioned by the next
// alert for its job and kind, like a suppressed one.
func TestQueueFullCountsDroppedAsSuppressed(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	clock := &fakeClock{now: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)}
	n, _ := newNotifier(t, alert.Config{DefaultWebhooks: []string{hook.URL}, QueueSize: 1, Now: clock.Now})
	other := failureEvent()
	other.JobName = "other"
	n.Notify(other)          // fills the queue
	n.Notify(failureEvent()) // allowed by the limit, dropped by the queue
	n.Notify(failureEvent()) // suppressed by the limit
	if err := n.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-hook.arrived // "other" has left the queue
	clock.Advance(10 * time.Minute)
	n.Notify(failureEvent())
	if err := n.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	reqs := hook.Requests()
	if len(reqs) != 2 {
		t.Fatalf("webhook received %d requests, want 2", len(reqs))
	}
	if p := reqs[1].Payload; p.Job.Name != "invoice" || p.Suppressed != 2 {
		t.Errorf("second alert is for %q with %d suppressed, want invoice with 2", p.Job.Name, p.Suppressed)
	}
	if got := n.Stats(); got != (alert.Stats{Delivered: 2, Dropped: 1, Suppressed: 1}) {
		t.Errorf("Stats = %+v, want 2 delivered, 1 dropped, 1 suppressed", got)
	}
}

// TestStopBoundedByContext stops while a webhook hangs: Stop cancels the
// delivery, drops what is still queued and returns the context's error.
func TestStopBoundedByContext(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client leaving.
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			t.Errorf("reading the request: %v", err)
		}
		arrived <- struct{}{}
		<-r.Context().Done() // answers only when the client gives up
	}))
	t.Cleanup(hang.Close)
	n, rec := newNotifier(t, alert.Config{
		DefaultWebhooks: []string{hang.URL},
		RateLimit:       alert.RateLimit{Alerts: -1},
	})
	if err := n.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	n.Notify(failureEvent())
	n.Notify(failureEvent())
	<-arrived // the first delivery is under way; the second waits

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := n.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop = %v, want context.Canceled", err)
	}
	if got := n.Stats(); got != (alert.Stats{Failed: 1, Dropped: 1}) {
		t.Errorf("Stats = %+v, want the delivery under way failed and the queued one dropped", got)
	}
	if got := warnings(rec, "alerts dropped: notifier stopped before they were delivered"); len(got) != 1 {
		t.Errorf("logged %d drop warnings, want 1", len(got))
	}
}
