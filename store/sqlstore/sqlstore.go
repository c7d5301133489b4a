package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chime-scheduler/chime/store"
)

// Options configure a Store. A nil *Options means the defaults.
type Options struct {
	// TablePrefix starts the name of every table, so that chime's tables can
	// live next to others: up to 32 of a-z, 0-9 and _. Defaults to "chime_".
	TablePrefix string
	// SchedulerName tells independent schedulers that share one database
	// and one set of tables apart: every row carries it and every statement
	// filters on it. Up to 200 characters. Defaults to "default".
	SchedulerName string
	// Logger receives the store's few log lines (migrations, watch
	// outages). Defaults to slog.Default().
	Logger *slog.Logger
	// MaxOpenConns is the size of the connection pool Open creates; OpenDB
	// leaves the caller's pool alone. Defaults to 10, and to 1 for SQLite,
	// which has one writer at a time: one connection per process serializes
	// the writers of a process without busy waiting, and the busy timeout
	// serializes processes.
	MaxOpenConns int
	// IdleInTransactionTimeout is how long the database lets a session of
	// the pool Open creates sit idle inside a transaction before it ends
	// the session and rolls the transaction back. A node cut off from the
	// database in the middle of a transaction leaves it open on the
	// server, holding the lock on its node row that the other nodes need
	// to recover its jobs; only the database can end it. Open sets
	// PostgreSQL's idle_in_transaction_session_timeout and MariaDB's
	// idle_transaction_timeout (whole seconds, rounded up) unless the
	// database URL sets them itself; MySQL 8 has no such setting, SQLite
	// needs none, and OpenDB leaves the caller's pool alone. chime's own
	// transactions never wait on the program between statements, so only
	// a session whose client is gone reaches it. Defaults to 10s; a
	// negative value leaves the database's own setting.
	IdleInTransactionTimeout time.Duration
}

// Defaults of Options.
const (
	DefaultTablePrefix              = "chime_"
	DefaultSchedulerName            = "default"
	DefaultIdleInTransactionTimeout = 10 * time.Second
	defaultMaxOpenConns             = 10
)

var validPrefix = regexp.MustCompile(`^[a-z0-9_]{0,32}$`)

