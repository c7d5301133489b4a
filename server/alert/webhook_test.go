package alert_test

import (
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime/server/alert"
)

func TestWebhookPayload(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	n, _ := newNotifier(t, alert.Config{
		DefaultWebhooks: []string{hook.URL + "/services/T000/B000/secret"},
		WebhookHeaders:  map[string]string{"Authorization": "Bearer token-1"},
	})

	deliver(t, n, failureEvent())

	reqs := hook.Requests()
	if len(reqs) != 1 {
		t.Fatalf("webhook received %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/services/T000/B000/secret" {
		t.Errorf("request %s %s, want POST to the configured path", r.Method, r.Path)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer token-1" {
		t.Errorf("Authorization = %q, want the configured header", got)
	}
	scheduled := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	want := alert.WebhookPayload{
		Text: "*Job billing.invoice failed*\n" +
			"Execution: `exec-42` (attempt 3)\n" +
			"Node: `node-a`\n" +
			"Scheduled: 2025-03-01T09:00:00Z\n" +
			"```upstream answered 502 &lt;Bad Gateway&gt;```",
		Kind:          alert.KindFailure,
		Job:           alert.WebhookJob{Group: "billing", Name: "invoice"},
		ExecutionID:   "exec-42",
		Attempt:       3,
		ScheduledTime: &scheduled,
		At:            time.Date(2025, 3, 1, 9, 0, 7, 0, time.UTC),
		NodeID:        "node-a",
		Error:         "upstream answered 502 <Bad Gateway>",
		DeliveryKey:   r.Payload.DeliveryKey, // random, checked below
	}
	if r.Payload.DeliveryKey == "" || r.Header.Get(alert.DeliveryKeyHeader) != r.Payload.DeliveryKey {
		t.Errorf("delivery key %q, header %s %q: want one key in both", r.Payload.DeliveryKey,
			alert.DeliveryKeyHeader, r.Header.Get(alert.DeliveryKeyHeader))
	}
	if !reflect.DeepEqual(r.Payload, want) {
		t.Errorf("payload:\n got %+v\nwant %+v\ntext:\n%s", r.Payload, want, r.Payload.Text)
	}
	// The JSON keys are a contract with receivers; pin them.
	wantKeys := []string{"text", "kind", "job", "execution_id", "attempt", "scheduled_time", "at",
		"node_id", "error", "detail", "suppressed", "delivery_key"}
	if len(r.Raw) != len(wantKeys) {
		t.Errorf("payload has keys %v, want %v", r.Raw, wantKeys)
	}
	for _, k := range wantKeys {
		if _, ok := r.Raw[k]; !ok {
			t.Errorf("payload lacks key %q", k)
		}
	}
	if job, _ := r.Raw["job"].(map[string]any); job["group"] != "billing" || job["name"] != "invoice" {
		t.Errorf(`payload "job" = %v, want group billing and name invoice`, r.Raw["job"])
	}
}

func TestWebhookNodeLostWithoutJob(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	n, _ := newNotifier(t, alert.Config{DefaultWebhooks: []string{hook.URL}})

	deliver(t, n, alert.Event{Kind: alert.KindNodeLost, NodeID: "node-b", At: time.Unix(0, 0).UTC(),
		Detail: "no check-in for 6s"})

	reqs := hook.Requests()
	if len(reqs) != 1 {
		t.Fatalf("webhook received %d requests, want 1", len(reqs))
	}
	p := reqs[0].Payload
	if want := "*Node node-b was lost*\nNode: `node-b`\nno check-in for 6s"; p.Text != want {
		t.Errorf("text = %q, want %q", p.Text, want)
	}
	if p.ScheduledTime != nil || p.Job != (alert.WebhookJob{}) {
		t.Errorf("scheduled_time %v and job %+v, want null and empty", p.ScheduledTime, p.Job)
	}
}

func TestWebhookNon2xxIsRetriedThenGivenUp(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t, http.StatusInternalServerError, http.StatusBadGateway, http.StatusNotFound)
	n, rec := newNotifier(t, alert.Config{
		DefaultWebhooks: []string{hook.URL + "/secret-token"},
		Attempts:        3,
	})

	deliver(t, n, failureEvent())

	if got := len(hook.Requests()); got != 3 {
		t.Errorf("webhook received %d requests, want 3 attempts", got)
	}
	warns := warnings(rec, "alert delivery failed")
	if len(warns) != 1 {
		t.Fatalf("logged %d delivery failures at Warn, want 1", len(warns))
	}
	w := warns[0].Attrs
	if got := w["error"].String(); !strings.Contains(got, "404") {
		t.Errorf("error = %q, want the last status, 404", got)
	}
	if w["channel"].String() != "webhook" || w["attempts"].Int64() != 3 {
		t.Errorf("warning attributes %v, want channel webhook and 3 attempts", w)
	}
	for _, r := range rec.Records() {
		for k, v := range r.Attrs {
			if strings.Contains(v.String(), "secret-token") {
				t.Errorf("log %q attribute %s reveals the webhook's path: %s", r.Message, k, v)
			}
		}
	}
	if got := n.Stats(); got != (alert.Stats{Failed: 1}) {
		t.Errorf("Stats = %+v, want 1 failed", got)
	}
}

func TestWebhookRetrySucceeds(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t, http.StatusServiceUnavailable)
	n, rec := newNotifier(t, alert.Config{DefaultWebhooks: []string{hook.URL}})

	deliver(t, n, failureEvent())

	if got := len(hook.Requests()); got != 2 {
		t.Errorf("webhook received %d requests, want 2", got)
	}
	if got := warnings(rec, "alert delivery failed"); len(got) != 0 {
		t.Errorf("logged delivery failures %+v, want none", got)
	}
	if got := n.Stats(); got != (alert.Stats{Delivered: 1}) {
		t.Errorf("Stats = %+v, want 1 delivered", got)
	}
}

