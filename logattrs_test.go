package chime_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
)

// countingHandler counts the calls of WithAttrs, where the standard
// handlers format the attributes added.
type countingHandler struct {
	slog.Handler
	mu        *sync.Mutex
	withAttrs *int
}

func (h countingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.mu.Lock()
	*h.withAttrs++
	h.mu.Unlock()
	return countingHandler{Handler: h.Handler.WithAttrs(attrs), mu: h.mu, withAttrs: h.withAttrs}
}

// TestJobLoggerFormatsKeysOnlyWhenTheJobLogs checks that the logger a job
// gets hands the firing's keys to the scheduler's handler only when the
// job logs: a firing whose job logs nothing does not format them, and a
// record the job logs carries them.
func TestJobLoggerFormatsKeysOnlyWhenTheJobLogs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu    sync.Mutex
			buf   bytes.Buffer
			calls int
		)
		h := countingHandler{Handler: slog.NewTextHandler(&lockedWriter{mu: &mu, w: &buf}, nil), mu: &mu, withAttrs: &calls}
		s, rec := newScheduler(t, chime.Config{Logger: slog.New(h)})
		rec.run = func(_ context.Context, jc *chime.JobContext) error {
			if jc.Job.Key.Name == "loud" {
				jc.Logger.Info("hello from the job")
			}
			return nil
		}
		at := time.Now().Add(time.Second)
		for _, name := range []string{"quiet1", "quiet2", "loud"} {
			tr := trig("t-"+name, &schedule.Simple{})
			tr.StartTime = at
			scheduleJob(t, s, job(name), tr)
		}
		start(t, s)
		mu.Lock()
		before := calls // the scheduler's own loggers
		mu.Unlock()
		time.Sleep(5 * time.Second)
		stop(t, s)
		if n := len(rec.all()); n != 3 {
			t.Fatalf("%d firings, want 3", n)
		}
		mu.Lock()
		defer mu.Unlock()
		if calls-before != 1 {
			t.Errorf("the scheduler's handler got a firing's keys %d times, want once (for the one job that logged)", calls-before)
		}
		var line string
		for l := range strings.Lines(buf.String()) {
			if strings.Contains(l, "hello from the job") {
				line = l
			}
		}
		for _, want := range []string{"job_key=DEFAULT.loud", "execution_id=", "scheduled_fire_time=", "trigger_key=DEFAULT.t-loud"} {
			if !strings.Contains(line, want) {
				t.Errorf("the job's record %q lacks %q", line, want)
			}
		}
	})
}

// lockedWriter serializes the writes of the handler and the reads of the
// test.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
