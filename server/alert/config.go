package alert

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/jobs/egress"
)

// ErrInvalidConfig is wrapped by every error New returns for a Config it
// cannot use; the message names the field.
var ErrInvalidConfig = errors.New("alert: invalid config")

// The values of SMTPConfig.TLS.
const (
	// TLSStartTLS connects in plain text and upgrades with STARTTLS; a
	// server that does not offer STARTTLS is refused.
	TLSStartTLS = "starttls"
	// TLSImplicit speaks TLS from the first byte (SMTPS).
	TLSImplicit = "tls"
	// TLSNone never encrypts; see the Auth values for what that means
	// for credentials.
	TLSNone = "none"
)

// The values of SMTPConfig.Auth.
const (
	// AuthAuto picks the strongest mechanism the server offers, and
	// without TLS only one that does not reveal the password.
	AuthAuto = "auto"
	// AuthPlain uses AUTH PLAIN (RFC 4616), only over TLS or to localhost.
	AuthPlain = "plain"
	// AuthLogin uses AUTH LOGIN, only over TLS or to localhost.
	AuthLogin = "login"
)

// Config configures a Notifier. The zero value is usable: it sends nothing
// until Recipients on an event name webhooks.
type Config struct {
	// SMTP is the mail server alerts are sent through. Defaults to none:
	// e-mail recipients are then reported at Warn and skipped.
	SMTP SMTPConfig
	// DefaultEmails receive alerts for jobs that name no e-mail recipients
	// of their own. Defaults to none.
	DefaultEmails []string
	// DefaultWebhooks receive alerts for jobs that name no webhooks of
	// their own. Defaults to none.
	DefaultWebhooks []string
	// DefaultSlack are Slack incoming webhook URLs that receive alerts for
	// jobs that name no Slack webhooks of their own. Defaults to none.
	DefaultSlack []string
	// DefaultTeams are Microsoft Teams incoming webhook URLs that receive
	// alerts for jobs that name no Teams webhooks of their own. Defaults
	// to none.
	DefaultTeams []string
	// DefaultPagerDuty are PagerDuty services that receive alerts for jobs
	// that name no PagerDuty services of their own. Defaults to none.
	DefaultPagerDuty []PagerDutyTarget
	// PagerDutyURL is where PagerDuty events are POSTed. Defaults to
	// DefaultPagerDutyURL; tests point it at a local receiver.
	PagerDutyURL string
	// WebhookHeaders are added to every generic webhook request (not to
	// Slack, Teams or PagerDuty ones), for example an
	// Authorization header. Defaults to none.
	WebhookHeaders map[string]string
	// Expand, when set, expands a webhook, Slack or Teams URL (field
	// "url"), a PagerDuty routing key (field "routing_key") or a
	// WebhookHeaders value (field "headers.NAME") that holds "{{" before
	// each delivery; chime server inserts the values of {{secret "name"}}
	// references with it. An error fails the delivery, logged without the
	// URL's path and query. Defaults to none: URLs and values are sent as
	// written.
	Expand func(ctx context.Context, field, text string) (string, error)
	// HTTPClient posts to webhooks. Timeout bounds each request whatever
	// the client's own timeout. Defaults to a client like
	// http.DefaultClient.
	HTTPClient *http.Client
	// Egress, when set, decides which hosts and addresses webhooks may
	// reach, checked on every connection (see package egress): a refused
	// webhook fails at once, without retries. HTTPClient's transport must
	// then be nil or an *http.Transport, and no proxy is used. New refuses
	// DefaultWebhooks whose host Egress.CheckHost refuses. Defaults to
	// nil: webhooks may reach any address.
	Egress *egress.Policy
	// SubjectTemplate renders an e-mail's subject line, a text/template
	// over TemplateData; line breaks and runs of spaces in what it renders
	// become single spaces. Defaults to DefaultSubjectTemplate.
	SubjectTemplate string
	// BodyTemplate renders an e-mail's plain-text body, a text/template
	// over TemplateData. Defaults to DefaultBodyTemplate.
	BodyTemplate string
	// TextTemplate renders the "text" field of a webhook's JSON, which
	// Slack and compatible chat tools display, a text/template over
	// TemplateData. Defaults to DefaultTextTemplate.
	TextTemplate string
	// RateLimit bounds how many alerts one job sends for one kind.
	// Defaults to 1 every 10 minutes.
	RateLimit RateLimit
	// Timeout bounds each delivery attempt: one e-mail or one webhook
	// request. Defaults to 10s.
	Timeout time.Duration
	// Attempts is how many times a delivery is tried before it is given
	// up and logged at Warn. Defaults to 3.
	Attempts int
	// RetryBackoff is the wait before the second attempt; it doubles
	// before each later one. Defaults to 1s.
	RetryBackoff time.Duration
	// QueueSize bounds the alerts waiting for delivery; when the queue is
	// full Notify drops the alert and logs it at Warn. Defaults to 100.
	QueueSize int
	// Logger receives the notifier's logs. Defaults to slog.Default().
	Logger *slog.Logger
	// Now is the notifier's clock, read for rate limits and for events
	// without a time. Defaults to time.Now.
	Now func() time.Time
}

