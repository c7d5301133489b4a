package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/google/go-cmp/cmp"
)

// stepper is a Go job type that logs a line, waits for a step, logs a
// second line, waits for another step and returns.
type stepper struct{ step chan struct{} }

func (s *stepper) Execute(ctx context.Context, jc *chime.JobContext) error {
	for i, msg := range []string{"first", "second"} {
		jc.Logger.Info(msg, "n", i+1)
		select {
		case <-s.step:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// event is one Server-Sent Event.
type event struct{ name, id, data string }

// readEvents parses the events of body onto a channel, closed when the
// stream ends.
func readEvents(body io.Reader) <-chan event {
	out := make(chan event, 100)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		var e event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if e.name != "" {
					out <- e
				}
				e = event{}
			case strings.HasPrefix(line, "event: "):
				e.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				e.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				e.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

// nextEvent returns the stream's next event, failing the test when none
// comes or the stream ended.
func nextEvent(t *testing.T, events <-chan event) event {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("the stream ended; want another event")
		}
		return e
	case <-time.After(waitTimeout):
		t.Fatal("no event within the wait")
	}
	return event{}
}

// openStream opens the log stream of execution id on srv with token.
func openStream(t *testing.T, srv *httptest.Server, token, id string, header ...string) <-chan event {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/v1/executions/"+id+"/logs/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("GET stream: %v", err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET stream: %d %s %s, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return readEvents(resp.Body)
}

// wantLine fails the test unless e is the line event seq with message.
func wantLine(t *testing.T, e event, seq int64, msg string) {
	t.Helper()
	var l api.LiveLogLine
	if e.name != "line" || json.Unmarshal([]byte(e.data), &l) != nil || e.id != fmt.Sprint(seq) || l.Seq != seq || l.Message != msg {
		t.Fatalf("event = %+v, want line %d %q", e, seq, msg)
	}
}

// TestLiveLogsStreamFromAnotherNode runs a job on one node of two sharing
// a PostgreSQL database and streams its log from the other node's API:
// the first line arrives while the job waits before logging the second,
// then the second, then the end, and the stream closes. The live rows are
// gone once the execution ended, and a reconnect after the first line
// gets the rest from the history.
func TestLiveLogsStreamFromAnotherNode(t *testing.T) {
	t.Parallel()
	step := &stepper{step: make(chan struct{})}
	url := dbtest.PostgresURL(t)
	var nodes []*Server
	for _, id := range []string{"node-a", "node-b"} {
		n := newServer(t, url, func(c *Config) { c.NodeID = id })
		if err := n.RegisterJobType("step", step); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		start(t, n)
	}
	ctx := t.Context()
	a := nodes[0]
	if _, err := a.CreateJob(ctx, "alice", api.Job{Group: "g", Name: "steps", Type: "step"}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := a.RunJob(ctx, "alice", "g", "steps", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	id := acc.ExecutionIDs[0]
	var runner, other *Server
	waitFor(t, "the execution to run", func() bool {
		e, err := a.GetExecution(ctx, id)
		if err != nil || e.Outcome != "running" {
			return false
		}
		runner, other = nodes[0], nodes[1]
		if e.NodeID == nodes[1].NodeID() {
			runner, other = nodes[1], nodes[0]
		}
		return true
	})
	if _, _, err := other.BootstrapAdmin(ctx); err != nil {
		t.Fatalf("BootstrapAdmin: %v", err)
	}
	tok, err := other.auth.CreateToken(ctx, "admin", api.Token{Name: "viewer", Role: api.RoleViewer})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	srv := httptest.NewServer(other.Handler())
	t.Cleanup(srv.Close)

	events := openStream(t, srv, tok.Secret, id)
	wantLine(t, nextEvent(t, events), 1, "first") // the job waits: "second" does not exist yet
	step.step <- struct{}{}
	wantLine(t, nextEvent(t, events), 2, "second")
	step.step <- struct{}{}
	end := nextEvent(t, events)
	var got api.LiveLogEnd
	if end.name != "end" || json.Unmarshal([]byte(end.data), &got) != nil || got.Outcome != "succeeded" || got.FinishedTime == nil {
		t.Fatalf("last event = %+v, want end succeeded with its finish time", end)
	}
	if e, ok := <-events; ok {
		t.Errorf("event %+v after the end; want the stream closed", e)
	}

	waitFor(t, "the ended execution's live rows to be deleted", func() bool {
		lines, err := runner.live.Read(ctx, id, 0, 10)
		return err == nil && len(lines) == 0
	})
	again := openStream(t, srv, tok.Secret, id, "Last-Event-ID", "1")
	wantLine(t, nextEvent(t, again), 2, "second")
	if e := nextEvent(t, again); e.name != "end" {
		t.Errorf("after the history's lines: %+v, want the end", e)
	}
	if _, err := other.ExecutionLogs(ctx, "no-such-execution", 0); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("ExecutionLogs of an unknown execution = %v, want not found", err)
	}
}

// TestHistoryTailNumbersLinesAsTheLiveLog checks the numbering of a
// finished execution's history lines, whole or cut in the middle by the
// history's limit.
func TestHistoryTailNumbersLinesAsTheLiveLog(t *testing.T) {
	t.Parallel()
	line := func(msg string) history.LogLine { return history.LogLine{Level: "INFO", Message: msg} }
	whole := []history.LogLine{line("a"), line("b"), line("c")}
	// 10 lines recorded, cut to 5: 2 first, the omission line, 2 last.
	cut := []history.LogLine{line("1"), line("2"), {Level: "WARN", Message: "... 6 log lines omitted ..."}, line("9"), line("10")}
	seqs := func(ls []api.LiveLogLine) []string {
		var out []string
		for _, l := range ls {
			out = append(out, fmt.Sprintf("%d:%s", l.Seq, l.Message))
		}
		return out
	}
	tests := []struct {
		name  string
		logs  []history.LogLine
		after int64
		want  []string
	}{
		{"whole from the start", whole, 0, []string{"1:a", "2:b", "3:c"}},
		{"whole after 2", whole, 2, []string{"3:c"}},
		{"whole, all seen", whole, 3, nil},
		{"cut from the start", cut, 0, []string{"1:1", "2:2", "8:... 6 log lines omitted ...", "9:9", "10:10"}},
		{"cut, seen into the middle", cut, 5, []string{"8:... 6 log lines omitted ...", "9:9", "10:10"}},
		{"cut, seen past the middle", cut, 8, []string{"9:9", "10:10"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, seqs(historyTail(tt.logs, tt.after))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestLiveLogStreamEndsWhenTheServerStops serves a node on a listener of
// the test's and holds a stream of a running execution open while the
// node stops: the stream ends at once, so that the HTTP server's shutdown
// does not wait for it, and Serve returns without an error once the job,
// released, has ended.
func TestLiveLogStreamEndsWhenTheServerStops(t *testing.T) {
	t.Parallel()
	step := &stepper{step: make(chan struct{})}
	s := newServer(t, dbtest.SQLiteURL(t))
	if err := s.RegisterJobType("step", step); err != nil {
		t.Fatal(err)
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	waitFor(t, "the server to be ready", func() bool { return s.Ready(t.Context()) == nil })
	if _, _, err := s.BootstrapAdmin(t.Context()); err != nil {
		t.Fatal(err)
	}
	tok, err := s.auth.CreateToken(t.Context(), "admin", api.Token{Name: "viewer", Role: api.RoleViewer})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateJob(t.Context(), "alice", api.Job{Group: "g", Name: "steps", Type: "step"}); err != nil {
		t.Fatal(err)
	}
	acc, err := s.RunJob(t.Context(), "alice", "g", "steps", api.RunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	id := acc.ExecutionIDs[0]
	waitFor(t, "the execution to run", func() bool {
		e, err := s.GetExecution(t.Context(), id)
		return err == nil && e.Outcome == "running"
	})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+ln.Addr().String()+"/api/v1/executions/"+id+"/logs/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET stream: %v", err)
	}
	defer resp.Body.Close()
	events := readEvents(resp.Body)
	wantLine(t, nextEvent(t, events), 1, "first")

	stop()
	select {
	case e, ok := <-events:
		if ok {
			t.Fatalf("event %+v while the server stops; want the stream closed", e)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the stream did not end when the server stopped")
	}
	step.step <- struct{}{}
	step.step <- struct{}{}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve = %v, want a clean stop", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Serve did not return")
	}
}
