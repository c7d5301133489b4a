package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// jobUpsertSQL replaces a job, keeping its triggers.
func (d *dialect) jobUpsertSQL() string {
	return sqlJobInsert + d.upsert("{p}jobs", "sched_name, job_group, job_name", []string{
		"job_type", "description", "durable", "requests_recovery", "disallow_concurrent",
		"persist_data", "timeout_ns", "job_data", "job_meta",
	})
}

// sqlJobUpdateIfVersion replaces a job only when it is stored with the
// expected version: the compare and the set are one statement.
const sqlJobUpdateIfVersion = `UPDATE {p}jobs SET job_type = ?, description = ?, durable = ?, ` +
	`requests_recovery = ?, disallow_concurrent = ?, persist_data = ?, timeout_ns = ?, job_data = ?, ` +
	`job_meta = ?, version = version + 1 WHERE sched_name = ? AND job_group = ? AND job_name = ? AND version = ?`

// JobUpsert stores a job. Without Replace an existing key fails with
// [store.ErrJobExists]. Replacing keeps the job's triggers. A non-zero
// IfVersion replaces only a job stored with that version.
func (s *Store) JobUpsert(ctx context.Context, p *store.JobUpsertParams) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	j := &p.Job
	if err := checkJob(j); err != nil {
		return err
	}
	err := s.write(ctx, "storing a job", func(tx *txn) error {
		return tx.putJob(j, p.Replace, p.IfVersion)
	})
	return s.translate("storing job "+j.Key.String(), err, nil, store.ErrJobExists)
}

// checkJob refuses a job the store cannot hold, before any transaction.
func checkJob(j *store.JobRecord) error {
	if err := checkJSON("data of job "+j.Key.String(), j.Data); err != nil {
		return err
	}
	return checkJSON("meta of job "+j.Key.String(), j.Meta)
}

// putJob writes job j as JobUpsert does with replace and expect.
func (tx *txn) putJob(j *store.JobRecord, replace bool, expect int64) error {
	if expect != 0 {
		return tx.jobUpdateIfVersion(j, expect)
	}
	tmpl := sqlJobInsert
	if replace {
		tmpl = tx.s.d.jobUpsertSQL()
	}
	_, err := tx.exec(tmpl, tx.s.sched, j.Key.Group, j.Key.Name, j.Type, j.Description, j.Durable,
		j.RequestsRecovery, j.DisallowConcurrent, j.PersistData, int64(j.Timeout), jsonArg(j.Data), jsonArg(j.Meta))
	if tx.s.d.classify(err).unique {
		return fmt.Errorf("%w: %s", store.ErrJobExists, j.Key)
	}
	return err
}

