package alert_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/alert"
)

// The structs below mirror the receivers' documented schemas, written from
// their documentation and not from this package's types, so that a
// payload that drifts from the documented shape fails to decode (unknown
// fields are refused) or misses a required field.

// slackMessage is a Slack incoming webhook message
// (https://api.slack.com/messaging/webhooks, Block Kit reference): "text"
// is required as the notification fallback when "blocks" are given.
type slackMessage struct {
	Text   string `json:"text"`
	Blocks []struct {
		Type string `json:"type"`
		Text *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"text"`
		Elements []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"elements"`
	} `json:"blocks"`
}

// teamsMessage is a Microsoft Teams Workflows webhook message carrying
// an Adaptive Card (learn.microsoft.com, "Create incoming webhooks with
// Workflows"; adaptivecards.io schema).
type teamsMessage struct {
	Type        string `json:"type"`
	Attachments []struct {
		ContentType string  `json:"contentType"`
		ContentURL  *string `json:"contentUrl"`
		Content     struct {
			Schema  string `json:"$schema"`
			Type    string `json:"type"`
			Version string `json:"version"`
			Body    []struct {
				Type   string `json:"type"`
				Text   string `json:"text"`
				Weight string `json:"weight"`
				Size   string `json:"size"`
				Color  string `json:"color"`
				Wrap   bool   `json:"wrap"`
				Facts  []struct {
					Title string `json:"title"`
					Value string `json:"value"`
				} `json:"facts"`
			} `json:"body"`
		} `json:"content"`
	} `json:"attachments"`
}

// pagerDutyEvent is a PagerDuty Events API v2 event
// (developer.pagerduty.com, "Send an Alert Event"): routing_key and
// event_action always; payload with summary, source and severity for a
// trigger.
type pagerDutyEvent struct {
	RoutingKey  string `json:"routing_key"`
	EventAction string `json:"event_action"`
	DedupKey    string `json:"dedup_key"`
	Client      string `json:"client"`
	ClientURL   string `json:"client_url"`
	Payload     *struct {
		Summary       string         `json:"summary"`
		Source        string         `json:"source"`
		Severity      string         `json:"severity"`
		Timestamp     string         `json:"timestamp"`
		Component     string         `json:"component"`
		Group         string         `json:"group"`
		Class         string         `json:"class"`
		CustomDetails map[string]any `json:"custom_details"`
	} `json:"payload"`
}

// receiver is a local HTTP receiver that decodes every body strictly into
// a T and answers status.
type receiver[T any] struct {
	*httptest.Server
	status int

	mu     sync.Mutex
	got    []T
	header []http.Header
	errs   []string
}