func TestWebhookUnreachableKeepsURLOutOfLogs(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	url := hook.URL + "/secret-token"
	hook.Close() // nothing listens there any more
	n, rec := newNotifier(t, alert.Config{DefaultWebhooks: []string{url}, Attempts: 1})

	deliver(t, n, failureEvent())

	warns := warnings(rec, "alert delivery failed")
	if len(warns) != 1 {
		t.Fatalf("logged %d delivery failures at Warn, want 1", len(warns))
	}
	if got := warns[0].Attrs["error"].String(); strings.Contains(got, "secret-token") || !strings.Contains(got, "post http://127.0.0.1") {
		t.Errorf("error = %q, want the host and not the path", got)
	}
}

func TestWebhookRecipients(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	n, _ := newNotifier(t, alert.Config{DefaultWebhooks: []string{hook.URL + "/default"}})
	own := failureEvent()
	own.JobName = "own" // another job, so the rate limit lets it through
	own.Recipients.Webhooks = []string{hook.URL + "/team-a", hook.URL + "/team-b"}

	deliver(t, n, failureEvent(), own)

	var paths []string
	for _, r := range hook.Requests() {
		paths = append(paths, r.Path)
	}
	if want := []string{"/default", "/team-a", "/team-b"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("requests went to %q, want %q: a job's own webhooks replace the defaults", paths, want)
	}
}

// TestRetryBackoffDoubles runs in a synctest bubble, whose clock moves
// only when every goroutine in it waits, so the waits between tries can be
// measured exactly without spending them.
func TestRetryBackoffDoubles(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/hook" // nothing listens once l is closed
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		n, rec := newNotifier(t, alert.Config{
			DefaultWebhooks: []string{refused},
			HTTPClient:      &http.Client{Transport: tr},
			Attempts:        4,
			RetryBackoff:    time.Second,
		})
		start := time.Now()

		deliver(t, n, failureEvent())

		if got, want := time.Since(start), 7*time.Second; got != want {
			t.Errorf("four tries took %v, want %v (waits of 1s, 2s and 4s)", got, want)
		}
		if got := len(warnings(rec, "alert delivery failed")); got != 1 {
			t.Errorf("logged %d delivery failures, want 1", got)
		}
	})
}

func TestWebhookUnencodablePayload(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	n, rec := newNotifier(t, alert.Config{DefaultWebhooks: []string{hook.URL}})
	ev := failureEvent()
	ev.At = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) // beyond RFC 3339

	deliver(t, n, ev)

	if got := len(hook.Requests()); got != 0 {
		t.Errorf("webhook received %d requests, want 0", got)
	}
	if got := warnings(rec, "alert delivery failed"); len(got) != 1 {
		t.Errorf("logged %d warnings, want 1", len(got))
	}
	if got := n.Stats(); got != (alert.Stats{Failed: 1}) {
		t.Errorf("Stats = %+v, want 1 failed", got)
	}
}