// jobUpdateIfVersion replaces job j when its stored version is want. When
// the update matches no row, the job is read in the same transaction to
// tell a missing job from a changed one.
func (tx *txn) jobUpdateIfVersion(j *store.JobRecord, want int64) error {
	s := tx.s
	n, err := tx.exec(sqlJobUpdateIfVersion, j.Type, j.Description, j.Durable, j.RequestsRecovery,
		j.DisallowConcurrent, j.PersistData, int64(j.Timeout), jsonArg(j.Data), jsonArg(j.Meta),
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
}

// JobWrite stores a job with changes to its triggers in one transaction;
// see [store.JobStore]. It takes its locks in the order TriggerInsert and
// TriggerFire take theirs: the paused-group rows of the new triggers
// (shared), the rows of the job's triggers and of the new triggers' keys
// (exclusive, in key order), then the job row, which it writes.
func (s *Store) JobWrite(ctx context.Context, p *store.JobWriteParams) (*store.JobWriteResult, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalid, err)
	}
	j := &p.Job
	if err := checkJob(j); err != nil {
		return nil, err
	}
	var groups []string
	for i := range p.Triggers {
		rec := &p.Triggers[i]
		if err := checkTrigger(rec); err != nil {
			return nil, err
		}
		if !rec.NextFireTime.IsZero() && !slices.Contains(groups, rec.Key.Group) {
			groups = append(groups, rec.Key.Group)
		}
	}
	slices.Sort(groups)
	replace := p.Replace || p.IfVersion != 0
	if !replace {
		return s.jobWriteNew(ctx, p)
	}
	var deleted []store.Key
	err := s.write(ctx, "writing a job", func(tx *txn) error {
		deleted = nil
		paused := make(map[string]bool, len(groups))
		for _, g := range groups {
			var err error
			if paused[g], err = tx.pausedOfInsert(g, j.Key.Group); err != nil {
				return err
			}
		}
		rows, err := tx.query(sqlJobTriggerKeysForUpdate, s.sched, j.Key.Group, j.Key.Name)
		owned, err := collect(rows, err, scanKey)
		if err != nil {
			return err
		}
		exists := make(map[store.Key]bool, len(owned)+len(p.Triggers))
		for _, k := range owned {
			exists[k] = true
		}
		others := make([]store.Key, 0, len(p.Triggers))
		for i := range p.Triggers {
			if k := p.Triggers[i].Key; !exists[k] {
				others = append(others, k)
			}
		}
		slices.SortFunc(others, keyCompare)
		for _, k := range others {
			_, err := scanTrigger(tx.queryRow(sqlTriggerGetForUpdate, s.sched, k.Group, k.Name))
			switch {
			case err == nil:
				exists[k] = true
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		if err := tx.putJob(j, p.Replace, p.IfVersion); err != nil {
			return err
		}
		for _, k := range p.DeleteTriggers {
			if !slices.Contains(owned, k) || !exists[k] {
				continue
			}
			if _, err := tx.exec(sqlTriggerDelete, s.sched, k.Group, k.Name); err != nil {
				return err
			}
			exists[k] = false
			deleted = append(deleted, k)
		}
		for i := range p.Triggers {
			rec := &p.Triggers[i]
			inPause := paused[rec.Key.Group]
			switch p.Pause {
			case store.PauseTriggers:
				inPause = true
			case store.ResumeTriggers:
				inPause = false
			}
			if err := tx.putTrigger(rec, j, exists[rec.Key], replace, inPause); err != nil {
				return err
			}
		}
		if err := tx.pauseJob(j.Key, p.Pause); err != nil {
			return err
		}
		if len(deleted) > 0 {
			return tx.deleteJobIfOrphan(j.Key)
		}
		return nil
	})
	if err != nil {
		return nil, s.translate("writing job "+j.Key.String(), err, nil, nil)
	}
	return &store.JobWriteResult{Deleted: deleted}, nil
}

// jobWriteNew is JobWrite of a job that must not exist yet, written as
// JobsInsert writes one job: nothing of the job is stored, so there are
// no triggers of it to lock or delete (DeleteTriggers names none of its
// triggers), and the INSERTs themselves refuse a taken job or trigger
// key. That saves two of the statements of a replacing write, the
// locking reads of the job's triggers and of the new triggers' keys,
// and the pause or resume of the job's triggers, decided on insert.
func (s *Store) jobWriteNew(ctx context.Context, p *store.JobWriteParams) (*store.JobWriteResult, error) {
	e := &store.JobInsert{Job: p.Job, Triggers: p.Triggers, Pause: p.Pause}
	if err := s.insertCombined(ctx, e); err != nil {
		return nil, s.translate("writing job "+p.Job.Key.String(), err, nil, nil)
	}
	return &store.JobWriteResult{}, nil
}

// pauseJob pauses or resumes every trigger of a job, as TriggersPause and
// TriggersResume with a Job selector do.
func (tx *txn) pauseJob(key store.Key, change store.PauseChange) error {
	where, args, err := selectorWhere(&store.TriggerSelector{Job: &key})
	if err != nil {
		return err
	}
	args = append([]any{tx.s.sched}, args...)
	switch change {
	case store.PauseTriggers:
		_, err = tx.exec(sqlPauseTriggers+where, args...)
	case store.ResumeTriggers:
		_, err = tx.execWake(sqlResumeTriggers+where+`{wake}`, args...)
	}
	return err
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

// JobList returns a page of the jobs of a group ("" for all), ordered by
// key; see [store.JobStore]. The conditions on the key are written so that
// every dialect reads the page as a range of the primary key index.
func (s *Store) JobList(ctx context.Context, p *store.JobListParams) ([]store.JobRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if p.Limit < 0 {
		return nil, fmt.Errorf("sqlstore: listing jobs: %w: limit %d is negative", errInvalid, p.Limit)
	}
	q := `SELECT ` + jobCols + ` FROM {p}jobs WHERE sched_name = ?`
	args := []any{s.sched}
	if p.Group != "" {
		q += ` AND job_group = ?`
		args = append(args, p.Group)
	}
	if p.After != (store.Key{}) {
		// Row-value comparisons would say this more briefly, but not every
		// engine turns them into an index range; the leading >= does.
		q += ` AND job_group >= ? AND (job_group > ? OR job_name > ?)`
		args = append(args, p.After.Group, p.After.Group, p.After.Name)
	}
	q += ` ORDER BY job_group, job_name`
	if p.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, p.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
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

// rearm re-arms the fixed-delay trigger key, when it awaits its run, at
// end plus its delay (sqlTriggerRearm).
func (tx *txn) rearm(key store.Key, end time.Time) error {
	at := end.Truncate(time.Millisecond).UnixNano()
	_, err := tx.execWake(sqlTriggerRearm, at, at, at, tx.s.sched, key.Group, key.Name)
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
