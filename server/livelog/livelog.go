package livelog

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	invalidreq "github.com/chime-scheduler/chime/server/internal/invalid"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// ErrInvalid reports a request refused before the database is touched; the
// error names the field at fault. Callers branch on it with errors.Is.
var ErrInvalid = errors.New("livelog: invalid request")

// Options configure a Log. A nil *Options means the defaults.
type Options struct {
	// MaxLines bounds the lines kept per execution: lines numbered above
	// it are left out. Defaults to 1000, what a node keeps of an
	// execution in memory.
	MaxLines int
	// MaxLineBytes bounds a line's message, and its attributes' JSON:
	// a longer message is cut (on a UTF-8 boundary, saying how much was
	// left out), longer attributes are replaced by a note. Defaults to
	// 8 KiB.
	MaxLineBytes int
}

// Defaults of Options.
const (
	DefaultMaxLines     = 1000
	DefaultMaxLineBytes = 8 << 10
)

// minLineBytes leaves room for the note that a line was cut.
const minLineBytes = 64

// withDefaults returns a validated copy of o with defaults applied.
func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	switch {
	case c.MaxLines < 0:
		return c, invalid("Options.MaxLines", "%d is negative", c.MaxLines)
	case c.MaxLines == 0:
		c.MaxLines = DefaultMaxLines
	}
	switch {
	case c.MaxLineBytes < 0:
		return c, invalid("Options.MaxLineBytes", "%d is negative", c.MaxLineBytes)
	case c.MaxLineBytes == 0:
		c.MaxLineBytes = DefaultMaxLineBytes
	case c.MaxLineBytes < minLineBytes:
		return c, invalid("Options.MaxLineBytes", "%d: want at least %d", c.MaxLineBytes, minLineBytes)
	}
	return c, nil
}

// Line is one log line of an execution.
type Line struct {
	// Seq numbers the execution's lines from 1, in the order they were
	// logged.
	Seq int64
	// Time is when the line was logged; required.
	Time time.Time
	// Level is the line's level, such as "INFO"; 1 to 16 bytes.
	Level string
	// Message is the line's message.
	Message string
	// Attrs are the line's attributes, JSON-encodable. Numbers come back
	// from Read as json.Number.
	Attrs map[string]any
}

// Log stores the live lines of executions in the store's database. It is
// safe for concurrent use by many goroutines and, through the database,
// by many processes; it owns no goroutine.
type Log struct {
	db    *sql.DB
	st    *sqlstore.Store
	sched string
	opts  Options
	q     struct {
		read, delete, pruneSelect string
	}
}

