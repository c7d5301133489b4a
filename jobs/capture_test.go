package jobs_test

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/chime-scheduler/chime/jobs"
)

func TestCapture(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		limit         int
		writes        []string
		want          string
		wantTruncated bool
	}{
		{"under limit", 10, []string{"abc", "def"}, "abcdef", false},
		{"exactly the limit", 6, []string{"abc", "def"}, "abcdef", false},
		{"cut inside a write", 4, []string{"abc", "def"}, "abcd", true},
		{"writes after the limit", 3, []string{"abc", "def", "ghi"}, "abc", true},
		{"zero limit counts", 0, []string{"abc"}, "", true},
		{"negative limit counts", -1, []string{"abc"}, "", true},
		{"nothing written", 5, nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := jobs.NewCapture(tt.limit)
			var total int64
			for _, w := range tt.writes {
				n, err := c.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
				}
				total += int64(len(w))
			}
			if got := c.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := c.Bytes(); string(got) != tt.want {
				t.Errorf("Bytes() = %q, want %q", got, tt.want)
			}
			if got := c.Truncated(); got != tt.wantTruncated {
				t.Errorf("Truncated() = %v, want %v", got, tt.wantTruncated)
			}
			if got := c.Total(); got != total {
				t.Errorf("Total() = %d, want %d", got, total)
			}
		})
	}
}

func TestCaptureBytesIsACopy(t *testing.T) {
	t.Parallel()
	c := jobs.NewCapture(8)
	fmt.Fprint(c, "abc")
	b := c.Bytes()
	b[0] = 'X'
	if got := c.String(); got != "abc" {
		t.Errorf("after changing Bytes' result, String() = %q, want %q", got, "abc")
	}
}

// TestCaptureConcurrentWriters writes whole lines from several goroutines,
// as a command's stdout and stderr do; under -race it also proves the
// locking. No line may be torn and every byte must be counted.
func TestCaptureConcurrentWriters(t *testing.T) {
	t.Parallel()
	const writers, lines = 4, 200
	c := jobs.NewCapture(1 << 20)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(c, "writer %d line %03d\n", w, i)
			}
		})
	}
	wg.Wait()
	got := c.Bytes()
	if n := bytes.Count(got, []byte("\n")); n != writers*lines {
		t.Fatalf("captured %d lines, want %d", n, writers*lines)
	}
	for line := range bytes.Lines(got) {
		var w, i int
		if _, err := fmt.Sscanf(string(line), "writer %d line %d\n", &w, &i); err != nil {
			t.Fatalf("torn line %q: %v", line, err)
		}
	}
	if c.Total() != int64(len(got)) || c.Truncated() {
		t.Errorf("Total() = %d, Truncated() = %v; want %d, false", c.Total(), c.Truncated(), len(got))
	}
}

var _ io.Writer = (*jobs.Capture)(nil)