// SMTPConfig says how to reach a mail server.
type SMTPConfig struct {
	// Host is the server's host name or IP address. Empty means no e-mail.
	Host string
	// Port is the server's TCP port. Defaults to 587 for TLSStartTLS, 465
	// for TLSImplicit and 25 for TLSNone.
	Port int
	// Username and Password authenticate with the server; an empty
	// Username sends no AUTH. Defaults to none.
	Username string
	Password string
	// Auth is the SASL mechanism: AuthAuto, AuthPlain or AuthLogin.
	// Defaults to AuthAuto.
	Auth string
	// From is the sender address, such as "chime <chime@example.com>".
	// Required when Host is set.
	From string
	// TLS is how the connection is encrypted: TLSStartTLS, TLSImplicit or
	// TLSNone. Defaults to TLSStartTLS.
	TLS string
	// RootCAs verify the server's certificate. Defaults to the system's
	// roots.
	RootCAs *x509.CertPool
}

// RateLimit bounds the alerts of one job and kind (or, for a node lost
// while running nothing, of one node): a bucket of Alerts tokens, refilled
// at Alerts per Per. An alert that finds the bucket empty is suppressed and
// counted, and the next alert of that job and kind that goes out says how
// many were suppressed.
type RateLimit struct {
	// Alerts is how many alerts may go out at once, and how many per Per.
	// A negative value turns rate limiting off. Defaults to 1.
	Alerts int
	// Per is the period over which Alerts alerts are allowed. Defaults to
	// 10 minutes.
	Per time.Duration
}

