package pool

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	invalidreq "github.com/chime-scheduler/chime/server/internal/invalid"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrInvalid reports a request refused before the database is
	// touched; the error is an *InvalidError naming the field.
	ErrInvalid = errors.New("pool: invalid request")
	// ErrNotFound reports a pool that does not exist.
	ErrNotFound = errors.New("pool: no such pool")
	// ErrLeaseLost is the cause a holder of a slot (Hold) is told when
	// its node could not renew its slots for two thirds of their lease:
	// the other nodes may take the slot back soon, so the holder must stop
	// using it.
	ErrLeaseLost = errors.New("pool: the node could not renew the lease of its pool slots")
)

// errPlaceLost tells a waiter that its place in the queue was taken back
// (its lease lapsed) while its pool still exists: it queues again.
var errPlaceLost = errors.New("pool: the place in the queue was taken back")

// InvalidError is a request refused before the database is touched.
// errors.Is(err, ErrInvalid) holds for it. Its Field names the field at
// fault, as the API spells it; its Reason says what is wrong. It is the
// one definition the server's storage packages share
// (server/internal/invalid); here its Err is ErrInvalid.
type InvalidError = invalidreq.Error

// invalid returns an *InvalidError about field.
func invalid(field, format string, args ...any) error {
	return invalidreq.New(ErrInvalid, field, format, args...)
}

// Limits of a pool.
const (
	// MaxNameBytes bounds a pool's name.
	MaxNameBytes = 200
	// MaxLimit bounds a pool's limit.
	MaxLimit = 100000
	// maxDescriptionBytes bounds a pool's description.
	maxDescriptionBytes = 2000
)

// Pool is a named limit on the executions running at once, across the
// cluster, of the jobs that name it.
type Pool struct {
	Name        string
	Description string
	// Limit is how many executions of the pool's jobs may run at once.
	Limit int
	// Created and Updated are instants of the database's clock.
	Created, Updated time.Time
	// Running and Waiting count the pool's slots held and the firings
	// waiting for one (List and Get set them).
	Running, Waiting int
}

// Options configure a Service. A nil *Options means the defaults.
type Options struct {
	// Lease is how long a node's slots and waiting firings stay without
	// being renewed: a node that stops renewing them (it died, or lost
	// the database) has them taken back after it. A node whose renewals
	// fail for two thirds of it tells the holders of its slots (Hold)
	// that they lost them, before anyone can take them back. Defaults to
	// 30s.
	Lease time.Duration
	// PollInterval is how often a node with firings waiting looks for
	// free slots. Defaults to 100ms.
	PollInterval time.Duration
	// Logger receives the loop's warnings. Defaults to slog.Default().
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultLease        = 30 * time.Second
	DefaultPollInterval = 100 * time.Millisecond
)

// Service keeps the pools and their slots, on one node. It is safe for
// concurrent use.
type Service struct {
	st    *sqlstore.Store
	db    *sql.DB
	sched string
	q     queries
	opts  Options
	log   *slog.Logger

	mu sync.Mutex
	// waiters are this node's firings waiting for a slot, by execution ID.
	waiters map[string]waiter
	// born is the database's clock when the Service was made: the rows
	// of its node queued before it are an earlier process's (see Run).
	born int64
	// holds are told when this node's slots are about to be taken
	// back, by execution ID (see Hold).
	holds map[string]func(error)
	// renewed is when the last successful renewal of this node's slots
	// started, on this node's clock; zero before Run.
	renewed time.Time
	// nudge wakes Run: a firing started waiting, or a slot was released.
	nudge chan struct{}
}

// waiter is a firing of this node waiting for a slot of pool.
type waiter struct {
	pool    string
	granted chan error
}

// New migrates the package's tables on st's database and returns a
// Service.
func New(ctx context.Context, st *sqlstore.Store, opts *Options) (*Service, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Lease < 0:
		return nil, invalid("Options.Lease", "%s is negative", o.Lease)
	case o.Lease == 0:
		o.Lease = DefaultLease
	case o.Lease < time.Second:
		return nil, invalid("Options.Lease", "%s: want at least 1s", o.Lease)
	}
	switch {
	case o.PollInterval < 0:
		return nil, invalid("Options.PollInterval", "%s is negative", o.PollInterval)
	case o.PollInterval == 0:
		o.PollInterval = DefaultPollInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := st.MigrateComponent(ctx, component, migrations()); err != nil {
		return nil, fmt.Errorf("pool: %w", err)
	}
	s := &Service{
		st: st, db: st.DB(), sched: st.SchedulerName(), q: renderQueries(st.SQL), opts: o, log: o.Logger,
		waiters: make(map[string]waiter),
		holds:   make(map[string]func(error)),
		nudge:   make(chan struct{}, 1),
	}
	if err := s.db.QueryRowContext(ctx, s.q.now).Scan(&s.born); err != nil {
		return nil, fmt.Errorf("pool: reading the database clock: %w", err)
	}
	return s, nil
}

