package firelog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Event is what a line records.
type Event string

// Events.
const (
	// EventFire: a job that does its work at once ran.
	EventFire Event = "fire"
	// EventStart: a long job started.
	EventStart Event = "start"
	// EventEnd: a long job finished its work.
	EventEnd Event = "end"
	// EventCancel: a long job's context was cancelled; Detail is the cause.
	EventCancel Event = "cancel"
)

// Causes written as the Detail of an EventCancel line.
const (
	CauseLeaseLost   = "lease_lost"
	CauseStopped     = "stopped"
	CauseInterrupted = "interrupted"
	CauseTimeout     = "timeout"
)

// Record is one line.
type Record struct {
	Trigger    string    // trigger key, "group.name"
	Scheduled  time.Time // the scheduled fire time, millisecond precision
	Actual     time.Time // the writer's true clock when it wrote the line
	Node       string    // node ID of the writer
	Recovering bool      // the execution re-runs a lost node's execution
	Event      Event
	Detail     string // the cause of an EventCancel
}

// IsFire reports whether the record marks the beginning of an execution:
// EventFire or EventStart.
func (r Record) IsFire() bool { return r.Event == EventFire || r.Event == EventStart }

// Lag is how late the execution began: Actual minus Scheduled.
func (r Record) Lag() time.Duration { return r.Actual.Sub(r.Scheduled) }

// line formats the record; it fails on fields that would break the format.
func (r Record) line() (string, error) {
	for _, f := range []string{r.Trigger, r.Node, string(r.Event), r.Detail} {
		if strings.ContainsAny(f, ",\n") {
			return "", fmt.Errorf("firelog: field %q contains a comma or a newline", f)
		}
	}
	rec := "false"
	if r.Recovering {
		rec = "true"
	}
	fields := []string{
		r.Trigger,
		strconv.FormatInt(r.Scheduled.UnixMilli(), 10),
		strconv.FormatInt(r.Actual.UnixMilli(), 10),
		r.Node,
		rec,
	}
	switch {
	case r.Event == "" || r.Event == EventFire:
	case r.Detail == "":
		fields = append(fields, string(r.Event))
	default:
		fields = append(fields, string(r.Event), r.Detail)
	}
	return strings.Join(fields, ",") + "\n", nil
}

// Parse parses one line (without its newline).
func Parse(line string) (Record, error) {
	f := strings.Split(line, ",")
	if len(f) < 5 || len(f) > 7 {
		return Record{}, fmt.Errorf("firelog: %d fields in %q, want 5 to 7", len(f), line)
	}
	scheduled, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return Record{}, fmt.Errorf("firelog: scheduled time in %q: %w", line, err)
	}
	actual, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return Record{}, fmt.Errorf("firelog: actual time in %q: %w", line, err)
	}
	recovering, err := strconv.ParseBool(f[4])
	if err != nil {
		return Record{}, fmt.Errorf("firelog: recovering in %q: %w", line, err)
	}
	r := Record{
		Trigger:    f[0],
		Scheduled:  time.UnixMilli(scheduled),
		Actual:     time.UnixMilli(actual),
		Node:       f[3],
		Recovering: recovering,
		Event:      EventFire,
	}
	if len(f) > 5 {
		r.Event = Event(f[5])
	}
	if len(f) > 6 {
		r.Detail = f[6]
	}
	switch r.Event {
	case EventFire, EventStart, EventEnd, EventCancel:
	default:
		return Record{}, fmt.Errorf("firelog: unknown event %q in %q", r.Event, line)
	}
	return r, nil
}

// Read returns the records of a file in file order. A missing file has no
// records. A last line without its newline is left out: a process still
// writing the file may be halfway through it (a reader can see a write
// in part).
func Read(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("firelog: %w", err)
	}
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	var out []Record
	n := 0
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		n++
		if len(line) == 0 {
			continue
		}
		r, err := Parse(string(line))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Writer appends records to a file, one write per line. It is safe for
// concurrent use.
type Writer struct {
	mu sync.Mutex
	f  *os.File
}

// Create opens path for appending, creating it when missing.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("firelog: %w", err)
	}
	return &Writer{f: f}, nil
}

// Write appends one record.
func (w *Writer) Write(r Record) error {
	line, err := r.line()
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.WriteString(line); err != nil {
		return fmt.Errorf("firelog: %w", err)
	}
	return nil
}

// Close syncs and closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return errors.Join(w.f.Sync(), w.f.Close())
}

// Follower reads a file as it grows: each Next returns the records of the
// lines completed since the previous call. It suits a reader that polls
// the file of a process still writing it.
type Follower struct {
	path    string
	offset  int64
	partial []byte // the start of a line not yet completed
}

// Follow returns a Follower of path, which need not exist yet.
func Follow(path string) *Follower { return &Follower{path: path} }

// Next returns the records of the lines completed since the last call.
func (f *Follower) Next() ([]Record, error) {
	file, err := os.Open(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("firelog: %w", err)
	}
	defer file.Close()
	data, err := io.ReadAll(io.NewSectionReader(file, f.offset, 1<<62))
	if err != nil {
		return nil, fmt.Errorf("firelog: read %s: %w", f.path, err)
	}
	f.offset += int64(len(data))
	data = append(f.partial, data...)
	end := bytes.LastIndexByte(data, '\n') + 1
	f.partial = append([]byte(nil), data[end:]...)
	var out []Record
	for line := range bytes.SplitSeq(data[:end], []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		r, err := Parse(string(line))
		if err != nil {
			return out, fmt.Errorf("%s: %w", f.path, err)
		}
		out = append(out, r)
	}
	return out, nil
}
