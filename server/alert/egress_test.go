package alert_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/jobs/egress"
	"github.com/chime-scheduler/chime/server/alert"
)

func newEgress(t *testing.T, cfg egress.Config) *egress.Policy {
	t.Helper()
	p, err := egress.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWebhookEgressRefused(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	hookURL, _ := url.Parse(hook.URL)
	n, rec := newNotifier(t, alert.Config{
		Egress:   newEgress(t, egress.Config{AllowSetting: "egress_allow"}),
		Attempts: 3,
	})
	ev := failureEvent()
	// A job's own webhooks are not checked by New: the connection is.
	ev.Recipients.Webhooks = []string{hook.URL + "/services/secret-token"}

	deliver(t, n, ev)

	if got := len(hook.Requests()); got != 0 {
		t.Errorf("webhook received %d requests, want none", got)
	}
	if got := n.Stats(); got != (alert.Stats{Failed: 1}) {
		t.Errorf("Stats = %+v, want 1 failed", got)
	}
	failed := warnings(rec, "alert delivery failed")
	if len(failed) != 1 {
		t.Fatalf("logged %d delivery failures, want 1", len(failed))
	}
	errText := failed[0].Attrs["error"].String()
	want := "post http://" + hookURL.Host + ": egress to " + hookURL.Host +
		" refused: loopback addresses are denied by default; allow with egress_allow"
	if errText != want {
		t.Errorf("logged error %q, want %q", errText, want)
	}
	if attempts := failed[0].Attrs["attempts"].String(); attempts != "1" {
		t.Errorf("attempts = %v, want 1: a refusal is not retried", attempts)
	}
	if strings.Contains(errText, "secret-token") {
		t.Errorf("logged error %q holds the webhook's path", errText)
	}
}

func TestWebhookEgressAllowed(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	n, _ := newNotifier(t, alert.Config{
		Egress:          newEgress(t, egress.Config{Allow: []string{"127.0.0.1"}}),
		DefaultWebhooks: []string{hook.URL + "/hook"},
	})

	deliver(t, n, failureEvent())

	if got := len(hook.Requests()); got != 1 {
		t.Errorf("webhook received %d requests, want 1", got)
	}
}

func TestWebhookEgressRefusesDefaultWebhooks(t *testing.T) {
	t.Parallel()
	_, err := alert.New(alert.Config{
		Egress:          newEgress(t, egress.Config{}),
		DefaultWebhooks: []string{"https://hooks.example.com/x", "http://169.254.169.254/latest/meta-data"},
	})
	if !errors.Is(err, alert.ErrInvalidConfig) || !strings.Contains(err.Error(),
		"DefaultWebhooks[1]: egress to 169.254.169.254 refused: link-local addresses are denied by default") {
		t.Errorf("New: %v, want DefaultWebhooks[1] refused", err)
	}
	_, err = alert.New(alert.Config{
		Egress:     newEgress(t, egress.Config{}),
		HTTPClient: &http.Client{Transport: http.NewFileTransport(http.Dir("."))},
	})
	if !errors.Is(err, alert.ErrInvalidConfig) || !strings.Contains(err.Error(), "HTTPClient") {
		t.Errorf("New with a transport the policy cannot check: %v", err)
	}
}
