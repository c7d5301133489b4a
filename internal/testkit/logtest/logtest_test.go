package logtest

import (
	"log/slog"
	"testing"
)

func TestRecorderKeepsLevelMessageAndAttrs(t *testing.T) {
	t.Parallel()
	r, log := New(slog.LevelInfo)
	log = log.With("node_id", "a").WithGroup("g")
	log.Debug("hidden")
	log.Warn("shown", "n", 3)
	got := r.Records()
	if len(got) != 1 {
		t.Fatalf("kept %d records, want 1: %+v", len(got), got)
	}
	rec := got[0]
	if rec.Level != slog.LevelWarn || rec.Message != "shown" {
		t.Errorf("record %+v, want WARN shown", rec)
	}
	if v := rec.Attrs["node_id"]; v.String() != "a" {
		t.Errorf("node_id = %v, want a", v)
	}
	if v := rec.Attrs["g.n"]; v.Int64() != 3 {
		t.Errorf("g.n = %v, want 3", v)
	}
	if n := len(r.Messages("shown")); n != 1 {
		t.Errorf("Messages(shown) found %d, want 1", n)
	}
}
