package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/server/alert"
)

// alertState is the alert state the nodes of a cluster share, in the
// tables of the runner component (migration 4): the dead-man records
// (an alert.DeadManState), the jobs whose failure was alerted, and the
// alerts claimed once cluster-wide. Every alert it hands out is claimed by
// one statement whose outcome only one node can see as a win: a
// conditional UPDATE, an INSERT under a primary key, or a DELETE.
type alertState struct {
	st *stateStore
	q  struct {
		deadInsert, deadGet, deadClaim, deadList, deadDelete string
		failInsert, failDelete                               string
		claimInsert, claimPrune                              string
	}
}

func newAlertState(st *stateStore) *alertState {
	a := &alertState{st: st}
	r := st.st.SQL
	a.q.deadInsert = r("INSERT INTO {p}runner_alert_deadman (sched_name, job_group, job_name, first_seen, base_time, " +
		"windows, alerted_time) VALUES (?, ?, ?, ?, 0, 0, 0)")
	a.q.deadGet = r("SELECT first_seen, base_time, windows, alerted_time FROM {p}runner_alert_deadman " +
		"WHERE sched_name = ? AND job_group = ? AND job_name = ?")
	a.q.deadClaim = r("UPDATE {p}runner_alert_deadman SET base_time = ?, windows = ?, alerted_time = ? " +
		"WHERE sched_name = ? AND job_group = ? AND job_name = ? AND base_time = ? AND windows = ?")
	a.q.deadList = r("SELECT job_group, job_name FROM {p}runner_alert_deadman WHERE sched_name = ?")
	a.q.deadDelete = r("DELETE FROM {p}runner_alert_deadman WHERE sched_name = ? AND job_group = ? AND job_name = ?")
	a.q.failInsert = r("INSERT INTO {p}runner_alert_failing (sched_name, job_group, job_name, alerted_time) VALUES (?, ?, ?, ?)")
	a.q.failDelete = r("DELETE FROM {p}runner_alert_failing WHERE sched_name = ? AND job_group = ? AND job_name = ?")
	a.q.claimInsert = r("INSERT INTO {p}runner_alert_claims (sched_name, claim, claimed_time) VALUES (?, ?, ?)")
	a.q.claimPrune = r("DELETE FROM {p}runner_alert_claims WHERE sched_name = ? AND claimed_time < ?")
	return a
}

// nanos is t as the tables keep instants: Unix nanoseconds, 0 for the
// zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// instant is the inverse of nanos.
func instant(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// DeadManLoad implements alert.DeadManState.
func (a *alertState) DeadManLoad(ctx context.Context, key alert.JobKey, now time.Time) (alert.DeadManRecord, error) {
	s := a.st
	var first, base, windows, alerted int64
	err := s.db.QueryRowContext(ctx, a.q.deadGet, s.sched, key.Group, key.Name).Scan(&first, &base, &windows, &alerted)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = s.db.ExecContext(ctx, a.q.deadInsert, s.sched, key.Group, key.Name, nanos(now))
		if err != nil && !s.st.IsUniqueViolation(err) {
			return alert.DeadManRecord{}, fmt.Errorf("server: recording the dead-man watch of job %s: %w", key, err)
		}
		// Inserted, here or by another node meanwhile: read what won.
		err = s.db.QueryRowContext(ctx, a.q.deadGet, s.sched, key.Group, key.Name).Scan(&first, &base, &windows, &alerted)
	}
	if err != nil {
		return alert.DeadManRecord{}, fmt.Errorf("server: reading the dead-man record of job %s: %w", key, err)
	}
	return alert.DeadManRecord{FirstSeen: instant(first), Base: instant(base), Windows: windows, AlertedAt: instant(alerted)}, nil
}

// DeadManClaim implements alert.DeadManState.
func (a *alertState) DeadManClaim(ctx context.Context, key alert.JobKey, prev, next alert.DeadManRecord) (bool, error) {
	s := a.st
	res, err := s.db.ExecContext(ctx, a.q.deadClaim, nanos(next.Base), next.Windows, nanos(next.AlertedAt),
		s.sched, key.Group, key.Name, nanos(prev.Base), prev.Windows)
	if err != nil {
		return false, fmt.Errorf("server: claiming the dead-man alert of job %s: %w", key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("server: claiming the dead-man alert of job %s: %w", key, err)
	}
	return n == 1, nil
}

// DeadManForget implements alert.DeadManState.
func (a *alertState) DeadManForget(ctx context.Context, keep map[alert.JobKey]bool) error {
	s := a.st
	rows, err := s.db.QueryContext(ctx, a.q.deadList, s.sched)
	if err != nil {
		return fmt.Errorf("server: listing dead-man records: %w", err)
	}
	var gone []alert.JobKey
	for rows.Next() {
		var k alert.JobKey
		if err := rows.Scan(&k.Group, &k.Name); err != nil {
			rows.Close()
			return fmt.Errorf("server: listing dead-man records: %w", err)
		}
		if !keep[k] {
			gone = append(gone, k)
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("server: listing dead-man records: %w", err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("server: listing dead-man records: %w", err)
	}
	for _, k := range gone {
		if _, err := s.db.ExecContext(ctx, a.q.deadDelete, s.sched, k.Group, k.Name); err != nil {
			return fmt.Errorf("server: forgetting the dead-man record of job %s: %w", k, err)
		}
	}
	return nil
}

// markFailing records that the job's failure was alerted at at. It
// reports false when the job was already marked: another failure of the
// same streak was alerted, on this node or another.
func (a *alertState) markFailing(ctx context.Context, group, name string, at time.Time) (bool, error) {
	s := a.st
	_, err := s.db.ExecContext(ctx, a.q.failInsert, s.sched, group, name, nanos(at))
	switch {
	case err == nil:
		return true, nil
	case s.st.IsUniqueViolation(err):
		return false, nil
	}
	return false, fmt.Errorf("server: marking job %s.%s failing: %w", group, name, err)
}

// clearFailing removes the job's failing mark, and reports whether this
// call did: the node that removes it sends the recovery alert.
func (a *alertState) clearFailing(ctx context.Context, group, name string) (bool, error) {
	s := a.st
	res, err := s.db.ExecContext(ctx, a.q.failDelete, s.sched, group, name)
	if err != nil {
		return false, fmt.Errorf("server: clearing the failing mark of job %s.%s: %w", group, name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("server: clearing the failing mark of job %s.%s: %w", group, name, err)
	}
	return n == 1, nil
}

// claim claims the alert named claim cluster-wide, and reports whether
// this call did: of all the nodes that try, one wins.
func (a *alertState) claim(ctx context.Context, claim string, at time.Time) (bool, error) {
	s := a.st
	_, err := s.db.ExecContext(ctx, a.q.claimInsert, s.sched, claim, nanos(at))
	switch {
	case err == nil:
		return true, nil
	case s.st.IsUniqueViolation(err):
		return false, nil
	}
	return false, fmt.Errorf("server: claiming alert %s: %w", claim, err)
}

// pruneClaims forgets the claims made before cut.
func (a *alertState) pruneClaims(ctx context.Context, cut time.Time) error {
	s := a.st
	if _, err := s.db.ExecContext(ctx, a.q.claimPrune, s.sched, nanos(cut)); err != nil {
		return fmt.Errorf("server: pruning alert claims: %w", err)
	}
	return nil
}
