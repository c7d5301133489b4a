package apiclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// ErrStreamEnded is returned by FollowExecutionLogs when the server
// closes a log stream without its "end" event more often in a row than it
// retries.
var ErrStreamEnded = errors.New("apiclient: the log stream ended before the execution did")

// Reconnecting a log stream: the waits between tries, and how many tries
// in a row may bring no event before FollowExecutionLogs gives up.
const (
	streamRetryWait = time.Second
	streamRetries   = 5
)

// FollowExecutionLogs streams the log lines of execution id (GET
// /api/v1/executions/{id}/logs/stream) from whichever node runs it: it
// calls line for each line numbered after after (0 for all), in order, as
// they are logged, and returns how the execution ended once it has. A
// connection that drops is opened again, going on after the last line
// received (Last-Event-ID). It stops at the first error of line, which it
// returns, and when ctx ends. An unknown execution is an *api.Error
// not_found.
//
// The stream lasts as long as the execution runs: the Client's
// http.Client.Timeout, which would cut it, does not apply to it.
func (c *Client) FollowExecutionLogs(ctx context.Context, id string, after int64, line func(api.LiveLogLine) error) (*api.LiveLogEnd, error) {
	failures := 0
	for {
		progressed, end, err := c.followOnce(ctx, id, &after, line)
		var stop *streamStop
		switch {
		case end != nil:
			return end, nil
		case errors.As(err, &stop):
			return nil, stop.err
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		if progressed {
			failures = 0
		}
		failures++
		if failures > streamRetries {
			if err == nil {
				err = ErrStreamEnded
			}
			return nil, fmt.Errorf("apiclient: following the logs of execution %s: %w", id, err)
		}
		t := time.NewTimer(streamRetryWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// streamStop is an error that ends FollowExecutionLogs rather than a
// reconnect: an error answer, a "failure" event, or line's error.
type streamStop struct{ err error }

func (e *streamStop) Error() string { return e.err.Error() }

// followOnce reads one connection of the stream, moving *after past each
// line it hands to line. It reports whether any event came, and the end
// once it came.
func (c *Client) followOnce(ctx context.Context, id string, after *int64, line func(api.LiveLogLine) error) (bool, *api.LiveLogEnd, error) {
	p := path("executions", id, "logs", "stream")
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+p, nil)
	if err != nil {
		return false, nil, &streamStop{fmt.Errorf("GET %s: %w", p, err)}
	}
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("User-Agent", c.userAgent)
	if *after > 0 {
		hreq.Header.Set("Last-Event-ID", strconv.FormatInt(*after, 10))
	}
	if c.token != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.streamClient().Do(hreq)
	if err != nil {
		return false, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, nil, &streamStop{responseError(request{method: http.MethodGet, path: p}, resp)}
	}
	progressed := false
	err = readEvents(resp.Body, func(name, data string) error {
		progressed = true
		switch name {
		case "line":
			var l api.LiveLogLine
			if err := json.Unmarshal([]byte(data), &l); err != nil {
				return &streamStop{fmt.Errorf("GET %s: decoding a line: %w", p, err)}
			}
			if l.Seq <= *after {
				return nil // sent again after a reconnect
			}
			if err := line(l); err != nil {
				return &streamStop{err}
			}
			*after = l.Seq
		case "end":
			var end api.LiveLogEnd
			if err := json.Unmarshal([]byte(data), &end); err != nil {
				return &streamStop{fmt.Errorf("GET %s: decoding the end: %w", p, err)}
			}
			return &streamEnd{&end}
		case "failure":
			var apiErr api.Error
			if err := json.Unmarshal([]byte(data), &apiErr); err != nil || apiErr.Code == "" {
				return fmt.Errorf("GET %s: the stream reported an error: %s", p, data)
			}
			return fmt.Errorf("GET %s: %w", p, &apiErr) // the server's trouble: reconnect
		}
		return nil
	})
	var end *streamEnd
	if errors.As(err, &end) {
		return true, end.end, nil
	}
	return progressed, nil, err
}

// streamEnd carries the end event out of readEvents.
type streamEnd struct{ end *api.LiveLogEnd }

func (e *streamEnd) Error() string { return "end of stream" }

// streamClient is the client's http.Client without its overall timeout,
// which would cut a stream that outlives it.
func (c *Client) streamClient() *http.Client {
	hc := *c.http
	hc.Timeout = 0
	return &hc
}

// readEvents parses Server-Sent Events from r, calling event with each
// event's name ("message" when it has none) and data, until r ends (nil)
// or event returns an error (which it returns).
func readEvents(r io.Reader, event func(name, data string) error) error {
	br := bufio.NewReader(r)
	var name string
	var data []string
	for {
		raw, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line := strings.TrimRight(raw, "\r\n")
		switch {
		case line == "":
			if len(data) > 0 {
				if name == "" {
					name = "message"
				}
				if err := event(name, strings.Join(data, "\n")); err != nil {
					return err
				}
			}
			name, data = "", nil
		case strings.HasPrefix(line, ":"): // a comment
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				name = value
			case "data":
				data = append(data, value)
			}
		}
	}
}