// withDefaults returns a validated copy of o with defaults applied.
func (o *Options) withDefaults(d Dialect) (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	if c.TablePrefix == "" {
		c.TablePrefix = DefaultTablePrefix
	}
	if !validPrefix.MatchString(c.TablePrefix) {
		return c, fmt.Errorf("sqlstore: Options.TablePrefix %q: want up to 32 of a-z, 0-9 and _", c.TablePrefix)
	}
	if c.SchedulerName == "" {
		c.SchedulerName = DefaultSchedulerName
	}
	if len(c.SchedulerName) > 200 {
		return c, fmt.Errorf("sqlstore: Options.SchedulerName is %d bytes long, want at most 200", len(c.SchedulerName))
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxOpenConns < 0 {
		return c, fmt.Errorf("sqlstore: Options.MaxOpenConns %d is negative", c.MaxOpenConns)
	}
	if c.IdleInTransactionTimeout == 0 {
		c.IdleInTransactionTimeout = DefaultIdleInTransactionTimeout
	}
	if c.MaxOpenConns == 0 {
		c.MaxOpenConns = defaultMaxOpenConns
		if d == SQLite {
			c.MaxOpenConns = 1
		}
	}
	return c, nil
}

// Store is a [store.Store] on an SQL database. It is safe for concurrent
// use by many goroutines and, through the database, by many processes.
type Store struct {
	db     *sql.DB
	ownsDB bool
	d      *dialect
	prefix string
	sched  string
	log    *slog.Logger
	// txOpts are the options of every write transaction: READ COMMITTED on
	// a MySQL pool that OpenDB wraps, nil otherwise.
	txOpts *sql.TxOptions
	// pgConfig connects the dedicated LISTEN connection; nil for OpenDB.
	pgConfig *pgx.ConnConfig
	// channel is the PostgreSQL notification channel of this scheduler's
	// triggers, schema the schema its tables are in (PostgreSQL only).
	channel, schema string
	// keyCollation is the collation of a MySQL store's tables: binary and
	// NO PAD where the server has one.
	keyCollation string

	queries sync.Map // SQL template -> rendered text
	// stats makes sure once that PostgreSQL has statistics of the tables.
	stats statsCheck

	closed   atomic.Bool
	stop     context.Context // canceled by Close; ends watchers
	stopFn   context.CancelFunc
	watchers sync.WaitGroup
	// background runs the store's own work, such as analyzing its tables
	// and writing the new jobs of inserts.
	background sync.WaitGroup
	// inserts combines the new jobs that callers write at the same time.
	inserts insertQueue
}

var (
	_ store.Store          = (*Store)(nil)
	_ store.TriggerWatcher = (*Store)(nil)
)

// Open connects to databaseURL, migrates the schema to [SchemaVersion] and
// returns the store. The URL selects the database:
//
//	sqlite:PATH, sqlite://PATH, file:PATH   an SQLite file, created if absent
//	                                        (sqlite:///abs/path for an absolute path)
//	postgres://…, postgresql://…            PostgreSQL; every pgx parameter
//	                                        passes through, search_path included
//	mysql://user:password@host:port/dbname  MySQL 8 or MariaDB 10.6+; query
//	                                        parameters are go-sql-driver DSN
//	                                        parameters, plus socket=PATH
//
// Close closes the pool Open created.
func Open(ctx context.Context, databaseURL string, opts *Options) (*Store, error) {
	o, err := opts.withDefaults(schemeDialect(databaseURL))
	if err != nil {
		return nil, err
	}
	p, err := openPool(ctx, databaseURL, o.MaxOpenConns, o.IdleInTransactionTimeout)
	if err != nil {
		return nil, err
	}
	s, err := newStore(ctx, p.db, p.dialect, o, true)
	if err != nil {
		_ = p.db.Close()
		return nil, fmt.Errorf("sqlstore: opening %s: %w", p.describe, err)
	}
	s.pgConfig = p.pgConfig
	if p.dialect == MySQL && p.readCommitted {
		s.txOpts = nil
	}
	return s, nil
}

// schemeDialect guesses the dialect from the URL's scheme, for defaults.
func schemeDialect(databaseURL string) Dialect {
	for _, p := range []struct {
		prefix string
		d      Dialect
	}{{"sqlite:", SQLite}, {"file:", SQLite}, {"postgres", Postgres}, {"mysql:", MySQL}} {
		if len(databaseURL) >= len(p.prefix) && databaseURL[:len(p.prefix)] == p.prefix {
			return p.d
		}
	}
	return ""
}

// OpenDB returns a store on an existing pool, migrating its schema to
// [SchemaVersion]. The caller keeps ownership of db: Close does not close
// it. A MySQL pool should set interpolateParams; its transactions run at
// READ COMMITTED whatever the session default. On PostgreSQL, each running
// WatchTriggers holds one connection of the pool.
func OpenDB(ctx context.Context, db *sql.DB, dialect Dialect, opts *Options) (*Store, error) {
	o, err := opts.withDefaults(dialect)
	if err != nil {
		return nil, err
	}
	s, err := newStore(ctx, db, dialect, o, false)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	return s, nil
}

func newStore(ctx context.Context, db *sql.DB, name Dialect, o Options, owns bool) (*Store, error) {
	d, err := dialectFor(name)
	if err != nil {
		return nil, err
	}
	s := &Store{
		db:     db,
		ownsDB: owns,
		d:      d,
		prefix: o.TablePrefix,
		sched:  o.SchedulerName,
		log:    o.Logger,
	}
	if name == MySQL {
		s.txOpts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
		collation, err := noPadCollation(ctx, db)
		if err != nil {
			return nil, err
		}
		if collation == padBinary {
			s.log.Warn("this MySQL server has no NO PAD binary collation: keys that differ only in trailing spaces are one key",
				"collation", collation)
		}
		s.keyCollation = collation
		d.ddlTypes = mysqlTypes(collation)
	}
	s.stop, s.stopFn = context.WithCancel(context.Background())
	if err := s.migrate(ctx); err != nil {
		s.stopFn()
		return nil, err
	}
	if name == Postgres {
		var schema string
		if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			s.stopFn()
			return nil, fmt.Errorf("reading the PostgreSQL schema: %w", err)
		}
		s.schema = schema
		s.channel = notifyChannel(o.TablePrefix, "triggers", schema, o.SchedulerName)
	}
	return s, nil
}

