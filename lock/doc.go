// Package lock runs a function on at most one process of a cluster at a
// time, under a lease lock kept on the store's database: ShedLock for Go.
//
//	err := lock.Run(ctx, st, "nightly-export",
//		lock.Options{AtMostFor: 10 * time.Minute, AtLeastFor: 30 * time.Second},
//		func(ctx context.Context, lease lock.Lease) error {
//			return export(ctx, lease.Token)
//		})
//	if errors.Is(err, lock.ErrHeld) {
//		// another process is exporting: skipped
//	}
//
// st is the [sqlstore.Store] the scheduler already uses (SQLite,
// PostgreSQL or MySQL/MariaDB). Locks are named per scheduler name: a lock
// of the same name and [sqlstore.Options.SchedulerName] is one lock
// wherever it is taken. A program that takes locks repeatedly keeps a
// [Locker] from [New], which migrates the lock table once.
//
// # The protocol
//
// Each lock is one row of {prefix}lock_leases, created on its first
// acquisition and never deleted. All lease times are the database's clock,
// never the caller's, so processes whose clocks disagree still agree on
// who holds a lock.
//
//  1. Acquire: one UPDATE takes the row if its lease has lapsed
//     (locked_until <= now), raising its token by one and setting
//     locked_until to now + AtMostFor. Of two racing acquirers only one
//     matches the row: the other's UPDATE waits for the row and re-checks
//     the condition on the new version. Run calls fn only when it matched.
//  2. Renew: while fn runs, every third of AtMostFor, an UPDATE sets
//     locked_until to now + AtMostFor if the row still has this token and
//     its lease has not lapsed. A refused renewal cancels fn's context
//     with cause [ErrLost].
//  3. Bound: the lease is sure to hold until AtMostFor after the last
//     renewal confirmed was sent (by the caller's monotonic clock). When
//     that passes without a newer confirmation (the database is
//     unreachable, or the process was paused) fn's context is cancelled
//     with cause ErrLost, as the database may have let the lease lapse.
//  4. Release: when fn returns, an UPDATE sets locked_until to the later
//     of now and the acquisition + AtLeastFor, if the lease is still this
//     token's.
//
// AtMostFor therefore bounds how long a holder that stopped renewing (it
// died, hung, or lost its database) keeps the lock, not how long fn may
// run: a live fn keeps its lease for as long as it runs.
//
// # Fencing tokens
//
// Cancelling fn's context does not stop a process that is paused (a
// garbage collection, SIGSTOP, a VM migration) from making one more write
// when it resumes, after its lease lapsed and another holder took the lock.
// The lease's [Lease.Token] grows by one with every acquisition of the
// lock, across restarts: hand it to fn's writes and have the system they
// write to refuse a token lower than the highest it has seen, for example
//
//	UPDATE export_state SET ..., token = ? WHERE id = ? AND token <= ?
//
// and such a late write changes nothing.
package lock
