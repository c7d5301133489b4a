package lock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Errors callers branch on with errors.Is.
var (
	// ErrHeld is returned by Run, without calling fn, when another holder
	// has the lock. The error is a *HeldError.
	ErrHeld = errors.New("lock: held by another holder")
	// ErrLost is the cause (context.Cause) of fn's context when the lease
	// was lost while fn ran, and is joined to Run's error then.
	ErrLost = errors.New("lock: lease lost")
	// ErrInvalid is returned for a bad name or Options, before the
	// database is touched.
	ErrInvalid = errors.New("lock: invalid argument")
)

// HeldError says who holds a lock that Run could not take.
type HeldError struct {
	// Name is the lock's name.
	Name string
	// Holder is the host and process ID of the holder, as it recorded
	// them.
	Holder string
	// Token is the holder's fencing token.
	Token int64
	// Until is when its lease lapses unless it is renewed or released, on
	// the database clock. It may be past when the lease lapsed just as
	// Run tried the lock: the next try may take it.
	Until time.Time
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("lock %q: held by %s (token %d) until %s", e.Name, e.Holder, e.Token,
		e.Until.Format(time.RFC3339Nano))
}

// Is makes errors.Is(err, ErrHeld) hold.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Options are how long a lock is held.
type Options struct {
	// AtMostFor is the lease: the lock lapses AtMostFor after its holder
	// last acquired or renewed it, so a holder that stops renewing (it
	// died, hung or was cut from the database) keeps the lock no longer.
	// While fn runs the lease is renewed every third of AtMostFor. It is
	// required, at least a millisecond.
	AtMostFor time.Duration
	// AtLeastFor keeps the lock taken until AtLeastFor after it was
	// acquired even when fn returns earlier, so that processes whose
	// clocks or schedules differ slightly do not run fn again at once. It
	// is at most AtMostFor. Defaults to 0: the lock is free when fn
	// returns.
	AtLeastFor time.Duration
}

// validate checks a name and Options.
func (o Options) validate(name string) error {
	switch {
	case name == "" || len(name) > 200:
		return fmt.Errorf("%w: lock name %q: want 1 to 200 bytes", ErrInvalid, name)
	case o.AtMostFor < time.Millisecond:
		return fmt.Errorf("%w: Options.AtMostFor is %s: want at least 1ms", ErrInvalid, o.AtMostFor)
	case o.AtLeastFor < 0 || o.AtLeastFor > o.AtMostFor:
		return fmt.Errorf("%w: Options.AtLeastFor is %s: want 0 to AtMostFor (%s)", ErrInvalid, o.AtLeastFor, o.AtMostFor)
	}
	return nil
}

// Lease is one acquisition of a lock, which fn receives.
type Lease struct {
	// Name is the lock's name.
	Name string
	// Token is the fencing token: it grows by one with every acquisition
	// of the lock, across releases and restarts. Hand it to the writes fn
	// makes, and have them refuse a token lower than the highest they saw,
	// so that a holder that lost its lease without noticing (a paused
	// process) cannot overwrite its successor's work.
	Token int64
	// Acquired is when the lease began, on the database clock.
	Acquired time.Time
}

// Locker runs functions under lease locks kept on a store's database. It
// is safe for concurrent use; it owns no goroutine between calls.
type Locker struct {
	st     *sqlstore.Store
	q      queries
	holder string
}

// New migrates the lock table on the store's database (component "lock",
// see [sqlstore.Store.MigrateComponent]) and returns a Locker using the
// store's connection pool and scheduler name: locks of the same name and
// scheduler name are one lock, whichever process takes them.
func New(ctx context.Context, st *sqlstore.Store) (*Locker, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: nil store", ErrInvalid)
	}
	if err := st.MigrateComponent(ctx, component, migrations()); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return &Locker{st: st, q: renderQueries(st), holder: host + "/" + strconv.Itoa(os.Getpid())}, nil
}

// Run is New followed by [Locker.Run]. It migrates on every call: a
// program that runs locks repeatedly keeps a Locker instead.
func Run(ctx context.Context, st *sqlstore.Store, name string, opts Options, fn func(context.Context, Lease) error) error {
	l, err := New(ctx, st)
	if err != nil {
		return err
	}
	return l.Run(ctx, name, opts, fn)
}

// Run calls fn if it can take the lock name, and releases the lock when fn
// returns. When another holder has the lock it returns a *HeldError
// (errors.Is(err, ErrHeld)) without calling fn.
//
// While fn runs, Run renews the lease every third of opts.AtMostFor. fn's
// context is cancelled, with cause ErrLost, when a renewal is refused (the
// lease lapsed and another holder may have it) or when no renewal was
// confirmed within AtMostFor of the last one sent: past that point the
// database may consider the lease lapsed. Cancelling ctx cancels fn's
// context but does not stop the renewals: they go on until fn returns.
//
// Run returns fn's error, joined with an error wrapping ErrLost when the
// lease was lost before fn returned, and with the release's error, if any.
// The lease times are all the database's clock. When fn panics the lock is
// not released: it lapses AtMostFor after its last renewal.
func (l *Locker) Run(ctx context.Context, name string, opts Options, fn func(context.Context, Lease) error) error {
	if err := opts.validate(name); err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("%w: nil fn", ErrInvalid)
	}
	sent := time.Now()
	lease, err := l.acquire(ctx, name, opts)
	if err != nil {
		return err
	}

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	var wg sync.WaitGroup
	var validUntil time.Time
	wg.Add(1)
	go func() {
		defer wg.Done()
		validUntil = l.keep(context.WithoutCancel(ctx), lease, opts, sent.Add(opts.AtMostFor), done, cancel)
	}()
	fnErr := func() error {
		// Even when fn panics, the renewals stop and the lease lapses
		// after AtMostFor.
		defer close(done)
		return fn(runCtx, lease)
	}()
	wg.Wait()

	errs := []error{fnErr}
	if cause := context.Cause(runCtx); errors.Is(cause, ErrLost) {
		return errors.Join(fnErr, cause)
	}
	// The release need not outlive the lease: past validUntil the
	// database may have let the lease lapse already.
	rctx, rcancel := context.WithDeadline(context.WithoutCancel(ctx), validUntil)
	defer rcancel()
	released, err := l.exec(rctx, l.q.release, int64(opts.AtLeastFor), int64(opts.AtLeastFor),
		l.st.SchedulerName(), name, lease.Token)
	switch {
	case err != nil && !time.Now().Before(validUntil):
		errs = append(errs, fmt.Errorf("lock %q: token %d: no renewal confirmed within %s before fn returned: %w (release: %w)",
			name, lease.Token, opts.AtMostFor, ErrLost, err))
	case err != nil:
		errs = append(errs, fmt.Errorf("lock %q: releasing token %d: %w", name, lease.Token, err))
	case !released:
		errs = append(errs, fmt.Errorf("lock %q: token %d lapsed before fn returned: %w", name, lease.Token, ErrLost))
	}
	return errors.Join(errs...)
}