// Dialect returns the store's database dialect.
func (s *Store) Dialect() Dialect { return s.d.name }

// DB returns the store's connection pool, for tests and operations.
func (s *Store) DB() *sql.DB { return s.db }

// Close makes every later call fail with [store.ErrClosed], ends the
// watches, and closes the pool when Open created it. Closing twice is
// harmless.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stopFn()
	// After this, insertCombined sees the store closed and starts no
	// writer: the wait below waits for every one started.
	s.inserts.mu.Lock()
	s.inserts.mu.Unlock() //nolint:staticcheck // an empty critical section orders Close after every start of a writer
	// The same for the ANALYZEs that analyzeLater starts.
	s.stats.mu.Lock()
	s.stats.mu.Unlock() //nolint:staticcheck // as above, for analyzeLater
	s.watchers.Wait()
	s.background.Wait()
	if s.ownsDB {
		return s.db.Close()
	}
	return nil
}

// Now returns the database's clock.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if err := s.enter(ctx); err != nil {
		return time.Time{}, err
	}
	var n int64
	if err := s.db.QueryRowContext(ctx, s.q(sqlNow)).Scan(&n); err != nil {
		return time.Time{}, s.translate("reading the database clock", err, nil, nil)
	}
	return time.Unix(0, n).UTC(), nil
}

// enter fails fast on a closed store or a done context.
func (s *Store) enter(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return ctx.Err()
}

// q renders an SQL template for the store's dialect and prefix, once.
func (s *Store) q(tmpl string) string {
	if v, ok := s.queries.Load(tmpl); ok {
		return v.(string)
	}
	r := s.d.render(s.prefix, tmpl)
	s.queries.Store(tmpl, r)
	return r
}

// translate is the one place driver errors become the store's: a closed
// store gives ErrClosed, sql.ErrNoRows gives notFound and a unique
// violation exists (when not nil); store sentinels and context errors pass
// through; anything else is wrapped with what was being done.
func (s *Store) translate(doing string, err error, notFound, exists error) error {
	switch {
	case err == nil:
		return nil
	case s.closed.Load():
		return fmt.Errorf("sqlstore: %s: %w", doing, store.ErrClosed)
	case isStoreError(err), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case notFound != nil && errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w (%s)", notFound, doing)
	case exists != nil && s.d.classify(err).unique:
		return fmt.Errorf("%w (%s)", exists, doing)
	}
	return fmt.Errorf("sqlstore: %s: %w", doing, err)
}

