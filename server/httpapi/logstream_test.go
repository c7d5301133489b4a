package httpapi

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// streamFixture serves the API in front of the recording service from an
// http.Server whose WriteTimeout is shorter than the streams it serves,
// polling every 100ms.
func streamFixture(t *testing.T, stopping <-chan struct{}) *httptest.Server {
	t.Helper()
	h := New(newRecordingService(), newRecordingAuthenticator(), &Options{Stopping: stopping}).(*handler)
	h.streamPoll = 100 * time.Millisecond
	srv := httptest.NewUnstartedServer(h)
	srv.Config.WriteTimeout = 150 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// getStream opens a log stream with the viewer's token and the headers
// given in pairs.
func getStream(t *testing.T, ctx context.Context, srv *httptest.Server, id string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/executions/"+id+"/logs/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer viewer-token")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("GET stream: %v", err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// TestLogStreamOutlivesWriteTimeout reads a stream that lasts three polls,
// longer than the server's WriteTimeout: every line arrives, as events
// with their seq as id, then the end, and the stream closes.
func TestLogStreamOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	srv := streamFixture(t, nil)
	resp := getStream(t, t.Context(), srv, "long")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q; want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the stream: %v (cut by the WriteTimeout?)", err)
	}
	want := "event: line\nid: 1\ndata: {\"seq\":1,\"time\":\"0001-01-01T00:00:00Z\",\"level\":\"INFO\",\"message\":\"line 1\"}\n\n" +
		"event: line\nid: 2\ndata: {\"seq\":2,\"time\":\"0001-01-01T00:00:00Z\",\"level\":\"INFO\",\"message\":\"line 2\"}\n\n" +
		"event: line\nid: 3\ndata: {\"seq\":3,\"time\":\"0001-01-01T00:00:00Z\",\"level\":\"INFO\",\"message\":\"line 3\"}\n\n" +
		"event: end\ndata: {\"outcome\":\"succeeded\"}\n\n"
	if string(raw) != want {
		t.Errorf("stream =\n%s\nwant\n%s", raw, want)
	}
}

// TestLogStreamLastEventID resumes after the line a client last got.
func TestLogStreamLastEventID(t *testing.T) {
	t.Parallel()
	srv := streamFixture(t, nil)
	resp := getStream(t, t.Context(), srv, "long", "Last-Event-ID", "2")
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(raw); strings.Contains(got, "line 2") || !strings.Contains(got, "id: 3\n") || !strings.Contains(got, "event: end") {
		t.Errorf("stream after Last-Event-ID 2 =\n%s\nwant line 3 and the end only", got)
	}
	bad := getStream(t, t.Context(), srv, "long", "Last-Event-ID", "two")
	body, _ := io.ReadAll(bad.Body)
	if bad.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Last-Event-ID") {
		t.Errorf("Last-Event-ID two: %d %s, want 400 naming the header", bad.StatusCode, body)
	}
}

// TestLogStreamEndsWhenTheServerStops holds a stream of an execution that
// never ends open until Stopping is closed: the stream closes then, so
// that the server's shutdown does not wait for it.
func TestLogStreamEndsWhenTheServerStops(t *testing.T) {
	t.Parallel()
	stopping := make(chan struct{})
	srv := streamFixture(t, stopping)
	resp := getStream(t, t.Context(), srv, "forever")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, bufio.NewReader(resp.Body))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the stream of a running execution ended (%v) before the server stopped", err)
	case <-time.After(500 * time.Millisecond): // several polls, past the WriteTimeout
	}
	close(stopping)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stream ended with %v, want a clean end", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end when the server stopped")
	}
}
