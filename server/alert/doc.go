// Package alert tells people when chime jobs go wrong: by e-mail over
// SMTP, by generic JSON webhooks, and in the native formats of Slack,
// Microsoft Teams and PagerDuty.
//
// # Kinds
//
// An Event has a Kind:
//
//   - KindFailure: an execution failed and no retry is left;
//   - KindTimeout: an execution ran past its time limit;
//   - KindMisfire: a trigger fired late and its misfire instruction applied;
//   - KindNodeLost: a node was declared dead (with a job: the job was
//     running on it);
//   - KindDeadMan: a job has not succeeded within its window;
//   - KindRunningLong: an execution is still running past its job's limit;
//   - KindRecovered: a job succeeded after an alert about its failure.
//
// The server calls Notifier.Notify with the kinds as they happen; it
// decides which conditions raise them. Dead-man alerts come from a
// DeadManChecker, which the server calls periodically with the current
// time and its DeadManWatch list; the checker asks a SuccessHistory when
// each job last succeeded and returns one event per job per silent
// window. It keeps what it alerted for in a DeadManState: in memory
// (MemoryDeadManState), or in a database the nodes of a cluster share, so
// that each alert is claimed by one node and survives restarts.
//
// # Delivery
//
// Notify never blocks: it puts the alert on a bounded queue (dropping it,
// with a Warn log, when the queue is full), and one goroutine, run from
// Notifier.Start to Notifier.Stop, delivers the queue in order. Each
// e-mail and each webhook request is tried up to Config.Attempts times,
// each try bounded by Config.Timeout, with a doubling backoff between
// tries; one that still fails is logged at Warn and counted in Stats.
// Delivery is at least once: a try whose answer was lost is made again, so
// a receiver may now and then see an alert twice.
//
// A server that must not lose alerts when a node dies keeps them in a
// durable outbox instead of this queue: Admit applies the rate limit,
// Deliveries splits the alert into one Delivery per recipient under one
// delivery key (JSON, for a database row), and Send makes one try at one
// Delivery, leaving retries to the outbox. Every e-mail carries its key in
// the X-Chime-Delivery-Key header, and every webhook request in that
// header and, for generic webhooks, in the payload's delivery_key field,
// so that receivers can drop the copies at-least-once delivery sends.
//
// E-mail goes through Config.SMTP with STARTTLS by default (a server that
// does not offer it is refused), implicit TLS, or no TLS, and
// authenticates when a username is set. One message goes to all the
// recipients of an alert.
//
// A webhook receives a POST with Content-Type application/json and a
// WebhookPayload body: a "text" field rendered for chat tools, and the
// event's fields for programs. A Slack incoming webhook receives a
// SlackPayload (text and Block Kit blocks), a Microsoft Teams webhook a
// TeamsPayload (a message with an Adaptive Card), and PagerDuty, at
// Config.PagerDutyURL, one Events API v2 PagerDutyEvent per target: a
// trigger, or for KindRecovered a resolve, with one dedup key per job
// (DedupKey), so that a recovery resolves the job's incident. Any status
// but 2xx is a failed try. With
// Config.Egress set, every webhook connection is checked against that
// egress.Policy (chime server refuses loopback, link-local and private
// addresses unless allowed); a refused webhook fails at once, without
// retries, and the log names the address and the rule.
//
// # Recipients
//
// Config.DefaultEmails, DefaultWebhooks, DefaultSlack, DefaultTeams and
// DefaultPagerDuty receive every alert, unless the Event's Recipients name
// the job's own: each non-empty list of the job's replaces the default of
// its channel, each list on its own. So a job with its own e-mail
// addresses and no webhooks alerts its addresses and the default webhooks.
//
// # Rate limiting
//
// So that a flapping job cannot flood anyone, alerts are counted per job
// and kind (per node and kind for a node lost while running nothing)
// against Config.RateLimit, by default one alert every 10 minutes. An
// alert over the limit is suppressed and counted, and the next alert for
// that job and kind that goes out says how many were suppressed.
//
// # Templates
//
// Config.SubjectTemplate and Config.BodyTemplate render e-mails, and
// Config.TextTemplate renders a webhook's "text" field. They are
// text/template templates over TemplateData (the Slack section's text is
// TextTemplate's too), which offers
//
//	.Kind .JobGroup .JobName .ExecutionID .Attempt .ScheduledTime .At
//	.NodeID .Error .Detail
//	.Recipients              the Event's fields
//	.Job                     "group.name", empty without a job
//	.Summary                 one line, such as "Job billing.invoice failed"
//	.Suppressed              alerts held back since the last one
//
// and a slack function that escapes text for Slack's message format. New
// renders each template on a sample event and refuses one that fails; a
// template that fails on a real event is logged at Warn and the default
// (DefaultSubjectTemplate, DefaultBodyTemplate, DefaultTextTemplate) is
// used instead.
package alert
