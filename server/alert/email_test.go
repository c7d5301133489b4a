package alert_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/internal/testkit/mailtest"
	"github.com/chime-scheduler/chime/server/alert"
)

func smtpConfig(ms *mailtest.Server, tlsMode, user, password string) alert.SMTPConfig {
	return alert.SMTPConfig{
		Host:     ms.Host,
		Port:     ms.Port,
		Username: user,
		Password: password,
		From:     "chime <chime@example.com>",
		TLS:      tlsMode,
		RootCAs:  ms.RootCAs,
	}
}

func TestEmailOverSTARTTLSWithAuth(t *testing.T) {
	t.Parallel()
	ms := mailtest.Start(t, &mailtest.Options{TLS: mailtest.StartTLS, User: "alerts", Password: "s3cret"})
	n, rec := newNotifier(t, alert.Config{
		SMTP:          smtpConfig(ms, alert.TLSStartTLS, "alerts", "s3cret"),
		DefaultEmails: []string{"ops@example.com", "Billing Team <billing@example.com>"},
	})

	deliver(t, n, failureEvent())

	msgs := ms.Messages()
	if len(msgs) != 1 {
		t.Fatalf("server received %d messages, want 1; warnings: %+v", len(msgs), warnings(rec, "alert delivery failed"))
	}
	m := msgs[0]
	if !m.OverTLS {
		t.Error("message was not sent over TLS")
	}
	if m.User != "alerts" {
		t.Errorf("authenticated user = %q, want alerts", m.User)
	}
	if m.EnvelopeFrom != "chime@example.com" {
		t.Errorf("MAIL FROM = %q, want chime@example.com", m.EnvelopeFrom)
	}
	if want := []string{"ops@example.com", "billing@example.com"}; !slices.Equal(m.EnvelopeTo, want) {
		t.Errorf("RCPT TO = %q, want %q", m.EnvelopeTo, want)
	}
	if got := m.Header.Get("From"); !strings.Contains(got, "chime@example.com") {
		t.Errorf("From header = %q, want chime@example.com", got)
	}
	if got := m.Header.Get("To"); len(missing(got, "ops@example.com", "billing@example.com")) > 0 {
		t.Errorf("To header = %q, want both recipients", got)
	}
	if want := "[chime] Job billing.invoice failed"; m.Subject != want {
		t.Errorf("Subject = %q, want %q", m.Subject, want)
	}
	if m.Header.Get("Date") == "" || m.Header.Get("Message-Id") == "" {
		t.Errorf("Date or Message-ID missing: %v", m.Header)
	}
	if miss := missing(m.Body, "billing.invoice", "exec-42", "upstream answered 502 <Bad Gateway>",
		"node-a", "Attempt:    3", "2025-03-01T09:00:00Z"); len(miss) > 0 {
		t.Errorf("body lacks %q:\n%s", miss, m.Body)
	}
	if got := n.Stats(); got != (alert.Stats{Delivered: 1}) {
		t.Errorf("Stats = %+v, want 1 delivered", got)
	}
}

func TestEmailOverImplicitTLS(t *testing.T) {
	t.Parallel()
	ms := mailtest.Start(t, &mailtest.Options{TLS: mailtest.ImplicitTLS, User: "alerts", Password: "s3cret"})
	n, rec := newNotifier(t, alert.Config{
		SMTP:          smtpConfig(ms, alert.TLSImplicit, "alerts", "s3cret"),
		DefaultEmails: []string{"ops@example.com"},
	})

	deliver(t, n, failureEvent())

	msgs := ms.Messages()
	if len(msgs) != 1 {
		t.Fatalf("server received %d messages, want 1; warnings: %+v", len(msgs), warnings(rec, "alert delivery failed"))
	}
	if !msgs[0].OverTLS || msgs[0].User != "alerts" {
		t.Errorf("message over TLS %v as %q, want over TLS as alerts", msgs[0].OverTLS, msgs[0].User)
	}
}

