package httpjob_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/jobs/egress"
	"github.com/chime-scheduler/chime/jobs/httpjob"
)

// newServer starts a server for one test.
func newServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// newRunner returns a runner with a transport of its own: the tests run in
// parallel, and each httptest server's Close closes the idle connections
// of http.DefaultTransport, the default runner's, which breaks another
// test's request that is about to reuse one.
func newRunner(t *testing.T) *httpjob.Runner {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &httpjob.Runner{Client: &http.Client{Transport: tr}}
}

// stall blocks a handler until its client goes away or the test ends.
// done must be closed before the server closes, which waits for handlers.
func stall(r *http.Request, done <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-done:
	}
}

// seen is what a server saw of a request.
type seen struct {
	Method, URI, Host, Body string
	Header                  map[string]string
}

func vars() jobs.Vars {
	return jobs.Vars{
		JobGroup:    "ops",
		JobName:     "deploy",
		ExecutionID: "exec-7",
		NodeID:      "node-a",
		FireTime:    time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
		Attempt:     1,
		Params:      map[string]any{"token": "s3cret", "env": "prod & test"},
	}
}

func TestRunSendsTheRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec httpjob.Spec // URL is relative to the server
		want seen
	}{
		{
			name: "defaults",
			spec: httpjob.Spec{URL: "/ping"},
			want: seen{Method: "GET", URI: "/ping"},
		},
		{
			name: "templated",
			spec: httpjob.Spec{
				Method: "POST",
				URL:    "/hooks/{{.JobGroup}}/{{.JobName}}?env={{urlquery .Params.env}}",
				Headers: map[string]string{
					"Authorization": "Bearer {{.Params.token}}",
					"X-Execution":   "{{.ExecutionID}}",
					"Content-Type":  "application/json",
				},
				Body: `{"node":{{json .NodeID}},"fired":{{json .FireTime}},"attempt":{{.Attempt}}}`,
			},
			want: seen{
				Method: "POST",
				URI:    "/hooks/ops/deploy?env=prod+%26+test",
				Body:   `{"node":"node-a","fired":"2025-06-01T12:00:00Z","attempt":1}`,
				Header: map[string]string{
					"Authorization": "Bearer s3cret",
					"X-Execution":   "exec-7",
					"Content-Type":  "application/json",
				},
			},
		},
		{
			name: "host header",
			spec: httpjob.Spec{Method: "DELETE", URL: "/x", Headers: map[string]string{"host": "{{.JobName}}.example.com"}},
			want: seen{Method: "DELETE", URI: "/x", Host: "deploy.example.com"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan seen, 1)
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				s := seen{Method: r.Method, URI: r.RequestURI, Host: r.Host, Body: string(body)}
				for name := range tt.want.Header {
					if s.Header == nil {
						s.Header = make(map[string]string)
					}
					s.Header[name] = r.Header.Get(name)
				}
				got <- s
			})
			spec := tt.spec
			spec.URL = srv.URL + spec.URL
			want := tt.want
			if want.Host == "" {
				want.Host = strings.TrimPrefix(srv.URL, "http://")
			}
			r := newRunner(t)
			if _, err := r.Run(t.Context(), spec, vars(), nil); err != nil {
				t.Fatal(err)
			}
			if g := <-got; !reflect.DeepEqual(g, want) {
				t.Errorf("server saw\n %+v\nwant\n %+v", g, want)
			}
		})
	}
}

func TestRunExpectStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		expect []int
		ok     bool
		msg    string
	}{
		{"200 is 2xx", 200, nil, true, ""},
		{"204 is 2xx", 204, nil, true, ""},
		{"500 is not 2xx", 500, nil, false, "httpjob: unexpected status 500 Internal Server Error, want 2xx"},
		{"304 is not 2xx", 304, nil, false, ""},
		{"listed 404", 404, []int{200, 404}, true, ""},
		{"unlisted 201", 201, []int{200, 202}, false, "httpjob: unexpected status 201 Created, want 200 or 202"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
			})
			r := newRunner(t)
			res, err := r.Run(t.Context(), httpjob.Spec{URL: srv.URL, ExpectStatus: tt.expect}, vars(), nil)
			if res == nil || res.Status != tt.status {
				t.Fatalf("Run() = %+v, %v; want a result with status %d", res, err, tt.status)
			}
			if tt.ok {
				if err != nil {
					t.Fatalf("Run() error = %v, want nil", err)
				}
				return
			}
			var se *httpjob.StatusError
			if !errors.As(err, &se) || se.Got != tt.status || !reflect.DeepEqual(se.Want, tt.expect) {
				t.Fatalf("Run() error = %v, want a *StatusError{Got: %d, Want: %v}", err, tt.status, tt.expect)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("error = %q, want %q", err, tt.msg)
			}
		})
	}
}

