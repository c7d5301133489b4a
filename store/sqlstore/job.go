package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/chime-scheduler/chime/store"
)

// jobUpsertSQL replaces a job, keeping its triggers.
func (d *dialect) jobUpsertSQL() string {
	return sqlJobInsert + d.upsert("{p}jobs", "sched_name, job_group, job_name", []string{
		"job_type", "description", "durable", "requests_recovery", "disallow_concurrent",
		"persist_data", "timeout_ns", "job_data",
	})
}

// sqlJobUpdateIfVersion replaces a job only when it is stored with the
// expected version: the compare and the set are one statement.
const sqlJobUpdateIfVersion = `UPDATE {p}jobs SET job_type = ?, description = ?, durable = ?, ` +
	`requests_recovery = ?, disallow_concurrent = ?, persist_data = ?, timeout_ns = ?, job_data = ?, ` +
	`version = version + 1 WHERE sched_name = ? AND job_group = ? AND job_name = ? AND version = ?`

// JobUpsert stores a job. Without Replace an existing key fails with
// [store.ErrJobExists]. Replacing keeps the job's triggers. A non-zero
// ExpectVersion replaces only a job stored with that version.
func (s *Store) JobUpsert(ctx context.Context, p *store.JobUpsertParams) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	j := &p.Job
	if err := checkJSON("job data", j.Data); err != nil {
		return err
	}
	if p.ExpectVersion != 0 {
		return s.jobUpdateIfVersion(ctx, j, p.ExpectVersion)
	}
	tmpl := sqlJobInsert
	if p.Replace {
		tmpl = s.d.jobUpsertSQL()
	}
	err := s.write(ctx, "storing a job", func(tx *txn) error {
		_, err := tx.exec(tmpl, s.sched, j.Key.Group, j.Key.Name, j.Type, j.Description, j.Durable,
			j.RequestsRecovery, j.DisallowConcurrent, j.PersistData, int64(j.Timeout), jsonArg(j.Data))
		return err
	})
	return s.translate("storing job "+j.Key.String(), err, nil, store.ErrJobExists)
}

// jobUpdateIfVersion replaces job j when its stored version is want. When
// the update matches no row, the job is read in the same transaction to
// tell a missing job from a changed one.
func (s *Store) jobUpdateIfVersion(ctx context.Context, j *store.JobRecord, want int64) error {
	err := s.write(ctx, "storing a job", func(tx *txn) error {
		n, err := tx.exec(sqlJobUpdateIfVersion, j.Type, j.Description, j.Durable, j.RequestsRecovery,
			j.DisallowConcurrent, j.PersistData, int64(j.Timeout), jsonArg(j.Data),
			s.sched, j.Key.Group, j.Key.Name, want)
		if err != nil || n == 1 {
			return err
		}
		cur, err := scanJob(tx.queryRow(sqlJobGet, s.sched, j.Key.Group, j.Key.Name))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w (storing job %s)", store.ErrJobNotFound, j.Key)
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: job %s is at version %d, not %d", store.ErrVersionMismatch, j.Key, cur.Version, want)
	})
	if errors.Is(err, store.ErrVersionMismatch) {
		return err
	}
	return s.translate("storing job "+j.Key.String(), err, nil, nil)
}

// JobGet returns a job or [store.ErrJobNotFound].
func (s *Store) JobGet(ctx context.Context, key store.Key) (*store.JobRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	j, err := scanJob(s.db.QueryRowContext(ctx, s.q(sqlJobGet), s.sched, key.Group, key.Name))
	if err != nil {
		return nil, s.translate("reading job "+key.String(), err, store.ErrJobNotFound, nil)
	}
	return &j, nil
}

// JobDelete deletes a job and all its triggers, and reports whether the job
// existed.
func (s *Store) JobDelete(ctx context.Context, key store.Key) (bool, error) {
	if err := s.enter(ctx); err != nil {
		return false, err
	}
	var existed bool
	err := s.write(ctx, "deleting a job", func(tx *txn) error {
		n, err := tx.exec(sqlJobDelete, s.sched, key.Group, key.Name)
		if err != nil || n == 0 {
			existed = false
			return err
		}
		existed = true
		_, err = tx.exec(sqlJobTriggersDelete, s.sched, key.Group, key.Name)
		return err
	})
	if err != nil {
		return false, s.translate("deleting job "+key.String(), err, nil, nil)
	}
	return existed, nil
}

// JobList returns the jobs of a group ("" for all), ordered by key.
func (s *Store) JobList(ctx context.Context, p *store.JobListParams) ([]store.JobRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	var (
		rows *sql.Rows
		err  error
	)
	if p.Group == "" {
		rows, err = s.db.QueryContext(ctx, s.q(sqlJobList), s.sched)
	} else {
		rows, err = s.db.QueryContext(ctx, s.q(sqlJobListGroup), s.sched, p.Group)
	}
	jobs, err := collect(rows, err, scanJob)
	if err != nil {
		return nil, s.translate("listing jobs", err, nil, nil)
	}
	return jobs, nil
}

// lockJob reads a job under an exclusive row lock, or returns nil when it
// does not exist. The writes that decide whether a non-concurrent job is
// busy (fire, complete, release, recovery) take this lock first, so they
// never decide on a stale view of its executions.
func (tx *txn) lockJob(key store.Key) (*store.JobRecord, error) {
	j, err := scanJob(tx.queryRow(sqlJobGetForUpdate, tx.s.sched, key.Group, key.Name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &j, nil
}

// jobRunning reports whether the job has an EXECUTING or RECOVERABLE
// execution.
func (tx *txn) jobRunning(key store.Key) (bool, error) {
	var id string
	err := tx.queryRow(sqlJobRunning, tx.s.sched, key.Group, key.Name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// jobBusy reports whether j disallows concurrency and runs, so that its
// triggers must stay blocked. The caller holds j's row lock.
func (tx *txn) jobBusy(j *store.JobRecord) (bool, error) {
	if j == nil || !j.DisallowConcurrent {
		return false, nil
	}
	return tx.jobRunning(j.Key)
}

// unblockJob moves the job's BLOCKED triggers to WAITING and PAUSED_BLOCKED
// ones to PAUSED, unless the job is still busy. It locks the job row.
func (tx *txn) unblockJob(key store.Key) error {
	j, err := tx.lockJob(key)
	if err != nil {
		return err
	}
	busy, err := tx.jobBusy(j)
	if err != nil || busy {
		return err
	}
	_, err = tx.execWake(sqlJobUnblock, tx.s.sched, key.Group, key.Name)
	return err
}

// deleteJobIfOrphan deletes the job when it is not durable and has no
// trigger left.
func (tx *txn) deleteJobIfOrphan(key store.Key) error {
	_, err := tx.exec(sqlJobDeleteIfOrphan, tx.s.sched, key.Group, key.Name, tx.s.sched, key.Group, key.Name)
	if err != nil {
		return fmt.Errorf("deleting orphan job %s: %w", key, err)
	}
	return nil
}