func newReceiver[T any](t *testing.T, status int) *receiver[T] {
	t.Helper()
	r := &receiver[T]{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		var v T
		err := dec.Decode(&v)
		r.mu.Lock()
		defer r.mu.Unlock()
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
			r.errs = append(r.errs, req.Method+" with Content-Type "+req.Header.Get("Content-Type"))
		}
		if err != nil {
			r.errs = append(r.errs, err.Error()+" in "+string(body))
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.got = append(r.got, v)
		r.header = append(r.header, req.Header.Clone())
		w.WriteHeader(r.status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver[T]) received(t *testing.T) []T {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.errs {
		t.Errorf("receiver: %s", e)
	}
	return slices.Clone(r.got)
}

func TestSlackPayload(t *testing.T) {
	t.Parallel()
	slack := newReceiver[slackMessage](t, http.StatusOK)
	n, _ := newNotifier(t, alert.Config{WebhookHeaders: map[string]string{"Authorization": "Bearer generic-only"}})
	ev := failureEvent()
	ev.Recipients.Slack = []string{slack.URL + "/services/T000/B000/XXXX"}

	deliver(t, n, ev)

	got := slack.received(t)
	if len(got) != 1 {
		t.Fatalf("Slack received %d messages, want 1", len(got))
	}
	m := got[0]
	if m.Text != "Job billing.invoice failed" {
		t.Errorf("text = %q, want the summary", m.Text)
	}
	var types []string
	for _, b := range m.Blocks {
		types = append(types, b.Type)
		switch b.Type {
		case "header":
			if b.Text == nil || b.Text.Type != "plain_text" || b.Text.Text == "" {
				t.Errorf("header block %+v, want plain_text", b)
			}
		case "section":
			if b.Text == nil || b.Text.Type != "mrkdwn" || !strings.Contains(b.Text.Text, "upstream answered 502 &lt;Bad Gateway&gt;") {
				t.Errorf("section block %+v, want mrkdwn with the escaped error", b.Text)
			}
		case "context":
			if len(b.Elements) == 0 || b.Elements[0].Type != "mrkdwn" || !strings.Contains(b.Elements[0].Text, "node-a") {
				t.Errorf("context block %+v, want the node in mrkdwn", b.Elements)
			}
		}
	}
	if !slices.Equal(types, []string{"header", "section", "context"}) {
		t.Errorf("block types %v, want header, section, context", types)
	}
	if h := slack.header[0].Get("Authorization"); h != "" {
		t.Errorf("Slack got the generic webhooks' header Authorization: %q", h)
	}
}

func TestTeamsPayload(t *testing.T) {
	t.Parallel()
	teams := newReceiver[teamsMessage](t, http.StatusAccepted)
	n, _ := newNotifier(t, alert.Config{DefaultTeams: []string{teams.URL + "/workflows/123"}})

	deliver(t, n, failureEvent())

	got := teams.received(t)
	if len(got) != 1 {
		t.Fatalf("Teams received %d messages, want 1", len(got))
	}
	m := got[0]
	if m.Type != "message" || len(m.Attachments) != 1 {
		t.Fatalf("message %+v, want type message with one attachment", m)
	}
	a := m.Attachments[0]
	if a.ContentType != "application/vnd.microsoft.card.adaptive" || a.ContentURL != nil {
		t.Errorf("attachment contentType %q contentUrl %v, want an adaptive card with a null contentUrl", a.ContentType, a.ContentURL)
	}
	c := a.Content
	if c.Type != "AdaptiveCard" || c.Version == "" || c.Schema != "http://adaptivecards.io/schemas/adaptive-card.json" {
		t.Errorf("card type %q version %q schema %q, want an AdaptiveCard with a version and the schema", c.Type, c.Version, c.Schema)
	}
	if len(c.Body) < 2 || c.Body[0].Type != "TextBlock" || c.Body[0].Text != "Job billing.invoice failed" {
		t.Fatalf("card body %+v, want the summary in a TextBlock first", c.Body)
	}
	facts := map[string]string{}
	for _, b := range c.Body {
		for _, f := range b.Facts {
			facts[f.Title] = f.Value
		}
	}
	want := map[string]string{"Kind": "failure", "Job": "billing.invoice", "Execution": "exec-42", "Attempt": "3",
		"Scheduled": "2025-03-01T09:00:00Z", "At": "2025-03-01T09:00:07Z", "Node": "node-a"}
	for k, v := range want {
		if facts[k] != v {
			t.Errorf("fact %s = %q, want %q", k, facts[k], v)
		}
	}
}

func TestPagerDutyTriggerAndResolve(t *testing.T) {
	t.Parallel()
	pd := newReceiver[pagerDutyEvent](t, http.StatusAccepted)
	n, _ := newNotifier(t, alert.Config{PagerDutyURL: pd.URL + "/v2/enqueue"})
	target := alert.PagerDutyTarget{RoutingKey: "R0UT1NGKEY", Severity: alert.SeverityCritical}
	fail := failureEvent()
	fail.Recipients.PagerDuty = []alert.PagerDutyTarget{target}
	recovered := alert.Event{Kind: alert.KindRecovered, JobGroup: "billing", JobName: "invoice", ExecutionID: "exec-43",
		At: fail.At.Add(time.Hour), Recipients: fail.Recipients}
	other := fail
	other.JobName = "refund"
	other.Recipients.PagerDuty = []alert.PagerDutyTarget{{RoutingKey: "R0UT1NGKEY"}}

	deliver(t, n, fail, other, recovered)

	got := pd.received(t)
	if len(got) != 3 {
		t.Fatalf("PagerDuty received %d events, want 3", len(got))
	}
	trig := got[0]
	if trig.RoutingKey != "R0UT1NGKEY" || trig.EventAction != "trigger" || trig.DedupKey == "" || trig.Payload == nil {
		t.Fatalf("first event %+v, want a trigger with the routing key, a dedup_key and a payload", trig)
	}
	p := trig.Payload
	if p.Summary != "Job billing.invoice failed" || p.Source != "node-a" || p.Severity != "critical" {
		t.Errorf("payload summary %q source %q severity %q, want the summary, the node and critical", p.Summary, p.Source, p.Severity)
	}
	if _, err := time.Parse(time.RFC3339Nano, p.Timestamp); err != nil {
		t.Errorf("timestamp %q is not ISO 8601: %v", p.Timestamp, err)
	}
	if p.CustomDetails["execution_id"] != "exec-42" || p.CustomDetails["error"] != "upstream answered 502 <Bad Gateway>" {
		t.Errorf("custom_details %v, want the execution and the error", p.CustomDetails)
	}
	if got[1].DedupKey == trig.DedupKey || got[1].Payload == nil || got[1].Payload.Severity != "error" {
		t.Errorf("other job's event %+v, want its own dedup_key and the default severity error", got[1])
	}
	res := got[2]
	if res.EventAction != "resolve" || res.DedupKey != trig.DedupKey || res.RoutingKey != "R0UT1NGKEY" {
		t.Errorf("recovery event %+v, want resolve with dedup_key %q", res, trig.DedupKey)
	}
}

func TestPagerDutyExpandsRoutingKey(t *testing.T) {
	t.Parallel()
	pd := newReceiver[pagerDutyEvent](t, http.StatusAccepted)
	n, _ := newNotifier(t, alert.Config{
		PagerDutyURL:     pd.URL,
		DefaultPagerDuty: []alert.PagerDutyTarget{{RoutingKey: `{{secret "pd"}}`}},
		Expand: func(_ context.Context, field, text string) (string, error) {
			if field != "routing_key" {
				return "", errors.New("unexpected field " + field)
			}
			return "expanded-key", nil
		},
	})
	deliver(t, n, failureEvent())
	got := pd.received(t)
	if len(got) != 1 || got[0].RoutingKey != "expanded-key" {
		t.Errorf("events %+v, want one with the expanded routing key", got)
	}
}

func TestChannelValidation(t *testing.T) {
	t.Parallel()
	err := alert.Recipients{
		Slack:     []string{"ftp://hooks.slack.com/x"},
		Teams:     []string{"https:///x"},
		PagerDuty: []alert.PagerDutyTarget{{Severity: "fatal"}, {RoutingKey: "KEY loud"}, {RoutingKey: `{{secret "pd key"}}`}},
	}.Validate()
	if miss := missing(errString(err), "Slack[0]", "scheme must be http or https", "Teams[0]", "no host",
		"PagerDuty[0].routing_key: required", `PagerDuty[0].severity: "fatal" is not one of`, "PagerDuty[1].routing_key: holds a space"); len(miss) > 0 {
		t.Errorf("error %q lacks %q", err, miss)
	}
	if strings.Contains(errString(err), "PagerDuty[2]") {
		t.Errorf("error %q refuses a {{secret}} reference", err)
	}
	_, err = alert.New(alert.Config{PagerDutyURL: "nope", DefaultSlack: []string{"x"},
		DefaultPagerDuty: []alert.PagerDutyTarget{{RoutingKey: "k", Severity: "loud"}}})
	if miss := missing(errString(err), "PagerDutyURL", "DefaultSlack[0]", "DefaultPagerDuty[0]: severity"); len(miss) > 0 {
		t.Errorf("New: error %q lacks %q", err, miss)
	}
}

func TestDeadManSharedStateAlertsOnce(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	state := alert.NewMemoryDeadManState()
	h := newSuccessHistory()
	a, b := alert.NewDeadManChecker(h, state), alert.NewDeadManChecker(h, state)
	w := []alert.DeadManWatch{{JobGroup: "g", JobName: "j", Window: time.Hour, Since: t0}}
	total := 0
	for _, at := range []time.Duration{time.Hour, time.Hour + time.Minute, 2 * time.Hour} {
		for _, c := range []*alert.DeadManChecker{a, b} {
			evs, err := c.Check(t.Context(), t0.Add(at), w)
			if err != nil {
				t.Fatal(err)
			}
			total += len(evs)
		}
	}
	if total != 2 {
		t.Errorf("two checkers sharing a state sent %d alerts over two windows, want 2", total)
	}
}
