package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

var lifecycleTests = []test{
	{"Now", func(t *testing.T, h *harness) {
		d := 50 * time.Millisecond
		if h.adv != nil {
			d = time.Hour
		}
		first := h.now()
		h.elapse(d)
		if second := h.now(); second.Sub(first) < d {
			t.Errorf("store clock moved %s after %s passed", second.Sub(first), d)
		}
	}},
	{"Closed", func(t *testing.T, h *harness) {
		l := h.node("n")
		if err := h.s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		_, err := h.s.JobGet(h.ctx, key("g", "j"))
		wantErr(t, "JobGet after Close", err, store.ErrClosed)
		_, err = h.s.TriggersAcquire(h.ctx, &store.TriggersAcquireParams{Lease: l, NoLaterThan: at(1), Limit: 1})
		wantErr(t, "TriggersAcquire after Close", err, store.ErrClosed)
		_, err = h.s.Now(h.ctx)
		wantErr(t, "Now after Close", err, store.ErrClosed)
	}},
	{"CanceledContext", func(t *testing.T, h *harness) {
		ctx, cancel := context.WithCancel(h.ctx)
		cancel()
		_, err := h.s.JobGet(ctx, key("g", "j"))
		wantErr(t, "JobGet with a canceled context", err, context.Canceled)
		err = h.s.JobUpsert(ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: key("g", "j"), Durable: true}})
		wantErr(t, "JobUpsert with a canceled context", err, context.Canceled)
		if _, err := h.s.JobGet(h.ctx, key("g", "j")); err == nil {
			t.Errorf("JobUpsert with a canceled context stored the job")
		}
	}},
}
