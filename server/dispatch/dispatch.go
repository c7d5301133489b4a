package dispatch

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/combine"
	"github.com/chime-scheduler/chime/server/internal/names"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrInvalid reports a request refused before the database is
	// touched; the error is a *FieldError naming the field.
	ErrInvalid = errors.New("dispatch: invalid request")
	// ErrNotFound reports an executor ID that is not registered.
	ErrNotFound = errors.New("dispatch: no such executor")
	// ErrLeaseLost reports an executor whose lease lapsed: its runs are
	// lost, and it must register again.
	ErrLeaseLost = errors.New("dispatch: the executor's lease lapsed; register again")
	// ErrStale reports a result or run sent under a token that is not the
	// run's current one, for a run not leased to the caller, or for a run
	// that already ended. Nothing was changed.
	ErrStale = errors.New("dispatch: the run is not leased to this executor under this token")
)

// FieldError is an ErrInvalid naming the bad field.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// NoExecutorError reports a hand-over that found no live executor of the
// group advertising the handler and carrying the labels.
type NoExecutorError struct {
	Group, Handler string
	Labels         map[string]string
	// Live counts the group's live executors, whatever their handlers
	// and labels.
	Live int
}

func (e *NoExecutorError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no live executor of group %q runs handler %q", e.Group, e.Handler)
	if len(e.Labels) > 0 {
		b.WriteString(" with labels ")
		b.WriteString(formatLabels(e.Labels))
	}
	fmt.Fprintf(&b, " (%d live executors in the group)", e.Live)
	return b.String()
}

// formatLabels formats labels as "a=1,b=2", by key.
func formatLabels(l map[string]string) string {
	keys := slices.Sorted(maps.Keys(l))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + l[k]
	}
	return strings.Join(parts, ",")
}

// State is a run's state.
type State string

// States of a run.
const (
	StateAssigned        State = "assigned"
	StateRunning         State = "running"
	StateCancelRequested State = "cancel_requested"
	StateDone            State = "done"
	StateLost            State = "lost"
)

// Options configure a Service. A nil *Options means the defaults.
type Options struct {
	// Lease is how long an executor keeps its runs without a heartbeat.
	// Defaults to 15s.
	Lease time.Duration
	// PollInterval is how often Take and Watch read the database while
	// they wait. Defaults to 150ms.
	PollInterval time.Duration
	// Logger receives the watch's warnings. Defaults to slog.Default().
	Logger *slog.Logger
	// Clock tells the database's time as this node estimates it, the
	// clock leases are given and judged by: a node's scheduler's
	// chime.Scheduler.StoreTime, which reads no database. Nil reads the
	// database's clock each time, a round trip that a hand-over, a take
	// and a result would each pay.
	Clock func() time.Time
}

// Defaults of Options.
const (
	DefaultLease        = 15 * time.Second
	DefaultPollInterval = 150 * time.Millisecond
	// MaxWait bounds a Take's wait.
	MaxWait = 30 * time.Second
)

