package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/logtest"
)

// fixture is the API served over real HTTP by httptest, in front of the
// recording stand-ins.
type fixture struct {
	svc   *recordingService
	authn *recordingAuthenticator
	logs  *logtest.Recorder
	srv   *httptest.Server
}

// seededJob is the job every fixture's service starts with.
func seededJob() api.Job {
	return api.Job{Group: "g", Name: "n", Type: "http", Description: "nightly", Version: 3}
}

// newFixture serves the API with default options.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, newRecordingService(seededJob()), nil, false)
}

// newFixtureWith serves the API in front of svc with opts; the logger, if
// opts has none, records at Debug level. tls serves over HTTPS.
func newFixtureWith(t *testing.T, svc *recordingService, opts *Options, tls bool) *fixture {
	t.Helper()
	f := &fixture{svc: svc, authn: newRecordingAuthenticator()}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		f.logs, o.Logger = logtest.New(slog.LevelDebug)
	}
	h := New(f.svc, f.authn, &o)
	if tls {
		f.srv = httptest.NewTLSServer(h)
	} else {
		f.srv = httptest.NewServer(h)
	}
	t.Cleanup(f.srv.Close)
	return f
}

// do sends a request with an optional bearer token, JSON body and header
// pairs, and returns the response with its body read.
func (f *fixture) do(t *testing.T, method, path, token, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

// calls are the calls that reached the service or the authenticator's
// management methods.
func (f *fixture) calls() []recordedCall {
	return append(f.svc.Calls(), f.authn.Calls()...)
}

// decodeError decodes an api.Error body, failing the test if it is not one.
func decodeError(t *testing.T, resp *http.Response, raw []byte) api.Error {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q, want application/json", ct)
	}
	var e api.Error
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Code == "" || e.Message == "" {
		t.Fatalf("body %s is not an api.Error with a code and a message (%v)", raw, err)
	}
	return e
}

// decodeJSON decodes a JSON success body into v.
func decodeJSON(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("body %s: %v", raw, err)
	}
}
