// Package logtest captures log/slog records in tests, so that a test can
// assert what was logged, at which level and with which attributes.
package logtest

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// Record is one captured log record.
type Record struct {
	Level   slog.Level
	Message string
	// Attrs holds the record's attributes and those added with With,
	// resolved; groups are flattened into dotted keys.
	Attrs map[string]slog.Value
}

// Recorder is a slog.Handler that keeps every record at or above its
// level. It is safe for concurrent use.
type Recorder struct {
	level slog.Level
	attrs []slog.Attr
	group string
	sink  *sink
}

type sink struct {
	mu      sync.Mutex
	records []Record
}

// New returns a Recorder that keeps records at level and above, and a
// logger writing to it.
func New(level slog.Level) (*Recorder, *slog.Logger) {
	r := &Recorder{level: level, sink: &sink{}}
	return r, slog.New(r)
}

// Enabled reports whether level is kept.
func (r *Recorder) Enabled(_ context.Context, level slog.Level) bool { return level >= r.level }

// Handle keeps the record.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	out := Record{Level: rec.Level, Message: rec.Message, Attrs: make(map[string]slog.Value)}
	for _, a := range r.attrs {
		addAttr(out.Attrs, "", a)
	}
	rec.Attrs(func(a slog.Attr) bool {
		addAttr(out.Attrs, r.group, a)
		return true
	})
	r.sink.mu.Lock()
	r.sink.records = append(r.sink.records, out)
	r.sink.mu.Unlock()
	return nil
}

func addAttr(m map[string]slog.Value, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	key := a.Key
	if prefix != "" {
		key = prefix + "." + key
	}
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			addAttr(m, key, g)
		}
		return
	}
	m[key] = v
}

// WithAttrs returns a Recorder sharing this one's records that adds attrs.
func (r *Recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *r
	c.attrs = slices.Clone(r.attrs)
	for _, a := range attrs {
		if r.group != "" {
			a = slog.Attr{Key: r.group + "." + a.Key, Value: a.Value}
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

// WithGroup returns a Recorder sharing this one's records that nests
// later attributes under name.
func (r *Recorder) WithGroup(name string) slog.Handler {
	c := *r
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}

// Records returns the records kept so far, oldest first.
func (r *Recorder) Records() []Record {
	r.sink.mu.Lock()
	defer r.sink.mu.Unlock()
	return slices.Clone(r.sink.records)
}

// Messages returns the records with the given message.
func (r *Recorder) Messages(msg string) []Record {
	var out []Record
	for _, rec := range r.Records() {
		if rec.Message == msg {
			out = append(out, rec)
		}
	}
	return out
}