// WithDefaults returns a copy of cfg with its defaults applied, as the
// Notifier applies them: the configuration it runs with.
func (cfg Config) WithDefaults() Config {
	if cfg.SMTP.TLS == "" {
		cfg.SMTP.TLS = TLSStartTLS
	}
	if cfg.SMTP.Port == 0 {
		switch cfg.SMTP.TLS {
		case TLSImplicit:
			cfg.SMTP.Port = 465
		case TLSNone:
			cfg.SMTP.Port = 25
		default:
			cfg.SMTP.Port = 587
		}
	}
	if cfg.SMTP.Auth == "" {
		cfg.SMTP.Auth = AuthAuto
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.PagerDutyURL == "" {
		cfg.PagerDutyURL = DefaultPagerDutyURL
	}
	if cfg.SubjectTemplate == "" {
		cfg.SubjectTemplate = DefaultSubjectTemplate
	}
	if cfg.BodyTemplate == "" {
		cfg.BodyTemplate = DefaultBodyTemplate
	}
	if cfg.TextTemplate == "" {
		cfg.TextTemplate = DefaultTextTemplate
	}
	if cfg.RateLimit.Alerts == 0 {
		cfg.RateLimit.Alerts = 1
	}
	if cfg.RateLimit.Per == 0 {
		cfg.RateLimit.Per = 10 * time.Minute
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Attempts == 0 {
		cfg.Attempts = 3
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = time.Second
	}
	if cfg.QueueSize == 0 {
		cfg.QueueSize = 100
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg
}

// validate checks a Config that has its defaults applied, other than its
// templates, and names every field it cannot use.
func (cfg Config) validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInvalidConfig, field, fmt.Sprintf(format, args...)))
	}
	s := cfg.SMTP
	if s.Host != "" {
		if s.From == "" {
			bad("SMTP.From", "required when SMTP.Host is set")
		} else if err := validateEmail(s.From); err != nil {
			bad("SMTP.From", "%v", err)
		}
	}
	if s.Port < 1 || s.Port > 65535 {
		bad("SMTP.Port", "%d is not a TCP port", s.Port)
	}
	switch s.TLS {
	case TLSStartTLS, TLSImplicit, TLSNone:
	default:
		bad("SMTP.TLS", "%q is not one of %q, %q, %q", s.TLS, TLSStartTLS, TLSImplicit, TLSNone)
	}
	switch s.Auth {
	case AuthAuto, AuthPlain, AuthLogin:
	default:
		bad("SMTP.Auth", "%q is not one of %q, %q, %q", s.Auth, AuthAuto, AuthPlain, AuthLogin)
	}
	if s.Username == "" && s.Password != "" {
		bad("SMTP.Username", "required when SMTP.Password is set")
	}
	if len(cfg.DefaultEmails) > 0 && s.Host == "" {
		bad("DefaultEmails", "set, but SMTP.Host is empty")
	}
	for i, addr := range cfg.DefaultEmails {
		if err := validateEmail(addr); err != nil {
			bad(fmt.Sprintf("DefaultEmails[%d]", i), "%v", err)
		}
	}
	for i, u := range cfg.DefaultWebhooks {
		if err := validateWebhookURL(u); err != nil {
			bad(fmt.Sprintf("DefaultWebhooks[%d]", i), "%v", err)
		} else if err := cfg.Egress.CheckURL(u); err != nil {
			bad(fmt.Sprintf("DefaultWebhooks[%d]", i), "%v", err)
		}
	}
	for _, list := range []struct {
		field string
		urls  []string
	}{{"DefaultSlack", cfg.DefaultSlack}, {"DefaultTeams", cfg.DefaultTeams}, {"PagerDutyURL", []string{cfg.PagerDutyURL}}} {
		for i, u := range list.urls {
			field := fmt.Sprintf("%s[%d]", list.field, i)
			if list.field == "PagerDutyURL" {
				field = list.field
			}
			if err := validateWebhookURL(u); err != nil {
				bad(field, "%v", err)
			} else if err := cfg.Egress.CheckURL(u); err != nil {
				bad(field, "%v", err)
			}
		}
	}
	for i, t := range cfg.DefaultPagerDuty {
		for _, err := range t.problems() {
			bad(fmt.Sprintf("DefaultPagerDuty[%d]", i), "%v", err)
		}
	}
	for name, value := range cfg.WebhookHeaders {
		if !validHeaderName(name) {
			bad("WebhookHeaders", "%q is not a valid header name", name)
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			bad("WebhookHeaders", "the value of %q holds a line break or NUL", name)
		}
	}
	if cfg.RateLimit.Per < 0 {
		bad("RateLimit.Per", "%v is negative", cfg.RateLimit.Per)
	}
	if cfg.Timeout < 0 {
		bad("Timeout", "%v is negative", cfg.Timeout)
	}
	if cfg.Attempts < 1 {
		bad("Attempts", "%d is less than 1", cfg.Attempts)
	}
	if cfg.RetryBackoff < 0 {
		bad("RetryBackoff", "%v is negative", cfg.RetryBackoff)
	}
	if cfg.QueueSize < 1 {
		bad("QueueSize", "%d is less than 1", cfg.QueueSize)
	}
	return errors.Join(errs...)
}

// validHeaderName reports whether name is an HTTP token (RFC 9110).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
