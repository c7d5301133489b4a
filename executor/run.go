package executor

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// JobKey is a job's key: its group and name.
type JobKey struct {
	Group, Name string
}

// String returns "group.name", as chime prints keys.
func (k JobKey) String() string { return k.Group + "." + k.Name }

// Run is one run of a job handed to this executor.
type Run struct {
	// ID identifies the run across its hand-overs; ExecutionID is this
	// attempt's ID in the execution history.
	ID, ExecutionID string
	// Handler is the name the run was handed over under.
	Handler string
	// JobKey is the job's key.
	JobKey JobKey
	// ScheduledTime is the fire time the run is for.
	ScheduledTime time.Time
	// Attempt counts the firing's attempts from 1.
	Attempt int
	// Params are the job's data with the trigger's and the run's own
	// parameters over it. Numbers are float64, as JSON decodes them.
	Params map[string]any
	// Recovering marks a run handed over again because the executor that
	// ran it was lost.
	Recovering bool
	// ShardIndex (from 0) and ShardTotal place an item of a sharded
	// firing among its items; ShardTotal is 0 for a run that is not an
	// item. Under the routing sharding_broadcast, every live executor of
	// the group gets one item of each firing.
	ShardIndex, ShardTotal int
	// Logger's lines reach the server while the run runs (every
	// LogInterval, for the execution's live log), are sent again with the
	// result, and go to the executor's own logger.
	Logger *slog.Logger
	// Output is what the run prints: it is sent with the result, bounded
	// by Config.MaxOutputBytes.
	Output io.Writer
}

// maxLogLines bounds the log lines a run keeps; the server keeps fewer.
const maxLogLines = 1000

// lineRecorder is a slog.Handler that keeps the records as log lines and
// passes them on to the next handler.
type lineRecorder struct {
	next  slog.Handler
	attrs []slog.Attr
	group string
	state *lineState
}

type lineState struct {
	mu      sync.Mutex
	lines   []api.LogLine
	max     int
	dropped int
	// sent counts the lines the server acknowledged live.
	sent int
}

func newLineRecorder(next slog.Handler, max int) *lineRecorder {
	return &lineRecorder{next: next, state: &lineState{max: max}}
}

func (h *lineRecorder) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h *lineRecorder) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelInfo {
		line := api.LogLine{Time: r.Time.UTC(), Level: r.Level.String(), Message: r.Message}
		add := func(a slog.Attr) {
			if line.Attrs == nil {
				line.Attrs = make(map[string]any)
			}
			key := a.Key
			if h.group != "" {
				key = h.group + "." + key
			}
			line.Attrs[key] = a.Value.Resolve().Any()
		}
		for _, a := range h.attrs {
			add(a)
		}
		r.Attrs(func(a slog.Attr) bool { add(a); return true })
		h.state.mu.Lock()
		if len(h.state.lines) < h.state.max {
			h.state.lines = append(h.state.lines, line)
		} else {
			h.state.dropped++
		}
		h.state.mu.Unlock()
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *lineRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	c.next = h.next.WithAttrs(attrs)
	return &c
}

func (h *lineRecorder) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	c.next = h.next.WithGroup(name)
	return &c
}

// lines returns the kept lines, with one saying how many were dropped.
func (h *lineRecorder) lines() []api.LogLine {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	out := append([]api.LogLine(nil), h.state.lines...)
	if h.state.dropped > 0 {
		out[len(out)-1] = api.LogLine{Time: time.Now().UTC(), Level: "WARN", Message: "log lines dropped by the executor",
			Attrs: map[string]any{"dropped": h.state.dropped + 1}}
	}
	return out
}

// unsent returns the kept lines not yet sent live, numbered from 1 in
// the order they were logged, as the result's Logs will number them.
func (h *lineRecorder) unsent() []api.LiveLogLine {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	out := make([]api.LiveLogLine, 0, len(h.state.lines)-h.state.sent)
	for i := h.state.sent; i < len(h.state.lines); i++ {
		out = append(out, api.LiveLogLine{Seq: int64(i) + 1, LogLine: h.state.lines[i]})
	}
	return out
}

// markSent records that the lines up to seq were sent live.
func (h *lineRecorder) markSent(seq int64) {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	h.state.sent = max(h.state.sent, int(seq))
}
