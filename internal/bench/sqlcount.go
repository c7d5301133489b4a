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

	"github.com/jackc/pgx/v5"
)

// SQLCounts counts the statements a node sends to PostgreSQL, by the start
// of their text. It
// is a pgx.QueryTracer, so it sees every statement the pool runs,
// transaction control included. It is safe for concurrent use.
type SQLCounts struct {
	mu     sync.Mutex
	byText map[string]int64
}

var _ pgx.QueryTracer = (*SQLCounts)(nil)

// NewSQLCounts returns empty counts.
func NewSQLCounts() *SQLCounts { return &SQLCounts{byText: make(map[string]int64)} }

// TraceQueryStart counts one statement.
func (c *SQLCounts) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.Add(data.SQL, 1)
	return ctx
}

// TraceQueryEnd does nothing.
func (c *SQLCounts) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// keyLen is how much of a statement's text tells it apart: the batch
// statements differ only in how many rows they list, far into the text, and
// count as one.
const keyLen = 160

// Add adds n statements of the given text, of which the first keyLen
// bytes count, with runs of white space folded to single spaces.
func (c *SQLCounts) Add(text string, n int64) {
	text = strings.Join(strings.Fields(text[:min(len(text), 2*keyLen)]), " ")
	text = text[:min(len(text), keyLen)]
	c.mu.Lock()
	c.byText[text] += n
	c.mu.Unlock()
}

// Total returns the number of statements counted.
func (c *SQLCounts) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, v := range c.byText {
		n += v
	}
	return n
}

// StatementCount is the count of one statement text.
type StatementCount struct {
	Text  string
	Count int64
}

// Top returns the n most frequent statements, most frequent first.
func (c *SQLCounts) Top(n int) []StatementCount {
	c.mu.Lock()
	out := make([]StatementCount, 0, len(c.byText))
	for text, count := range c.byText {
		out = append(out, StatementCount{Text: text, Count: count})
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b StatementCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Text, b.Text))
	})
	return out[:min(n, len(out))]
}

// sqlLinePrefix starts each line Print writes.
const sqlLinePrefix = "sql\t"

// Print writes one line per statement text: "sql", the count and the
// text, tab-separated. ParseSQLCounts reads them back.
func (c *SQLCounts) Print(w io.Writer) {
	for _, s := range c.Top(len(c.byText)) {
		fmt.Fprintf(w, "%s%d\t%s\n", sqlLinePrefix, s.Count, s.Text)
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
		count, text, ok := strings.Cut(rest, "\t")
		if !ok {
			return fmt.Errorf("bench: statement count line %q has no text", sc.Text())
		}
		n, err := strconv.ParseInt(count, 10, 64)
		if err != nil {
			return fmt.Errorf("bench: statement count line %q: %w", sc.Text(), err)
		}
		c.Add(text, n)
	}
	return sc.Err()
}
