package history

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrNotFound reports an execution that is not recorded.
	ErrNotFound = errors.New("history: not found")
	// ErrExists reports a Start, RecordDecision or RecordAudit whose ID is
	// already recorded.
	ErrExists = errors.New("history: already recorded")
	// ErrNotRunning reports a Finish of an execution that already
	// finished (or was marked node_lost).
	ErrNotRunning = errors.New("history: execution is not running")
	// ErrInvalid reports a request refused before the database is
	// touched: a missing or malformed field, a bad cursor, a limit out of
	// range. The error names the field.
	ErrInvalid = errors.New("history: invalid request")
)

// Options configure a History. A nil *Options means the defaults.
type Options struct {
	// MaxOutputBytes bounds the output kept per execution. Longer output
	// keeps its first and last parts, with a line saying how much was
	// left out, and is flagged OutputTruncated. Defaults to 64 KiB.
	MaxOutputBytes int
	// MaxLogLines bounds the log lines kept per execution. More lines
	// keep the first and last ones, with a line saying how many were left
	// out. Defaults to 200.
	MaxLogLines int
	// Logger receives the pruner's log lines. Defaults to slog.Default().
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxOutputBytes = 64 << 10
	DefaultMaxLogLines    = 200
)

// withDefaults returns a validated copy of o with defaults applied.
func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	switch {
	case c.MaxOutputBytes < 0:
		return c, fmt.Errorf("%w: Options.MaxOutputBytes %d is negative", ErrInvalid, c.MaxOutputBytes)
	case c.MaxOutputBytes == 0:
		c.MaxOutputBytes = DefaultMaxOutputBytes
	case c.MaxOutputBytes < minOutputBytes:
		return c, fmt.Errorf("%w: Options.MaxOutputBytes %d: want at least %d", ErrInvalid, c.MaxOutputBytes, minOutputBytes)
	}
	switch {
	case c.MaxLogLines < 0:
		return c, fmt.Errorf("%w: Options.MaxLogLines %d is negative", ErrInvalid, c.MaxLogLines)
	case c.MaxLogLines == 0:
		c.MaxLogLines = DefaultMaxLogLines
	case c.MaxLogLines < minLogLines:
		return c, fmt.Errorf("%w: Options.MaxLogLines %d: want at least %d", ErrInvalid, c.MaxLogLines, minLogLines)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// History records executions, decisions and audit entries in the store's
// database. It is safe for concurrent use by many goroutines and, through
// the database, by many processes; it owns no goroutine.
type History struct {
	db    *sql.DB
	st    *sqlstore.Store
	sched string
	opts  Options
	q     queries
	// pruneBatch bounds the rows one DELETE of Prune removes.
	pruneBatch int
}

// New migrates the history's tables on the store's database (component
// "server", see [sqlstore.Store.MigrateComponent]) and returns the history
// of the store's scheduler. It uses the store's connection pool; closing
// the store ends it.
func New(ctx context.Context, st *sqlstore.Store, opts *Options) (*History, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: nil store", ErrInvalid)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := st.MigrateComponent(ctx, component, migrations()); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return &History{
		db:    st.DB(),
		st:    st,
		sched: st.SchedulerName(),
		opts:  o,
		q:     renderQueries(st),

		pruneBatch: defaultPruneBatch,
	}, nil
}

// now reads the database clock.
func (h *History) now(ctx context.Context) (time.Time, error) {
	return h.st.Now(ctx)
}

// invalid returns an ErrInvalid error with a message.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// newID returns a random identifier for a decision or audit entry.
func newID() string { return rand.Text() }

// maxKey is the length limit of names and keys ({key} columns).
const maxKey = 200

// checkKey refuses a name that does not fit a {key} column.
func checkKey(field, v string, required bool) error {
	switch {
	case required && v == "":
		return invalid("%s is required", field)
	case len(v) > maxKey:
		return invalid("%s is %d bytes long, want at most %d", field, len(v), maxKey)
	}
	return nil
}

// Time columns are BIGINT Unix nanoseconds, NULL for the zero time.

func timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

func timeOf(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// checkTime refuses an instant a BIGINT of nanoseconds cannot hold (years
// outside 1678-2262).
func checkTime(field string, t time.Time, required bool) error {
	if t.IsZero() {
		if required {
			return invalid("%s is required", field)
		}
		return nil
	}
	if t.Year() < 1678 || t.Year() > 2261 {
		return invalid("%s %s is out of range (years 1678 to 2261)", field, t.Format(time.RFC3339))
	}
	return nil
}

// checkLimit applies a list's default limit and refuses one out of range.
func checkLimit(field string, limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultLimit, nil
	case limit < 0 || limit > MaxLimit:
		return 0, invalid("%s %d: want 1 to %d (0 for %d)", field, limit, MaxLimit, DefaultLimit)
	}
	return limit, nil
}

// Limits of lists.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// dbErr wraps a database error with what was being done.
func dbErr(doing string, err error) error {
	return fmt.Errorf("history: %s: %w", doing, err)
}
