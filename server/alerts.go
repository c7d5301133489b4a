package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/secret"
)

// alertSettingsName is the runner_settings row of the alert settings set
// through the API.
const alertSettingsName = "alerts"

// settingsCacheTTL is how long a node uses the alert settings it read
// before reading them again, so that a change on one node reaches the
// others without a read per alert.
const settingsCacheTTL = 5 * time.Second

// storedAlertSettings are the alert settings set through the API.
type storedAlertSettings struct {
	DefaultEmails    []string                `json:"default_emails,omitempty"`
	DefaultWebhooks  []string                `json:"default_webhooks,omitempty"`
	DefaultSlack     []string                `json:"default_slack,omitempty"`
	DefaultTeams     []string                `json:"default_teams,omitempty"`
	DefaultPagerDuty []alert.PagerDutyTarget `json:"default_pagerduty,omitempty"`
	RateLimit        time.Duration           `json:"rate_limit,omitempty"`
}

// recipients are the default recipients of st.
func (st storedAlertSettings) recipients() alert.Recipients {
	return alert.Recipients{
		Emails: st.DefaultEmails, Webhooks: st.DefaultWebhooks,
		Slack: st.DefaultSlack, Teams: st.DefaultTeams, PagerDuty: st.DefaultPagerDuty,
	}
}

// alerter sends the server's alerts through the alert outbox (see
// alertOutbox), with the default recipients and rate limit of the
// settings stored through the API (falling back to the configured ones).
// Its alert.Notifier applies the rate limit, splits an alert into
// deliveries and sends each one; the notifier's own queue and delivery
// goroutine are not used, so it is never started. A changed rate limit
// replaces the notifier.
type alerter struct {
	base     alert.Config // the configured notifier, without default recipients
	defaults storedAlertSettings
	state    *stateStore
	log      *slog.Logger

	mu       sync.Mutex
	n        *alert.Notifier
	rate     alert.RateLimit
	cached   storedAlertSettings
	cachedAt time.Time
	old      []*alert.Notifier // the replaced notifiers, whose stats still count
	// box is where alerts go, set by useOutbox before start.
	box *alertOutbox
	// dropped counts the alerts the outbox could not take: decided while
	// the server stopped, or impossible to encode.
	dropped atomic.Uint64
}

func newAlerter(cfg alert.Config, state *stateStore, log *slog.Logger) (*alerter, error) {
	// The notifier below never sees the default recipients, so the chat
	// and PagerDuty ones are checked here.
	chat := alert.Recipients{Slack: cfg.DefaultSlack, Teams: cfg.DefaultTeams, PagerDuty: cfg.DefaultPagerDuty}
	if err := chat.Validate(); err != nil {
		return nil, fmt.Errorf("%w: Alert.Default%w", ErrInvalidConfig, err)
	}
	a := &alerter{
		state: state,
		log:   log,
		defaults: storedAlertSettings{
			DefaultEmails:    cfg.DefaultEmails,
			DefaultWebhooks:  cfg.DefaultWebhooks,
			DefaultSlack:     cfg.DefaultSlack,
			DefaultTeams:     cfg.DefaultTeams,
			DefaultPagerDuty: cfg.DefaultPagerDuty,
			RateLimit:        cfg.RateLimit.Per,
		},
	}
	// The server resolves default recipients itself, from the settings
	// stored through the API or else these, and hands every event its
	// recipients.
	cfg.DefaultEmails, cfg.DefaultWebhooks, cfg.DefaultSlack, cfg.DefaultTeams, cfg.DefaultPagerDuty = nil, nil, nil, nil, nil
	if cfg.Logger == nil {
		cfg.Logger = log
	}
	a.base = cfg
	n, err := alert.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: Alert: %w", ErrInvalidConfig, err)
	}
	a.n, a.rate = n, cfg.RateLimit
	return a, nil
}

// start starts the outbox's delivery loop.
func (a *alerter) start(ctx context.Context) error {
	if a.box == nil {
		return errors.New("server: the alerter has no outbox")
	}
	a.box.start(ctx, a.deliver)
	return nil
}

// stop stops the outbox's delivery loop and sends what is due, waiting
// at most timeout; what is left waits in the outbox.
func (a *alerter) stop(ctx context.Context, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a.box.stop(ctx, a.deliver)
}

