package history

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	invalidreq "github.com/chime-scheduler/chime/server/internal/invalid"
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
		return c, invalid("Options.MaxOutputBytes", "%d is negative", c.MaxOutputBytes)
	case c.MaxOutputBytes == 0:
		c.MaxOutputBytes = DefaultMaxOutputBytes
	case c.MaxOutputBytes < minOutputBytes:
		return c, invalid("Options.MaxOutputBytes", "%d: want at least %d", c.MaxOutputBytes, minOutputBytes)
	}
	switch {
	case c.MaxLogLines < 0:
		return c, invalid("Options.MaxLogLines", "%d is negative", c.MaxLogLines)
	case c.MaxLogLines == 0:
		c.MaxLogLines = DefaultMaxLogLines
	case c.MaxLogLines < minLogLines:
		return c, invalid("Options.MaxLogLines", "%d: want at least %d", c.MaxLogLines, minLogLines)
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
		return nil, invalid("", "nil store")
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

// InvalidError is a request refused before the database is touched.
// errors.Is(err, ErrInvalid) holds for it. Its Field names the argument
// at fault as Go spells it, such as "Query.Limit" or "Start.ID"; empty when it is the
// whole request. It is the one definition the server's storage packages
// share (server/internal/invalid); here its Err is ErrInvalid.
type InvalidError = invalidreq.Error

// invalid returns an *InvalidError about field.
func invalid(field, format string, args ...any) error {
	return invalidreq.New(ErrInvalid, field, format, args...)
}

// newID returns a random identifier for a decision or audit entry.
func newID() string { return rand.Text() }

// maxKey is the length limit of names and keys ({key} columns).
const maxKey = 200

// checkKey refuses a name that does not fit a {key} column.
func checkKey(field, v string, required bool) error {
	switch {
	case required && v == "":
		return invalid(field, "is required")
	case len(v) > maxKey:
		return invalid(field, "is %d bytes long, want at most %d", len(v), maxKey)
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
			return invalid(field, "is required")
		}
		return nil
	}
	if t.Year() < 1678 || t.Year() > 2261 {
		return invalid(field, "%s is out of range (years 1678 to 2261)", t.Format(time.RFC3339))
	}
	return nil
}

// checkLimit applies a list's default limit and refuses one out of range.
func checkLimit(field string, limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultLimit, nil
	case limit < 0 || limit > MaxLimit:
		return 0, invalid(field, "%d: want 1 to %d (0 for %d)", limit, MaxLimit, DefaultLimit)
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
