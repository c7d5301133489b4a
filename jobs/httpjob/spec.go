package httpjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/jobs"
)

// Defaults applied to a Spec's zero fields.
const (
	DefaultMethod           = http.MethodGet
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 64 << 10
)

// Spec is the request an "http" job sends each time it fires. Its JSON form
// is described in the package documentation.
type Spec struct {
	// Method is the request method. Defaults to GET.
	Method string `json:"method,omitempty"`
	// URL is the absolute http or https URL to request; a template.
	// Required.
	URL string `json:"url"`
	// Headers are request headers by name; each value is a template. A
	// "Host" entry sets the request's host.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the request body; a template. Empty for none. No Content-Type
	// is implied: set one in Headers.
	Body string `json:"body,omitempty"`
	// Timeout bounds the whole exchange, from connecting until the last
	// byte of the response is read; in JSON a Go duration string such as
	// "30s". The caller's context may end it sooner. Defaults to 30s.
	Timeout time.Duration `json:"timeout,omitempty"`
	// ExpectStatus lists the response status codes that mean success.
	// Defaults to any 2xx.
	ExpectStatus []int `json:"expect_status,omitempty"`
	// MaxResponseBytes caps how much of the response body is read and
	// written out; the rest is not read. Defaults to 64 KiB.
	MaxResponseBytes int `json:"max_response_bytes,omitempty"`
}

// wireSpec is Spec's JSON form: Spec with its timeout as a duration string.
type wireSpec struct {
	Method           string            `json:"method,omitempty"`
	URL              string            `json:"url"`
	Headers          map[string]string `json:"headers,omitempty"`
	Body             string            `json:"body,omitempty"`
	Timeout          string            `json:"timeout,omitempty"`
	ExpectStatus     []int             `json:"expect_status,omitempty"`
	MaxResponseBytes int               `json:"max_response_bytes,omitempty"`
}

// MarshalJSON encodes s with its timeout as a duration string.
func (s Spec) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireSpec{
		Method:           s.Method,
		URL:              s.URL,
		Headers:          s.Headers,
		Body:             s.Body,
		Timeout:          jobs.FormatDuration(s.Timeout),
		ExpectStatus:     s.ExpectStatus,
		MaxResponseBytes: s.MaxResponseBytes,
	})
}

// UnmarshalJSON decodes s, refusing unknown fields. Errors are
// *jobs.FieldError values. It does not validate: call Validate.
func (s *Spec) UnmarshalJSON(data []byte) error {
	var w wireSpec
	if err := jobs.DecodeJSON(data, "http", &w); err != nil {
		return err
	}
	timeout, err := jobs.ParseDuration("http.timeout", w.Timeout)
	if err != nil {
		return err
	}
	*s = Spec{
		Method:           w.Method,
		URL:              w.URL,
		Headers:          w.Headers,
		Body:             w.Body,
		Timeout:          timeout,
		ExpectStatus:     w.ExpectStatus,
		MaxResponseBytes: w.MaxResponseBytes,
	}
	return nil
}

// Validate checks s without sending anything: the method and header names
// are well formed, the URL is an absolute http or https URL (or a template
// that parses; its expansion is checked when the job fires), every template
// parses, and the numbers are in range. It returns the first problem as a
// *jobs.FieldError.
func (s *Spec) Validate() error {
	if s.Method != "" && !isToken(s.Method) {
		return &jobs.FieldError{Field: "http.method", Message: "must be an HTTP method such as GET or POST"}
	}
	switch {
	case s.URL == "":
		return &jobs.FieldError{Field: "http.url", Message: "required"}
	case strings.Contains(s.URL, "{{"):
		if err := jobs.CheckTemplate("http.url", s.URL); err != nil {
			return err
		}
	default:
		if err := checkURL(s.URL); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
		field := "http.headers." + name
		if !isToken(name) {
			return &jobs.FieldError{Field: field, Message: "invalid header name"}
		}
		if err := jobs.CheckTemplate(field, s.Headers[name]); err != nil {
			return err
		}
		if err := checkHeaderValue(field, s.Headers[name]); err != nil {
			return err
		}
	}
	if err := jobs.CheckTemplate("http.body", s.Body); err != nil {
		return err
	}
	if s.Timeout < 0 {
		return &jobs.FieldError{Field: "http.timeout", Message: "must not be negative"}
	}
	for i, code := range s.ExpectStatus {
		if code < 100 || code > 599 {
			return &jobs.FieldError{
				Field:   "http.expect_status[" + strconv.Itoa(i) + "]",
				Message: fmt.Sprintf("%d is not an HTTP status code (100 to 599)", code),
			}
		}
	}
	if s.MaxResponseBytes < 0 {
		return &jobs.FieldError{Field: "http.max_response_bytes", Message: "must not be negative"}
	}
	return nil
}

// withDefaults returns a copy of s with its defaults applied.
func (s Spec) withDefaults() Spec {
	if s.Method == "" {
		s.Method = DefaultMethod
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxResponseBytes == 0 {
		s.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return s
}

// request expands s's templates over v and builds its request.
func (s Spec) request(ctx context.Context, v jobs.Vars) (*http.Request, error) {
	rawURL, err := jobs.ExpandURL("http.url", s.URL, v)
	if err != nil {
		return nil, err
	}
	if err := checkURL(rawURL); err != nil {
		return nil, err
	}
	body, err := jobs.Expand("http.body", s.Body, v)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, s.Method, rawURL, strings.NewReader(body))
	if err != nil {
		return nil, &jobs.FieldError{Field: "http.url", Message: err.Error(), Err: err}
	}
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if v.ShardTotal > 0 {
		// An item of a sharded firing; the spec's headers may override.
		req.Header.Set("Chime-Shard-Index", strconv.Itoa(v.ShardIndex))
		req.Header.Set("Chime-Shard-Total", strconv.Itoa(v.ShardTotal))
	}
	for name, text := range s.Headers {
		field := "http.headers." + name
		value, err := jobs.Expand(field, text, v)
		if err != nil {
			return nil, err
		}
		if err := checkHeaderValue(field, value); err != nil {
			return nil, err
		}
		if http.CanonicalHeaderKey(name) == "Host" {
			req.Host = value
			continue
		}
		req.Header.Set(name, value)
	}
	return req, nil
}

// checkURL reports whether raw is an absolute http or https URL that can
// be sent as it is, naming the problem when it is not.
func checkURL(raw string) error {
	bad := func(err error, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...) + ", in " + strconv.Quote(raw)
		return &jobs.FieldError{Field: "http.url", Message: msg, Err: err}
	}
	if i := strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }); i >= 0 {
		return bad(nil, "%q at byte %d is not allowed in a URL (write a space as %%20; a template action's value is escaped for you)", raw[i], i)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return bad(err, "does not parse as a URL (%v)", err)
	case u.Scheme == "":
		return bad(nil, "must be an absolute http or https URL: no scheme")
	case u.Scheme != "http" && u.Scheme != "https":
		return bad(nil, "must be an absolute http or https URL, not scheme %q", u.Scheme)
	case u.Host == "":
		return bad(nil, "has no host")
	}
	return nil
}

// checkHeaderValue refuses control characters other than tab, which would
// end the header early or smuggle another one in.
func checkHeaderValue(field, value string) error {
	if i := strings.IndexFunc(value, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }); i >= 0 {
		return &jobs.FieldError{Field: field, Message: fmt.Sprintf("control character %q at byte %d", value[i], i)}
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token, the syntax of both
// methods and header names.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}