// acquire takes the lock if its lease lapsed, or creates it.
func (l *Locker) acquire(ctx context.Context, name string, opts Options) (Lease, error) {
	sched := l.st.SchedulerName()
	tx, err := l.st.BeginTx(ctx)
	if err != nil {
		return Lease{}, fmt.Errorf("lock %q: acquiring: %w", name, err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, l.q.acquire, l.holder, int64(opts.AtMostFor), sched, name)
	if err != nil {
		return Lease{}, fmt.Errorf("lock %q: acquiring: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Lease{}, fmt.Errorf("lock %q: acquiring: %w", name, err)
	}
	if n == 0 {
		_ = tx.Rollback()
		return l.create(ctx, name, opts)
	}
	lease := Lease{Name: name}
	var acquired int64
	if err := tx.QueryRowContext(ctx, l.q.acquired, sched, name).Scan(&lease.Token, &acquired); err != nil {
		return Lease{}, fmt.Errorf("lock %q: reading the new lease: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return Lease{}, fmt.Errorf("lock %q: acquiring: %w", name, err)
	}
	lease.Acquired = time.Unix(0, acquired).UTC()
	return lease, nil
}

// create inserts the lock's row on its first acquisition, or reports who
// holds it when the row exists.
func (l *Locker) create(ctx context.Context, name string, opts Options) (Lease, error) {
	sched := l.st.SchedulerName()
	held := &HeldError{Name: name}
	var until int64
	err := l.st.DB().QueryRowContext(ctx, l.q.holder, sched, name).Scan(&held.Holder, &held.Token, &until)
	switch {
	case err == nil:
		held.Until = time.Unix(0, until).UTC()
		return Lease{}, held
	case !errors.Is(err, sql.ErrNoRows):
		return Lease{}, fmt.Errorf("lock %q: reading its holder: %w", name, err)
	}
	_, err = l.st.DB().ExecContext(ctx, l.q.insert, sched, name, l.holder, int64(opts.AtMostFor))
	switch {
	case l.st.IsUniqueViolation(err):
		return Lease{}, held // another process created it first; it holds it
	case err != nil:
		return Lease{}, fmt.Errorf("lock %q: creating: %w", name, err)
	}
	lease := Lease{Name: name}
	var acquired int64
	if err := l.st.DB().QueryRowContext(ctx, l.q.acquired, sched, name).Scan(&lease.Token, &acquired); err != nil {
		return Lease{}, fmt.Errorf("lock %q: reading the new lease: %w", name, err)
	}
	lease.Acquired = time.Unix(0, acquired).UTC()
	return lease, nil
}

// keep renews the lease every third of AtMostFor until done is closed,
// and calls lost when the lease is lost: a renewal refused, or none
// confirmed by validUntil, the local time until which the last confirmed
// renewal (or the acquisition) holds. It returns the last validUntil.
func (l *Locker) keep(ctx context.Context, lease Lease, opts Options, validUntil time.Time,
	done <-chan struct{}, lost context.CancelCauseFunc,
) time.Time {
	every := opts.AtMostFor / 3
	expiry := time.NewTimer(time.Until(validUntil))
	defer expiry.Stop()
	tick := time.NewTimer(every)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return validUntil
		case <-expiry.C:
			lost(fmt.Errorf("lock %q: token %d: no renewal confirmed within %s: %w", lease.Name, lease.Token, opts.AtMostFor, ErrLost))
			return validUntil
		case <-tick.C:
		}
		sent := time.Now()
		if !sent.Before(validUntil) {
			continue // the expiry timer fires at once
		}
		rctx, cancel := context.WithDeadline(ctx, validUntil)
		ok, err := l.exec(rctx, l.q.renew, int64(opts.AtMostFor), l.st.SchedulerName(), lease.Name, lease.Token)
		cancel()
		switch {
		case err != nil:
			// Try again soon; the expiry timer ends the attempts.
			tick.Reset(every / 4)
		case !ok:
			lost(fmt.Errorf("lock %q: token %d: renewal refused, the lease had lapsed: %w", lease.Name, lease.Token, ErrLost))
			return validUntil
		default:
			validUntil = sent.Add(opts.AtMostFor)
			expiry.Reset(time.Until(validUntil))
			tick.Reset(every)
		}
	}
}

// exec runs an UPDATE and reports whether it changed a row.
func (l *Locker) exec(ctx context.Context, query string, args ...any) (bool, error) {
	res, err := l.st.DB().ExecContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}