// settings returns the alert settings in force: those stored through the
// API, else the configured ones.
func (a *alerter) settings(ctx context.Context) (storedAlertSettings, error) {
	a.mu.Lock()
	if !a.cachedAt.IsZero() && time.Since(a.cachedAt) < settingsCacheTTL {
		defer a.mu.Unlock()
		return a.cached, nil
	}
	a.mu.Unlock()
	st := a.defaults
	if _, err := a.state.setting(ctx, alertSettingsName, &st); err != nil {
		return a.defaults, err
	}
	a.mu.Lock()
	a.cached, a.cachedAt = st, time.Now()
	a.mu.Unlock()
	return st, nil
}

// forget drops the cached settings, after this node changed them.
func (a *alerter) forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cachedAt = time.Time{}
}

// notify queues an alert about a job whose plan p says where its alerts
// go (nil for the defaults), unless the job turned its alerts off.
func (a *alerter) notify(ctx context.Context, p *plan, ev alert.Event) {
	var own alert.Recipients
	if p != nil {
		if p.alertsOff {
			return
		}
		own = p.recipients
	}
	st, err := a.settings(ctx)
	if err != nil {
		a.log.Warn("cannot read the alert settings; using the configured ones", "error", err)
	}
	ev.Recipients = withDefaults(own, st.recipients())
	if ev.Recipients.Empty() {
		a.log.Debug("alert has no recipient", "kind", string(ev.Kind), "job", ev.JobKey().String())
		return
	}
	a.enqueue(ctx, a.notifier(st.RateLimit), ev)
}

// withDefaults returns own with each empty list replaced by def's.
func withDefaults(own, def alert.Recipients) alert.Recipients {
	pick := func(own, def []string) []string {
		if len(own) == 0 {
			return def
		}
		return own
	}
	r := alert.Recipients{
		Emails: pick(own.Emails, def.Emails), Webhooks: pick(own.Webhooks, def.Webhooks),
		Slack: pick(own.Slack, def.Slack), Teams: pick(own.Teams, def.Teams), PagerDuty: own.PagerDuty,
	}
	if len(r.PagerDuty) == 0 {
		r.PagerDuty = def.PagerDuty
	}
	return r
}

// notifier returns the notifier for the rate limit per, replacing the
// current one when the limit changed.
func (a *alerter) notifier(per time.Duration) *alert.Notifier {
	a.mu.Lock()
	defer a.mu.Unlock()
	want := a.base.RateLimit
	if per > 0 {
		want = alert.RateLimit{Alerts: max(want.Alerts, 1), Per: per}
	}
	if want == a.rate {
		return a.n
	}
	cfg := a.base
	cfg.RateLimit = want
	n, err := alert.New(cfg)
	if err != nil {
		a.log.Error("cannot apply the new alert rate limit; keeping the old one", "error", err)
		return a.n
	}
	a.old = append(a.old, a.n)
	a.n, a.rate = n, want
	return n
}

// stats sums what every notifier of the alerter did.
func (a *alerter) stats() alert.Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	var sum alert.Stats
	for _, n := range append(slices.Clone(a.old), a.n) {
		st := n.Stats()
		sum.Delivered += st.Delivered
		sum.Failed += st.Failed
		sum.Suppressed += st.Suppressed
		sum.Dropped += st.Dropped
	}
	sum.Dropped += a.dropped.Load()
	return sum
}

// AlertSettings returns the global alert settings: those set through the
// API, or the configured ones.
func (s *Server) AlertSettings(ctx context.Context) (*api.AlertSettings, error) {
	st, err := s.alerts.settings(ctx)
	if err != nil {
		return nil, err
	}
	out := &api.AlertSettings{
		DefaultEmails:   st.DefaultEmails,
		DefaultWebhooks: st.DefaultWebhooks,
		DefaultSlack:    st.DefaultSlack,
		DefaultTeams:    st.DefaultTeams,
		RateLimit:       formatDuration(st.RateLimit),
	}
	for _, t := range st.DefaultPagerDuty {
		out.DefaultPagerDuty = append(out.DefaultPagerDuty, api.PagerDutyTarget{RoutingKey: t.RoutingKey, Severity: t.Severity})
	}
	if out.RateLimit == "" {
		out.RateLimit = formatDuration(10 * time.Minute) // the alert package's default
	}
	return out, nil
}

