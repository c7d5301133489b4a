package alert_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/mailtest"
	"github.com/chime-scheduler/chime/server/alert"
)

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	smtp := alert.SMTPConfig{Host: "mail.example.com", From: "chime@example.com"}
	tests := []struct {
		name string
		cfg  alert.Config
		// want are the phrases the error must hold, field names first.
		want []string
	}{
		{"From missing", alert.Config{SMTP: alert.SMTPConfig{Host: "mail.example.com"}},
			[]string{"SMTP.From: required when SMTP.Host is set"}},
		{"From not an address", alert.Config{SMTP: alert.SMTPConfig{Host: "mail.example.com", From: "chime"}},
			[]string{"SMTP.From", `"chime" is not an e-mail address`}},
		{"bad TLS", alert.Config{SMTP: alert.SMTPConfig{Host: "mail.example.com", From: "a@b.c", TLS: "ssl"}},
			[]string{`SMTP.TLS: "ssl" is not one of`}},
		{"bad Auth", alert.Config{SMTP: alert.SMTPConfig{Host: "mail.example.com", From: "a@b.c", Auth: "cram"}},
			[]string{`SMTP.Auth: "cram" is not one of`}},
		{"bad Port", alert.Config{SMTP: alert.SMTPConfig{Host: "mail.example.com", From: "a@b.c", Port: 70000}},
			[]string{"SMTP.Port: 70000 is not a TCP port"}},
		{"password without user", alert.Config{SMTP: alert.SMTPConfig{Host: "mail.example.com", From: "a@b.c", Password: "x"}},
			[]string{"SMTP.Username: required when SMTP.Password is set"}},
		{"default e-mails without SMTP", alert.Config{DefaultEmails: []string{"ops@example.com"}},
			[]string{"DefaultEmails: set, but SMTP.Host is empty"}},
		{"bad default e-mail", alert.Config{SMTP: smtp, DefaultEmails: []string{"ops@example.com", "not mail"}},
			[]string{"DefaultEmails[1]", `"not mail"`}},
		{"webhook scheme", alert.Config{DefaultWebhooks: []string{"ftp://example.com/hook"}},
			[]string{"DefaultWebhooks[0]", "scheme must be http or https"}},
		{"webhook without host", alert.Config{DefaultWebhooks: []string{"https:///hook"}},
			[]string{"DefaultWebhooks[0]", "no host"}},
		{"webhook not a URL", alert.Config{DefaultWebhooks: []string{"http://exa mple.com/%zz"}},
			[]string{"DefaultWebhooks[0]", "is not a URL"}},
		{"header name", alert.Config{WebhookHeaders: map[string]string{"X Token": "1"}},
			[]string{`WebhookHeaders: "X Token" is not a valid header name`}},
		{"header value", alert.Config{WebhookHeaders: map[string]string{"X-Token": "1\r\nX-Evil: 2"}},
			[]string{`WebhookHeaders: the value of "X-Token" holds a line break`}},
		{"attempts", alert.Config{Attempts: -1}, []string{"Attempts: -1 is less than 1"}},
		{"queue", alert.Config{QueueSize: -5}, []string{"QueueSize: -5 is less than 1"}},
		{"negative timeout", alert.Config{Timeout: -time.Second}, []string{"Timeout: -1s is negative"}},
		{"negative period", alert.Config{RateLimit: alert.RateLimit{Per: -time.Second}}, []string{"RateLimit.Per: -1s is negative"}},
		{"several at once", alert.Config{Attempts: -1, QueueSize: -1}, []string{"Attempts", "QueueSize"}},
		{"subject syntax", alert.Config{SubjectTemplate: "{{.Summary"},
			[]string{"SubjectTemplate", "unclosed action"}},
		{"body field", alert.Config{BodyTemplate: "{{.JobNmae}}"},
			[]string{"BodyTemplate", "can't evaluate field JobNmae"}},
		{"text function", alert.Config{TextTemplate: "{{upper .Summary}}"},
			[]string{"TextTemplate", `function "upper" not defined`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n, err := alert.New(tt.cfg)
			if err == nil {
				t.Fatalf("New returned a notifier (%v), want an error", n)
			}
			if !errors.Is(err, alert.ErrInvalidConfig) {
				t.Errorf("error %q does not wrap ErrInvalidConfig", err)
			}
			if miss := missing(err.Error(), tt.want...); len(miss) > 0 {
				t.Errorf("error %q lacks %q", err, miss)
			}
		})
	}
}

func TestNewAcceptsGoodConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  alert.Config
	}{
		{"zero", alert.Config{}},
		{"full", alert.Config{
			SMTP: alert.SMTPConfig{Host: "mail.example.com", Port: 2525, Username: "u", Password: "p",
				Auth: alert.AuthLogin, From: "chime <chime@example.com>", TLS: alert.TLSImplicit},
			DefaultEmails:   []string{"Ops <ops@example.com>"},
			DefaultWebhooks: []string{"https://hooks.example.com/T/B/x"},
			WebhookHeaders:  map[string]string{"Authorization": "Bearer x"},
			HTTPClient:      http.DefaultClient,
			SubjectTemplate: "{{.Kind}}: {{.Job}}",
			BodyTemplate:    "{{.Summary}} {{.At.Unix}} {{.Recipients.Emails}}",
			TextTemplate:    "{{slack .Error}} {{.Suppressed}}",
			RateLimit:       alert.RateLimit{Alerts: 5, Per: time.Hour},
			Timeout:         time.Second, Attempts: 5, RetryBackoff: time.Second, QueueSize: 10,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := alert.New(tt.cfg); err != nil {
				t.Errorf("New: %v", err)
			}
		})
	}
}

func TestRecipientsValidate(t *testing.T) {
	t.Parallel()
	if err := (alert.Recipients{Emails: []string{"a@example.com"}, Webhooks: []string{"http://h/x"}}).Validate(); err != nil {
		t.Errorf("valid recipients: %v", err)
	}
	err := alert.Recipients{Emails: []string{"a@example.com", "nope"}, Webhooks: []string{"mailto:a@b"}}.Validate()
	if miss := missing(errString(err), "Emails[1]", "Webhooks[0]"); len(miss) > 0 {
		t.Errorf("error %q lacks %q", err, miss)
	}
}

// TestTemplateFailureFallsBackToDefault shows that a template which passed
// New's check but fails on a real event still lets the alert out, in the
// default wording, and says so at Warn.
func TestTemplateFailureFallsBackToDefault(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	n, rec := newNotifier(t, alert.Config{
		DefaultWebhooks: []string{hook.URL},
		TextTemplate:    `{{if eq .JobName "invoice"}}{{index .Recipients.Emails 3}}{{else}}custom{{end}}`,
	})

	deliver(t, n, failureEvent())

	reqs := hook.Requests()
	if len(reqs) != 1 {
		t.Fatalf("webhook received %d requests, want 1", len(reqs))
	}
	if got := reqs[0].Payload.Text; !strings.HasPrefix(got, "*Job billing.invoice failed*") {
		t.Errorf("text = %q, want the default template's", got)
	}
	warns := warnings(rec, "alert template failed; the default was used")
	if len(warns) != 1 {
		t.Fatalf("logged %d template warnings, want 1", len(warns))
	}
	if got := warns[0].Attrs["error"].String(); !strings.Contains(got, "TextTemplate") || !strings.Contains(got, "index out of range") {
		t.Errorf("error = %q, want the template's name and what failed", got)
	}
}

func TestCustomTemplates(t *testing.T) {
	t.Parallel()
	ms := mailtest.Start(t, &mailtest.Options{TLS: mailtest.StartTLS})
	hook := startHookServer(t)
	n, _ := newNotifier(t, alert.Config{
		SMTP:            smtpConfig(ms, alert.TLSStartTLS, "", ""),
		DefaultEmails:   []string{"ops@example.com"},
		DefaultWebhooks: []string{hook.URL},
		SubjectTemplate: "ALERT {{.Kind}} {{.Job}}\n(ignored line break)",
		BodyTemplate:    "run {{.ExecutionID}} on {{.NodeID}}: {{.Error}}",
		TextTemplate:    "{{.Job}} {{slack .Error}}",
	})

	deliver(t, n, failureEvent())

	msgs := ms.Messages()
	if len(msgs) != 1 {
		t.Fatalf("server received %d messages, want 1", len(msgs))
	}
	if want := "ALERT failure billing.invoice (ignored line break)"; msgs[0].Subject != want {
		t.Errorf("Subject = %q, want %q", msgs[0].Subject, want)
	}
	if want := "run exec-42 on node-a: upstream answered 502 <Bad Gateway>"; strings.TrimSpace(msgs[0].Body) != want {
		t.Errorf("body = %q, want %q", msgs[0].Body, want)
	}
	if reqs := hook.Requests(); len(reqs) != 1 || reqs[0].Payload.Text != "billing.invoice upstream answered 502 &lt;Bad Gateway&gt;" {
		t.Errorf("webhook requests %+v, want one with the custom text", reqs)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