func TestRunWritesTheResponse(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("0123456789", 10) // 100 bytes
	tests := []struct {
		name          string
		max           int
		capture       int // 0: an unbounded writer
		wantOut       string
		wantRead      int64
		wantTruncated bool
	}{
		{"whole", 0, 0, "HTTP/1.1 503 Service Unavailable\n" + body, 100, false},
		{"exactly the cap", 100, 0, "HTTP/1.1 503 Service Unavailable\n" + body, 100, false},
		{"cut by max_response_bytes", 10, 0, "HTTP/1.1 503 Service Unavailable\n0123456789", 10, true},
		{"cut by the capture", 0, 40, "HTTP/1.1 503 Service Unavailable\n0123456", 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, body)
			})
			var out interface {
				io.Writer
				String() string
			} = new(strings.Builder)
			if tt.capture > 0 {
				out = jobs.NewCapture(tt.capture)
			}
			r := newRunner(t)
			res, err := r.Run(t.Context(), httpjob.Spec{URL: srv.URL, MaxResponseBytes: tt.max}, vars(), out)
			var se *httpjob.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("Run() error = %v, want a *StatusError", err)
			}
			if got := out.String(); got != tt.wantOut {
				t.Errorf("wrote %q, want %q", got, tt.wantOut)
			}
			if res.BytesRead != tt.wantRead || res.Truncated != tt.wantTruncated {
				t.Errorf("BytesRead, Truncated = %d, %v; want %d, %v", res.BytesRead, res.Truncated, tt.wantRead, tt.wantTruncated)
			}
		})
	}
}

func TestRunFollowsRedirects(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusFound)
			return
		}
		io.WriteString(w, "at "+r.URL.Path)
	})
	var out strings.Builder
	r := newRunner(t)
	res, err := r.Run(t.Context(), httpjob.Spec{URL: srv.URL + "/old"}, vars(), &out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || out.String() != "HTTP/1.1 200 OK\nat /new" {
		t.Errorf("status %d, wrote %q; want 200 and the page redirected to", res.Status, out.String())
	}
}

// TestRunTimeout lets the server stall, before its headers or in the middle
// of its body, past the spec's timeout.
func TestRunTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		sendHeaders bool
	}{
		{"before the headers", false},
		{"during the body", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan struct{})
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.sendHeaders {
					io.WriteString(w, "partial")
					w.(http.Flusher).Flush()
				}
				stall(r, done)
			})
			t.Cleanup(func() { close(done) })
			r := newRunner(t)
			res, err := r.Run(t.Context(), httpjob.Spec{URL: srv.URL, Timeout: 50 * time.Millisecond}, vars(), nil)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Run() error = %v, want one wrapping context.DeadlineExceeded", err)
			}
			if !strings.HasPrefix(err.Error(), "httpjob: no complete response within 50ms: ") {
				t.Errorf("error %q does not say the timeout ran out", err)
			}
			if tt.sendHeaders != (res != nil) {
				t.Errorf("Run() result = %+v; want one exactly when headers arrived", res)
			}
		})
	}
}

func TestRunStopsWithItsContext(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	done := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		stall(r, done)
	})
	t.Cleanup(func() { close(done) })
	interrupted := errors.New("job interrupted")
	ctx, cancel := context.WithCancelCause(t.Context())
	go func() {
		<-arrived
		cancel(interrupted)
	}()
	r := newRunner(t)
	_, err := r.Run(ctx, httpjob.Spec{URL: srv.URL}, vars(), nil)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, interrupted) {
		t.Fatalf("Run() error = %v, want one wrapping context.Canceled and the cause", err)
	}
	if !strings.HasPrefix(err.Error(), "httpjob: request stopped") || !strings.Contains(err.Error(), "job interrupted") {
		t.Errorf("error %q does not say why the request stopped", err)
	}
}

