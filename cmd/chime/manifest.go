package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	yaml "go.yaml.in/yaml/v3"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/api/wire"
	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/schedule"
)

// maxManifestBytes bounds the file chime apply reads.
const maxManifestBytes = 16 << 20

// manifest is the YAML file of `chime apply` and `chime export`: calendars
// and jobs in the API's JSON form (api.Calendar, api.Job), written as YAML.
type manifest struct {
	Calendars []api.Calendar `json:"calendars,omitempty"`
	Jobs      []api.Job      `json:"jobs,omitempty"`
	// Pools are the concurrency pools the jobs name (manifestpools.go).
	Pools []api.Pool `json:"pools,omitempty"`
	// Workflows are applied after the jobs (manifestworkflows.go).
	Workflows []api.Workflow `json:"workflows,omitempty"`
	// warnings report deprecated spellings the file used, each naming the
	// entry and field; readManifest sets them.
	warnings []string
}

// readManifest reads and checks a manifest: known fields only, every job
// and calendar named once, every schedule and calendar valid. Errors name
// the entry and its field. The entries come back in canonical form (see
// canonicalJob), and deprecated spellings, still accepted, in m.warnings.
func readManifest(r io.Reader, name string) (*manifest, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", name, maxManifestBytes>>20)
	}
	m, err := decodeManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(m.Jobs) == 0 && len(m.Calendars) == 0 && len(m.Pools) == 0 && len(m.Workflows) == 0 {
		return nil, fmt.Errorf("%s: no jobs and no calendars (want a YAML map with a jobs: list, a calendars: list, a workflows: list or several)", name)
	}
	if err := checkManifestPools(m, name); err != nil {
		return nil, err
	}
	if err := checkManifestWorkflows(m, name); err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for i, c := range m.Calendars {
		where := fmt.Sprintf("%s: calendars[%d]", name, i)
		if c.Name == "" {
			return nil, fmt.Errorf("%s: name is required", where)
		}
		if prev, dup := seen["calendar "+c.Name]; dup {
			return nil, fmt.Errorf("%s: calendar %q is also calendars[%d]", where, c.Name, prev)
		}
		seen["calendar "+c.Name] = i
		var warnings []wire.Warning
		if m.Calendars[i], warnings, err = canonicalCalendar(c); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, c.Name, err)
		}
		for _, w := range warnings {
			m.warnings = append(m.warnings, fmt.Sprintf("%s (%s): %s", where, c.Name, w))
		}
	}
	for i, j := range m.Jobs {
		where := fmt.Sprintf("%s: jobs[%d]", name, i)
		if j.Group == "" || j.Name == "" {
			return nil, fmt.Errorf("%s: group and name are required", where)
		}
		key := j.Group + "/" + j.Name
		if prev, dup := seen["job "+key]; dup {
			return nil, fmt.Errorf("%s: job %s is also jobs[%d]", where, key, prev)
		}
		seen["job "+key] = i
		var warnings []wire.Warning
		if m.Jobs[i], warnings, err = canonicalJob(j); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, key, err)
		}
		for _, w := range warnings {
			m.warnings = append(m.warnings, fmt.Sprintf("%s (%s): %s", where, key, w))
		}
	}
	return m, nil
}

