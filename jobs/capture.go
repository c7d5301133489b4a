package jobs

import "sync"

// Capture is an io.Writer that keeps the first bytes written to it, up to
// a limit, and counts the rest. A job's output goes to one: a runaway
// command or a large response costs a bounded amount of memory, and the
// history still shows how much there was. It is safe for concurrent use, so
// a command's stdout and stderr can share one.
type Capture struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	total int64
}

// NewCapture returns a Capture that keeps at most limit bytes. A limit of
// zero or less keeps nothing and only counts.
func NewCapture(limit int) *Capture {
	return &Capture{limit: max(limit, 0)}
}

// Write keeps what fits under the limit and counts all of p. It never
// fails: a writer that refused output would stall or kill the job
// producing it.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if room := c.limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Bytes returns a copy of the bytes kept.
func (c *Capture) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.buf...)
}

// String returns the bytes kept as a string. When the capture is
// truncated it may end inside a multi-byte UTF-8 sequence.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

// Truncated reports whether more was written than was kept.
func (c *Capture) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > int64(len(c.buf))
}

// Total returns how many bytes were written, kept or not.
func (c *Capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Redact replaces, in the bytes kept, every occurrence of each of values
// as Redact does (a kept end that a truncation cut inside a value is
// masked too). The server calls it once a job has finished, with the
// values of the secrets its templates used, before the output is
// recorded.
func (c *Capture) Redact(values []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = []byte(Redact(string(c.buf), values, c.total > int64(len(c.buf))))
}
