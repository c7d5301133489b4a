package jobs_test

import (
	"errors"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/jobs"
)

func testVars() jobs.Vars {
	return jobs.Vars{
		JobGroup:      "reports",
		JobName:       "nightly",
		TriggerGroup:  "reports",
		TriggerName:   "nightly-0",
		ExecutionID:   "exec-42",
		NodeID:        "node-a",
		ScheduledTime: time.Date(2025, 3, 30, 2, 0, 0, 0, time.UTC),
		FireTime:      time.Date(2025, 3, 30, 2, 0, 1, 500_000_000, time.UTC),
		Attempt:       2,
		Params:        map[string]any{"region": "eu-west", "quote": `say "hi"`, "n": 3},
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, want string
	}{
		{"literal", "https://example.com/run", "https://example.com/run"},
		{"keys", "{{.JobGroup}}/{{.JobName}} by {{.TriggerGroup}}/{{.TriggerName}}", "reports/nightly by reports/nightly-0"},
		{"execution", "{{.ExecutionID}}@{{.NodeID}} try {{.Attempt}}", "exec-42@node-a try 2"},
		{"times", `{{.ScheduledTime.Unix}} {{.FireTime.Format "2006-01-02T15:04:05.000Z07:00"}}`, "1743300000 2025-03-30T02:00:01.500Z"},
		{"param", "region={{.Params.region}} n={{.Params.n}}", "region=eu-west n=3"},
		{"urlquery", "?q={{urlquery .Params.quote}}", "?q=say+%22hi%22"},
		{"json", `{"q":{{json .Params.quote}},"at":{{json .FireTime}}}`, `{"q":"say \"hi\"","at":"2025-03-30T02:00:01.5Z"}`},
		{"literal braces", `{{"{{"}}x}}`, "{{x}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := jobs.Expand("field", tt.text, testVars())
			if err != nil {
				t.Fatalf("Expand(%q): %v", tt.text, err)
			}
			if got != tt.want {
				t.Errorf("Expand(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestExpandErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		// wantMsg is the whole error text.
		wantMsg string
		// parses is whether CheckTemplate accepts the text.
		parses bool
	}{
		{
			name:    "missing param",
			text:    "{{.Params.nope}}",
			wantMsg: `http.body: template: 1:9: executing "http.body" at <.Params.nope>: map has no entry for key "nope"`,
			parses:  true,
		},
		{
			name:    "unknown variable",
			text:    "{{.Job}}",
			wantMsg: `http.body: template: 1:2: executing "http.body" at <.Job>: can't evaluate field Job in type jobs.Vars`,
			parses:  true,
		},
		{
			name:    "syntax",
			text:    "{{.JobName",
			wantMsg: `http.body: template: 1: unclosed action`,
		},
		{
			name:    "unknown function",
			text:    "{{upper .JobName}}",
			wantMsg: `http.body: template: 1: function "upper" not defined`,
		},
		{
			// 200 million iterations of nothing: seconds of CPU, no output.
			name:    "range over an integer",
			text:    "{{range 200000000}}{{end}}",
			wantMsg: `http.body: template: {{range}} is not allowed: job templates have no loops or template calls, so that expanding one is always quick; render lists with json`,
		},
		{
			name:    "range nested in if",
			text:    "{{if .Params}}{{else}}{{range .Params}}{{.}}{{end}}{{end}}",
			wantMsg: `http.body: template: {{range}} is not allowed: job templates have no loops or template calls, so that expanding one is always quick; render lists with json`,
		},
		{
			name:    "recursive template",
			text:    `{{define "r"}}{{template "r" .}}{{end}}{{template "r" .}}`,
			wantMsg: `http.body: template: {{define "r"}} is not allowed: job templates cannot call templates`,
		},
		{
			name:    "block",
			text:    `{{with .Params}}{{block "b" .}}x{{end}}{{end}}`,
			wantMsg: `http.body: template: {{define "b"}} is not allowed: job templates cannot call templates`,
		},
		{
			name:    "expansion too long",
			text:    `{{printf "%0600000d" 0}}{{printf "%0600000d" 0}}`,
			wantMsg: `http.body: template: expands to more than 1048576 bytes`,
			parses:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := jobs.Expand("http.body", tt.text, testVars())
			if err == nil {
				t.Fatalf("Expand(%q) = %q, want an error", tt.text, got)
			}
			var fe *jobs.FieldError
			if !errors.As(err, &fe) || fe.Field != "http.body" {
				t.Fatalf("Expand(%q) error %v (%T), want a *FieldError for http.body", tt.text, err, err)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("Expand(%q) error:\n got %s\nwant %s", tt.text, err, tt.wantMsg)
			}
			checkErr := jobs.CheckTemplate("http.body", tt.text)
			if tt.parses && checkErr != nil {
				t.Errorf("CheckTemplate(%q) = %v, want nil", tt.text, checkErr)
			}
			if !tt.parses && (checkErr == nil || checkErr.Error() != tt.wantMsg) {
				t.Errorf("CheckTemplate(%q) = %v, want %s", tt.text, checkErr, tt.wantMsg)
			}
		})
	}
}

// TestExpandURLBounded checks that a URL template's values are bounded as
// an expansion is, though ExpandURL keeps them aside to escape them.
func TestExpandURLBounded(t *testing.T) {
	t.Parallel()
	const big = `{{printf "%0500000d" 0}}`
	_, err := jobs.ExpandURL("http.url", "https://example.com/?a="+big+"&b="+big+"&c="+big, testVars())
	const want = "http.url: template: expands to more than 1048576 bytes"
	if err == nil || err.Error() != want {
		t.Errorf("ExpandURL error = %v, want %q", err, want)
	}
	got, err := jobs.ExpandURL("http.url", "https://example.com/{{.JobName}}?r={{.Params.quote}}", testVars())
	if err != nil || got != "https://example.com/nightly?r=say+%22hi%22" {
		t.Errorf("ExpandURL = %q, %v", got, err)
	}
}
