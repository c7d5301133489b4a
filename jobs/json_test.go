package jobs_test

import (
	"errors"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/jobs"
)

type base struct {
	Region string `json:"region"`
}

type wire struct {
	base
	Name    string            `json:"name"`
	Count   int               `json:"count,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Ignored string            `json:"-"`
	Plain   bool
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	var got wire
	err := jobs.DecodeJSON([]byte(`{"region":"eu","name":"a","count":2,"labels":{"k":"v"},"Plain":true}`), "x", &got)
	if err != nil {
		t.Fatal(err)
	}
	if got.Region != "eu" || got.Name != "a" || got.Count != 2 || got.Labels["k"] != "v" || !got.Plain {
		t.Errorf("decoded %+v", got)
	}
}

func TestDecodeJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json, wantField, wantMsg string
	}{
		{"unknown key", `{"name":"a","nmae":"b"}`, "x.nmae", "x.nmae: unknown field"}, //nolint:misspell // the misspelt key is the input
		{"key in another case", `{"Name":"a"}`, "x.Name", "x.Name: unknown field"},
		{"ignored field", `{"Ignored":"a"}`, "x.Ignored", "x.Ignored: unknown field"},
		{"wrong type", `{"count":"two"}`, "x.count", "x.count: got JSON string, want integer"},
		{"wrong type in map", `{"labels":{"k":1}}`, "x.labels", "x.labels: got JSON number, want string"},
		{"not an object", `[1]`, "x", "x: must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got wire
			err := jobs.DecodeJSON([]byte(tt.json), "x", &got)
			var fe *jobs.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("DecodeJSON(%s) = %v (%T), want a *FieldError", tt.json, err, err)
			}
			if fe.Field != tt.wantField || err.Error() != tt.wantMsg {
				t.Errorf("DecodeJSON(%s) = %q (field %q), want %q (field %q)", tt.json, err, fe.Field, tt.wantMsg, tt.wantField)
			}
		})
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, ""},
		{500 * time.Millisecond, "500ms"},
		{30 * time.Second, "30s"},
		{10 * time.Minute, "10m"},
		{90 * time.Second, "1m30s"},
		{time.Hour, "1h"},
		{90 * time.Minute, "1h30m"},
		{time.Hour + 5*time.Second, "1h0m5s"},
		{-10 * time.Minute, "-10m"},
		{10*time.Minute + time.Millisecond, "10m0.001s"},
	}
	for _, tt := range tests {
		got := jobs.FormatDuration(tt.d)
		if got != tt.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
		if back, err := jobs.ParseDuration("x", got); err != nil || back != tt.d {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", got, back, err, tt.d)
		}
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "30s", "1m30s", "250ms", "2h"} {
		d, err := jobs.ParseDuration("x.timeout", s)
		if err != nil {
			t.Errorf("ParseDuration(%q): %v", s, err)
			continue
		}
		want, _ := time.ParseDuration(s)
		if d != want {
			t.Errorf("ParseDuration(%q) = %v, want %v", s, d, want)
		}
		if back, _ := jobs.ParseDuration("x.timeout", jobs.FormatDuration(d)); back != d {
			t.Errorf("FormatDuration(%v) = %q does not read back", d, jobs.FormatDuration(d))
		}
	}
	_, err := jobs.ParseDuration("x.timeout", "30")
	var fe *jobs.FieldError
	if !errors.As(err, &fe) || fe.Field != "x.timeout" {
		t.Fatalf(`ParseDuration("30") = %v, want a *FieldError for x.timeout`, err)
	}
	const want = `x.timeout: invalid duration "30" (want a Go duration such as "30s" or "1m30s")`
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}