// TestEmailDeliveryFailures shows each way the mail server can refuse an
// alert: every one is retried, then logged at Warn and counted, and no
// message gets through.
func TestEmailDeliveryFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		server     mailtest.Options
		tls        string
		user, pass string
		wantErr    string
	}{
		{
			name:    "wrong password",
			server:  mailtest.Options{TLS: mailtest.StartTLS, User: "alerts", Password: "s3cret"},
			tls:     alert.TLSStartTLS,
			user:    "alerts",
			pass:    "guess",
			wantErr: "535",
		},
		{
			name:    "auth required but not configured",
			server:  mailtest.Options{TLS: mailtest.StartTLS, User: "alerts", Password: "s3cret"},
			tls:     alert.TLSStartTLS,
			wantErr: "Please authenticate",
		},
		{
			name:    "starttls required but not offered",
			server:  mailtest.Options{User: "alerts", Password: "s3cret"},
			tls:     alert.TLSStartTLS,
			user:    "alerts",
			pass:    "s3cret",
			wantErr: "STARTTLS",
		},
		{
			name:    "no TLS keeps PLAIN credentials off the wire",
			server:  mailtest.Options{User: "alerts", Password: "s3cret", InsecureAuth: true},
			tls:     alert.TLSNone,
			user:    "alerts",
			pass:    "s3cret",
			wantErr: "supported authentication mechanism",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ms := mailtest.Start(t, &tt.server)
			n, rec := newNotifier(t, alert.Config{
				SMTP:          smtpConfig(ms, tt.tls, tt.user, tt.pass),
				DefaultEmails: []string{"ops@example.com"},
				Attempts:      2,
			})

			deliver(t, n, failureEvent())

			if msgs := ms.Messages(); len(msgs) != 0 {
				t.Errorf("server accepted %d messages, want none", len(msgs))
			}
			warns := warnings(rec, "alert delivery failed")
			if len(warns) != 1 {
				t.Fatalf("logged %d delivery failures at Warn, want 1: %+v", len(warns), rec.Records())
			}
			w := warns[0].Attrs
			got := w["error"].String()
			t.Logf("delivery error: %s", got)
			if !strings.Contains(got, tt.wantErr) {
				t.Errorf("error = %q, want it to mention %q", got, tt.wantErr)
			}
			if w["channel"].String() != "email" || w["attempts"].Int64() != 2 ||
				w["job_key"].String() != "billing.invoice" || w["execution_id"].String() != "exec-42" {
				t.Errorf("warning attributes %v, want channel email, 2 attempts, the job and execution", w)
			}
			if got := n.Stats(); got != (alert.Stats{Failed: 1}) {
				t.Errorf("Stats = %+v, want 1 failed", got)
			}
		})
	}
}

func TestEmailRecipients(t *testing.T) {
	t.Parallel()
	ms := mailtest.Start(t, &mailtest.Options{TLS: mailtest.StartTLS})
	hook := startHookServer(t)
	n, _ := newNotifier(t, alert.Config{
		SMTP:            smtpConfig(ms, alert.TLSStartTLS, "", ""),
		DefaultEmails:   []string{"ops@example.com"},
		DefaultWebhooks: []string{hook.URL + "/default"},
	})
	own := failureEvent()
	own.JobName = "own" // another job, so the rate limit lets it through
	own.Recipients = alert.Recipients{Emails: []string{"owner@example.com"}}

	deliver(t, n, failureEvent(), own)

	var got [][]string
	for _, m := range ms.Messages() {
		got = append(got, m.EnvelopeTo)
	}
	want := [][]string{{"ops@example.com"}, {"owner@example.com"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("recipients = %q, want %q: a job's own e-mails replace the defaults", got, want)
	}
	// The job named no webhooks, so the default webhook hears of both.
	if reqs := hook.Requests(); len(reqs) != 2 {
		t.Errorf("default webhook received %d requests, want 2", len(reqs))
	}
}

func TestEmailWithoutSMTPServerIsSkipped(t *testing.T) {
	t.Parallel()
	n, rec := newNotifier(t, alert.Config{})
	ev := failureEvent()
	ev.Recipients.Emails = []string{"owner@example.com"}

	deliver(t, n, ev)

	if got := warnings(rec, "alert e-mail skipped: no SMTP server configured"); len(got) != 1 {
		t.Errorf("logged %d skip warnings, want 1", len(got))
	}
	if got := n.Stats(); got != (alert.Stats{}) {
		t.Errorf("Stats = %+v, want zero", got)
	}
}