// decodeManifest decodes YAML into a manifest through its JSON form, so
// that the API types' JSON field names and types apply, and unknown fields
// are refused. Plain scalars follow YAML 1.2: only true and false are
// booleans (a name "no" stays a string), and timestamps stay the text they
// were written as.
func decodeManifest(data []byte) (*manifest, error) {
	var m manifest
	if err := decodeYAML(data, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// decodeYAML decodes YAML into v through its JSON form, as decodeManifest
// describes; an empty document leaves v as it is.
func decodeYAML(data []byte, v any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	untagTimestamps(&doc)
	var tree any
	if err := doc.Decode(&tree); err != nil {
		return err
	}
	raw, err := json.Marshal(tree)
	if err != nil {
		return fmt.Errorf("not a YAML map of lists: %w", err)
	}
	if string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return fmt.Errorf("%s: want %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value)
		}
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// untagTimestamps makes plain scalars that YAML would read as timestamps
// strings again, so that "date: 2025-03-01" in job data stays that text.
func untagTimestamps(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!timestamp" && n.Style&yaml.TaggedStyle == 0 {
		n.Tag = "!!str"
	}
	for _, c := range n.Content {
		untagTimestamps(c)
	}
}

// canonicalJob returns j as chime apply compares it: without what the
// server computes (version, status, trigger state and fire times), with
// trigger names defaulted as the server defaults them, schedules in the
// API's current form (package api/wire), instants in UTC and durations in
// Go's canonical form, so that two descriptions of the same job compare
// equal. It reports the deprecated spellings j's schedules used.
func canonicalJob(j api.Job) (api.Job, []wire.Warning, error) {
	var warnings []wire.Warning
	j.Version = 0
	j.Status = nil
	j.Warnings = nil
	if j.Overlap == api.OverlapAllow {
		j.Overlap = ""
	}
	if len(j.Data) == 0 {
		j.Data = nil
	}
	var err error
	if j.HTTP, err = canonicalRaw(j.HTTP); err != nil {
		return j, nil, fmt.Errorf("http: %w", err)
	}
	if j.Shell, err = canonicalRaw(j.Shell); err != nil {
		return j, nil, fmt.Errorf("shell: %w", err)
	}
	j.Timeout = canonicalDuration(j.Timeout)
	if r := j.Retry; r != nil {
		cp := *r
		cp.Delay = canonicalDuration(cp.Delay)
		cp.MaxDelay = canonicalDuration(cp.MaxDelay)
		j.Retry = &cp
	}
	if a := j.Alerts; a != nil {
		cp := *a
		cp.DeadMan = canonicalDuration(cp.DeadMan)
		cp.RunningLongerThan = canonicalDuration(cp.RunningLongerThan)
		j.Alerts = &cp
	}
	triggers := make([]api.Trigger, len(j.Triggers))
	for i, t := range j.Triggers {
		if t.Name == "" {
			t.Name = fmt.Sprintf("%s-%d", j.Name, i)
		}
		if t.Misfire == string(schedule.MisfireSmartPolicy) {
			t.Misfire = ""
		}
		if len(t.Data) == 0 {
			t.Data = nil
		}
		t.State = ""
		t.NextFireTime = nil
		t.PreviousFireTime = nil
		t.StartTime = utc(t.StartTime)
		t.EndTime = utc(t.EndTime)
		if len(t.Schedule) == 0 {
			return j, nil, fmt.Errorf("triggers[%d].schedule: required", i)
		}
		s, w, err := wire.DecodeSchedule(t.Schedule, fmt.Sprintf("triggers[%d].schedule", i))
		if err != nil {
			return j, nil, fieldError(err)
		}
		if t.Schedule, err = wire.EncodeSchedule(s); err != nil {
			return j, nil, fmt.Errorf("triggers[%d].schedule: %w", i, err)
		}
		warnings = append(warnings, w...)
		triggers[i] = t
	}
	j.Triggers = triggers
	return j, warnings, nil
}

// canonicalCalendar returns c as chime apply compares it: the calendar in
// the API's current form (package api/wire), without the read-only UsedBy
// and Warnings. It reports the deprecated spellings c used.
func canonicalCalendar(c api.Calendar) (api.Calendar, []wire.Warning, error) {
	c.UsedBy, c.Warnings = nil, nil
	if len(c.Calendar) == 0 {
		return c, nil, errors.New("calendar: required")
	}
	cal, warnings, err := wire.DecodeCalendar(c.Calendar, "calendar")
	if err != nil {
		return c, nil, fieldError(err)
	}
	if c.Calendar, err = wire.EncodeCalendar(cal); err != nil {
		return c, nil, fmt.Errorf("calendar: %w", err)
	}
	return c, warnings, nil
}

// fieldError words an *api.Error of package api/wire as "field: message",
// as the rest of a manifest's errors read.
func fieldError(err error) error {
	var apiErr *api.Error
	if errors.As(err, &apiErr) && apiErr.Field != "" {
		return fmt.Errorf("%s: %s", apiErr.Field, apiErr.Message)
	}
	return err
}

// canonicalRaw re-encodes a JSON value with sorted object keys; empty
// stays empty.
func canonicalRaw(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// canonicalDuration rewrites a Go duration string in the form the server
// writes ("90s" becomes "1m30s", "10m0s" becomes "10m"); anything else is
// left for the server to judge.
func canonicalDuration(s string) string {
	d, err := time.ParseDuration(s)
	if err != nil || d == 0 {
		return s
	}
	return jobs.FormatDuration(d)
}

// utc returns t in UTC; nil stays nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// marshalYAML writes v's JSON form as block-style YAML, keeping the order
// of struct fields (so a job starts with its group and name) and quoting
// every string that would otherwise read back as something else.
func marshalYAML(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil { // JSON is YAML
		return nil, err
	}
	restyle(&doc)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// restyle turns the flow style of decoded JSON into block style.
// Multi-line strings become literal blocks; the YAML 1.1 booleans (yes,
// no, on, off, y, n) are quoted, so that older YAML readers do not take
// them for booleans either. The encoder quotes whatever else would read
// back as another type.
func restyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		switch {
		case strings.Contains(n.Value, "\n") && printable(n.Value) && strings.TrimRight(n.Value, " ") == n.Value:
			n.Style = yaml.LiteralStyle
		case slices.Contains([]string{"y", "n", "yes", "no", "on", "off"}, strings.ToLower(n.Value)):
			n.Style = yaml.DoubleQuotedStyle
		}
	}
	for _, c := range n.Content {
		restyle(c)
	}
}

// printable reports whether s holds no control characters but newlines,
// which a literal block could not show.
func printable(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && unicode.IsControl(r) })
}
