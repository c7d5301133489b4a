package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/store"
)

var _ store.Batcher = (*Store)(nil)

// errBatchConflict aborts a batch whose executions hit the unique key of a
// firing: the batch is then fired one firing per transaction, which tells
// exactly which one was fired already.
var errBatchConflict = errors.New("sqlstore: a firing of the batch was recorded already")

// TriggersFire fires several acquired triggers in one transaction; see
// [store.Batcher]. Its statements do not grow with the batch: one lease
// check, one locking read of the triggers, one read of their jobs, one
// INSERT of the executions and one UPDATE of the triggers' timing. A
// trigger whose job disallows concurrency is fired as TriggerFire fires it,
// in the same transaction.
//
// When an execution of the batch hits the unique key on (trigger,
// scheduled time), which the claim check makes impossible unless something
// else failed, the transaction is rolled back and each firing is made in
// its own transaction, so that only that firing reports
// [store.ErrAlreadyFired]. A store failure met then is reported in the
// outcome of the firing it hit, and of each one after it.
//
// Firing leaves triggers WAITING without notifying the other nodes (see
// WatchTriggers): the node that fired them claims them again itself.
func (s *Store) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	out := make([]store.TriggerFireOutcome, len(p.Firings))
	var todo []int
	for i := range p.Firings {
		if err := checkFiring(&p.Firings[i]); err != nil {
			out[i].Err = err
			continue
		}
		todo = append(todo, i)
	}
	ids := make([]string, len(p.Firings))
	err := s.write(ctx, "firing triggers", func(tx *txn) error {
		for _, i := range todo {
			out[i], ids[i] = store.TriggerFireOutcome{}, ""
		}
		if err := tx.leaseCustomPlans(p.Lease); err != nil {
			return err
		}
		return tx.fireBatch(p.Lease, p.Firings, todo, out, ids)
	})
	if errors.Is(err, errBatchConflict) {
		return s.fireEach(ctx, p, todo, out), nil
	}
	if err != nil {
		return nil, s.translate("firing triggers", err, nil, nil)
	}
	fired := 0
	for _, i := range todo {
		if ids[i] != "" {
			p.Firings[i].Execution.ID = ids[i]
			fired++
		}
	}
	s.sawFirings(fired)
	return out, nil
}

// fireEach fires the firings todo one per transaction.
func (s *Store) fireEach(ctx context.Context, p *store.TriggersFireParams, todo []int, out []store.TriggerFireOutcome) []store.TriggerFireOutcome {
	for _, i := range todo {
		f := &p.Firings[i]
		fp := &store.TriggerFireParams{Lease: p.Lease, Trigger: f.Trigger, Execution: f.Execution}
		out[i].Result, out[i].Err = s.TriggerFire(ctx, fp)
		f.Execution.ID = fp.Execution.ID
	}
	return out
}

