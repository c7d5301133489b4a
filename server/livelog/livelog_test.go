package livelog_test

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/livelog"
	"github.com/chime-scheduler/chime/store/sqlstore"
	"github.com/google/go-cmp/cmp"
)

// t0 is the base of the tests' instants.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// TestLog runs every behaviour on every dialect, each subtest under a
// scheduler name of its own.
func TestLog(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, open func(*livelog.Options) (*livelog.Log, *sqlstore.Store))
	}{
		{"AppendRead", testAppendRead},
		{"AppendIsIdempotent", testAppendIdempotent},
		{"Bounds", testBounds},
		{"Invalid", testInvalid},
		{"DeleteAndPrune", testDeleteAndPrune},
		{"Buffer", testBuffer},
		{"BufferEndDeletesAfterInFlightBatch", testBufferEnd},
		{"BufferQuietExecutionSendsNothing", testBufferQuiet},
	}
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			urlFor := db.Shared(t)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					url := urlFor(t)
					tc.run(t, func(o *livelog.Options) (*livelog.Log, *sqlstore.Store) { return newLog(t, url, o) })
				})
			}
		})
	}
}

// newLog opens a store with a fresh scheduler name on url and returns its
// live log; both close when the test ends.
func newLog(t *testing.T, url string, opts *livelog.Options) (*livelog.Log, *sqlstore.Store) {
	t.Helper()
	o := &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: slog.New(slog.DiscardHandler)}
	if !strings.HasPrefix(url, "sqlite:") {
		o.MaxOpenConns = 2
	}
	st, err := sqlstore.Open(t.Context(), url, o)
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	l, err := livelog.New(t.Context(), st, opts)
	if err != nil {
		t.Fatalf("livelog.New: %v", err)
	}
	return l, st
}

// lines returns lines numbered from..to, one millisecond apart.
func lines(from, to int64) []livelog.Line {
	var out []livelog.Line
	for i := from; i <= to; i++ {
		out = append(out, livelog.Line{
			Seq: i, Time: t0.Add(time.Duration(i) * time.Millisecond), Level: "INFO",
			Message: fmt.Sprintf("line %d", i), Attrs: map[string]any{"i": json.Number(fmt.Sprint(i))},
		})
	}
	return out
}

// read returns every line of execID after seq.
func read(t *testing.T, l *livelog.Log, execID string, after int64) []livelog.Line {
	t.Helper()
	got, err := l.Read(t.Context(), execID, after, 1000)
	if err != nil {
		t.Fatalf("Read(%s, %d): %v", execID, after, err)
	}
	return got
}