// PutAlertSettings replaces the global alert settings. Every node applies
// them within a few seconds.
func (s *Server) PutAlertSettings(ctx context.Context, actor string, in api.AlertSettings) error {
	if err := (alert.Recipients{Emails: in.DefaultEmails}).Validate(); err != nil {
		return invalidf("default_emails", "%v", err)
	}
	if err := (alert.Recipients{Webhooks: in.DefaultWebhooks}).Validate(); err != nil {
		return invalidf("default_webhooks", "%v", err)
	}
	refs := make(map[string]string)
	for _, list := range []struct {
		field string
		urls  []string
	}{{"default_webhooks", in.DefaultWebhooks}, {"default_slack", in.DefaultSlack}, {"default_teams", in.DefaultTeams}} {
		if err := checkAlertURLs(list.field, list.urls); err != nil {
			return err
		}
		if err := s.checkWebhooksEgress(list.field, list.urls); err != nil {
			return err
		}
		for i, u := range list.urls {
			field := fmt.Sprintf("%s[%d]", list.field, i)
			if strings.Contains(u, secret.Mask) {
				return invalidf(field, "holds %q, a mask, not a value: write the real URL or, better, {{secret \"name\"}}", secret.Mask)
			}
			if err := addSecretRefs(refs, field, u); err != nil {
				return err
			}
		}
	}
	pd, aerr := pagerDutyTargets("default_pagerduty", in.DefaultPagerDuty)
	if aerr != nil {
		return aerr
	}
	for i, t := range pd {
		field := fmt.Sprintf("default_pagerduty[%d].routing_key", i)
		if strings.Contains(t.RoutingKey, secret.Mask) {
			return invalidf(field, "holds %q, a mask, not a value: write the real key or, better, {{secret \"name\"}}", secret.Mask)
		}
		if err := addSecretRefs(refs, field, t.RoutingKey); err != nil {
			return err
		}
	}
	if err := s.checkSecretsExist(ctx, refs); err != nil {
		return err
	}
	rate, aerr := parseDuration("rate_limit", in.RateLimit)
	if aerr != nil {
		return aerr
	}
	st := storedAlertSettings{
		DefaultEmails: in.DefaultEmails, DefaultWebhooks: in.DefaultWebhooks,
		DefaultSlack: in.DefaultSlack, DefaultTeams: in.DefaultTeams, DefaultPagerDuty: pd, RateLimit: rate,
	}
	if err := s.state.setSetting(ctx, alertSettingsName, st); err != nil {
		return err
	}
	s.alerts.forget()
	s.audit(ctx, actor, auditAlertsUpdate, "alerts", map[string]any{
		"default_emails": len(in.DefaultEmails), "default_webhooks": len(in.DefaultWebhooks),
		"default_slack": len(in.DefaultSlack), "default_teams": len(in.DefaultTeams), "default_pagerduty": len(pd),
		"rate_limit": in.RateLimit,
	})
	return nil
}

// addSecretRefs adds the secrets text refers to, in field, to refs
// (secret name → the first field naming it).
func addSecretRefs(refs map[string]string, field, text string) *api.Error {
	names, err := jobs.SecretNames(field, text)
	if err != nil {
		return fieldErr("", err)
	}
	for _, name := range names {
		if _, ok := refs[name]; !ok {
			refs[name] = field
		}
	}
	return nil
}

// testAlertKind is the kind of the alert TestAlert sends.
const testAlertKind alert.Kind = "test"

// TestAlert queues a test alert to the default recipients. Delivery is
// asynchronous: a failure shows in the server's log and metrics.
func (s *Server) TestAlert(ctx context.Context, actor string) error {
	st, err := s.alerts.settings(ctx)
	if err != nil {
		return err
	}
	if st.recipients().Empty() {
		return invalidf("", "no default e-mail address, webhook, Slack, Teams or PagerDuty recipient is set: set them with PUT %s/alerts first", api.Version)
	}
	s.alerts.notify(ctx, nil, alert.Event{
		Kind: testAlertKind, JobGroup: "chime", JobName: "alert-test", NodeID: s.NodeID(), At: s.now(),
		Detail: fmt.Sprintf("A test alert that %s sent from node %s. If you read this, alerts reach you.", actor, s.NodeID()),
	})
	s.audit(ctx, actor, auditAlertsTest, "alerts", nil)
	return nil
}