// TestRunRefusesBadExpansions checks that a spec whose templates fail, or
// expand to something unsendable, sends nothing.
func TestRunRefusesBadExpansions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		spec  func(base string) httpjob.Spec
		field string
		msg   string
	}{
		{"missing param in URL", func(base string) httpjob.Spec {
			return httpjob.Spec{URL: base + "/{{.Params.region}}"}
		}, "http.url", `http.url: template: 1:` /* position depends on the server's address */},
		{"URL expands to another scheme", func(string) httpjob.Spec {
			return httpjob.Spec{URL: "{{.Params.base}}/x"}
		}, "http.url", `http.url: must be an absolute http or https URL, not scheme "file", in "file:///etc/x"`},
		{"URL with a space", func(base string) httpjob.Spec {
			return httpjob.Spec{URL: base + "/{{raw .Params.spaced}}"}
		}, "http.url", `http.url: ' ' at byte `},
		{"URL that does not parse", func(string) httpjob.Spec {
			return httpjob.Spec{URL: "{{raw .Params.unclosed}}/x"}
		}, "http.url", `http.url: does not parse as a URL (missing ']' in host), in "http://[::1/x"`},
		{"URL without a host", func(string) httpjob.Spec {
			return httpjob.Spec{URL: "http://{{.Params.empty}}/x"}
		}, "http.url", `http.url: has no host, in "http:///x"`},
		{"URL without a scheme", func(string) httpjob.Spec {
			return httpjob.Spec{URL: "{{.Params.empty}}//host/x"}
		}, "http.url", `http.url: must be an absolute http or https URL: no scheme, in "//host/x"`},
		{"missing param in header", func(base string) httpjob.Spec {
			return httpjob.Spec{URL: base, Headers: map[string]string{"X-Region": "{{.Params.region}}"}}
		}, "http.headers.X-Region",
			`http.headers.X-Region: template: 1:9: executing "http.headers.X-Region" at <.Params.region>: map has no entry for key "region"`},
		{"header value expands with a newline", func(base string) httpjob.Spec {
			return httpjob.Spec{URL: base, Headers: map[string]string{"X-Evil": "{{.Params.evil}}"}}
		}, "http.headers.X-Evil", `http.headers.X-Evil: control character '\n' at byte 1`},
		{"missing param in body", func(base string) httpjob.Spec {
			return httpjob.Spec{URL: base, Body: "{{.Params.region}}"}
		}, "http.body", ""},
		{"invalid spec", func(base string) httpjob.Spec {
			return httpjob.Spec{URL: base, Timeout: -1}
		}, "http.timeout", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
			v := vars()
			v.Params = map[string]any{"base": "file:///etc", "evil": "a\nX-Injected: 1", "spaced": "manual check", "unclosed": "http://[::1", "empty": ""}
			r := newRunner(t)
			res, err := r.Run(t.Context(), tt.spec(srv.URL), v, nil)
			if res != nil {
				t.Errorf("Run() result = %+v, want nil", res)
			}
			wantFieldError(t, err, tt.field, "")
			if !strings.HasPrefix(err.Error(), tt.msg) {
				t.Errorf("error:\n got %s\nwant %s", err, tt.msg)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("server got %d requests, want none", n)
			}
		})
	}
}

// TestRunEscapesURLValues checks the request line a real server receives
// for templated URLs: each value is escaped for the part of the URL it
// lands in, and urlquery and raw values are inserted as they are.
func TestRunEscapesURLValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		url  string // {{.Params.base}} is the server's URL
		want string // the request line
	}{
		{"query value", "{{.Params.base}}/?r={{.Params.reason}}", "GET /?r=manual+check HTTP/1.1"},
		{"query value with & and =", "{{.Params.base}}/s?q={{.Params.q}}&page=1", "GET /s?q=a%26b%3Dc+d&page=1 HTTP/1.1"},
		{"path segment", "{{.Params.base}}/items/{{.Params.name}}/x", "GET /items/a%2Fb%20c%3F/x HTTP/1.1"},
		{"non-ASCII", "{{.Params.base}}/{{.Params.word}}?w={{.Params.word}}", "GET /caf%C3%A9?w=caf%C3%A9 HTTP/1.1"},
		{"urlquery is not escaped twice", "{{.Params.base}}/s?q={{urlquery .Params.reason}}", "GET /s?q=manual+check HTTP/1.1"},
		{"raw keeps slashes", "{{.Params.base}}/{{raw .Params.path}}", "GET /v1/items HTTP/1.1"},
		{"host from a parameter", "http://{{.Params.host}}/ok", "GET /ok HTTP/1.1"},
		{"fragment is not sent", "{{.Params.base}}/p#{{.Params.reason}}", "GET /p HTTP/1.1"},
		{"values in with and if", "{{.Params.base}}/{{with .Params.name}}{{.}}{{end}}/{{if .Params.q}}{{.Params.q}}{{end}}", "GET /a%2Fb%20c%3F/a&b=c%20d HTTP/1.1"},
		{"variables write nothing", "{{$r := .Params.reason}}{{.Params.base}}/x?r={{$r}}", "GET /x?r=manual+check HTTP/1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan string, 1)
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				got <- r.Method + " " + r.RequestURI + " " + r.Proto
			})
			v := vars()
			v.Params = map[string]any{
				"base": srv.URL, "host": strings.TrimPrefix(srv.URL, "http://"),
				"reason": "manual check", "q": "a&b=c d", "name": "a/b c?", "word": "café",
				"path": "v1/items",
			}
			r := newRunner(t)
			if _, err := r.Run(t.Context(), httpjob.Spec{URL: tt.url}, v, nil); err != nil {
				t.Fatal(err)
			}
			if g := <-got; g != tt.want {
				t.Errorf("request line = %q, want %q", g, tt.want)
			}
		})
	}
}

func TestRunUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	r := newRunner(t)
	res, err := r.Run(t.Context(), httpjob.Spec{URL: srv.URL}, vars(), nil)
	var se *httpjob.StatusError
	if err == nil || res != nil || errors.As(err, &se) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run() = %+v, %v; want no result and a connection error", res, err)
	}
	if !strings.HasPrefix(err.Error(), "httpjob: Get ") {
		t.Errorf("error %q does not name the request", err)
	}
}

func TestRunEgress(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	inner := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "chime_fires_total 7")
	})
	innerURL, _ := url.Parse(inner.URL)
	outer := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL+"/metrics", http.StatusFound)
	})
	outerURL, _ := url.Parse(outer.URL)
	policy := func(cfg egress.Config) *egress.Policy {
		p, err := egress.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name   string
		policy *egress.Policy
		url    string
		want   string // the error; empty for success
	}{
		{
			name:   "no policy",
			url:    inner.URL + "/metrics",
			policy: nil,
		},
		{
			name:   "loopback by default",
			policy: policy(egress.Config{AllowSetting: "egress_allow"}),
			url:    inner.URL + "/metrics?token={{.Params.token}}",
			want:   "httpjob: egress to " + innerURL.Host + " refused: loopback addresses are denied by default; allow with egress_allow",
		},
		{
			name:   "allowed",
			policy: policy(egress.Config{Allow: []string{"127.0.0.1/32"}}),
			url:    inner.URL + "/metrics",
		},
		{
			name:   "redirect to a refused address",
			policy: policy(egress.Config{Allow: []string{"localhost"}}),
			url:    "http://localhost:" + outerURL.Port() + "/",
			want:   "httpjob: following a redirect: egress to " + innerURL.Host + " refused: loopback addresses are denied by default; allow with an allow rule",
		},
		{
			name:   "denied name",
			policy: policy(egress.Config{Allow: []string{"127.0.0.0/8"}, Deny: []string{"localhost"}}),
			url:    "http://localhost:" + innerURL.Port() + "/",
			want:   `httpjob: egress to localhost refused: denied by the rule "localhost"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := hits.Load()
			r := &httpjob.Runner{Egress: tt.policy}
			var out strings.Builder
			_, err := r.Run(t.Context(), httpjob.Spec{URL: tt.url}, vars(), &out)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tt.want == "":
				if out.String() != "HTTP/1.1 200 OK\nchime_fires_total 7" {
					t.Errorf("wrote %q", out.String())
				}
			default:
				if err == nil || err.Error() != tt.want {
					t.Fatalf("Run: %v, want %q", err, tt.want)
				}
				if _, ok := errors.AsType[*egress.RefusedError](err); !ok {
					t.Errorf("Run: %v does not wrap an *egress.RefusedError", err)
				}
				if n := hits.Load() - before; n != 0 {
					t.Errorf("the refused server saw %d requests", n)
				}
			}
		})
	}
}

func TestRunEgressNeedsATransportItCanCheck(t *testing.T) {
	t.Parallel()
	p, err := egress.New(egress.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := &httpjob.Runner{Egress: p, Client: &http.Client{Transport: http.NewFileTransport(http.Dir("."))}}
	_, err = r.Run(t.Context(), httpjob.Spec{URL: "http://example.com/"}, vars(), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "httpjob: Runner.Egress: ") {
		t.Errorf("Run: %v, want the transport refused", err)
	}
}