func testAppendRead(t *testing.T, open func(*livelog.Options) (*livelog.Log, *sqlstore.Store)) {
	l, _ := open(nil)
	ctx := t.Context()
	if err := l.Append(ctx, "e1", lines(1, 3)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if err := l.Append(ctx, "e2", lines(1, 1)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if err := l.Append(ctx, "e1", lines(4, 5)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if diff := cmp.Diff(lines(1, 5), read(t, l, "e1", 0)); diff != "" {
		t.Errorf("Read(e1, 0) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lines(4, 5), read(t, l, "e1", 3)); diff != "" {
		t.Errorf("Read(e1, 3) (-want +got):\n%s", diff)
	}
	page, err := l.Read(ctx, "e1", 1, 2)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if diff := cmp.Diff(lines(2, 3), page); diff != "" {
		t.Errorf("Read(e1, 1, limit 2) (-want +got):\n%s", diff)
	}
	if got := read(t, l, "e3", 0); len(got) != 0 {
		t.Errorf("Read of an execution with no line = %+v, want none", got)
	}
}

func testAppendIdempotent(t *testing.T, open func(*livelog.Options) (*livelog.Log, *sqlstore.Store)) {
	l, _ := open(nil)
	ctx := t.Context()
	if err := l.Append(ctx, "e1", lines(1, 2)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	again := lines(1, 3)
	again[0].Message = "a second try's copy of line 1"
	if err := l.Append(ctx, "e1", again); err != nil {
		t.Fatalf("Append of a batch partly stored: %v", err)
	}
	if diff := cmp.Diff(lines(1, 3), read(t, l, "e1", 0)); diff != "" {
		t.Errorf("lines after a batch sent again (-want +got):\n%s", diff)
	}
}

func testBounds(t *testing.T, open func(*livelog.Options) (*livelog.Log, *sqlstore.Store)) {
	l, _ := open(&livelog.Options{MaxLines: 3, MaxLineBytes: 100})
	long := livelog.Line{
		Seq: 1, Time: t0, Level: "WARN", Message: strings.Repeat("é", 100) + "\x00",
		Attrs: map[string]any{"big": strings.Repeat("x", 200)},
	}
	batch := append([]livelog.Line{long}, lines(2, 5)...)
	if err := l.Append(t.Context(), "e1", batch); err != nil {
		t.Fatalf("Append: %v", err)
	}
	got := read(t, l, "e1", 0)
	if len(got) != 3 || got[2].Seq != 3 {
		t.Fatalf("kept %d lines (%+v), want the 3 of MaxLines", len(got), got)
	}
	msg := got[0].Message
	if len(msg) > 100 || !strings.HasPrefix(msg, "éé") || !strings.HasSuffix(msg, "bytes cut)") {
		t.Errorf("long message kept as %q (%d bytes), want at most 100 bytes ending with the cut", msg, len(msg))
	}
	if note, _ := got[0].Attrs["livelog"].(string); !strings.Contains(note, "attributes left out") || len(got[0].Attrs) != 1 {
		t.Errorf("attributes over the limit kept as %v, want a note", got[0].Attrs)
	}
}

func testInvalid(t *testing.T, open func(*livelog.Options) (*livelog.Log, *sqlstore.Store)) {
	l, _ := open(nil)
	ctx := t.Context()
	good := lines(1, 1)[0]
	tests := []struct {
		name, id, field string
		line            func(livelog.Line) livelog.Line
	}{
		{"no execution", "", "execID", func(l livelog.Line) livelog.Line { return l }},
		{"seq 0", "e1", "lines[1].Seq", func(l livelog.Line) livelog.Line { l.Seq = 0; return l }},
		{"no time", "e1", "lines[1].Time", func(l livelog.Line) livelog.Line { l.Time = time.Time{}; return l }},
		{"no level", "e1", "lines[1].Level", func(l livelog.Line) livelog.Line { l.Level = ""; return l }},
		{"long level", "e1", "lines[1].Level", func(l livelog.Line) livelog.Line { l.Level = strings.Repeat("X", 17); return l }},
	}
	for _, tt := range tests {
		bad := tt.line(lines(2, 2)[0])
		err := l.Append(ctx, tt.id, []livelog.Line{good, bad})
		var inv *livelog.InvalidError
		if !errors.As(err, &inv) || !errors.Is(err, livelog.ErrInvalid) || inv.Field != tt.field {
			t.Errorf("%s: Append = %v, want an invalid request naming %s", tt.name, err, tt.field)
		}
	}
	if got := read(t, l, "e1", 0); len(got) != 0 {
		t.Errorf("refused batches stored %+v, want nothing", got)
	}
	if _, err := l.Read(ctx, "e1", -1, 10); !errors.Is(err, livelog.ErrInvalid) {
		t.Errorf("Read after -1 = %v, want invalid", err)
	}
	if _, err := l.Read(ctx, "e1", 0, 0); !errors.Is(err, livelog.ErrInvalid) {
		t.Errorf("Read of limit 0 = %v, want invalid", err)
	}
}

func testDeleteAndPrune(t *testing.T, open func(*livelog.Options) (*livelog.Log, *sqlstore.Store)) {
	l, _ := open(nil)
	ctx := t.Context()
	for _, id := range []string{"e1", "e2", "e3"} {
		if err := l.Append(ctx, id, lines(1, 3)); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	young := lines(1, 1)
	young[0].Time = t0.Add(time.Hour)
	if err := l.Append(ctx, "e4", young); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if err := l.Delete(ctx, "e1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if got := read(t, l, "e1", 0); len(got) != 0 {
		t.Errorf("lines of a deleted execution: %+v", got)
	}
	if got := read(t, l, "e2", 0); len(got) != 3 {
		t.Errorf("Delete of e1 left e2 %d lines, want 3", len(got))
	}
	n, err := l.Prune(ctx, t0.Add(time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want the 2 executions with old lines", n, err)
	}
	for id, want := range map[string]int{"e2": 0, "e3": 0, "e4": 1} {
		if got := read(t, l, id, 0); len(got) != want {
			t.Errorf("after Prune, %s has %d lines, want %d", id, len(got), want)
		}
	}
}

func testBuffer(t *testing.T, open func(*livelog.Options) (*livelog.Log, *sqlstore.Store)) {
	l, _ := open(nil)
	b := livelog.NewBuffer(l, &livelog.BufferOptions{Interval: 10 * time.Millisecond})
	b.Start()
	b.Begin("e1")
	b.Begin("e2")
	for _, ln := range lines(1, 3) {
		b.Add("e1", ln)
	}
	b.Add("e2", lines(1, 1)[0])
	b.Add("unknown", lines(1, 1)[0])
	waitFor(t, "the buffer to append the lines", func() bool {
		return len(read(t, l, "e1", 0)) == 3 && len(read(t, l, "e2", 0)) == 1
	})
	if got := read(t, l, "unknown", 0); len(got) != 0 {
		t.Errorf("lines of an execution never begun were stored: %+v", got)
	}
	// Stop appends what is pending, without waiting for a tick.
	b.Add("e2", lines(2, 2)[0])
	if err := b.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if diff := cmp.Diff(lines(1, 2), read(t, l, "e2", 0)); diff != "" {
		t.Errorf("e2 after Stop (-want +got):\n%s", diff)
	}
	if err := b.End(t.Context(), "e1"); err != nil {
		t.Fatalf("End: %v", err)
	}
	if got := read(t, l, "e1", 0); len(got) != 0 {
		t.Errorf("End left the lines of e1: %+v", got)
	}
}

// testBufferEnd ends an execution whose lines are pending: they are
// dropped, its rows are deleted, and a later line is not stored.
func testBufferEnd(t *testing.T, open func(*livelog.Options) (*livelog.Log, *sqlstore.Store)) {
	l, _ := open(nil)
	b := livelog.NewBuffer(l, nil) // not started: flushed by hand
	b.Begin("e1")
	b.Add("e1", lines(1, 1)[0])
	if err := b.Flush(t.Context()); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	b.Add("e1", lines(2, 2)[0])
	if err := b.End(t.Context(), "e1"); err != nil {
		t.Fatalf("End: %v", err)
	}
	b.Add("e1", lines(3, 3)[0]) // a goroutine the job left behind
	if err := b.Flush(t.Context()); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if got := read(t, l, "e1", 0); len(got) != 0 {
		t.Errorf("lines of an ended execution: %+v", got)
	}
	if err := b.Stop(t.Context()); err != nil {
		t.Fatalf("Stop of a buffer never started: %v", err)
	}
}

// testBufferQuietExecutionSendsNothing runs the buffer on a closed
// database: an execution that logs nothing begins, flushes and ends
// without an error, so no statement was sent for it.
func testBufferQuiet(t *testing.T, open func(*livelog.Options) (*livelog.Log, *sqlstore.Store)) {
	l, st := open(nil)
	b := livelog.NewBuffer(l, nil)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	b.Begin("quiet")
	if err := b.Flush(t.Context()); err != nil {
		t.Errorf("Flush with nothing pending: %v", err)
	}
	if err := b.End(t.Context(), "quiet"); err != nil {
		t.Errorf("End of an execution that logged nothing: %v", err)
	}
	// The check has teeth: an execution that logged does reach the
	// (closed) database.
	b.Begin("chatty")
	b.Add("chatty", lines(1, 1)[0])
	if err := b.Flush(t.Context()); err == nil {
		t.Error("Flush of a line on a closed database succeeded; the test proves nothing")
	}
}

// waitFor polls cond until it holds, failing the test after 20s. Polling
// is how the test observes the buffer's goroutine through the database.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