// Service hands runs to executors and fences their results, on one
// node. It is safe for concurrent use.
type Service struct {
	st    *sqlstore.Store
	db    *sql.DB
	sched string
	q     queries
	cq    catalogQueries
	opts  Options
	log   *slog.Logger

	mu sync.Mutex
	// waiters are this node's runners waiting for a run's end, by run ID.
	waiters map[string]chan Update
	// takes are what this node knows of each executor's work between
	// its Takes (see takeState), by executor ID.
	takes map[string]*takeState
	// nudge wakes Watch for a result reported to this node.
	nudge chan struct{}
	// released are the runs released and not deleted yet (see Release),
	// guarded by mu.
	released []string
	// groups are the groups of the executors GroupOf read, by ID,
	// guarded by mu.
	groups map[string]string
	// uses are the round robin's uses of executors that Watch has not
	// recorded yet, guarded by mu.
	uses usesPending
	// turns are the executors this node's round robin picked last, by
	// group (see nextTurn), guarded by mu.
	turns map[string]string

	// reports batches the results reported to this node (see Report),
	// handovers the round robin hand-overs (see commitHandovers),
	// handedTakes the takes by key of the executors' Takes (see
	// commitTakes).
	reports     combine.Combiner[*report]
	handovers   combine.Combiner[*handover]
	handedTakes combine.Combiner[*handedTake]

	// channel is the PostgreSQL channel on which the nodes tell each
	// other of the runs they hand over and the cancels they request ("" on
	// other databases), origin this Service's name in what it sends (see
	// announce).
	channel, origin string
	// listening is set while this node hears the others (see gap).
	listening atomic.Bool

	// analyzeExecutors has the executors' table analyzed at the first
	// hand-over (see sawHandover).
	analyzeExecutors sync.Once
	// deleted counts the runs this node deleted since it last had the
	// runs' table vacuumed, vacuuming is set while it does, and
	// vacuumAfter is vacuumRunsAfter but in tests (see vacuumRuns).
	deleted     atomic.Int64
	vacuuming   atomic.Bool
	vacuumAfter int64
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
		return nil, fmt.Errorf("dispatch: %w", err)
	}
	if err := st.MigrateComponent(ctx, catalogComponent, catalogMigrations()); err != nil {
		return nil, fmt.Errorf("dispatch: %w", err)
	}
	s := &Service{
		st: st, db: st.DB(), sched: st.SchedulerName(), q: renderQueries(st.SQL), cq: renderCatalogQueries(st.SQL),
		opts: o, log: o.Logger,
		waiters: make(map[string]chan Update),
		takes:   make(map[string]*takeState),
		groups:  make(map[string]string),
		turns:   make(map[string]string),
		nudge:   make(chan struct{}, 1),

		vacuumAfter: vacuumRunsAfter,
	}
	if st.SingleWriter() {
		s.reports.Parallel, s.handovers.Parallel = 1, 1
	}
	if st.WritableCTEs() {
		channel, err := st.NotifyChannel(notifyTopic)
		if err != nil {
			return nil, fmt.Errorf("dispatch: %w", err)
		}
		s.channel, s.origin = channel, newID()
	}
	if err := s.fillCatalog(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Lease returns the executors' lease.
func (s *Service) Lease() time.Duration { return s.opts.Lease }

// HeartbeatInterval is how often an executor should send a heartbeat: a
// third of its lease, so that one lost heartbeat does not lose it.
func (s *Service) HeartbeatInterval() time.Duration { return s.opts.Lease / 3 }

// Executor is a registered executor.
type Executor struct {
	ID, Group, Instance, Version string
	Labels                       map[string]string
	Handlers                     []string
	Registered, LastHeartbeat    time.Time
	LeaseUntil                   time.Time
	// LastUsed is zero for an executor never picked.
	LastUsed time.Time
	UseCount int64
	// Running counts its runs not ended (assigned, running or
	// cancel_requested); Live whether its lease holds (List sets both).
	Running int
	Live    bool
}

// Limits of a registration.
const (
	maxNameBytes = 200
	maxHandlers  = 1000
	maxLabels    = 50
)

// CheckName refuses a group, handler or label name that breaks the
// server's rule for names (names.Problem).
func CheckName(field, v string) error {
	if p := names.Problem(v); p != "" {
		return invalid(field, "%s", p)
	}
	return nil
}

// CheckLabels refuses more than 50 labels, and names or values
// CheckName refuses (a value may be empty).
func CheckLabels(field string, labels map[string]string) error {
	if len(labels) > maxLabels {
		return invalid(field, "has %d labels; at most %d are allowed", len(labels), maxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		var fe *FieldError
		if err := CheckName(field+"."+k, k); errors.As(err, &fe) {
			return invalid(field, "label name %q: %s", k, fe.Message)
		}
		if v := labels[k]; v != "" {
			if err := CheckName(field+"."+k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// Register registers an executor, with a lease from now on the
// database's clock.
func (s *Service) Register(ctx context.Context, r api.ExecutorRegister) (*Executor, error) {
	if err := CheckName("group", r.Group); err != nil {
		return nil, err
	}
	if len(r.Instance) > maxNameBytes || !utf8.ValidString(r.Instance) {
		return nil, invalid("instance", "want at most %d bytes of UTF-8", maxNameBytes)
	}
	if len(r.Version) > maxNameBytes || !utf8.ValidString(r.Version) {
		return nil, invalid("version", "want at most %d bytes of UTF-8", maxNameBytes)
	}
	if err := CheckLabels("labels", r.Labels); err != nil {
		return nil, err
	}
	if len(r.Handlers) == 0 || len(r.Handlers) > maxHandlers {
		return nil, invalid("handlers", "has %d names; want 1 to %d", len(r.Handlers), maxHandlers)
	}
	for i, h := range r.Handlers {
		if err := CheckName(fmt.Sprintf("handlers[%d]", i), h); err != nil {
			return nil, err
		}
	}
	labels, err := encodeJSON(r.Labels)
	if err != nil {
		return nil, err
	}
	handlers, err := encodeJSON(r.Handlers)
	if err != nil {
		return nil, err
	}
	// The catalog first: a registered executor's handlers are always in it.
	if err := s.recordHandlers(ctx, r.Group, r.Handlers); err != nil {
		return nil, err
	}
	now, err := s.now(ctx, s.db)
	if err != nil {
		return nil, err
	}
	e := &Executor{
		ID: newID(), Group: r.Group, Instance: r.Instance, Version: r.Version,
		Labels: r.Labels, Handlers: slices.Clone(r.Handlers),
		Registered: now, LastHeartbeat: now, LeaseUntil: now.Add(s.opts.Lease), Live: true,
	}
	if _, err := s.db.ExecContext(ctx, s.q.executorInsert, s.sched, e.ID, e.Group, e.Instance, e.Version,
		labels, handlers, nanos(now), nanos(now), nanos(e.LeaseUntil)); err != nil {
		return nil, fmt.Errorf("dispatch: registering an executor of group %q: %w", r.Group, err)
	}
	return e, nil
}

// Get returns a registered executor.
func (s *Service) Get(ctx context.Context, id string) (*Executor, error) {
	row := s.db.QueryRowContext(ctx, s.q.executorGet, s.sched, id)
	e, err := scanExecutor(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("dispatch: reading executor %s: %w", id, err)
	}
	return e, nil
}

// maxGroupsKept bounds the executors whose group GroupOf keeps: past it,
// it forgets them all at once.
const maxGroupsKept = 10000

// GroupOf returns the group of the registered executor id. An executor
// never changes group and its ID is never given again, so the answer is
// kept: an executor calls on every take, heartbeat, log line and result,
// and each call checks its group. Once read, an executor removed since
// still has its group here; what the caller does next finds it gone.
func (s *Service) GroupOf(ctx context.Context, id string) (string, error) {
	s.mu.Lock()
	group, ok := s.groups[id]
	s.mu.Unlock()
	if ok {
		return group, nil
	}
	e, err := s.Get(ctx, id)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if len(s.groups) >= maxGroupsKept {
		clear(s.groups)
	}
	s.groups[id] = e.Group
	s.mu.Unlock()
	return e.Group, nil
}

// List returns every registered executor, by group and registration,
// with its running count and whether it is live.
func (s *Service) List(ctx context.Context) ([]Executor, error) {
	now, err := s.now(ctx, s.db)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q.executorList, s.sched)
	if err != nil {
		return nil, fmt.Errorf("dispatch: listing executors: %w", err)
	}
	var out []Executor
	for rows.Next() {
		e, err := scanExecutor(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("dispatch: listing executors: %w", err)
		}
		e.Live = e.LeaseUntil.After(now)
		out = append(out, *e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dispatch: listing executors: %w", err)
	}
	counts, err := s.runningCounts(ctx, s.db, s.q.runningAll, s.sched)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Running = counts[out[i].ID]
	}
	return out, nil
}

// Heartbeat extends an executor's lease. running are the runs it runs,
// with their tokens; it returns those it must cancel: asked to
// (killed, timed out), or no longer leased to it under that token. An
// executor whose lease lapsed gets ErrLeaseLost and nothing changes.
func (s *Service) Heartbeat(ctx context.Context, id string, running []api.ExecutorRunRef) ([]api.ExecutorRunRef, error) {
	now, err := s.now(ctx, s.db)
	if err != nil {
		return nil, err
	}
	res, err := s.db.ExecContext(ctx, s.q.executorHeartbeat, nanos(now), nanos(now.Add(s.opts.Lease)), s.sched, id, nanos(now))
	if err != nil {
		return nil, fmt.Errorf("dispatch: heartbeat of executor %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if _, err := s.Get(ctx, id); err != nil {
			return nil, err
		}
		return nil, ErrLeaseLost
	}
	active, err := s.activeRuns(ctx, id)
	if err != nil {
		return nil, err
	}
	cancel := []api.ExecutorRunRef{}
	for _, r := range active {
		if r.state == StateCancelRequested {
			cancel = append(cancel, api.ExecutorRunRef{ID: r.id, Token: r.token})
		}
	}
	for _, ref := range running {
		r, ok := active[ref.ID]
		if !ok || r.token != ref.Token {
			cancel = append(cancel, ref)
		}
	}
	return cancel, nil
}

// activeRun is what Heartbeat reads of a run not ended.
type activeRun struct {
	id    string
	token int64
	state State
}

// activeRuns returns an executor's runs not ended, by ID.
func (s *Service) activeRuns(ctx context.Context, executor string) (map[string]activeRun, error) {
	rows, err := s.db.QueryContext(ctx, s.q.runsActive, s.sched, executor)
	if err != nil {
		return nil, fmt.Errorf("dispatch: reading the runs of executor %s: %w", executor, err)
	}
	defer rows.Close()
	out := make(map[string]activeRun)
	for rows.Next() {
		var r activeRun
		if err := rows.Scan(&r.id, &r.token, &r.state); err != nil {
			return nil, fmt.Errorf("dispatch: reading the runs of executor %s: %w", executor, err)
		}
		out[r.id] = r
	}
	return out, rows.Err()
}

// newID returns 32 random hex digits.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func instant(n int64) time.Time { return time.Unix(0, n).UTC() }

// encodeJSON encodes v for a {json} column; nil and empty maps and
// slices are NULL.
func encodeJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("dispatch: encoding JSON: %w", err)
	}
	switch string(b) {
	case "null", "{}", "[]":
		return nil, nil
	}
	return string(b), nil
}

// decodeJSON decodes a {json} column into v; NULL leaves v alone.
func decodeJSON(s sql.NullString, v any) error {
	if !s.Valid || s.String == "" {
		return nil
	}
	return json.Unmarshal([]byte(s.String), v)
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// now returns the database's clock: Options.Clock's estimate, or what q
// reads without one.
func (s *Service) now(ctx context.Context, q querier) (time.Time, error) {
	if s.opts.Clock != nil {
		return s.opts.Clock(), nil
	}
	var n int64
	if err := q.QueryRowContext(ctx, s.q.now).Scan(&n); err != nil {
		return time.Time{}, fmt.Errorf("dispatch: reading the database clock: %w", err)
	}
	return instant(n), nil
}

// clockArg is the time a statement that reads the clock itself takes as
// now: the Service's clock, or NULL for the database's.
func (s *Service) clockArg() any {
	if s.opts.Clock == nil {
		return nil
	}
	return nanos(s.opts.Clock())
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanExecutor(r scanner) (*Executor, error) {
	var (
		e                                 Executor
		labels, handlers                  sql.NullString
		registered, heartbeat, leaseUntil int64
		lastUsed                          sql.NullInt64
	)
	if err := r.Scan(&e.ID, &e.Group, &e.Instance, &e.Version, &labels, &handlers,
		&registered, &heartbeat, &leaseUntil, &lastUsed, &e.UseCount); err != nil {
		return nil, err
	}
	if err := decodeJSON(labels, &e.Labels); err != nil {
		return nil, err
	}
	if err := decodeJSON(handlers, &e.Handlers); err != nil {
		return nil, err
	}
	e.Registered, e.LastHeartbeat, e.LeaseUntil = instant(registered), instant(heartbeat), instant(leaseUntil)
	if lastUsed.Valid {
		e.LastUsed = instant(lastUsed.Int64)
	}
	return &e, nil
}

// runningCounts returns the runs not ended per executor, of the query
// stmt with args.
func (s *Service) runningCounts(ctx context.Context, q querier, stmt string, args ...any) (map[string]int, error) {
	rows, err := q.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("dispatch: counting running runs: %w", err)
	}
	defer rows.Close()
	out := make(map[string]int)
	for rows.Next() {
		var (
			id string
			n  int
		)
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("dispatch: counting running runs: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}