// CheckName checks a pool's name: 1 to MaxNameBytes bytes of letters,
// digits, '.', '_' and '-'. field names it in the error.
func CheckName(field, name string) error {
	if name == "" {
		return invalid(field, "is required")
	}
	if len(name) > MaxNameBytes {
		return invalid(field, "is %d bytes; at most %d are allowed", len(name), MaxNameBytes)
	}
	for _, r := range name {
		ok := r == '.' || r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
		if !ok {
			return invalid(field, "%q: want letters, digits, '.', '_' and '-'", name)
		}
	}
	return nil
}

// Put creates or replaces a pool's limit and description, reporting
// whether it created it. Lowering the limit takes no slot back: the
// executions holding one run on, and no firing gets a slot until fewer
// than the new limit run.
func (s *Service) Put(ctx context.Context, p Pool) (created bool, err error) {
	if err := CheckName("name", p.Name); err != nil {
		return false, err
	}
	if p.Limit < 1 || p.Limit > MaxLimit {
		return false, invalid("limit", "%d: want 1 to %d", p.Limit, MaxLimit)
	}
	if len(p.Description) > maxDescriptionBytes {
		return false, invalid("description", "is %d bytes; at most %d are allowed", len(p.Description), maxDescriptionBytes)
	}
	res, err := s.db.ExecContext(ctx, s.q.poolUpdate, p.Description, p.Limit, s.sched, p.Name)
	if err != nil {
		return false, fmt.Errorf("pool: updating pool %q: %w", p.Name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return false, nil
	}
	_, err = s.db.ExecContext(ctx, s.q.poolInsert, s.sched, p.Name, p.Description, p.Limit)
	if s.st.IsUniqueViolation(err) {
		// Created meanwhile by another caller: ours replaces it.
		return s.Put(ctx, p)
	}
	if err != nil {
		return false, fmt.Errorf("pool: creating pool %q: %w", p.Name, err)
	}
	return true, nil
}

// Get returns one pool with its counts; ErrNotFound when absent.
func (s *Service) Get(ctx context.Context, name string) (*Pool, error) {
	all, err := s.list(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("pool %q: %w", name, ErrNotFound)
	}
	return &all[0], nil
}

// List returns every pool, by name, with its counts.
func (s *Service) List(ctx context.Context) ([]Pool, error) {
	return s.list(ctx, "")
}

// list returns every pool, or the one named.
func (s *Service) list(ctx context.Context, name string) ([]Pool, error) {
	rows, err := s.db.QueryContext(ctx, s.q.poolList, s.sched, name, name)
	if err != nil {
		return nil, fmt.Errorf("pool: listing pools: %w", err)
	}
	defer rows.Close()
	var (
		out   []Pool
		index = make(map[string]int)
	)
	for rows.Next() {
		var (
			p                Pool
			created, updated int64
		)
		if err := rows.Scan(&p.Name, &p.Description, &p.Limit, &created, &updated); err != nil {
			return nil, fmt.Errorf("pool: listing pools: %w", err)
		}
		p.Created, p.Updated = instant(created), instant(updated)
		index[p.Name] = len(out)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pool: listing pools: %w", err)
	}
	counts, err := s.db.QueryContext(ctx, s.q.poolCounts, s.sched, name, name)
	if err != nil {
		return nil, fmt.Errorf("pool: counting slots: %w", err)
	}
	defer counts.Close()
	for counts.Next() {
		var (
			pool, state string
			n           int
		)
		if err := counts.Scan(&pool, &state, &n); err != nil {
			return nil, fmt.Errorf("pool: counting slots: %w", err)
		}
		i, ok := index[pool]
		if !ok {
			continue
		}
		switch state {
		case stateRunning:
			out[i].Running = n
		case stateWaiting:
			out[i].Waiting = n
		}
	}
	if err := counts.Err(); err != nil {
		return nil, fmt.Errorf("pool: counting slots: %w", err)
	}
	return out, nil
}

// Delete deletes a pool; ErrNotFound when absent. Its slots go with
// it: the executions holding one run on, and the firings waiting for
// one learn it on their next look (see Service.Wait).
func (s *Service) Delete(ctx context.Context, name string) error {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("pool: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, s.q.poolDelete, s.sched, name)
	if err != nil {
		return fmt.Errorf("pool: deleting pool %q: %w", name, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("pool %q: %w", name, ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, s.q.slotsDeletePool, s.sched, name); err != nil {
		return fmt.Errorf("pool: deleting the slots of pool %q: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("pool: deleting pool %q: %w", name, err)
	}
	return nil
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func instant(n int64) time.Time { return time.Unix(0, n).UTC() }
