package alert

import (
	"fmt"
	"strings"
	"text/template"
	"time"
)

// TemplateData is what SubjectTemplate, BodyTemplate and TextTemplate
// render: the Event's fields (.Kind, .JobGroup, .JobName, .ExecutionID,
// .Attempt, .ScheduledTime, .At, .NodeID, .Error, .Detail) and the fields
// below.
type TemplateData struct {
	Event
	// Job is "group.name", or empty when the event names no job.
	Job string
	// Summary is one line saying what happened, such as
	// "Job billing.invoice failed".
	Summary string
	// Suppressed is how many alerts of this job and kind the rate limit
	// held back since the last one that went out.
	Suppressed int
	// DeliveryKey identifies the alert; every recipient of one alert
	// sees the same key, and a copy sent again carries it too.
	DeliveryKey string
}

// Default templates. Besides text/template's built-in functions they may
// call slack, which escapes &, < and > as Slack's message format needs.
const (
	// DefaultSubjectTemplate is the default for Config.SubjectTemplate.
	DefaultSubjectTemplate = `[chime] {{.Summary}}`

	// DefaultBodyTemplate is the default for Config.BodyTemplate.
	DefaultBodyTemplate = `{{.Summary}}.
{{- if eq .Suppressed 1}}
1 similar alert was suppressed since the last one.
{{- else if .Suppressed}}
{{.Suppressed}} similar alerts were suppressed since the last one.
{{- end}}

Kind:       {{.Kind}}
{{- with .Job}}
Job:        {{.}}{{end}}
{{- with .ExecutionID}}
Execution:  {{.}}{{end}}
{{- with .Attempt}}
Attempt:    {{.}}{{end}}
{{- if not .ScheduledTime.IsZero}}
Scheduled:  {{.ScheduledTime.Format "2006-01-02T15:04:05Z07:00"}}{{end}}
At:         {{.At.Format "2006-01-02T15:04:05Z07:00"}}
{{- with .NodeID}}
Node:       {{.}}{{end}}
{{- with .Error}}

Error:
{{.}}{{end}}
{{- with .Detail}}

{{.}}{{end}}
`

	// DefaultTextTemplate is the default for Config.TextTemplate. It uses
	// Slack's message format, which most chat tools accept.
	DefaultTextTemplate = `*{{slack .Summary}}*
{{- if eq .Suppressed 1}} (1 similar alert was suppressed)
{{- else if .Suppressed}} ({{.Suppressed}} similar alerts were suppressed){{end}}
{{- with .ExecutionID}}
Execution: ` + "`{{slack .}}`" + `{{with $.Attempt}} (attempt {{.}}){{end}}{{end}}
{{- with .NodeID}}
Node: ` + "`{{slack .}}`" + `{{end}}
{{- if not .ScheduledTime.IsZero}}
Scheduled: {{.ScheduledTime.Format "2006-01-02T15:04:05Z07:00"}}{{end}}
{{- with .Error}}
` + "```{{slack .}}```" + `{{end}}
{{- with .Detail}}
{{slack .}}{{end}}`
)

// templates are the three parsed templates, each with its default to fall
// back on when it fails on an event.
type templates struct {
	subject, body, text          *template.Template
	defSubject, defBody, defText *template.Template
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func parseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).
		Option("missingkey=error").
		Funcs(template.FuncMap{"slack": slackEscaper.Replace}).
		Parse(text)
}

// newTemplates parses the configured templates and renders each once on a
// sample event, so that a misspelt field fails here and not at 3 a.m.
func newTemplates(cfg Config) (*templates, error) {
	t := &templates{}
	sample := TemplateData{
		Event: Event{
			Kind: KindFailure, JobGroup: "group", JobName: "name", ExecutionID: "execution",
			Attempt: 2, ScheduledTime: time.Unix(0, 0).UTC(), At: time.Unix(1, 0).UTC(),
			NodeID: "node", Error: "error", Detail: "detail",
		},
		Job: "group.name", Summary: "Job group.name failed", Suppressed: 2,
	}
	for _, spec := range []struct {
		field, text, def string
		dst, defDst      **template.Template
	}{
		{"SubjectTemplate", cfg.SubjectTemplate, DefaultSubjectTemplate, &t.subject, &t.defSubject},
		{"BodyTemplate", cfg.BodyTemplate, DefaultBodyTemplate, &t.body, &t.defBody},
		{"TextTemplate", cfg.TextTemplate, DefaultTextTemplate, &t.text, &t.defText},
	} {
		def, err := parseTemplate(spec.field, spec.def)
		if err != nil {
			return nil, fmt.Errorf("alert: default %s: %w", spec.field, err) // a bug in this package
		}
		tmpl, err := parseTemplate(spec.field, spec.text)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, spec.field, err)
		}
		if err := tmpl.Execute(&strings.Builder{}, sample); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, spec.field, err)
		}
		*spec.dst, *spec.defDst = tmpl, def
	}
	return t, nil
}

// render executes tmpl, or def when tmpl fails on this data; the error
// says why tmpl failed and is nil when it did not.
func render(tmpl, def *template.Template, data TemplateData) (string, error) {
	var b strings.Builder
	err := tmpl.Execute(&b, data)
	if err == nil {
		return b.String(), nil
	}
	b.Reset()
	if defErr := def.Execute(&b, data); defErr != nil {
		return "", fmt.Errorf("%w; the default template failed too: %w", err, defErr)
	}
	return b.String(), fmt.Errorf("%s: %w", tmpl.Name(), err)
}

// templateData builds what the templates see for ev.
func templateData(ev Event, suppressed int) TemplateData {
	d := TemplateData{Event: ev, Suppressed: suppressed}
	if ev.JobGroup != "" || ev.JobName != "" {
		d.Job = ev.JobKey().String()
	}
	d.Summary = summary(ev.Kind, d.Job, ev.NodeID)
	return d
}

func summary(kind Kind, job, node string) string {
	switch {
	case kind == KindNodeLost && job == "":
		return fmt.Sprintf("Node %s was lost", node)
	case kind == KindNodeLost:
		return fmt.Sprintf("Job %s was running on lost node %s", job, node)
	case kind == KindFailure:
		return fmt.Sprintf("Job %s failed", job)
	case kind == KindTimeout:
		return fmt.Sprintf("Job %s timed out", job)
	case kind == KindMisfire:
		return fmt.Sprintf("Job %s misfired", job)
	case kind == KindDeadMan:
		return fmt.Sprintf("Job %s has not succeeded within its window", job)
	case kind == KindRunningLong:
		return fmt.Sprintf("Job %s is still running", job)
	case kind == KindRecovered:
		return fmt.Sprintf("Job %s recovered", job)
	default:
		return fmt.Sprintf("Job %s: %s", job, kind)
	}
}