// fireBatch fires the firings todo in the transaction, filling out and
// the generated execution IDs.
func (tx *txn) fireBatch(l store.Lease, firings []store.TriggerFiring, todo []int, out []store.TriggerFireOutcome, ids []string) error {
	s := tx.s
	keys := make([]store.Key, len(todo))
	for n, i := range todo {
		keys[n] = firings[i].Trigger.Key
	}
	where, args := s.d.keysWhere("trigger_group", "trigger_name", keys, []any{s.sched})
	rows, err := tx.QueryContext(tx.ctx, s.d.render(s.prefix, `SELECT `+claimCols+` FROM {p}triggers WHERE sched_name = ? AND `+
		where+` ORDER BY trigger_group, trigger_name{update}`), args...)
	locked, err := collect(rows, err, scanClaim)
	if err != nil {
		return err
	}
	triggers := make(map[store.Key]store.TriggerRecord, len(locked))
	var jobKeys []store.Key
	for _, t := range locked {
		triggers[t.Key] = t
		jobKeys = append(jobKeys, t.JobKey)
	}
	jobs, err := tx.jobs(jobKeys)
	if err != nil {
		return err
	}
	var batch []int // the firings of jobs that allow concurrency
	seen := make(map[store.Key]bool, len(todo))
	for _, i := range todo {
		f := &firings[i]
		key := f.Trigger.Key
		t, ok := triggers[key]
		switch {
		case !ok:
			out[i].Err = fmt.Errorf("%w: trigger %s no longer exists", store.ErrNotClaimed, key)
			continue
		case seen[key]:
			out[i].Err = fmt.Errorf("%w: trigger %s fired earlier in the same batch", store.ErrNotClaimed, key)
			continue
		case t.State != store.StateAcquired || t.ClaimedBy != l.NodeID || t.ClaimEpoch != l.Epoch:
			out[i].Err = fmt.Errorf("%w: trigger %s is %s (claimed by %q epoch %d)",
				store.ErrNotClaimed, key, t.State, t.ClaimedBy, t.ClaimEpoch)
			continue
		}
		seen[key] = true
		job, ok := jobs[t.JobKey]
		if !ok {
			return fmt.Errorf("reading job %s of trigger %s: job not found", t.JobKey, key)
		}
		if job.DisallowConcurrent {
			fired := *f
			res, err := tx.fire(l, &fired, t, job)
			if isStoreError(err) {
				out[i].Err = err
				continue
			}
			if err != nil {
				return err
			}
			out[i].Result, ids[i] = res, fired.Execution.ID
			continue
		}
		if f.Execution.ID == "" {
			ids[i] = newExecutionID()
		} else {
			ids[i] = f.Execution.ID
		}
		batch = append(batch, i)
	}
	if len(batch) == 0 {
		return nil
	}
	if err := tx.insertExecutions(l, firings, batch, triggers, jobs, ids); err != nil {
		return err
	}
	if err := tx.setTimings(firings, batch, jobs, triggers); err != nil {
		return err
	}
	for _, i := range batch {
		job := jobs[triggers[firings[i].Trigger.Key].JobKey]
		out[i].Result = &store.TriggerFireResult{Job: job}
	}
	return nil
}

// leaseCustomPlans checks the lease as lease does and makes PostgreSQL
// plan each statement of the rest of the transaction for its arguments,
// in the lease check's statement (sqlNodeLeaseShareCustomPlans: the
// set_config of SET LOCAL plan_cache_mode = force_custom_plan), which
// saves a batch a round trip. A batch's statements list the keys of the
// batch, and after five runs of one text PostgreSQL may switch to a
// generic plan, which cannot tell that a list of a few hundred keys
// selects a few hundred rows: with 20,000 triggers, batches of 256 took
// ten times longer under the generic plans.
func (tx *txn) leaseCustomPlans(l store.Lease) error {
	if tx.s.d.name != Postgres {
		return tx.lease(l)
	}
	return tx.checkLease(sqlNodeLeaseShareCustomPlans, l)
}

// claimCols are the columns of a trigger that firing it reads: its keys,
// its claim, its priority and its re-arm delay.
const claimCols = `trigger_group, trigger_name, job_group, job_name, priority, state, claimed_by, claim_epoch, rearm_delay_ms`

// scanClaim reads claimCols into a trigger record.
func scanClaim(sc scanner) (store.TriggerRecord, error) {
	var (
		t       store.TriggerRecord
		state   string
		rearmMs int64
	)
	err := sc.Scan(&t.Key.Group, &t.Key.Name, &t.JobKey.Group, &t.JobKey.Name, &t.Priority, &state, &t.ClaimedBy, &t.ClaimEpoch, &rearmMs)
	t.State = store.TriggerState(state)
	t.RearmDelay = time.Duration(rearmMs) * time.Millisecond
	return t, err
}

