package httpjob_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/jobs/httpjob"
)

// wantFieldError asserts err is a *jobs.FieldError naming field with the
// message want ("" to skip the message).
func wantFieldError(t *testing.T, err error, field, want string) {
	t.Helper()
	var fe *jobs.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T), want a *jobs.FieldError for %s", err, err, field)
	}
	if fe.Field != field {
		t.Fatalf("error %q names field %q, want %q", err, fe.Field, field)
	}
	if want != "" && err.Error() != want {
		t.Fatalf("error:\n got %s\nwant %s", err, want)
	}
}

func TestSpecValidate(t *testing.T) {
	t.Parallel()
	ok := httpjob.Spec{URL: "https://example.com/hook"}
	tests := []struct {
		name  string
		edit  func(*httpjob.Spec)
		field string // "" when valid
		msg   string
	}{
		{"minimal", func(*httpjob.Spec) {}, "", ""},
		{"everything", func(s *httpjob.Spec) {
			s.Method = "PATCH"
			s.URL = "http://127.0.0.1:8080/x?y={{urlquery .JobName}}"
			s.Headers = map[string]string{"X-Run": "{{.ExecutionID}}", "Host": "example.org"}
			s.Body = `{"at": {{json .FireTime}}}`
			s.Timeout = time.Second
			s.ExpectStatus = []int{200, 204, 599, 100}
			s.MaxResponseBytes = 1
		}, "", ""},
		{"templated URL is checked when expanded", func(s *httpjob.Spec) { s.URL = "{{.Params.base}}/x" }, "", ""},
		{"no URL", func(s *httpjob.Spec) { s.URL = "" }, "http.url", "http.url: required"},
		{"relative URL", func(s *httpjob.Spec) { s.URL = "/hook" }, "http.url",
			`http.url: must be an absolute http or https URL: no scheme, in "/hook"`},
		{"other scheme", func(s *httpjob.Spec) { s.URL = "ftp://example.com/x" }, "http.url", ""},
		{"no host", func(s *httpjob.Spec) { s.URL = "http:///x" }, "http.url", ""},
		{"unparsable URL", func(s *httpjob.Spec) { s.URL = "http://[::1" }, "http.url", ""},
		{"URL template syntax", func(s *httpjob.Spec) { s.URL = "https://x/{{.JobName" }, "http.url",
			"http.url: template: 1: unclosed action"},
		{"method with space", func(s *httpjob.Spec) { s.Method = "GET X" }, "http.method",
			"http.method: must be an HTTP method such as GET or POST"},
		{"header name", func(s *httpjob.Spec) { s.Headers = map[string]string{"X Run": "1"} }, "http.headers.X Run",
			"http.headers.X Run: invalid header name"},
		{"empty header name", func(s *httpjob.Spec) { s.Headers = map[string]string{"": "1"} }, "http.headers.", ""},
		{"header value newline", func(s *httpjob.Spec) { s.Headers = map[string]string{"X-A": "a\r\nX-B: b"} }, "http.headers.X-A",
			`http.headers.X-A: control character '\r' at byte 1`},
		{"header template", func(s *httpjob.Spec) { s.Headers = map[string]string{"X-A": "{{nope}}"} }, "http.headers.X-A", ""},
		{"body template", func(s *httpjob.Spec) { s.Body = "{{.JobName}" }, "http.body", ""},
		{"negative timeout", func(s *httpjob.Spec) { s.Timeout = -time.Second }, "http.timeout",
			"http.timeout: must not be negative"},
		{"status too small", func(s *httpjob.Spec) { s.ExpectStatus = []int{200, 99} }, "http.expect_status[1]",
			"http.expect_status[1]: 99 is not an HTTP status code (100 to 599)"},
		{"status too large", func(s *httpjob.Spec) { s.ExpectStatus = []int{600} }, "http.expect_status[0]", ""},
		{"negative max", func(s *httpjob.Spec) { s.MaxResponseBytes = -1 }, "http.max_response_bytes",
			"http.max_response_bytes: must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := ok
			tt.edit(&s)
			err := s.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			wantFieldError(t, err, tt.field, tt.msg)
		})
	}
}

func TestSpecJSON(t *testing.T) {
	t.Parallel()
	const in = `{
		"method": "POST",
		"url": "https://example.com/{{.JobName}}",
		"headers": {"Content-Type": "application/json"},
		"body": "{}",
		"timeout": "1m30s",
		"expect_status": [200, 202],
		"max_response_bytes": 1024
	}`
	var got httpjob.Spec
	if err := json.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	want := httpjob.Spec{
		Method:           "POST",
		URL:              "https://example.com/{{.JobName}}",
		Headers:          map[string]string{"Content-Type": "application/json"},
		Body:             "{}",
		Timeout:          90 * time.Second,
		ExpectStatus:     []int{200, 202},
		MaxResponseBytes: 1024,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n %+v\nwant\n %+v", got, want)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"method":"POST","url":"https://example.com/{{.JobName}}","headers":{"Content-Type":"application/json"},"body":"{}","timeout":"1m30s","expect_status":[200,202],"max_response_bytes":1024}`
	if string(b) != wantJSON {
		t.Errorf("encoded\n %s\nwant\n %s", b, wantJSON)
	}
	b, err = json.Marshal(httpjob.Spec{URL: "http://x"})
	if err != nil || string(b) != `{"url":"http://x"}` {
		t.Errorf("minimal spec encodes as %s, %v; want only the url", b, err)
	}
}

func TestSpecJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json, field, msg string
	}{
		{"unknown field", `{"url":"http://x","timout":"1s"}`, "http.timout", "http.timout: unknown field"},
		{"duration as number", `{"url":"http://x","timeout":30}`, "http.timeout", "http.timeout: got JSON number, want string"},
		{"bad duration", `{"url":"http://x","timeout":"30"}`, "http.timeout", ""},
		{"status as string", `{"url":"http://x","expect_status":["200"]}`, "http.expect_status", ""},
		{"not an object", `"http://x"`, "http", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s httpjob.Spec
			wantFieldError(t, json.Unmarshal([]byte(tt.json), &s), tt.field, tt.msg)
		})
	}
}
