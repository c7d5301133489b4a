package chime

import (
	"context"
	"log/slog"
	"sync"
)

// deferredAttrs is a slog.Handler that adds attrs to the records of next,
// and asks next for the handler with them only when it first needs it.
// The standard handlers format attributes as they are added, and most
// firings log nothing, so a job that logs nothing does not pay for
// formatting its firing's keys (see Scheduler.jobContext).
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