// jobs reads the jobs with the given keys, without locking them.
func (tx *txn) jobs(keys []store.Key) (map[store.Key]store.JobRecord, error) {
	out := make(map[store.Key]store.JobRecord, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	s := tx.s
	where, args := s.d.keysWhere("job_group", "job_name", keys, []any{s.sched})
	rows, err := tx.QueryContext(tx.ctx, s.d.render(s.prefix, `SELECT `+jobCols+` FROM {p}jobs WHERE sched_name = ? AND `+where), args...)
	list, err := collect(rows, err, scanJob)
	if err != nil {
		return nil, err
	}
	for _, j := range list {
		out[j.Key] = j
	}
	return out, nil
}

// jobsBlocked is jobs that also tells which of the jobs have a BLOCKED
// or PAUSED_BLOCKED trigger, in the same statement.
func (tx *txn) jobsBlocked(keys []store.Key) (map[store.Key]store.JobRecord, map[store.Key]bool, error) {
	out := make(map[store.Key]store.JobRecord, len(keys))
	blocked := make(map[store.Key]bool)
	if len(keys) == 0 {
		return out, blocked, nil
	}
	s := tx.s
	where, args := s.d.keysWhere("job_group", "job_name", keys, []any{s.sched})
	rows, err := tx.QueryContext(tx.ctx, s.d.render(s.prefix, `SELECT `+jobCols+`, EXISTS (SELECT 1 FROM {p}triggers t{use:triggers_job} `+
		`WHERE t.job_group = j.job_group AND t.job_name = j.job_name AND t.sched_name = j.sched_name `+
		`AND t.state IN ('BLOCKED', 'PAUSED_BLOCKED') AND NOT (t.rearm_delay_ms > 0 AND t.next_fire_time IS NULL)) `+
		`FROM {p}jobs j WHERE sched_name = ? AND `+where), args...)
	type jobBlocked struct {
		job     store.JobRecord
		blocked bool
	}
	list, err := collect(rows, err, func(sc scanner) (jobBlocked, error) {
		var jb jobBlocked
		j, err := scanJob(extraScan{sc, &jb.blocked})
		jb.job = j
		return jb, err
	})
	if err != nil {
		return nil, nil, err
	}
	for _, jb := range list {
		out[jb.job.Key] = jb.job
		blocked[jb.job.Key] = jb.blocked
	}
	return out, blocked, nil
}

// extraScan is a scanner whose rows have one more column, at the end,
// than its reader scans: Scan reads it into extra.
type extraScan struct {
	sc    scanner
	extra any
}

// Scan reads the row into dest and the extra column.
func (e extraScan) Scan(dest ...any) error {
	return e.sc.Scan(append(dest, e.extra)...)
}

// insertExecutions records the firings batch in one INSERT. A firing
// recorded already fails it with errBatchConflict.
func (tx *txn) insertExecutions(l store.Lease, firings []store.TriggerFiring, batch []int, triggers map[store.Key]store.TriggerRecord, jobs map[store.Key]store.JobRecord, ids []string) error {
	s := tx.s
	if s.d.name == Postgres {
		return tx.insertExecutionsArrays(l, firings, batch, triggers, jobs, ids)
	}
	const row = `(?, ?, ?, ?, ?, ?, ?, COALESCE(?, {now}), NULL, ?, ?, 'EXECUTING', FALSE, ?, ?, '')`
	var b strings.Builder
	b.WriteString(`INSERT INTO {p}executions (sched_name, ` + execCols + `) VALUES `)
	args := make([]any, 0, 12*len(batch))
	for n, i := range batch {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
		f := &firings[i]
		t := triggers[f.Trigger.Key]
		job := jobs[t.JobKey]
		args = append(args, s.sched, ids[i], t.Key.Group, t.Key.Name, job.Key.Group, job.Key.Name,
			f.Execution.ScheduledTime.UnixNano(), nanos(f.Execution.FiredTime), l.NodeID, l.Epoch,
			job.RequestsRecovery, t.Priority)
	}
	_, err := tx.ExecContext(tx.ctx, s.d.render(s.prefix, b.String()), args...)
	if s.d.classify(err).unique {
		return errBatchConflict
	}
	return err
}

// executionRows are the columns of the executions a fire inserts that
// differ from one execution to the next (see insertExecutionsArrays).
var executionRows = []Column{
	{"id", ColumnText}, {"tg", ColumnText}, {"tn", ColumnText}, {"jg", ColumnText}, {"jn", ColumnText},
	{"st", ColumnBigInt}, {"ft", ColumnBigInt}, {"rr", ColumnBool}, {"pr", ColumnBigInt},
}

// sqlInsertExecutionsArrays inserts the executions of a fire on
// PostgreSQL from one array a column: the scheduler, node and epoch are
// the same for all.
var sqlInsertExecutionsArrays = `INSERT INTO {p}executions (sched_name, ` + execCols + `) ` +
	`SELECT ?, v.id, v.tg, v.tn, v.jg, v.jn, v.st, COALESCE(v.ft, {now}), NULL, ?, ?, 'EXECUTING', FALSE, ` +
	`v.rr, v.pr, '' FROM ` + Unnest(executionRows)

// insertExecutionsArrays is insertExecutions on PostgreSQL: one statement
// whose text is the same for every batch (see arrays.go).
func (tx *txn) insertExecutionsArrays(l store.Lease, firings []store.TriggerFiring, batch []int, triggers map[store.Key]store.TriggerRecord, jobs map[store.Key]store.JobRecord, ids []string) error {
	s := tx.s
	rows := make([][]any, len(batch))
	for n, i := range batch {
		f := &firings[i]
		t := triggers[f.Trigger.Key]
		job := jobs[t.JobKey]
		rows[n] = []any{ids[i], t.Key.Group, t.Key.Name, job.Key.Group, job.Key.Name,
			f.Execution.ScheduledTime.UnixNano(), nanos(f.Execution.FiredTime), job.RequestsRecovery, t.Priority}
	}
	arrays, err := ColumnArrays(executionRows, rows)
	if err != nil {
		return fmt.Errorf("inserting executions: %w", err)
	}
	args := append([]any{s.sched, l.NodeID, l.Epoch}, arrays...)
	_, err = tx.ExecContext(tx.ctx, s.d.render(s.prefix, sqlInsertExecutionsArrays), args...)
	if s.d.classify(err).unique {
		return errBatchConflict
	}
	return err
}

// setTimings stores the advanced timing of the firings batch in one
// UPDATE, each trigger COMPLETE when it will not fire again and WAITING
// otherwise (their jobs allow concurrency).
func (tx *txn) setTimings(firings []store.TriggerFiring, batch []int, jobs map[store.Key]store.JobRecord, triggers map[store.Key]store.TriggerRecord) error {
	s := tx.s
	rows := make([][]any, len(batch))
	for n, i := range batch {
		tm := &firings[i].Trigger
		job := jobs[triggers[tm.Key].JobKey]
		rows[n] = []any{tm.Key.Group, tm.Key.Name, nanos(tm.NextFireTime), nanos(tm.PreviousFireTime),
			int64(tm.TimesTriggered), nanos(tm.StartTime), nanos(tm.EndTime), jsonArg(tm.Schedule),
			tm.MisfireInstruction, string(firedState(tm, triggers[tm.Key].RearmDelay, &job))}
	}
	q, args, err := s.d.updateFromRows(timingRows, rows, s.sched)
	if err != nil {
		return err
	}
	n, err := tx.ExecContext(tx.ctx, s.d.render(s.prefix, q), args...)
	if err != nil {
		return err
	}
	if got, _ := n.RowsAffected(); got != int64(len(batch)) {
		return fmt.Errorf("stored the timing of %d of the %d triggers fired", got, len(batch))
	}
	return nil
}

// timingRows updates the timing of fired triggers.
var timingRows = rowsUpdate{
	table: "triggers",
	cols: []Column{
		{"g", ColumnText}, {"n", ColumnText}, {"next_fire", ColumnBigInt}, {"prev_fire", ColumnBigInt}, {"times", ColumnBigInt},
		{"start_t", ColumnBigInt}, {"end_t", ColumnBigInt}, {"sched", ColumnJSON}, {"misfire", ColumnText}, {"st", ColumnText},
	},
	match: "t.trigger_group = v.g AND t.trigger_name = v.n",
	set: "next_fire_time = v.next_fire, prev_fire_time = v.prev_fire, times_triggered = v.times, " +
		"start_time = v.start_t, end_time = v.end_t, schedule = {json:v.sched}, misfire_instruction = v.misfire, " +
		"state = v.st, claimed_by = '', claim_epoch = 0, version = t.version + 1",
}

// ExecutionsComplete records the end of several executions in one
// transaction; see [store.Batcher]. Completions with the instruction NOOP
// or DELETE_TRIGGER, no job data, and a job that allows concurrency (the
// common case) are recorded by statements that do not grow with the batch:
// one locking read of the executions, one read of their jobs, one UPDATE of
// the executions, one DELETE of the triggers to delete, one UPDATE that
// unblocks the jobs' triggers and one DELETE of the jobs left without
// triggers. The others are recorded as ExecutionComplete records them, in
// the same transaction.
func (s *Store) ExecutionsComplete(ctx context.Context, p *store.ExecutionsCompleteParams) ([]error, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	errs := make([]error, len(p.Completions))
	var todo []int
	for i := range p.Completions {
		if err := checkCompletion(&p.Completions[i]); err != nil {
			errs[i] = err
			continue
		}
		todo = append(todo, i)
	}
	err := s.write(ctx, "completing executions", func(tx *txn) error {
		for _, i := range todo {
			errs[i] = nil
		}
		if err := tx.leaseCustomPlans(p.Lease); err != nil {
			return err
		}
		return tx.completeBatch(p.Lease, p.Completions, todo, errs)
	})
	if err != nil {
		return nil, s.translate("completing executions", err, nil, nil)
	}
	return errs, nil
}

// completeBatch records the completions todo in the transaction, filling
// errs.
func (tx *txn) completeBatch(l store.Lease, completions []store.ExecutionCompletion, todo []int, errs []error) error {
	s := tx.s
	ids := make([]string, len(todo))
	for n, i := range todo {
		ids[n] = completions[i].ID
	}
	idsIn, args := s.d.in("id", ids, []any{s.sched})
	rows, err := tx.QueryContext(tx.ctx, s.d.render(s.prefix, `SELECT `+execCols+` FROM {p}executions `+
		`WHERE sched_name = ? AND `+idsIn+` ORDER BY id{update}`), args...)
	locked, err := collect(rows, err, scanExecution)
	if err != nil {
		return err
	}
	execs := make(map[string]store.ExecutionRecord, len(locked))
	var jobKeys []store.Key
	for _, e := range locked {
		execs[e.ID] = e
		jobKeys = append(jobKeys, e.JobKey)
	}
	jobs, blocked, err := tx.jobsBlocked(jobKeys)
	if err != nil {
		return err
	}
	var batch []int // completions recorded by the statements of the batch
	seen := make(map[string]bool, len(todo))
	for _, i := range todo {
		c := &completions[i]
		e, ok := execs[c.ID]
		switch {
		case !ok:
			errs[i] = fmt.Errorf("%w: %s", store.ErrExecutionNotFound, c.ID)
			continue
		case seen[c.ID]:
			errs[i] = fmt.Errorf("%w: %s was completed earlier in the same batch", store.ErrExecutionNotFound, c.ID)
			continue
		}
		seen[c.ID] = true
		if errs[i] = runsUnder(&e, l); errs[i] != nil {
			continue
		}
		job, hasJob := jobs[e.JobKey]
		simple := !c.Rearm && (c.Instruction == "" || c.Instruction == store.InstructionNoop || c.Instruction == store.InstructionDeleteTrigger) &&
			c.JobData == nil && (!hasJob || !job.DisallowConcurrent)
		if simple {
			batch = append(batch, i)
			continue
		}
		if err := tx.finish(&e, c); err != nil {
			return err
		}
	}
	if len(batch) == 0 {
		return nil
	}
	finished := make([][]any, len(batch))
	// deleted are the triggers the batch deletes, and ended the jobs
	// that may be left without one: only a deleted trigger leaves its
	// job an orphan (a trigger deleted otherwise takes its orphan job
	// with it, see deleteJobIfOrphan).
	var deleted, ended, jobsOf []store.Key
	for n, i := range batch {
		c := &completions[i]
		e := execs[c.ID]
		finished[n] = []any{c.ID, string(c.State), c.Error, nanos(c.FinishedTime)}
		if c.Instruction == store.InstructionDeleteTrigger {
			deleted = append(deleted, e.TriggerKey)
			if !slices.Contains(ended, e.JobKey) {
				ended = append(ended, e.JobKey)
			}
		}
		if !slices.Contains(jobsOf, e.JobKey) {
			jobsOf = append(jobsOf, e.JobKey)
		}
	}
	q, args, err := s.d.updateFromRows(finishRows, finished, s.sched)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(tx.ctx, s.d.render(s.prefix, q), args...); err != nil {
		return err
	}
	// The jobs allow concurrency: a trigger of theirs still BLOCKED (the
	// job disallowed concurrency when it fired) is free to fire. The read
	// of the jobs told which have one; most have none, and no UPDATE runs.
	var unblock []store.Key
	for _, k := range jobsOf {
		if blocked[k] {
			unblock = append(unblock, k)
		}
	}
	if len(unblock) > 0 {
		where, args := s.d.keysWhere("job_group", "job_name", unblock, []any{s.sched})
		if err := tx.execWakeRendered(s.d.render(s.prefix, sqlJobsUnblock+where+`{wake}`), args...); err != nil {
			return err
		}
	}
	return tx.deleteFinished(deleted, nonDurable(ended, jobs))
}

// nonDurable returns the keys among keys of the jobs that are not durable.
func nonDurable(keys []store.Key, jobs map[store.Key]store.JobRecord) []store.Key {
	var out []store.Key
	for _, k := range keys {
		if j, ok := jobs[k]; ok && !j.Durable {
			out = append(out, k)
		}
	}
	return out
}

// deleteFinished deletes the triggers that will not fire again and, of
// the jobs that are not durable, those left without a trigger. On
// PostgreSQL one statement does both, the triggers' DELETE in a WITH; the
// others send one statement each. The jobs' DELETE leaves out the deleted
// triggers by key, since in PostgreSQL it does not see the WITH's
// changes. (The triggers are read once for all the jobs: a NOT EXISTS
// correlated with each job row can be planned as a scan of all the
// triggers of the group per job.) MariaDB may still run the NOT IN as a
// lookup per job, its subquery a locking read: the triggers are read by
// job (see hintedIndexes), so it share-locks no trigger but those of the
// jobs.
func (tx *txn) deleteFinished(triggers, jobs []store.Key) error {
	s := tx.s
	var dropTriggers string
	var args []any
	if len(triggers) > 0 {
		var where string
		where, args = s.d.keysWhere("trigger_group", "trigger_name", triggers, []any{s.sched})
		dropTriggers = `DELETE FROM {p}triggers WHERE sched_name = ? AND ` + where
	}
	if len(jobs) == 0 {
		if dropTriggers == "" {
			return nil
		}
		_, err := tx.ExecContext(tx.ctx, s.d.render(s.prefix, dropTriggers), args...)
		return err
	}
	where, jargs := s.d.keysWhere("job_group", "job_name", jobs, []any{s.sched})
	left := `SELECT job_group, job_name FROM {p}triggers{use:triggers_job} WHERE sched_name = ? AND ` + where
	jargs = append(jargs, jargs...)
	// Only PostgreSQL's WITH leaves the deleted triggers visible to the
	// jobs' DELETE. Elsewhere they are gone when it runs, and naming them
	// again would cost dearly on MariaDB: its subquery is a locking read,
	// and the extra condition makes it read, and share-lock, every trigger
	// of the group through the primary key instead of the job's triggers
	// through the job index, which deadlocks with concurrent firings.
	if len(triggers) > 0 && s.d.name == Postgres {
		var keep string
		keep, jargs = s.d.keysWhere("trigger_group", "trigger_name", triggers, jargs)
		left += ` AND NOT ` + keep
	}
	orphans := `DELETE FROM {p}jobs WHERE sched_name = ? AND durable = FALSE AND ` + where +
		` AND (job_group, job_name) NOT IN (` + left + `)`
	if dropTriggers != "" {
		if s.d.name == Postgres {
			orphans = `WITH gone AS (` + dropTriggers + `) ` + orphans
			jargs = append(args, jargs...)
		} else if _, err := tx.ExecContext(tx.ctx, s.d.render(s.prefix, dropTriggers), args...); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(tx.ctx, s.d.render(s.prefix, orphans), jargs...); err != nil {
		return fmt.Errorf("deleting finished triggers and orphan jobs: %w", err)
	}
	return nil
}

// finishRows records the end of executions.
var finishRows = rowsUpdate{
	table: "executions",
	cols:  []Column{{"id", ColumnText}, {"st", ColumnText}, {"err", ColumnText}, {"fin", ColumnBigInt}},
	match: "t.id = v.id",
	set:   "state = v.st, error_message = v.err, finished_time = COALESCE(v.fin, {now})",
}

// execWakeRendered is txn.execWake for a statement built for its
// arguments, which the store's cache of rendered templates must not keep.
func (tx *txn) execWakeRendered(q string, args ...any) error {
	_, err := tx.execWakeRenderedCount(q, args...)
	return err
}

// execWakeRenderedCount is execWakeRendered that also returns the number
// of rows updated.
func (tx *txn) execWakeRenderedCount(q string, args ...any) (int64, error) {
	if !tx.s.d.dollar {
		res, err := tx.ExecContext(tx.ctx, q, args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	rows, err := tx.QueryContext(tx.ctx, q, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		n++
		var (
			st   string
			next sql.NullInt64
		)
		if err := rows.Scan(&st, &next); err != nil {
			return 0, err
		}
		if store.TriggerState(st) == store.StateWaiting && next.Valid {
			tx.woke(time.Unix(0, next.Int64))
		}
	}
	return n, rows.Err()
}

// TriggersRelease returns several claims in one transaction; see
// [store.Batcher]. One UPDATE releases them, deciding like recovery does
// (sqlReleaseClaimsOfNode) whether a trigger's job is busy: a trigger left
// WAITING while another node starts its non-concurrent job is found
// Blocked when fired, as any trigger claimed before the job started.
func (s *Store) TriggersRelease(ctx context.Context, p *store.TriggersReleaseParams) (int, error) {
	if err := s.enter(ctx); err != nil {
		return 0, err
	}
	if len(p.Keys) == 0 {
		return 0, nil
	}
	var released int64
	err := s.write(ctx, "releasing triggers", func(tx *txn) error {
		if err := tx.leaseCustomPlans(p.Lease); err != nil {
			return err
		}
		where, args := s.d.keysWhere("t.trigger_group", "t.trigger_name", p.Keys,
			[]any{s.sched, p.Lease.NodeID, p.Lease.Epoch})
		var err error
		released, err = tx.execWakeRenderedCount(s.d.render(s.prefix, sqlTriggersRelease+where+`{wake}`), args...)
		return err
	})
	if err != nil {
		return 0, s.translate("releasing triggers", err, nil, nil)
	}
	return int(released), nil
}
