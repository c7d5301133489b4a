package apiclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

// These tests cover what the client does on its own: URLs, headers, and
// answers no chime server gives (a proxy's error page). The routes are
// tested against a real server in server_test.go.

func TestNewRefusesBadURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url, want string
	}{
		{"127.0.0.1:8080", "want an http:// or https:// URL"},
		{"ftp://example.com", "want an http:// or https:// URL"},
		{"http://", "no host"},
		{"http://example.com/?a=b", "want no query or fragment"},
		{"http://exa mple.com", "invalid character"},
	}
	for _, tt := range tests {
		_, err := New(tt.url, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%q) error = %v, want one containing %q", tt.url, err, tt.want)
		}
	}
}

// recorder is an http.Handler that keeps the request it got and answers
// with a fixed status and body.
type recorder struct {
	status int
	ctype  string
	body   string
	got    chan *http.Request
}

func (h *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.got <- r.Clone(context.WithoutCancel(r.Context()))
	if h.ctype != "" {
		w.Header().Set("Content-Type", h.ctype)
	}
	w.WriteHeader(h.status)
	_, _ = io.WriteString(w, h.body)
}

func newRecorder(t *testing.T, status int, ctype, body string) (*recorder, string) {
	t.Helper()
	h := &recorder{status: status, ctype: ctype, body: body, got: make(chan *http.Request, 1)}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv.URL
}

func TestRequestURLAndHeaders(t *testing.T) {
	t.Parallel()
	h, base := newRecorder(t, http.StatusNoContent, "", "")
	c, err := New(base+"/prefix/", &Options{Token: "s3cret", UserAgent: "test-agent"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PauseJob(t.Context(), "team a/b", "nightly?x"); err != nil {
		t.Fatalf("PauseJob: %v", err)
	}
	r := <-h.got
	if got, want := r.URL.EscapedPath(), "/prefix/api/v1/jobs/team%20a%2Fb/nightly%3Fx/pause"; got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("User-Agent"); got != "test-agent" {
		t.Errorf("User-Agent = %q", got)
	}

	// Without a token, no Authorization header at all.
	if err := c.WithToken("").PauseJob(t.Context(), "g", "n"); err != nil {
		t.Fatal(err)
	}
	if r := <-h.got; r.Header.Get("Authorization") != "" {
		t.Errorf("Authorization sent without a token: %q", r.Header.Get("Authorization"))
	}
}

func TestErrorThatIsNotJSON(t *testing.T) {
	t.Parallel()
	page := "<html><body>" + strings.Repeat("bad gateway ", 100) + "</body></html>"
	_, base := newRecorder(t, http.StatusBadGateway, "text/html", page)
	c, err := New(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetJob(t.Context(), "g", "n")
	var statusErr *StatusError
	if !errors.As(err, &statusErr) {
		t.Fatalf("GetJob error = %v (%T), want *StatusError", err, err)
	}
	if statusErr.StatusCode != http.StatusBadGateway || statusErr.Status != "502 Bad Gateway" {
		t.Errorf("status = %d %q", statusErr.StatusCode, statusErr.Status)
	}
	if len(statusErr.Body) != maxErrorBody || !strings.HasPrefix(statusErr.Body, "<html><body>bad gateway") {
		t.Errorf("body = %q (%d bytes), want the first %d bytes of the page", statusErr.Body, len(statusErr.Body), maxErrorBody)
	}
	if !strings.HasPrefix(err.Error(), `GET /api/v1/jobs/g/n: 502 Bad Gateway (body: "<html>`) {
		t.Errorf("message = %s", err)
	}
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		t.Errorf("a non-JSON answer became an *api.Error: %v", apiErr)
	}
}

func TestErrorJSONWithoutCode(t *testing.T) {
	t.Parallel()
	_, base := newRecorder(t, http.StatusInternalServerError, "application/json", `{"error":"boom"}`)
	c, err := New(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = c.DeleteJob(t.Context(), "g", "n")
	var statusErr *StatusError
	if !errors.As(err, &statusErr) || statusErr.Body != `{"error":"boom"}` {
		t.Fatalf("DeleteJob error = %v, want a *StatusError keeping the body", err)
	}
}

func TestPagesStopsOnARepeatedCursor(t *testing.T) {
	t.Parallel()
	calls := 0
	seq := pages("", func(cursor string) ([]int, string, error) {
		calls++
		return []int{calls}, "same", nil
	})
	var got []int
	var gotErr error
	for v, err := range seq {
		if err != nil {
			gotErr = err
			break
		}
		got = append(got, v)
	}
	if len(got) != 2 || gotErr == nil || !strings.Contains(gotErr.Error(), `cursor "same"`) {
		t.Errorf("got %v, error %v; want two items, then an error naming the cursor", got, gotErr)
	}
}

func TestETag(t *testing.T) {
	t.Parallel()
	for etag, want := range map[string]int64{`"7"`: 7, `W/"12"`: 12, "": 0, `"x"`: 0} {
		if got := parseETag(etag); got != want {
			t.Errorf("parseETag(%q) = %d, want %d", etag, got, want)
		}
	}
	if got := formatETag(42); got != `"42"` {
		t.Errorf("formatETag(42) = %s", got)
	}
}