// New migrates the package's table on the store's database (component
// "livelog", see [sqlstore.Store.MigrateComponent]) and returns the live
// log of the store's scheduler. It uses the store's connection pool;
// closing the store ends it.
func New(ctx context.Context, st *sqlstore.Store, opts *Options) (*Log, error) {
	if st == nil {
		return nil, invalid("", "nil store")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := st.MigrateComponent(ctx, component, migrations()); err != nil {
		return nil, fmt.Errorf("livelog: %w", err)
	}
	l := &Log{db: st.DB(), st: st, sched: st.SchedulerName(), opts: o}
	l.q.read = st.SQL(`SELECT seq, line_time, level, message, attrs FROM {p}livelog_lines
		WHERE sched_name = ? AND execution_id = ? AND seq > ? ORDER BY seq LIMIT ?`)
	l.q.delete = st.SQL(`DELETE FROM {p}livelog_lines WHERE sched_name = ? AND execution_id = ?`)
	l.q.pruneSelect = st.SQL(`SELECT DISTINCT execution_id FROM {p}livelog_lines
		WHERE line_time < ? AND sched_name = ? LIMIT ?`)
	return l, nil
}

// MaxLines returns the most lines the log keeps per execution.
func (l *Log) MaxLines() int { return l.opts.MaxLines }

// row is one line of one execution, ready to insert.
type row struct {
	execID string
	seq    int64
	time   int64
	level  string
	msg    string
	attrs  any // string or nil
}

// Append stores lines of the execution execID, in one statement. A line
// already stored (same execution and Seq) is left as it is, so a batch may
// be sent again after a lost answer. Lines numbered above
// [Options.MaxLines] are left out; a message or attributes longer than
// [Options.MaxLineBytes] are cut. A malformed line (Seq below 1, no Time,
// a Level empty or over 16 bytes) refuses the whole call with an error
// wrapping [ErrInvalid] that names it, and nothing is stored.
func (l *Log) Append(ctx context.Context, execID string, lines []Line) error {
	if err := checkID("execID", execID); err != nil {
		return err
	}
	rows := make([]row, 0, len(lines))
	for i, ln := range lines {
		r, keep, err := l.prepare(execID, ln, fmt.Sprintf("lines[%d]", i))
		if err != nil {
			return err
		}
		if keep {
			rows = append(rows, r)
		}
	}
	return l.insert(ctx, rows)
}

// prepare checks and bounds one line; keep is false for a line beyond
// MaxLines.
func (l *Log) prepare(execID string, ln Line, field string) (row, bool, error) {
	switch {
	case ln.Seq < 1:
		return row{}, false, invalid(field+".Seq", "%d: want 1 or more", ln.Seq)
	case ln.Time.IsZero():
		return row{}, false, invalid(field+".Time", "is required")
	case ln.Time.Year() < 1678 || ln.Time.Year() > 2261:
		return row{}, false, invalid(field+".Time", "%s is out of range (years 1678 to 2261)", ln.Time.Format(time.RFC3339))
	case ln.Level == "" || len(ln.Level) > 16:
		return row{}, false, invalid(field+".Level", "%q: want 1 to 16 bytes", ln.Level)
	}
	if ln.Seq > int64(l.opts.MaxLines) {
		return row{}, false, nil
	}
	return row{
		execID: execID,
		seq:    ln.Seq,
		time:   ln.Time.UnixNano(),
		level:  cleanText(ln.Level),
		msg:    cut(cleanText(ln.Message), l.opts.MaxLineBytes),
		attrs:  l.encodeAttrs(ln.Attrs),
	}, true, nil
}

// maxRowsPerStatement bounds the rows of one INSERT, well under every
// dialect's limit on bind parameters.
const maxRowsPerStatement = 250

// insert stores rows of any executions, in as few statements as
// maxRowsPerStatement allows; one statement for a node's usual batch.
func (l *Log) insert(ctx context.Context, rows []row) error {
	for len(rows) > 0 {
		n := min(len(rows), maxRowsPerStatement)
		args := make([]any, 0, n*7)
		for _, r := range rows[:n] {
			args = append(args, l.sched, r.execID, r.seq, r.time, r.level, r.msg, r.attrs)
		}
		if _, err := l.db.ExecContext(ctx, l.insertSQL(n), args...); err != nil {
			return fmt.Errorf("livelog: appending %d lines: %w", n, err)
		}
		rows = rows[n:]
	}
	return nil
}

// insertSQL renders an INSERT of n rows that leaves rows already stored
// alone.
func (l *Log) insertSQL(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO {p}livelog_lines (sched_name, execution_id, seq, line_time, level, message, attrs) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?)")
	}
	b.WriteString(l.st.InsertIgnore("sched_name, execution_id, seq", "seq"))
	return l.st.SQL(b.String())
}

// Read returns the lines of execution execID numbered after afterSeq, in
// order, at most limit of them (1 to 1000).
func (l *Log) Read(ctx context.Context, execID string, afterSeq int64, limit int) ([]Line, error) {
	if err := checkID("execID", execID); err != nil {
		return nil, err
	}
	switch {
	case afterSeq < 0:
		return nil, invalid("afterSeq", "%d is negative", afterSeq)
	case limit < 1 || limit > 1000:
		return nil, invalid("limit", "%d: want 1 to 1000", limit)
	}
	rows, err := l.db.QueryContext(ctx, l.q.read, l.sched, execID, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("livelog: reading the lines of execution %s: %w", execID, err)
	}
	defer rows.Close()
	var out []Line
	for rows.Next() {
		var (
			ln    Line
			nanos int64
			attrs sql.NullString
		)
		if err := rows.Scan(&ln.Seq, &nanos, &ln.Level, &ln.Message, &attrs); err != nil {
			return nil, fmt.Errorf("livelog: reading the lines of execution %s: %w", execID, err)
		}
		ln.Time = time.Unix(0, nanos).UTC()
		if attrs.Valid && attrs.String != "" {
			d := json.NewDecoder(strings.NewReader(attrs.String))
			d.UseNumber()
			if err := d.Decode(&ln.Attrs); err != nil {
				return nil, fmt.Errorf("livelog: line %d of execution %s: decoding its attributes: %w", ln.Seq, execID, err)
			}
		}
		out = append(out, ln)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("livelog: reading the lines of execution %s: %w", execID, err)
	}
	return out, nil
}

