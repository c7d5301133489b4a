package server

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/logtest"
)

func TestLogRecorderKeepsTheJobsLinesWhateverTheServerLogs(t *testing.T) {
	t.Parallel()
	serverLog, _ := logtest.New(slog.LevelWarn)
	rec := newLogRecorder(serverLog, 3)
	log := slog.New(rec).With("batch", 7).WithGroup("req")
	log.Debug("not kept: the server does not log debug")
	log.Info("fetched", "rows", 12, "took", 1500*time.Millisecond, slog.Group("db", "host", "pg1"))
	log.Warn("slow", "err", errors.New("timeout"), "ch", make(chan int))
	log.Error("one more")
	log.Error("over the limit")

	lines := rec.lines()
	if len(lines) != 4 {
		t.Fatalf("kept %d lines, want 3 and the line about the dropped one: %+v", len(lines), lines)
	}
	first := lines[0]
	want := map[string]any{"batch": int64(7), "req.rows": int64(12), "req.took": "1.5s", "req.db.host": "pg1"}
	if first.Message != "fetched" || first.Level != "INFO" || len(first.Attrs) != len(want) {
		t.Fatalf("first line = %+v, want fetched at INFO with %v", first, want)
	}
	for k, v := range want {
		if first.Attrs[k] != v {
			t.Errorf("attr %s = %#v, want %#v", k, first.Attrs[k], v)
		}
	}
	if got := lines[1].Attrs["req.err"]; got != "timeout" {
		t.Errorf("error attr = %#v, want its message", got)
	}
	if _, ok := lines[1].Attrs["req.ch"].(string); !ok {
		t.Errorf("a value JSON cannot encode was kept as %T, want text", lines[1].Attrs["req.ch"])
	}
	if lines[3].Message != "... 1 more log lines were not kept ..." {
		t.Errorf("last line = %q, want the count of dropped lines", lines[3].Message)
	}
	if got := len(serverLog.Records()); got != 3 {
		t.Errorf("the server's log got %d records, want the 3 at Warn and above", got)
	}
}
