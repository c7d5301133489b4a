package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Defaults of Options.
const (
	// DefaultSessionTTL is how long a session lives after its last use.
	DefaultSessionTTL = 12 * time.Hour
	// DefaultSessionMaxAge bounds a session's life however often it is
	// used.
	DefaultSessionMaxAge = 7 * 24 * time.Hour
	// DefaultLoginFailuresPerUser is how many failed logins one user name
	// has free before it must back off.
	DefaultLoginFailuresPerUser = 5
	// DefaultLoginFailuresPerAddress is how many failed logins one client
	// address has free before it must back off.
	DefaultLoginFailuresPerAddress = 20
)

// touchEvery throttles the writes that record a session's or a token's
// last use: at most one per credential per minute.
const touchEvery = time.Minute

// Options configure a Service. A nil *Options means the defaults.
type Options struct {
	// SessionTTL is how long a session stays valid after its last use; each
	// use slides the expiry forward (recorded at most once a minute).
	// Defaults to DefaultSessionTTL, 12 hours.
	SessionTTL time.Duration
	// SessionMaxAge ends a session this long after the login however
	// often it is used. Defaults to DefaultSessionMaxAge, 7 days.
	SessionMaxAge time.Duration
	// BcryptCost is the cost of the password hashes the service writes,
	// between bcrypt.MinCost and bcrypt.MaxCost; existing hashes keep
	// theirs. Defaults to bcrypt.DefaultCost.
	BcryptCost int
	// LoginFailuresPerUser is how many failed logins one user name has
	// free within LoginFailureWindow; past them each attempt waits a
	// back-off that doubles from one second to MaxLoginBackoff (see
	// throttle.go). The counts are kept in the database, shared by every
	// node. Defaults to DefaultLoginFailuresPerUser, 5.
	LoginFailuresPerUser int
	// LoginFailuresPerAddress is the same for one client address (one IPv6
	// /64). Defaults to DefaultLoginFailuresPerAddress, 20.
	LoginFailuresPerAddress int
	// Audit records every change to users and tokens. Defaults to none.
	Audit AuditRecorder
	// Logger receives logins, failed logins and failures to record an
	// audit entry. Defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

// withDefaults returns a copy of o with the defaults applied, or an error
// naming the first field it cannot use.
func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	switch {
	case c.SessionTTL < 0:
		return c, fmt.Errorf("auth: Options.SessionTTL is %v, want positive or 0 for the default", c.SessionTTL)
	case c.SessionMaxAge < 0:
		return c, fmt.Errorf("auth: Options.SessionMaxAge is %v, want positive or 0 for the default", c.SessionMaxAge)
	case c.BcryptCost != 0 && (c.BcryptCost < bcrypt.MinCost || c.BcryptCost > bcrypt.MaxCost):
		return c, fmt.Errorf("auth: Options.BcryptCost is %d, want %d to %d or 0 for the default",
			c.BcryptCost, bcrypt.MinCost, bcrypt.MaxCost)
	case c.LoginFailuresPerUser < 0:
		return c, fmt.Errorf("auth: Options.LoginFailuresPerUser is %d, want positive or 0 for the default", c.LoginFailuresPerUser)
	case c.LoginFailuresPerAddress < 0:
		return c, fmt.Errorf("auth: Options.LoginFailuresPerAddress is %d, want positive or 0 for the default", c.LoginFailuresPerAddress)
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.SessionMaxAge == 0 {
		c.SessionMaxAge = DefaultSessionMaxAge
	}
	if c.SessionMaxAge < c.SessionTTL {
		return c, fmt.Errorf("auth: Options.SessionMaxAge (%v) is shorter than Options.SessionTTL (%v)",
			c.SessionMaxAge, c.SessionTTL)
	}
	if c.BcryptCost == 0 {
		c.BcryptCost = bcrypt.DefaultCost
	}
	if c.LoginFailuresPerUser == 0 {
		c.LoginFailuresPerUser = DefaultLoginFailuresPerUser
	}
	if c.LoginFailuresPerAddress == 0 {
		c.LoginFailuresPerAddress = DefaultLoginFailuresPerAddress
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// Service authenticates requests and manages users, sessions and API
// tokens on a store's database. It is safe for concurrent use, and any
// number of services (one per node) may share one database.
type Service struct {
	db    *sql.DB
	st    *sqlstore.Store
	sched string
	q     queries
	opts  Options
	log   *slog.Logger

	// dummyHash is compared with the password of a login for an unknown
	// user, so that such a login costs as much as one with a bad password.
	dummyHash []byte

	// executors are the executor tokens looked up lately (see
	// executorTokens).
	executors executorTokens
}

// New creates the service's tables on st's database if they do not exist
// (safe when several nodes start at once) and returns the service. It
// creates no user: see [Service.Bootstrap].
func New(ctx context.Context, st *sqlstore.Store, opts *Options) (*Service, error) {
	if st == nil {
		return nil, errors.New("auth: New: nil store")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := st.MigrateComponent(ctx, component, migrations()); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	// The dummy hash's password is random and forgotten: nothing matches it.
	dummy, err := bcrypt.GenerateFromPassword([]byte(randomToken()), o.BcryptCost)
	if err != nil {
		return nil, fmt.Errorf("auth: hashing: %w", err)
	}
	s := &Service{
		db:        st.DB(),
		st:        st,
		sched:     st.SchedulerName(),
		q:         renderQueries(st.SQL),
		opts:      o,
		log:       o.Logger,
		dummyHash: dummy,
	}
	return s, nil
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (s *Service) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// now reads the service's clock.
func (s *Service) now() time.Time { return s.opts.Now() }

// nanos converts an instant to its column value.
func nanos(t time.Time) int64 { return t.UnixNano() }

// instant converts a column value to an instant in UTC.
func instant(n int64) time.Time { return time.Unix(0, n).UTC() }

// nullInstant converts a nullable column value to an instant, or nil.
func nullInstant(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := instant(n.Int64)
	return &t
}
