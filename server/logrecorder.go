package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/chime-scheduler/chime/server/history"
)

// logRecorder is the slog.Handler of the logger a job gets: it passes
// every record on to the server's handler and keeps a copy, up to a limit,
// for the execution's history.
type logRecorder struct {
	next   slog.Handler
	attrs  []slog.Attr // attributes added with WithAttrs, group-qualified
	groups []string
	shared *recorded
}

// recorded are the lines an execution's loggers keep, shared by the
// handlers WithAttrs and WithGroup derive.
type recorded struct {
	mu      sync.Mutex
	limit   int
	lines   []history.LogLine
	dropped int
	// tee, when set, gets each line kept with its number (from 1), in
	// the order the lines are kept.
	tee func(seq int64, l history.LogLine)
}

// newLogRecorder returns a handler passing records to next and keeping at
// most limit of them.
func newLogRecorder(next slog.Handler, limit int) *logRecorder {
	return &logRecorder{next: next, shared: &recorded{limit: limit}}
}

// Enabled reports whether records of level l are kept or logged: the
// history keeps Info and above whatever the server's log level, and Debug
// when the server logs it.
func (h *logRecorder) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

// Handle keeps the record and passes it on to the server's handler when
// that takes its level.
func (h *logRecorder) Handle(ctx context.Context, r slog.Record) error {
	line := history.LogLine{Time: r.Time.UTC(), Level: r.Level.String(), Message: r.Message}
	attrs := make(map[string]any, len(h.attrs)+r.NumAttrs())
	for _, a := range h.attrs {
		addAttr(attrs, "", a)
	}
	prefix := strings.Join(h.groups, ".")
	r.Attrs(func(a slog.Attr) bool {
		addAttr(attrs, prefix, a)
		return true
	})
	if len(attrs) > 0 {
		line.Attrs = attrs
	}
	h.shared.add(line)
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(attrs)
	prefix := strings.Join(h.groups, ".")
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range attrs {
		if prefix != "" {
			a.Key = prefix + "." + a.Key
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

// WithGroup returns a handler that qualifies later attributes with name.
func (h *logRecorder) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.next = h.next.WithGroup(name)
	c.groups = append(append([]string(nil), h.groups...), name)
	return &c
}

// lines returns the kept lines, with a last line saying how many were
// dropped beyond the limit.
func (h *logRecorder) lines() []history.LogLine {
	return h.shared.snapshot()
}

func (r *recorded) add(l history.LogLine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) >= r.limit {
		r.dropped++
		return
	}
	r.lines = append(r.lines, l)
	if r.tee != nil {
		r.tee(int64(len(r.lines)), l)
	}
}

// teeTo sets the function that gets each line kept from now on, with its
// number; it must not block.
func (r *recorded) teeTo(tee func(seq int64, l history.LogLine)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tee = tee
}

func (r *recorded) snapshot() []history.LogLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]history.LogLine(nil), r.lines...)
	if r.dropped > 0 && len(out) > 0 {
		out = append(out, history.LogLine{
			Time:    out[len(out)-1].Time,
			Level:   slog.LevelWarn.String(),
			Message: fmt.Sprintf("... %d more log lines were not kept ...", r.dropped),
		})
	}
	return out
}

// addAttr adds a, resolved and flattened (groups become dotted keys), to m.
func addAttr(m map[string]any, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	key := a.Key
	switch {
	case prefix == "":
	case key == "":
		key = prefix
	default:
		key = prefix + "." + key
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, ga := range a.Value.Group() {
			addAttr(m, key, ga)
		}
		return
	}
	switch a.Value.Kind() {
	case slog.KindDuration:
		m[key] = a.Value.Duration().String()
	case slog.KindTime:
		m[key] = a.Value.Time().UTC()
	case slog.KindAny:
		// The history stores attributes as JSON: a value that has no JSON
		// form is kept as text.
		v := a.Value.Any()
		if err, ok := v.(error); ok {
			m[key] = err.Error()
		} else if _, err := json.Marshal(v); err != nil {
			m[key] = fmt.Sprintf("%+v", v)
		} else {
			m[key] = v
		}
	default:
		m[key] = a.Value.Any()
	}
}

// deferredAttrs is a slog.Handler that adds attrs to the records of next,
// and asks next for the handler with them only when it first needs it:
// the standard handlers format attributes when they are added, and most
// executions log nothing, so a run that logs nothing does not pay for
// formatting its attempt's keys (see Server.attemptLogger).
type deferredAttrs struct {
	next  slog.Handler
	attrs []slog.Attr

	once sync.Once
	with slog.Handler
}

// handler returns next with attrs, made on the first call.
func (d *deferredAttrs) handler() slog.Handler {
	d.once.Do(func() { d.with = d.next.WithAttrs(d.attrs) })
	return d.with
}

// Enabled reports whether next takes records of level l: attributes do
// not change it.
func (d *deferredAttrs) Enabled(ctx context.Context, l slog.Level) bool {
	return d.next.Enabled(ctx, l)
}

// Handle passes r to next with attrs.
func (d *deferredAttrs) Handle(ctx context.Context, r slog.Record) error {
	return d.handler().Handle(ctx, r)
}

// WithAttrs returns next's handler with d's attrs and then attrs.
func (d *deferredAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return d.handler().WithAttrs(attrs)
}

// WithGroup returns next's handler with d's attrs, then the group.
func (d *deferredAttrs) WithGroup(name string) slog.Handler {
	return d.handler().WithGroup(name)
}
