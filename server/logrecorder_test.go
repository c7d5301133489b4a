package server

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
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

// countingHandler counts the calls of WithAttrs, where the standard
// handlers format the attributes added.
type countingHandler struct {
	slog.Handler
	withAttrs *int
}

func (h countingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	*h.withAttrs++
	return countingHandler{Handler: h.Handler.WithAttrs(attrs), withAttrs: h.withAttrs}
}

// TestAttemptLoggerDefersItsKeys checks that an attempt's logger hands its
// keys to the server's handler only when the attempt logs: an execution
// that logs nothing does not format them, and one that logs has them on
// every record, once.
func TestAttemptLoggerDefersItsKeys(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	calls := 0
	s := &Server{log: slog.New(countingHandler{Handler: slog.NewTextHandler(&buf, nil), withAttrs: &calls})}
	a := &attempt{id: "e1", number: 2, job: chime.NewJobKey("g", "j"), triggerGroup: "g", triggerName: "t",
		scheduled: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	log := s.attemptLogger(a)
	rec := newLogRecorder(log.Handler(), 10)
	_ = slog.New(rec).Enabled(t.Context(), slog.LevelInfo)
	if calls != 0 {
		t.Fatalf("the server's handler got the attempt's keys %d times before the attempt logged, want 0", calls)
	}
	slog.New(rec).Info("first")
	log.Warn("second")
	if calls != 1 {
		t.Errorf("the server's handler got the attempt's keys %d times for two records, want once", calls)
	}
	out := buf.String()
	for _, want := range []string{"job_key=g.j", "execution_id=e1", "attempt=2", "scheduled_fire_time=2026-11-25T12:00:00.000Z", "trigger_key=g.t"} {
		if strings.Count(out, want) != 2 {
			t.Errorf("the two records hold %q %d times, want twice:\n%s", want, strings.Count(out, want), out)
		}
	}
}
