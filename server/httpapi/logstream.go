package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// Timing of a log stream.
const (
	// defaultStreamPoll is how often a stream reads new lines: the table
	// the nodes append to every 300ms, so no node talks to another.
	defaultStreamPoll = 400 * time.Millisecond
	// streamKeepAlive spaces the comment lines that keep an idle stream's
	// connection (and the proxies on its way) open.
	streamKeepAlive = 15 * time.Second
	// streamWriteWait bounds each write of a stream: a client that stops
	// reading is dropped, while the stream itself may last as long as its
	// execution, whatever the http.Server's WriteTimeout.
	streamWriteWait = 30 * time.Second
)

// streamLogs serves GET /api/v1/executions/{id}/logs/stream as
// Server-Sent Events: "line" events (id: seq) as the execution logs,
// then an "end" event with its outcome. It ends with the execution, when
// the client goes, or when the server stops (Options.Stopping).
func (h *handler) streamLogs(w http.ResponseWriter, r *http.Request, _ *call) error {
	id := r.PathValue("id")
	after, err := lastEventID(r.Header.Get("Last-Event-ID"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	// The first read answers an unknown execution with a plain error,
	// before the stream starts.
	logs, err := h.svc.ExecutionLogs(ctx, id, after)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: pass events on as they come
	w.WriteHeader(http.StatusOK)
	if err := writeStream(rc, w, ""); err != nil { // the headers, at once
		return nil
	}
	poll := time.NewTicker(h.streamPoll)
	defer poll.Stop()
	lastWrite := time.Now()
	for {
		var b strings.Builder
		for _, l := range logs.Lines {
			writeEvent(&b, "line", strconv.FormatInt(l.Seq, 10), l)
			after = l.Seq
		}
		if logs.End != nil {
			writeEvent(&b, "end", "", logs.End)
		}
		if b.Len() == 0 && time.Since(lastWrite) >= streamKeepAlive {
			b.WriteString(": keep-alive\n\n")
		}
		if b.Len() > 0 {
			if err := writeStream(rc, w, b.String()); err != nil {
				return nil // the client went; nothing more can be told
			}
			lastWrite = time.Now()
		}
		if logs.End != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-h.stopping:
			return nil
		case <-poll.C:
		}
		logs, err = h.svc.ExecutionLogs(ctx, id, after)
		if err != nil {
			if ctx.Err() == nil {
				// The stream has started: the client learns of the error
				// as an event, and may reconnect after the last line.
				var b strings.Builder
				writeEvent(&b, "failure", "", h.errorBody(r, err))
				_ = writeStream(rc, w, b.String())
			}
			return nil
		}
	}
}

// lastEventID reads a reconnecting client's Last-Event-ID: the seq of the
// last line it received; 0 when absent.
func lastEventID(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, httpjson.Errorf(api.CodeInvalidArgument, "Last-Event-ID", "%q: want the seq of the last line received, a whole number", v)
	}
	return n, nil
}

// writeEvent appends one event to b; data is JSON on one line.
func writeEvent(b *strings.Builder, event, id string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw = []byte(`{"message":"cannot encode the event"}`)
	}
	b.WriteString("event: " + event + "\n")
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("data: ")
	b.Write(raw)
	b.WriteString("\n\n")
}

// writeStream writes s and flushes it to the client, within
// streamWriteWait.
func writeStream(rc *http.ResponseController, w http.ResponseWriter, s string) error {
	if err := rc.SetWriteDeadline(time.Now().Add(streamWriteWait)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := fmt.Fprint(w, s); err != nil {
		return err
	}
	return rc.Flush()
}

// errorBody is the api.Error a stream's "failure" event carries; an
// internal error is logged, as the API logs those it answers.
func (h *handler) errorBody(r *http.Request, err error) *api.Error {
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	h.log.ErrorContext(r.Context(), "log stream failed", "method", r.Method, "path", r.URL.Path, "error", err)
	return &api.Error{Code: api.CodeInternal, Message: "internal error; the server log has the details"}
}
