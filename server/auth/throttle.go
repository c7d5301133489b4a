package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Login throttling. Failed logins are counted in the database, per user
// name and per client address, so that every node of a cluster sees the
// same counts and a restart forgets nothing. Each subject has some free
// failures (Options.LoginFailuresPerUser, Options.LoginFailuresPerAddress);
// past them, each further attempt must wait a back-off after the subject's
// last failure that doubles with every failure, from one second up to
// MaxLoginBackoff. A subject is never locked out: at worst its next
// attempt waits MaxLoginBackoff. A successful login clears its user name's
// count; an address's count lapses LoginFailureWindow after its last
// failure, as every count does.

// MaxLoginBackoff is the longest a user name or an address must wait
// between two login attempts once it has used up its free failures.
const MaxLoginBackoff = time.Minute

// LoginFailureWindow is how long a failed login counts: a subject whose last
// failure is older starts again with all its free failures.
const LoginFailureWindow = 15 * time.Minute

// The kinds of subject failures are counted for.
const (
	subjectUser    = "user"
	subjectAddress = "address"
)

// loginBackoff is how long a subject with failures failed logins must wait
// after its last one, when the first free of them cost nothing.
func loginBackoff(failures, free int) time.Duration {
	over := failures - free
	if over < 0 {
		return 0
	}
	if over >= 6 { // 1s << 6 is past the cap
		return MaxLoginBackoff
	}
	return min(time.Second<<over, MaxLoginBackoff)
}

// loginWait returns how much longer a subject must wait before its next
// login attempt at now: zero when it may try at once.
func (s *Service) loginWait(ctx context.Context, kind, subject string, free int, now time.Time) (time.Duration, error) {
	var (
		failures int
		last     int64
	)
	err := s.db.QueryRowContext(ctx, s.q.failureGet, s.sched, kind, subject).Scan(&failures, &last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("auth: reading the failed logins of %s %q: %w", kind, subject, err)
	}
	lastAt := time.Unix(0, last)
	if now.Sub(lastAt) >= LoginFailureWindow {
		return 0, nil
	}
	return max(0, lastAt.Add(loginBackoff(failures, free)).Sub(now)), nil
}

// recordLoginFailure counts one failed login of a subject at now. Two nodes
// counting the first failure of one subject at once both try to insert it;
// the one that loses counts on the other's row.
func (s *Service) recordLoginFailure(ctx context.Context, kind, subject string, now time.Time) error {
	windowStart := nanos(now.Add(-LoginFailureWindow))
	for range 2 {
		res, err := s.db.ExecContext(ctx, s.q.failureAdd, windowStart, nanos(now), s.sched, kind, subject)
		if err != nil {
			return fmt.Errorf("auth: counting a failed login of %s %q: %w", kind, subject, err)
		}
		if n, err := res.RowsAffected(); err == nil && n > 0 {
			return nil
		}
		_, err = s.db.ExecContext(ctx, s.q.failureInsert, s.sched, kind, subject, nanos(now))
		if err == nil {
			return nil
		}
		if !s.st.IsUniqueViolation(err) {
			return fmt.Errorf("auth: counting a failed login of %s %q: %w", kind, subject, err)
		}
	}
	return fmt.Errorf("auth: counting a failed login of %s %q: the row was inserted and deleted concurrently", kind, subject)
}

// clearLoginFailures forgets the failed logins of a subject, and those of
// every subject whose last failure is out of the window.
func (s *Service) clearLoginFailures(ctx context.Context, kind, subject string, now time.Time) error {
	if _, err := s.db.ExecContext(ctx, s.q.failureClear, s.sched, kind, subject); err != nil {
		return fmt.Errorf("auth: clearing the failed logins of %s %q: %w", kind, subject, err)
	}
	if _, err := s.db.ExecContext(ctx, s.q.failurePrune, s.sched, nanos(now.Add(-LoginFailureWindow))); err != nil {
		return fmt.Errorf("auth: deleting old failed logins: %w", err)
	}
	return nil
}
