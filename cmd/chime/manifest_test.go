package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

func TestReadManifestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml, want string
	}{
		{
			name: "unknown field",
			yaml: "jobs:\n  - group: g\n    name: n\n    type: http\n    tigger: []\n",
			want: `unknown field "tigger"`,
		},
		{
			name: "wrong type",
			yaml: "jobs:\n  - group: g\n    name: [n]\n",
			want: "jobs.name",
		},
		{
			name: "not YAML",
			yaml: "jobs: [\n",
			want: "jobs.yaml: yaml: line 1: did not find expected node content",
		},
		{
			name: "empty",
			yaml: "# nothing\n",
			want: "jobs.yaml: no jobs and no calendars",
		},
		{
			name: "job without a name",
			yaml: "jobs:\n  - group: g\n    type: http\n",
			want: "jobs.yaml: jobs[0]: group and name are required",
		},
		{
			name: "duplicate job",
			yaml: "jobs:\n  - {group: g, name: n, type: http}\n  - {group: h, name: n, type: http}\n  - {group: g, name: n, type: shell}\n",
			want: "jobs.yaml: jobs[2]: job g/n is also jobs[0]",
		},
		{
			name: "bad cron",
			yaml: "jobs:\n  - group: g\n    name: n\n    type: http\n    triggers:\n      - schedule: {kind: cron, expression: '0 0 25 * * ?'}\n",
			want: `jobs.yaml: jobs[0] (g/n): triggers[0].schedule.expression: cannot parse`,
		},
		{
			name: "unknown zone",
			yaml: "jobs:\n  - group: g\n    name: n\n    type: http\n    triggers:\n      - schedule: {kind: cron, expression: '@daily', time_zone: Mars/Base}\n",
			want: `Mars/Base`,
		},
		{
			name: "trigger without a schedule",
			yaml: "jobs:\n  - group: g\n    name: n\n    type: http\n    triggers:\n      - calendar: holidays\n",
			want: "jobs.yaml: jobs[0] (g/n): triggers[0].schedule: required",
		},
		{
			name: "calendar without a definition",
			yaml: "calendars:\n  - name: holidays\n",
			want: "jobs.yaml: calendars[0] (holidays): calendar: required",
		},
		{
			name: "workflow without a name",
			yaml: "workflows:\n  - tasks: [{name: a, type: http}]\n",
			want: "jobs.yaml: workflows[0].name: required",
		},
		{
			name: "duplicate workflow",
			yaml: "workflows:\n  - {name: w, tasks: [{name: a, type: http}]}\n  - {name: w, tasks: [{name: b, type: http}]}\n",
			want: `jobs.yaml: workflows[1].name: workflow "w" is also workflows[0]`,
		},
		{
			name: "workflow without tasks",
			yaml: "workflows:\n  - {name: w}\n",
			want: "jobs.yaml: workflows[0].tasks (w): at least one task is required",
		},
		{
			name: "workflow with a bad cron",
			yaml: "workflows:\n  - name: w\n    tasks: [{name: a, type: http}]\n    triggers:\n      - schedule: {kind: cron, expression: '0 0 25 * * ?'}\n",
			want: "jobs.yaml: workflows[0] (w): triggers[0].schedule.expression: cannot parse",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := readManifest(strings.NewReader(tt.yaml), "jobs.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("readManifest error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestManifestRoundTrip checks that what marshalYAML writes, readManifest
// reads back as the same jobs, including strings a YAML 1.1 reader would
// otherwise take for booleans, numbers or nulls.
func TestManifestRoundTrip(t *testing.T) {
	t.Parallel()
	tricky := []string{"yes", "No", "on", "OFF", "y", "null", "~", "0777", "0x1F", "1:20", "1e3", "12", "-", "- x",
		"a: b", "#x", "", " padded ", "two\nlines\n", "trailing\n  ", "tab\there", "'quoted'", `"dq"`, "{x}", "[x]", "@at", "`tick`", "%p", "&a", "*b", "!t"}
	data := map[string]any{}
	for i, s := range tricky {
		data[fmt.Sprintf("k%02d", i)] = s
	}
	in := manifest{Jobs: []api.Job{{
		Group: "g", Name: "n", Type: "shell", Description: "yes",
		Shell:    []byte(`{"argv":["echo","on","0777"]}`),
		Data:     data,
		Triggers: []api.Trigger{{Schedule: []byte(`{"kind":"cron","expression":"0 30 2 * * ?","time_zone":"Europe/Berlin"}`)}},
	}}}
	var err error
	if in.Jobs[0], _, err = canonicalJob(in.Jobs[0]); err != nil {
		t.Fatal(err)
	}
	first, err := marshalYAML(in)
	if err != nil {
		t.Fatal(err)
	}
	back, err := readManifest(strings.NewReader(string(first)), "export.yaml")
	if err != nil {
		t.Fatalf("reading back:\n%s\n%v", first, err)
	}
	second, err := marshalYAML(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(second) {
		t.Errorf("round trip changed the manifest:\n%s\nthen:\n%s", first, second)
	}
	for i, s := range tricky {
		if got := back.Jobs[0].Data[fmt.Sprintf("k%02d", i)]; got != s {
			t.Errorf("data value %q read back as %#v", s, got)
		}
	}
	if !strings.HasPrefix(string(first), "jobs:\n  - group: g\n    name: \"n\"\n    description: \"yes\"\n    type: shell\n") {
		t.Errorf("fields not in the API's order, or yes not quoted:\n%s", first)
	}
}

// TestCanonicalJob checks that two spellings of one job compare equal.
func TestCanonicalJob(t *testing.T) {
	t.Parallel()
	written := api.Job{
		Group: "g", Name: "n", Type: "http", Overlap: api.OverlapAllow, Timeout: "90s",
		HTTP:     []byte(`{"url": "https://example.com", "method": "POST"}`),
		Retry:    &api.RetryPolicy{MaxAttempts: 3, Delay: "60s"},
		Triggers: []api.Trigger{{Schedule: []byte(`{"time_zone":"UTC","expression":"@daily","kind":"cron"}`)}},
	}
	served := api.Job{
		Group: "g", Name: "n", Type: "http", Timeout: "1m30s", Version: 4,
		HTTP:     []byte(`{"method":"POST","url":"https://example.com"}`),
		Retry:    &api.RetryPolicy{MaxAttempts: 3, Delay: "1m"},
		Triggers: []api.Trigger{{Name: "n-0", Schedule: []byte(`{"kind":"cron","expression":"@daily"}`), State: "WAITING"}},
		Status:   &api.JobStatus{Running: 1},
	}
	a, _, err := canonicalJob(written)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := canonicalJob(served)
	if err != nil {
		t.Fatal(err)
	}
	ya, _ := marshalYAML(a)
	yb, _ := marshalYAML(b)
	if string(ya) != string(yb) {
		t.Errorf("canonical forms differ:\n%s\nand\n%s", ya, yb)
	}
}

// TestReadManifestOldSpellings checks that a manifest in the previous
// release's spelling still reads, meaning what it meant, in the current
// form, with one warning per schedule and calendar that names it.
func TestReadManifestOldSpellings(t *testing.T) {
	t.Parallel()
	const old = `calendars:
  - name: holidays
    calendar: {type: holiday, tz: UTC, excludedDates: ["2030-12-25"]}
jobs:
  - group: g
    name: n
    type: http
    http: {url: "http://127.0.0.1:9/"}
    triggers:
      - schedule: {kind: simple, repeat_interval_ms: 5000}
      - schedule: {kind: simple, repeat_interval_ms: 60000, repeat_count: -1}
      - schedule: {kind: cron, expression: "0 0 2 * * ?"}
`
	m, err := readManifest(strings.NewReader(old), "old.yaml")
	if err != nil {
		t.Fatalf("readManifest: %v", err)
	}
	if got, want := string(m.Calendars[0].Calendar), `{"type":"holiday","time_zone":"UTC","excluded_dates":["2030-12-25"],"base":null}`; got != want {
		t.Errorf("calendar = %s, want %s", got, want)
	}
	for i, want := range []string{`{"kind":"once"}`, `{"kind":"simple","interval":"1m"}`, `{"kind":"cron","expression":"0 0 2 * * ?","time_zone":"UTC"}`} {
		if got := string(m.Jobs[0].Triggers[i].Schedule); got != want {
			t.Errorf("triggers[%d].schedule = %s, want %s", i, got, want)
		}
	}
	want := []string{"old.yaml: calendars[0] (holidays): calendar: deprecated spelling",
		"old.yaml: jobs[0] (g/n): triggers[0].schedule: deprecated spelling",
		"old.yaml: jobs[0] (g/n): triggers[1].schedule: deprecated spelling"}
	if len(m.warnings) != len(want) {
		t.Fatalf("warnings = %q; want %d", m.warnings, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(m.warnings[i], w) {
			t.Errorf("warnings[%d] = %q; want it to start %q", i, m.warnings[i], w)
		}
	}
}