// isStoreError reports errors this package made on purpose.
func isStoreError(err error) bool {
	for _, target := range []error{
		store.ErrJobNotFound, store.ErrJobExists, store.ErrTriggerNotFound, store.ErrTriggerExists,
		store.ErrCalendarNotFound, store.ErrCalendarExists, store.ErrCalendarInUse, store.ErrExecutionNotFound,
		store.ErrNotClaimed, store.ErrAlreadyFired, store.ErrFenced, store.ErrNodeNotFound, store.ErrClosed,
		store.ErrVersionMismatch, errInvalid,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// errInvalid marks a request the store refuses before touching the
// database.
var errInvalid = errors.New("sqlstore: invalid request")

// Transactions lost to a race are retried this many times in all.
const maxAttempts = 6

// write runs fn in a write transaction, and again, after a short jittered
// pause, when the database reports that it lost a race (deadlock, lock
// timeout, serialization failure, SQLite busy). fn must not have effects
// outside the transaction other than its results, which it must reset.
func (s *Store) write(ctx context.Context, doing string, fn func(tx *txn) error) error {
	return s.retry(ctx, doing, func() error { return s.tryWrite(ctx, fn) })
}

// retry runs try, and again, after a short jittered pause, while it fails
// because the database reports that it lost a race; see write. try is a
// whole transaction or one statement outside any.
func (s *Store) retry(ctx context.Context, doing string, try func() error) error {
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil {
			return nil
		}
		if attempt >= maxAttempts || isStoreError(err) || !s.d.classify(err).retry {
			return err
		}
		pause := time.Duration(1<<attempt) * time.Millisecond
		pause += rand.N(pause)
		s.log.Debug("retrying a transaction that lost a race", "doing", doing, "attempt", attempt,
			"pause", pause, "error", err)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func (s *Store) tryWrite(ctx context.Context, fn func(tx *txn) error) error {
	tx, err := s.db.BeginTx(ctx, s.txOpts)
	if err != nil {
		return err
	}
	t := &txn{Tx: tx, s: s, ctx: ctx}
	if err := fn(t); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := t.notify(); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// txn is a write transaction of the store.
type txn struct {
	*sql.Tx
	s   *Store
	ctx context.Context
	// wake is the earliest next fire time, in Unix nanoseconds, of the
	// triggers this transaction leaves WAITING; 0 for none. On PostgreSQL
	// it is notified at commit.
	wake int64
}

// woke records that a trigger is left WAITING with the given next fire
// time.
func (t *txn) woke(next time.Time) {
	if next.IsZero() {
		return
	}
	if n := next.UnixNano(); t.wake == 0 || n < t.wake {
		t.wake = n
	}
}

func (t *txn) exec(tmpl string, args ...any) (int64, error) {
	res, err := t.ExecContext(t.ctx, t.s.q(tmpl), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// execWake runs an UPDATE of triggers whose template ends in {wake}, and
// records the next fire times of the rows it leaves WAITING. On PostgreSQL
// {wake} is a RETURNING clause; elsewhere nothing is notified.
func (t *txn) execWake(tmpl string, args ...any) (int64, error) {
	if !t.s.d.dollar {
		return t.exec(tmpl, args...)
	}
	rows, err := t.QueryContext(t.ctx, t.s.q(tmpl), args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		var st string
		var next sql.NullInt64
		if err := rows.Scan(&st, &next); err != nil {
			return 0, err
		}
		n++
		if store.TriggerState(st) == store.StateWaiting && next.Valid {
			t.woke(time.Unix(0, next.Int64))
		}
	}
	return n, rows.Err()
}

func (t *txn) query(tmpl string, args ...any) (*sql.Rows, error) {
	return t.QueryContext(t.ctx, t.s.q(tmpl), args...)
}

func (t *txn) queryRow(tmpl string, args ...any) *sql.Row {
	return t.QueryRowContext(t.ctx, t.s.q(tmpl), args...)
}

// now reads the database clock.
func (t *txn) now() (int64, error) {
	var n int64
	err := t.queryRow(sqlNow).Scan(&n)
	return n, err
}

// lease checks that l is its node's current lease, holding a shared lock on
// the node row until the transaction ends, so that no recovery can fence
// the node between the check and the write.
func (t *txn) lease(l store.Lease) error { return t.checkLease(sqlNodeLeaseShare, l) }

// leaseForUpdate is lease with an exclusive lock, for writes to the node
// row itself.
func (t *txn) leaseForUpdate(l store.Lease) error { return t.checkLease(sqlNodeLeaseUpdate, l) }

func (t *txn) checkLease(tmpl string, l store.Lease) error {
	var (
		epoch            int64
		dead, registered bool
	)
	err := t.queryRow(tmpl, t.s.sched, l.NodeID).Scan(&epoch, &dead, &registered)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: %q", store.ErrNodeNotFound, l.NodeID)
	case err != nil:
		return err
	case !registered:
		return fmt.Errorf("%w: node %q unregistered", store.ErrFenced, l.NodeID)
	case dead:
		return fmt.Errorf("%w: node %q declared dead", store.ErrFenced, l.NodeID)
	case epoch != l.Epoch:
		return fmt.Errorf("%w: node %q epoch %d, current %d", store.ErrFenced, l.NodeID, l.Epoch, epoch)
	}
	return nil
}
