package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/jobs/egress"
)

// WebhookPayload is the JSON body POSTed to webhooks. Text is for chat
// tools such as Slack, which display it; the other fields are for programs.
type WebhookPayload struct {
	// Text is the alert rendered by Config.TextTemplate.
	Text string `json:"text"`
	// Kind says what happened.
	Kind Kind       `json:"kind"`
	Job  WebhookJob `json:"job"`
	// ExecutionID, Attempt, ScheduledTime, At, NodeID, Error and Detail
	// are the Event's fields; ScheduledTime is null when the event has
	// none.
	ExecutionID   string     `json:"execution_id"`
	Attempt       int        `json:"attempt"`
	ScheduledTime *time.Time `json:"scheduled_time"`
	At            time.Time  `json:"at"`
	NodeID        string     `json:"node_id"`
	Error         string     `json:"error"`
	Detail        string     `json:"detail"`
	// Suppressed is how many alerts of this job and kind the rate limit
	// held back since the last one that went out.
	Suppressed int `json:"suppressed"`
	// DeliveryKey identifies the alert: a receiver that sees it twice
	// (delivery is at least once) can drop the copy.
	DeliveryKey string `json:"delivery_key"`
}

// WebhookJob identifies the job in a WebhookPayload; both fields are empty
// for a node lost while running nothing.
type WebhookJob struct {
	Group string `json:"group"`
	Name  string `json:"name"`
}

func webhookBody(data TemplateData, text string) ([]byte, error) {
	p := WebhookPayload{
		Text:        text,
		Kind:        data.Kind,
		Job:         WebhookJob{Group: data.JobGroup, Name: data.JobName},
		ExecutionID: data.ExecutionID,
		Attempt:     data.Attempt,
		At:          data.At,
		NodeID:      data.NodeID,
		Error:       data.Error,
		Detail:      data.Detail,
		Suppressed:  data.Suppressed,
		DeliveryKey: data.DeliveryKey,
	}
	if !data.ScheduledTime.IsZero() {
		p.ScheduledTime = &data.ScheduledTime
	}
	return json.Marshal(p)
}

// postJSON POSTs body to u, with Config.WebhookHeaders when headers is
// set, and key in DeliveryKeyHeader; any status but 2xx is an error.
func (n *Notifier) postJSON(ctx context.Context, u string, body []byte, headers bool, key string) error {
	u, err := n.expand(ctx, "url", u)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		// The error quotes the URL, which may hold a secret.
		return fmt.Errorf("post %s: the URL does not parse", redactURL(u))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "chime-alert")
	if key != "" {
		req.Header.Set(DeliveryKeyHeader, key)
	}
	if headers {
		for name, value := range n.cfg.WebhookHeaders {
			if value, err = n.expand(ctx, "headers."+name, value); err != nil {
				return err
			}
			req.Header.Set(name, value)
		}
	}
	resp, err := n.cfg.HTTPClient.Do(req)
	if err != nil {
		// A *url.Error quotes the whole URL; keep its secret out of logs.
		if urlErr, ok := errors.AsType[*url.Error](err); ok {
			err = urlErr.Err
		}
		if refused, ok := errors.AsType[*egress.RefusedError](err); ok {
			err = refused // without the dial error's repetition of the address
		}
		return fmt.Errorf("post %s: %w", redactURL(u), err)
	}
	defer resp.Body.Close()
	// Read a little of the body: it often says what was wrong, and reading
	// it lets the connection be reused.
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook answered %s: %q", resp.Status, snippet)
	}
	return nil
}

// expand applies Config.Expand to text when it holds a template.
func (n *Notifier) expand(ctx context.Context, field, text string) (string, error) {
	if n.cfg.Expand == nil || !strings.Contains(text, "{{") {
		return text, nil
	}
	return n.cfg.Expand(ctx, field, text)
}

// redactURL returns u without its path, query and user info, which for
// chat webhooks often hold a secret token, for logs.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}
