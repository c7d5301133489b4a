package alert

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"time"
)

// Kind says what an alert is about.
type Kind string

// The kinds of alert.
const (
	// KindFailure: an execution failed and no retry is left.
	KindFailure Kind = "failure"
	// KindTimeout: an execution ran past its time limit and was cancelled.
	KindTimeout Kind = "timeout"
	// KindMisfire: a trigger fired too late, or not at all, and its misfire
	// instruction applied.
	KindMisfire Kind = "misfire"
	// KindNodeLost: a node stopped checking in and was declared dead; when
	// the event names a job, that job was running on it.
	KindNodeLost Kind = "node_lost"
	// KindDeadMan: a job has not succeeded within the window its
	// DeadManWatch allows.
	KindDeadMan Kind = "dead_man"
	// KindRunningLong: an execution is still running past the time its
	// job allows before it alerts.
	KindRunningLong Kind = "running_long"
	// KindRecovered: a job succeeded for the first time after an alert
	// about its failure. To PagerDuty it resolves the job's incident.
	KindRecovered Kind = "recovered"
)

// JobKey identifies a job: a name within a group.
type JobKey struct {
	Group string
	Name  string
}

// String returns "group.name", the form chime uses for keys.
func (k JobKey) String() string { return k.Group + "." + k.Name }

// Recipients are where an alert goes. On an Event they are the job's own
// recipients: each non-empty list replaces the matching default list of the
// Config (Emails replaces Config.DefaultEmails, Webhooks replaces
// Config.DefaultWebhooks, Slack Config.DefaultSlack, Teams
// Config.DefaultTeams and PagerDuty Config.DefaultPagerDuty), and each
// empty list leaves its default in place.
type Recipients struct {
	// Emails are e-mail addresses, such as "ops@example.com" or
	// "Ops <ops@example.com>".
	Emails []string
	// Webhooks are http or https URLs that receive a JSON POST of a
	// WebhookPayload.
	Webhooks []string
	// Slack are the URLs of Slack incoming webhooks, which receive a
	// SlackPayload.
	Slack []string
	// Teams are the URLs of Microsoft Teams incoming webhooks (Workflows),
	// which receive a TeamsPayload.
	Teams []string
	// PagerDuty are services that receive Events API v2 events.
	PagerDuty []PagerDutyTarget
}

// Empty reports whether r names no recipient at all.
func (r Recipients) Empty() bool {
	return len(r.Emails) == 0 && len(r.Webhooks) == 0 && len(r.Slack) == 0 && len(r.Teams) == 0 && len(r.PagerDuty) == 0
}

// Validate reports the first address or URL that cannot be used, naming
// it, so that a server can refuse a job's alert settings when they are
// given instead of when an alert fails to go out.
func (r Recipients) Validate() error {
	var errs []error
	for i, addr := range r.Emails {
		if err := validateEmail(addr); err != nil {
			errs = append(errs, &FieldError{Field: fmt.Sprintf("Emails[%d]", i), Reason: err.Error(), Err: err})
		}
	}
	for _, list := range []struct {
		field string
		urls  []string
	}{{"Webhooks", r.Webhooks}, {"Slack", r.Slack}, {"Teams", r.Teams}} {
		for i, u := range list.urls {
			if err := validateWebhookURL(u); err != nil {
				errs = append(errs, &FieldError{Field: fmt.Sprintf("%s[%d]", list.field, i), Reason: err.Error(), Err: err})
			}
		}
	}
	for i, t := range r.PagerDuty {
		for _, p := range t.problems() {
			p.Field = fmt.Sprintf("PagerDuty[%d].%s", i, p.Field)
			errs = append(errs, p)
		}
	}
	return errors.Join(errs...)
}

// FieldError is one problem of alert settings: Field names the setting
// ("Emails[0]", "PagerDuty[1].severity", "routing_key"), Reason says what
// is wrong with it. Validate methods join them.
type FieldError struct {
	Field  string
	Reason string
	// Err is the error behind Reason, if any.
	Err error
}

// Error returns the field and the reason.
func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns the error behind the reason.
func (e *FieldError) Unwrap() error { return e.Err }

func validateEmail(addr string) error {
	if _, err := mail.ParseAddress(addr); err != nil {
		return fmt.Errorf("%q is not an e-mail address: %w", addr, err)
	}
	return nil
}

func validateWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("%q: no host", raw)
	}
	return nil
}

// Event is one thing worth an alert. Notifier.Notify takes it; the
// templates see its fields through TemplateData.
type Event struct {
	// Kind says what happened.
	Kind Kind
	// JobGroup and JobName identify the job. Both are empty for a
	// KindNodeLost event about a node that ran nothing.
	JobGroup string
	JobName  string
	// ExecutionID identifies the execution that failed, timed out or was
	// running on a lost node; empty for misfires and dead-man alerts.
	ExecutionID string
	// Attempt is the execution's attempt number, from 1; 0 when unknown.
	Attempt int
	// ScheduledTime is the fire time the execution was for; zero when the
	// event is about no single firing.
	ScheduledTime time.Time
	// At is when it happened. Notify sets it to Config.Now() when zero.
	At time.Time
	// NodeID is the node involved: the one that ran the execution, or the
	// one that was lost.
	NodeID string
	// Error is the job's error or the reason for the failure.
	Error string
	// Detail is any further explanation, such as a misfire instruction or
	// a dead-man window.
	Detail string
	// Recipients are the job's own recipients; see Recipients for how
	// they combine with the defaults.
	Recipients Recipients
}

// JobKey returns the key of the event's job.
func (e Event) JobKey() JobKey { return JobKey{Group: e.JobGroup, Name: e.JobName} }
