package alert

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The channels of a Delivery.
const (
	ChannelEmail     = "email"
	ChannelWebhook   = "webhook"
	ChannelSlack     = "slack"
	ChannelTeams     = "teams"
	ChannelPagerDuty = "pagerduty"
)

// Delivery is one alert to one recipient: all of its e-mail addresses (one
// message goes to them all), or one webhook, Slack or Teams URL, or one
// PagerDuty service. A server that keeps alerts in a durable outbox stores
// Deliveries, which encode as JSON, and hands each to Notifier.Send, as
// many times as it takes: Key, the same for every recipient of one alert,
// lets receivers drop the copies.
type Delivery struct {
	// Key identifies the alert: e-mails carry it in the
	// X-Chime-Delivery-Key header and webhooks in the payload's
	// delivery_key field and the same header.
	Key string `json:"key"`
	// Channel is one of ChannelEmail, ChannelWebhook, ChannelSlack,
	// ChannelTeams and ChannelPagerDuty.
	Channel string `json:"channel"`
	// Event is the alert; its Recipients hold this delivery's recipient
	// only.
	Event Event `json:"event"`
	// Suppressed is how many alerts of the event's job and kind the rate
	// limit held back since the last one that went out.
	Suppressed int `json:"suppressed,omitempty"`
}

// DeliveryKeyHeader is the header that carries Delivery.Key.
const DeliveryKeyHeader = "X-Chime-Delivery-Key"

// ErrPermanent is wrapped by the errors of Send that trying again cannot
// cure: a refused address, a payload that cannot be encoded, a delivery
// with no recipient.
var ErrPermanent = errors.New("alert: delivery cannot succeed")

// Admit applies the rate limit to ev as Notify does, and reports whether
// its alert may go out and, when it may, how many alerts of its job and
// kind were suppressed since the last one. It is for servers that deliver
// through an outbox of their own (see Deliveries and Send) instead of
// Notify's queue.
func (n *Notifier) Admit(ev Event) (suppressed int, ok bool) {
	now := n.cfg.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	ok, suppressed = n.limiter.allow(limitKeyOf(ev), now)
	if !ok {
		n.stats.Suppressed++
		n.log.Debug("alert suppressed by rate limit", eventAttrs(ev)...)
	}
	return suppressed, ok
}

// Deliveries splits the alert for ev into one Delivery per recipient,
// under key, with the Config's defaults for the lists ev leaves empty.
// E-mail recipients are skipped, with a Warn log, when no SMTP server is
// configured. When ev.At is zero it is set to Config.Now().
func (n *Notifier) Deliveries(ev Event, suppressed int, key string) []Delivery {
	if ev.At.IsZero() {
		ev.At = n.cfg.Now()
	}
	r := ev.Recipients
	var out []Delivery
	add := func(channel string, to Recipients) {
		d := Delivery{Key: key, Channel: channel, Event: ev, Suppressed: suppressed}
		d.Event.Recipients = to
		out = append(out, d)
	}
	if emails := or(r.Emails, n.cfg.DefaultEmails); len(emails) > 0 {
		if n.cfg.SMTP.Host == "" {
			n.log.Warn("alert e-mail skipped: no SMTP server configured", append(eventAttrs(ev), "recipients", emails)...)
		} else {
			add(ChannelEmail, Recipients{Emails: emails})
		}
	}
	for _, u := range or(r.Webhooks, n.cfg.DefaultWebhooks) {
		add(ChannelWebhook, Recipients{Webhooks: []string{u}})
	}
	for _, u := range or(r.Slack, n.cfg.DefaultSlack) {
		add(ChannelSlack, Recipients{Slack: []string{u}})
	}
	for _, u := range or(r.Teams, n.cfg.DefaultTeams) {
		add(ChannelTeams, Recipients{Teams: []string{u}})
	}
	for _, t := range or(r.PagerDuty, n.cfg.DefaultPagerDuty) {
		add(ChannelPagerDuty, Recipients{PagerDuty: []PagerDutyTarget{t}})
	}
	return out
}

// Target names d's recipient for logs, without the secrets URLs hold.
func (d Delivery) Target() string {
	r := d.Event.Recipients
	switch {
	case len(r.Emails) > 0:
		return strings.Join(r.Emails, ", ")
	case len(r.Webhooks) > 0:
		return redactURL(r.Webhooks[0])
	case len(r.Slack) > 0:
		return redactURL(r.Slack[0])
	case len(r.Teams) > 0:
		return redactURL(r.Teams[0])
	}
	return d.Channel
}

// Send makes one try at d, bounded by Config.Timeout, and returns its
// error; an error wrapping ErrPermanent will fail again. It counts a
// success in Stats.Delivered; the caller, which decides when to give up,
// counts failures with GaveUp.
func (n *Notifier) Send(ctx context.Context, d Delivery) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	if err := n.send(ctx, d); err != nil {
		return err
	}
	n.mu.Lock()
	n.stats.Delivered++
	n.mu.Unlock()
	return nil
}

// GaveUp counts in Stats.Failed a delivery that its caller will not try
// again.
func (n *Notifier) GaveUp() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.stats.Failed++
}

// send sends d once.
func (n *Notifier) send(ctx context.Context, d Delivery) error {
	data := templateData(d.Event, d.Suppressed)
	data.DeliveryKey = d.Key
	r := d.Event.Recipients
	one := func(urls []string) (string, error) {
		if len(urls) != 1 {
			return "", fmt.Errorf("%w: a %s delivery names %d URLs, not 1", ErrPermanent, d.Channel, len(urls))
		}
		return urls[0], nil
	}
	var (
		u    string
		body []byte
		err  error
	)
	switch d.Channel {
	case ChannelEmail:
		if len(r.Emails) == 0 || n.cfg.SMTP.Host == "" {
			return fmt.Errorf("%w: no e-mail address or no SMTP server", ErrPermanent)
		}
		subject := strings.Join(strings.Fields(n.render(n.templates.subject, n.templates.defSubject, data)), " ")
		return n.sendEmail(ctx, r.Emails, subject, n.render(n.templates.body, n.templates.defBody, data), d.Key)
	case ChannelWebhook:
		if u, err = one(r.Webhooks); err != nil {
			return err
		}
		body, err = webhookBody(data, n.render(n.templates.text, n.templates.defText, data))
	case ChannelSlack:
		if u, err = one(r.Slack); err != nil {
			return err
		}
		body, err = slackBody(data, n.render(n.templates.text, n.templates.defText, data))
	case ChannelTeams:
		if u, err = one(r.Teams); err != nil {
			return err
		}
		body, err = teamsBody(data)
	case ChannelPagerDuty:
		if len(r.PagerDuty) != 1 {
			return fmt.Errorf("%w: a pagerduty delivery names %d services, not 1", ErrPermanent, len(r.PagerDuty))
		}
		key, kerr := n.expand(ctx, "routing_key", r.PagerDuty[0].RoutingKey)
		if kerr != nil {
			return kerr
		}
		u = n.cfg.PagerDutyURL
		body, err = pagerDutyBody(data, r.PagerDuty[0], key)
	default:
		return fmt.Errorf("%w: unknown channel %q", ErrPermanent, d.Channel)
	}
	if err != nil { // only for times JSON cannot hold, such as year 10000
		return fmt.Errorf("%w: the payload cannot be encoded: %w", ErrPermanent, err)
	}
	return n.postJSON(ctx, u, body, d.Channel == ChannelWebhook, d.Key)
}
