package bench

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// SQLCounts counts the statements a node sends to PostgreSQL, by the start
// of their text, and adds up how long each took from the node's side
// (sending, the server's work, and reading the answer). It is a
// pgx.QueryTracer, so it sees every statement the pool runs, transaction
// control included. It is safe for concurrent use.
type SQLCounts struct {
	mu     sync.Mutex
	byText map[string]StatementCount
}

var _ pgx.QueryTracer = (*SQLCounts)(nil)

// NewSQLCounts returns empty counts.
func NewSQLCounts() *SQLCounts { return &SQLCounts{byText: make(map[string]StatementCount)} }

// traceKey is the context key under which TraceQueryStart leaves the
// statement and its start for TraceQueryEnd.
type traceKey struct{}

// tracedQuery is what TraceQueryStart leaves in the context.
type tracedQuery struct {
	sql   string
	began time.Time
}

// TraceQueryStart notes the statement and when it started.
func (c *SQLCounts) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, traceKey{}, tracedQuery{sql: data.SQL, began: time.Now()})
}

// TraceQueryEnd counts the statement and how long it took.
func (c *SQLCounts) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if q, ok := ctx.Value(traceKey{}).(tracedQuery); ok {
		c.Add(q.sql, 1, time.Since(q.began))
	}
}

// keyLen is how much of a statement's text tells it apart: the batch
// statements differ only in how many rows they list, far into the text, and
// count as one.
const keyLen = 160

// Add adds n statements of the given text that took d in all, of which
// the first keyLen bytes count, with runs of white space folded to single
// spaces.
func (c *SQLCounts) Add(text string, n int64, d time.Duration) {
	text = strings.Join(strings.Fields(text[:min(len(text), 2*keyLen)]), " ")
	text = text[:min(len(text), keyLen)]
	c.mu.Lock()
	sc := c.byText[text]
	sc.Text, sc.Count, sc.Time = text, sc.Count+n, sc.Time+d
	c.byText[text] = sc
	c.mu.Unlock()
}

// Total returns the number of statements counted.
func (c *SQLCounts) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, v := range c.byText {
		n += v.Count
	}
	return n
}

// StatementCount is the count of one statement text and the time those
// statements took in all.
type StatementCount struct {
	Text  string
	Count int64
	Time  time.Duration
}

// Top returns the n most frequent statements, most frequent first.
func (c *SQLCounts) Top(n int) []StatementCount {
	c.mu.Lock()
	out := make([]StatementCount, 0, len(c.byText))
	for _, sc := range c.byText {
		out = append(out, sc)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b StatementCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Text, b.Text))
	})
	return out[:min(n, len(out))]
}

// TotalTime returns the time all the statements counted took.
func (c *SQLCounts) TotalTime() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var d time.Duration
	for _, v := range c.byText {
		d += v.Time
	}
	return d
}

// sqlLinePrefix starts each line Print writes.
const sqlLinePrefix = "sql\t"

// Print writes one line per statement text: "sql", the count, the time
// in microseconds and the text, tab-separated. ParseSQLCounts reads them
// back.
func (c *SQLCounts) Print(w io.Writer) {
	for _, s := range c.Top(len(c.byText)) {
		fmt.Fprintf(w, "%s%d\t%d\t%s\n", sqlLinePrefix, s.Count, s.Time.Microseconds(), s.Text)
	}
}

// ParseSQLCounts adds to c the counts among lines written by Print; it
// ignores other lines.
func (c *SQLCounts) ParseSQLCounts(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), sqlLinePrefix)
		if !ok {
			continue
		}
		f := strings.SplitN(rest, "\t", 3)
		if len(f) != 3 {
			return fmt.Errorf("bench: statement count line %q: want count, microseconds and text", sc.Text())
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return fmt.Errorf("bench: statement count line %q: count: %w", sc.Text(), err)
		}
		us, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return fmt.Errorf("bench: statement count line %q: microseconds: %w", sc.Text(), err)
		}
		c.Add(f[2], n, time.Duration(us)*time.Microsecond)
	}
	return sc.Err()
}
