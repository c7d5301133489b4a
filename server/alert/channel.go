package alert

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultPagerDutyURL is the default for Config.PagerDutyURL: the Events
// API v2 endpoint of PagerDuty.
const DefaultPagerDutyURL = "https://events.pagerduty.com/v2/enqueue"

// The severities of a PagerDuty event (PagerDutyTarget.Severity).
const (
	SeverityCritical = "critical"
	SeverityError    = "error"
	SeverityWarning  = "warning"
	SeverityInfo     = "info"
)

// PagerDutyTarget is a PagerDuty service that receives alerts through
// the Events API v2.
type PagerDutyTarget struct {
	// RoutingKey is the integration key of the service's Events API v2
	// integration. It is a secret. Required.
	RoutingKey string
	// Severity is the severity of the incidents alerts trigger:
	// SeverityCritical, SeverityError, SeverityWarning or SeverityInfo.
	// Defaults to SeverityError.
	Severity string
}

// Validate reports what makes t unusable: *FieldError values naming the
// field as in JSON ("routing_key", "severity"), joined.
func (t PagerDutyTarget) Validate() error {
	var errs []error
	for _, p := range t.problems() {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// problems lists what makes t unusable.
func (t PagerDutyTarget) problems() []*FieldError {
	var errs []*FieldError
	if strings.TrimSpace(t.RoutingKey) == "" {
		errs = append(errs, &FieldError{Field: "routing_key", Reason: "required"})
	} else if strings.ContainsAny(t.RoutingKey, "\r\n\x00") {
		errs = append(errs, &FieldError{Field: "routing_key", Reason: "holds a line break or NUL"})
	} else if !strings.Contains(t.RoutingKey, "{{") && strings.ContainsAny(t.RoutingKey, " \t") {
		errs = append(errs, &FieldError{Field: "routing_key", Reason: "holds a space; an integration key is one word"})
	}
	switch t.Severity {
	case "", SeverityCritical, SeverityError, SeverityWarning, SeverityInfo:
	default:
		errs = append(errs, &FieldError{Field: "severity", Reason: fmt.Sprintf("%q is not one of %q, %q, %q, %q",
			t.Severity, SeverityCritical, SeverityError, SeverityWarning, SeverityInfo)})
	}
	return errs
}

// severity returns t's severity with its default applied.
func (t PagerDutyTarget) severity() string {
	if t.Severity == "" {
		return SeverityError
	}
	return t.Severity
}

// SlackPayload is the JSON body POSTed to a Slack incoming webhook: Text
// is the notification's fallback, Blocks what Slack displays.
type SlackPayload struct {
	Text   string       `json:"text"`
	Blocks []SlackBlock `json:"blocks"`
}

// SlackBlock is one Block Kit layout block: a "header" or "section" with
// Text, or a "context" with Elements.
type SlackBlock struct {
	Type     string      `json:"type"`
	Text     *SlackText  `json:"text,omitempty"`
	Elements []SlackText `json:"elements,omitempty"`
}

// SlackText is a Block Kit text object: Type "plain_text" or "mrkdwn".
type SlackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// slackSectionMax is the most characters Slack takes in a section's text.
const slackSectionMax = 3000

// slackHeaderMax is the most characters Slack takes in a header's text.
const slackHeaderMax = 150

func slackBody(data TemplateData, text string) ([]byte, error) {
	context := []string{"*Kind:* " + string(data.Kind), "*At:* " + data.At.UTC().Format(time.RFC3339)}
	if data.NodeID != "" {
		context = append(context, "*Node:* "+slackEscaper.Replace(data.NodeID))
	}
	p := SlackPayload{
		Text: truncate(data.Summary, slackSectionMax),
		Blocks: []SlackBlock{
			{Type: "header", Text: &SlackText{Type: "plain_text", Text: truncate(data.Summary, slackHeaderMax)}},
			{Type: "section", Text: &SlackText{Type: "mrkdwn", Text: truncate(text, slackSectionMax)}},
			{Type: "context", Elements: []SlackText{{Type: "mrkdwn", Text: strings.Join(context, "  ·  ")}}},
		},
	}
	return json.Marshal(p)
}

// TeamsPayload is the JSON body POSTed to a Microsoft Teams incoming
// webhook (a Workflows "post to a channel when a webhook request is
// received" flow): a message with one Adaptive Card attachment.
type TeamsPayload struct {
	Type        string            `json:"type"`
	Attachments []TeamsAttachment `json:"attachments"`
}

// TeamsAttachment is an attachment of a Teams message.
type TeamsAttachment struct {
	ContentType string       `json:"contentType"`
	ContentURL  *string      `json:"contentUrl"`
	Content     AdaptiveCard `json:"content"`
}

// AdaptiveCard is an Adaptive Card (schema version 1.4).
type AdaptiveCard struct {
	Schema  string              `json:"$schema"`
	Type    string              `json:"type"`
	Version string              `json:"version"`
	Body    []AdaptiveCardBlock `json:"body"`
}

// AdaptiveCardBlock is a "TextBlock" (Text) or a "FactSet" (Facts) of an
// Adaptive Card.
type AdaptiveCardBlock struct {
	Type   string         `json:"type"`
	Text   string         `json:"text,omitempty"`
	Weight string         `json:"weight,omitempty"`
	Size   string         `json:"size,omitempty"`
	Color  string         `json:"color,omitempty"`
	Wrap   bool           `json:"wrap,omitempty"`
	Facts  []AdaptiveFact `json:"facts,omitempty"`
}

// AdaptiveFact is one title and value of a FactSet.
type AdaptiveFact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

// The constants of a Teams Adaptive Card message.
const (
	teamsMessageType   = "message"
	adaptiveCardType   = "application/vnd.microsoft.card.adaptive"
	adaptiveCardSchema = "http://adaptivecards.io/schemas/adaptive-card.json"
)

func teamsBody(data TemplateData) ([]byte, error) {
	facts := []AdaptiveFact{{Title: "Kind", Value: string(data.Kind)}}
	add := func(title, value string) {
		if value != "" {
			facts = append(facts, AdaptiveFact{Title: title, Value: value})
		}
	}
	add("Job", data.Job)
	add("Execution", data.ExecutionID)
	if data.Attempt > 0 {
		add("Attempt", fmt.Sprint(data.Attempt))
	}
	if !data.ScheduledTime.IsZero() {
		add("Scheduled", data.ScheduledTime.UTC().Format(time.RFC3339))
	}
	add("At", data.At.UTC().Format(time.RFC3339))
	add("Node", data.NodeID)
	if data.Suppressed > 0 {
		add("Suppressed", fmt.Sprintf("%d similar alerts since the last one", data.Suppressed))
	}
	color := "Attention"
	if data.Kind == KindRecovered {
		color = "Good"
	}
	body := []AdaptiveCardBlock{
		{Type: "TextBlock", Text: data.Summary, Weight: "Bolder", Size: "Medium", Color: color, Wrap: true},
		{Type: "FactSet", Facts: facts},
	}
	if data.Error != "" {
		body = append(body, AdaptiveCardBlock{Type: "TextBlock", Text: data.Error, Wrap: true})
	}
	if data.Detail != "" {
		body = append(body, AdaptiveCardBlock{Type: "TextBlock", Text: data.Detail, Wrap: true})
	}
	return json.Marshal(TeamsPayload{
		Type: teamsMessageType,
		Attachments: []TeamsAttachment{{
			ContentType: adaptiveCardType,
			Content:     AdaptiveCard{Schema: adaptiveCardSchema, Type: "AdaptiveCard", Version: "1.4", Body: body},
		}},
	})
}

// PagerDutyEvent is the JSON body of an Events API v2 request.
type PagerDutyEvent struct {
	RoutingKey  string `json:"routing_key"`
	EventAction string `json:"event_action"`
	// DedupKey is one per job (or per lost node), so that a KindRecovered
	// alert resolves the incident the job's earlier alerts opened.
	DedupKey string            `json:"dedup_key"`
	Client   string            `json:"client,omitempty"`
	Payload  *PagerDutyDetails `json:"payload,omitempty"`
}

// PagerDutyDetails is the "payload" object of a trigger event.
type PagerDutyDetails struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp,omitempty"`
	Component     string         `json:"component,omitempty"`
	Group         string         `json:"group,omitempty"`
	Class         string         `json:"class,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

// The event actions of PagerDutyEvent.
const (
	PagerDutyTrigger = "trigger"
	PagerDutyResolve = "resolve"
)

// pagerDutySummaryMax is the most characters PagerDuty takes in a summary.
const pagerDutySummaryMax = 1024

// DedupKey returns the PagerDuty dedup_key of ev's alerts: one per job,
// or per node for a node lost while running nothing.
func DedupKey(ev Event) string {
	if ev.JobGroup == "" && ev.JobName == "" {
		return "chime/node/" + ev.NodeID
	}
	return "chime/job/" + ev.JobKey().String()
}

// pagerDutyBody renders ev for target; routingKey is target's key with
// any template expanded.
func pagerDutyBody(data TemplateData, target PagerDutyTarget, routingKey string) ([]byte, error) {
	ev := PagerDutyEvent{RoutingKey: routingKey, DedupKey: DedupKey(data.Event), Client: "chime", EventAction: PagerDutyTrigger}
	if data.Kind == KindRecovered {
		ev.EventAction = PagerDutyResolve
		return json.Marshal(ev)
	}
	source := data.NodeID
	if source == "" {
		source = "chime"
	}
	details := map[string]any{"kind": string(data.Kind)}
	put := func(k, v string) {
		if v != "" {
			details[k] = v
		}
	}
	put("job", data.Job)
	put("execution_id", data.ExecutionID)
	put("node_id", data.NodeID)
	put("error", data.Error)
	put("detail", data.Detail)
	if data.Attempt > 0 {
		details["attempt"] = data.Attempt
	}
	if !data.ScheduledTime.IsZero() {
		details["scheduled_time"] = data.ScheduledTime.UTC().Format(time.RFC3339Nano)
	}
	if data.Suppressed > 0 {
		details["suppressed"] = data.Suppressed
	}
	ev.Payload = &PagerDutyDetails{
		Summary:       truncate(data.Summary, pagerDutySummaryMax),
		Source:        source,
		Severity:      target.severity(),
		Timestamp:     data.At.UTC().Format(time.RFC3339Nano),
		Component:     data.Job,
		Group:         data.JobGroup,
		Class:         string(data.Kind),
		CustomDetails: details,
	}
	return json.Marshal(ev)
}

// truncate cuts s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