// Delete deletes every line of execution execID, once its history holds
// them.
func (l *Log) Delete(ctx context.Context, execID string) error {
	if err := checkID("execID", execID); err != nil {
		return err
	}
	if _, err := l.db.ExecContext(ctx, l.q.delete, l.sched, execID); err != nil {
		return fmt.Errorf("livelog: deleting the lines of execution %s: %w", execID, err)
	}
	return nil
}

// pruneBatch bounds the executions one pass of Prune selects.
const pruneBatch = 100

// Prune deletes the lines of every execution that has a line logged
// before olderThan: the leftovers of executions whose node died before it
// could end them. It returns how many executions' lines it deleted. Each
// execution's lines go in a statement of their own (at most MaxLines
// rows).
func (l *Log) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	if olderThan.IsZero() {
		return 0, invalid("olderThan", "is required")
	}
	deleted := 0
	for {
		ids, err := l.pruneSelect(ctx, olderThan.UnixNano())
		if err != nil {
			return deleted, err
		}
		for _, id := range ids {
			if err := l.Delete(ctx, id); err != nil {
				return deleted, err
			}
			deleted++
		}
		if len(ids) < pruneBatch {
			return deleted, nil
		}
	}
}

// pruneSelect lists up to pruneBatch executions with a line before cut,
// read to the end before anything is deleted: an SQLite pool may have one
// connection.
func (l *Log) pruneSelect(ctx context.Context, cut int64) ([]string, error) {
	rows, err := l.db.QueryContext(ctx, l.q.pruneSelect, cut, l.sched, pruneBatch)
	if err != nil {
		return nil, fmt.Errorf("livelog: pruning: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("livelog: pruning: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("livelog: pruning: %w", err)
	}
	return ids, nil
}

// encodeAttrs returns the JSON text of attrs, nil for none. Attributes
// that JSON cannot encode, or whose JSON is longer than MaxLineBytes, are
// replaced by a note saying so.
func (l *Log) encodeAttrs(attrs map[string]any) any {
	if len(attrs) == 0 {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	note := ""
	if err := enc.Encode(attrs); err != nil {
		note = "attributes left out: " + err.Error()
	} else if b.Len() > l.opts.MaxLineBytes {
		note = fmt.Sprintf("attributes left out: %d bytes of JSON, over the limit of %d", b.Len(), l.opts.MaxLineBytes)
	} else {
		return cleanText(strings.TrimSuffix(b.String(), "\n"))
	}
	raw, _ := json.Marshal(map[string]string{"livelog": note})
	return string(raw)
}

// cut shortens s to at most limit bytes, on a UTF-8 boundary, ending it
// with a note of how many bytes were left out.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	keep := limit - 40 // room for the note
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + fmt.Sprintf(" … (%d bytes cut)", len(s)-keep)
}

// cleanText replaces invalid UTF-8 and NUL bytes, which PostgreSQL's text
// refuses, with U+FFFD.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// maxKey is the length limit of an execution ID (a {key} column).
const maxKey = 200

// checkID refuses an execution ID that is empty or does not fit its
// column.
func checkID(field, id string) error {
	switch {
	case id == "":
		return invalid(field, "is required")
	case len(id) > maxKey:
		return invalid(field, "is %d bytes long, want at most %d", len(id), maxKey)
	}
	return nil
}

// InvalidError is a request refused before the database is touched.
// errors.Is(err, ErrInvalid) holds for it. Its Field names the argument
// at fault as Go spells it, such as "lines[2].Seq"; empty when it is the
// whole request. It is the one definition the server's storage packages
// share (server/internal/invalid); here its Err is ErrInvalid.
type InvalidError = invalidreq.Error

// invalid returns an *InvalidError about field.
func invalid(field, format string, args ...any) error {
	return invalidreq.New(ErrInvalid, field, format, args...)
}
