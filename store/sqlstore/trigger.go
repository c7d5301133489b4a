package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/internal/execid"
	"github.com/chime-scheduler/chime/store"
)

// TriggerInsert stores a trigger; see [store.TriggerStore]. When the
// trigger would be both paused and blocked it is stored PAUSED_BLOCKED, and
// a zero NextFireTime makes it COMPLETE whatever is paused.
//
// Whether the trigger starts paused is read from the paused-group rows of
// everything, its job group and its trigger group under shared locks, taken
// before any other lock, so that an insert and a pause or resume of one of
// those groups serialize; see TriggersPause.
func (s *Store) TriggerInsert(ctx context.Context, p *store.TriggerInsertParams) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	rec := &p.Trigger
	if err := checkTrigger(rec); err != nil {
		return err
	}
	err := s.write(ctx, "storing a trigger", func(tx *txn) error {
		// The paused-group rows first (a COMPLETE trigger ignores them), then
		// the trigger row, then the job row: the order of TriggerFire.
		paused := false
		if !rec.NextFireTime.IsZero() {
			var err error
			if paused, err = tx.pausedOfInsert(rec.Key.Group, rec.JobKey.Group); err != nil {
				return err
			}
		}
		_, err := scanTrigger(tx.queryRow(sqlTriggerGetForUpdate, s.sched, rec.Key.Group, rec.Key.Name))
		exists := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		job, err := scanJob(tx.queryRow(sqlJobGetForShare, s.sched, rec.JobKey.Group, rec.JobKey.Name))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s, job of trigger %s", store.ErrJobNotFound, rec.JobKey, rec.Key)
		}
		if err != nil {
			return err
		}
		return tx.putTrigger(rec, &job, exists, p.Replace, paused)
	})
	return s.translate("storing trigger "+rec.Key.String(), err, nil, store.ErrTriggerExists)
}

// TriggersInsert stores many triggers in one transaction; see
// [store.TriggerStore]. Each trigger is stored as TriggerInsert stores
// one, taking its locks in the same order (its paused-group rows, its
// row, its job's row), the triggers in key order, so that two batches
// lock the rows they share in one order. With SkipExisting, a key another
// transaction takes between the locking read and the insert fails the
// transaction, which is tried again and then finds the row.
func (s *Store) TriggersInsert(ctx context.Context, p *store.TriggersInsertParams) ([]store.Key, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalid, err)
	}
	for i := range p.Triggers {
		if err := checkTrigger(&p.Triggers[i]); err != nil {
			return nil, err
		}
	}
	if len(p.Triggers) == 0 {
		return nil, nil
	}
	order := make([]int, len(p.Triggers))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ka, kb := p.Triggers[a].Key, p.Triggers[b].Key
		if c := strings.Compare(ka.Group, kb.Group); c != 0 {
			return c
		}
		return strings.Compare(ka.Name, kb.Name)
	})
	var stored []bool
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		err = s.write(ctx, "storing triggers", func(tx *txn) error {
			stored = make([]bool, len(p.Triggers))
			for _, i := range order {
				rec := &p.Triggers[i]
				ok, err := tx.insertTrigger(rec, p.SkipExisting)
				if err != nil {
					return err
				}
				stored[i] = ok
			}
			return nil
		})
		if !p.SkipExisting || !errors.Is(err, store.ErrTriggerExists) {
			break
		}
	}
	if err != nil {
		return nil, s.translate(fmt.Sprintf("storing %d triggers", len(p.Triggers)), err, nil, store.ErrTriggerExists)
	}
	keys := make([]store.Key, 0, len(p.Triggers))
	for i, ok := range stored {
		if ok {
			keys = append(keys, p.Triggers[i].Key)
		}
	}
	return keys, nil
}

// insertTrigger stores rec as TriggerInsert does without Replace, in the
// transaction tx, and reports whether it did: with skipExisting a taken
// key is left as it is (false), otherwise it fails with ErrTriggerExists.
func (tx *txn) insertTrigger(rec *store.TriggerRecord, skipExisting bool) (bool, error) {
	s := tx.s
	paused := false
	if !rec.NextFireTime.IsZero() {
		var err error
		if paused, err = tx.pausedOfInsert(rec.Key.Group, rec.JobKey.Group); err != nil {
			return false, err
		}
	}
	_, err := scanTrigger(tx.queryRow(sqlTriggerGetForUpdate, s.sched, rec.Key.Group, rec.Key.Name))
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	job, err := scanJob(tx.queryRow(sqlJobGetForShare, s.sched, rec.JobKey.Group, rec.JobKey.Name))
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("%w: %s, job of trigger %s", store.ErrJobNotFound, rec.JobKey, rec.Key)
	}
	if err != nil {
		return false, err
	}
	if exists && skipExisting {
		return false, nil
	}
	if err := tx.putTrigger(rec, &job, exists, false, paused); err != nil {
		return false, err
	}
	return true, nil
}

// checkTrigger refuses a trigger the store cannot hold, before any
// transaction.
func checkTrigger(rec *store.TriggerRecord) error {
	if err := checkJSON("schedule of trigger "+rec.Key.String(), rec.Schedule); err != nil {
		return err
	}
	if err := checkJSON("data of trigger "+rec.Key.String(), rec.Data); err != nil {
		return err
	}
	if err := checkJSON("meta of trigger "+rec.Key.String(), rec.Meta); err != nil {
		return err
	}
	if len(rec.Origin) > store.MaxOriginLength {
		return fmt.Errorf("%w: origin of trigger %s: %q is longer than %d bytes", errInvalid, rec.Key, rec.Origin, store.MaxOriginLength)
	}
	return checkInstants("trigger "+rec.Key.String(), rec.StartTime, rec.EndTime, rec.NextFireTime, rec.PreviousFireTime)
}

// putTrigger stores rec, a trigger of job, once the transaction holds the
// locks TriggerInsert takes: exists says whether its row is there (and
// locked), paused whether a recorded pause covers it. It checks the
// calendar and, without replace, that the key is free.
func (tx *txn) putTrigger(rec *store.TriggerRecord, job *store.JobRecord, exists, replace, paused bool) error {
	s := tx.s
	if rec.CalendarName != "" {
		_, err := scanCalendar(tx.queryRow(sqlCalendarGetForShare, s.sched, rec.CalendarName))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %q, calendar of trigger %s", store.ErrCalendarNotFound, rec.CalendarName, rec.Key)
		}
		if err != nil {
			return err
		}
	}
	if exists && !replace {
		return fmt.Errorf("%w: %s", store.ErrTriggerExists, rec.Key)
	}
	state, err := tx.insertState(rec, job, paused)
	if err != nil {
		return err
	}
	fields := []any{rec.JobKey.Group, rec.JobKey.Name, rec.Description, rec.Priority, rec.Kind,
		jsonArg(rec.Schedule), rec.CalendarName, rec.MisfireInstruction, jsonArg(rec.Data), rec.Origin, jsonArg(rec.Meta),
		rec.RearmDelay.Milliseconds(), nanos(rec.StartTime), nanos(rec.EndTime), nanos(rec.NextFireTime), nanos(rec.PreviousFireTime),
		int64(rec.TimesTriggered), string(state)}
	if exists {
		_, err = tx.exec(sqlTriggerReplace, append(fields, s.sched, rec.Key.Group, rec.Key.Name)...)
	} else {
		_, err = tx.exec(sqlTriggerInsert, append([]any{s.sched, rec.Key.Group, rec.Key.Name}, fields...)...)
	}
	if s.d.classify(err).unique {
		return fmt.Errorf("%w: %s", store.ErrTriggerExists, rec.Key)
	}
	if err != nil {
		return err
	}
	if state == store.StateWaiting {
		tx.woke(rec.NextFireTime)
	}
	return nil
}

// insertState is the state a trigger is stored in, given whether a
// recorded pause covers it.
func (tx *txn) insertState(rec *store.TriggerRecord, job *store.JobRecord, paused bool) (store.TriggerState, error) {
	if rec.NextFireTime.IsZero() {
		return store.StateComplete, nil
	}
	busy, err := tx.jobBusy(job)
	if err != nil {
		return "", err
	}
	switch {
	case paused && busy:
		return store.StatePausedBlocked, nil
	case paused:
		return store.StatePaused, nil
	case busy:
		return store.StateBlocked, nil
	}
	return store.StateWaiting, nil
}

// TriggerGet returns a trigger or [store.ErrTriggerNotFound].
func (s *Store) TriggerGet(ctx context.Context, key store.Key) (*store.TriggerRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	t, err := scanTrigger(s.db.QueryRowContext(ctx, s.q(sqlTriggerGet), s.sched, key.Group, key.Name))
	if err != nil {
		return nil, s.translate("reading trigger "+key.String(), err, store.ErrTriggerNotFound, nil)
	}
	return &t, nil
}

// TriggerDelete deletes a trigger and, when its job is not durable and has
// no trigger left, the job. It reports whether the trigger existed.
func (s *Store) TriggerDelete(ctx context.Context, key store.Key) (bool, error) {
	if err := s.enter(ctx); err != nil {
		return false, err
	}
	var existed bool
	err := s.write(ctx, "deleting a trigger", func(tx *txn) error {
		existed = false
		t, err := scanTrigger(tx.queryRow(sqlTriggerGetForUpdate, s.sched, key.Group, key.Name))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.exec(sqlTriggerDelete, s.sched, key.Group, key.Name); err != nil {
			return err
		}
		existed = true
		return tx.deleteJobIfOrphan(t.JobKey)
	})
	if err != nil {
		return false, s.translate("deleting trigger "+key.String(), err, nil, nil)
	}
	return existed, nil
}

// TriggerList returns triggers ordered by key, filtered by p.
func (s *Store) TriggerList(ctx context.Context, p *store.TriggerListParams) ([]store.TriggerRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	q := `SELECT ` + triggerCols + ` FROM {p}triggers WHERE sched_name = ?`
	args := []any{s.sched}
	if p.Group != "" {
		q += ` AND trigger_group = ?`
		args = append(args, p.Group)
	}
	if p.JobKey != nil {
		q += ` AND job_group = ? AND job_name = ?`
		args = append(args, p.JobKey.Group, p.JobKey.Name)
	}
	if p.ClaimedUnder != nil {
		q += ` AND state = 'ACQUIRED' AND claimed_by = ? AND claim_epoch = ?`
		args = append(args, p.ClaimedUnder.NodeID, p.ClaimedUnder.Epoch)
	}
	switch {
	case p.JobKey != nil && len(p.JobKeys) == 0:
		// Triggers of a job are sorted here, not by ORDER BY: PostgreSQL
		// without statistics on the table (new rows, before autovacuum
		// analyzes it) plans an ORDER BY on the key as a walk of the
		// primary key that filters every trigger of the scheduler,
		// rather than a lookup in triggers_job and a sort of its few rows.
		triggers, err := s.listTriggers(ctx, q, args)
		sortTriggers(triggers)
		return triggers, err
	case len(p.JobKeys) == 0:
		return s.listTriggers(ctx, q+` ORDER BY trigger_group, trigger_name`, args)
	}
	// The jobs' keys become one term per job group, an index lookup of
	// the group's names. SQLite refuses a condition nested more than 1000
	// deep, which a long chain of ORs is, so jobs of many groups take a
	// statement per jobGroupsPerStatement groups.
	var (
		groups []string
		names  = make(map[string][]any)
	)
	for _, k := range p.JobKeys {
		if _, ok := names[k.Group]; !ok {
			groups = append(groups, k.Group)
		}
		names[k.Group] = append(names[k.Group], k.Name)
	}
	var out []store.TriggerRecord
	for chunk := range slices.Chunk(groups, jobGroupsPerStatement) {
		terms := make([]string, len(chunk))
		cargs := slices.Clone(args)
		for i, g := range chunk {
			terms[i] = `(job_group = ? AND job_name IN (` + Placeholders(len(names[g])) + `))`
			cargs = append(append(cargs, g), names[g]...)
		}
		// Sorted below, as for one job.
		triggers, err := s.listTriggers(ctx, q+` AND (`+strings.Join(terms, ` OR `)+`)`, cargs)
		if err != nil {
			return nil, err
		}
		out = append(out, triggers...)
	}
	sortTriggers(out)
	return out, nil
}

// sortTriggers sorts triggers by key, in the byte order of the key
// columns' collation on every database.
func sortTriggers(triggers []store.TriggerRecord) {
	slices.SortFunc(triggers, func(a, b store.TriggerRecord) int {
		return cmp.Or(strings.Compare(a.Key.Group, b.Key.Group), strings.Compare(a.Key.Name, b.Key.Name))
	})
}

// jobGroupsPerStatement bounds the job groups of one statement of
// TriggerList.
const jobGroupsPerStatement = 200

// listTriggers runs a query for triggers and scans them.
func (s *Store) listTriggers(ctx context.Context, q string, args []any) ([]store.TriggerRecord, error) {
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	triggers, err := collect(rows, err, scanTrigger)
	if err != nil {
		return nil, s.translate("listing triggers", err, nil, nil)
	}
	return triggers, nil
}

// selectorWhere renders the condition of a TriggerSelector on triggers
// aliased t.
func selectorWhere(sel *store.TriggerSelector) (string, []any, error) {
	set := 0
	for _, b := range []bool{sel.Trigger != nil, sel.Job != nil, sel.Group != "", sel.JobGroup != "", sel.All} {
		if b {
			set++
		}
	}
	if set != 1 {
		return "", nil, fmt.Errorf("%w: trigger selector must set exactly one field, %d set", errInvalid, set)
	}
	switch {
	case sel.Trigger != nil:
		return ` AND t.trigger_group = ? AND t.trigger_name = ?`, []any{sel.Trigger.Group, sel.Trigger.Name}, nil
	case sel.Job != nil:
		return ` AND t.job_group = ? AND t.job_name = ?`, []any{sel.Job.Group, sel.Job.Name}, nil
	case sel.Group != "":
		return ` AND t.trigger_group = ?`, []any{sel.Group}, nil
	case sel.JobGroup != "":
		return ` AND t.job_group = ?`, []any{sel.JobGroup}, nil
	}
	return "", nil, nil
}

// Kinds of paused_groups rows.
const (
	pausedTriggerGroup = "TRIGGER"
	pausedJobGroup     = "JOB"
	pausedAll          = "ALL" // with group name ""
)

// pausedGroupCreateSQL adds an unpaused paused_groups row unless it exists.
func (d *dialect) pausedGroupCreateSQL() string {
	return `INSERT INTO {p}paused_groups (sched_name, kind, group_name, paused) VALUES (?, ?, ?, FALSE)` +
		d.insertIgnore("sched_name, kind, group_name", "group_name")
}

// pausedGroupSetSQL records a group as paused or not, creating its row when
// missing. It takes the row's exclusive lock, held until commit.
func (d *dialect) pausedGroupSetSQL() string {
	q := `INSERT INTO {p}paused_groups (sched_name, kind, group_name, paused) VALUES (?, ?, ?, ?)`
	if d.name == MySQL {
		return q + ` ON DUPLICATE KEY UPDATE paused = VALUES(paused)`
	}
	return q + ` ON CONFLICT (sched_name, kind, group_name) DO UPDATE SET paused = excluded.paused`
}

// pausedRow is one row of paused_groups.
type pausedRow struct {
	kind, group string
	paused      bool
}

func scanPausedRow(sc scanner) (pausedRow, error) {
	var r pausedRow
	err := sc.Scan(&r.kind, &r.group, &r.paused)
	return r, err
}

// pausedOfInsert reports whether a new trigger of the given trigger group
// and job group starts paused, holding shared locks on the rows of
// everything, the job group and the trigger group until commit.
func (tx *txn) pausedOfInsert(triggerGroup, jobGroup string) (bool, error) {
	return tx.sharePaused(sqlPausedOfInsert, []pausedRow{
		{kind: pausedAll}, {kind: pausedJobGroup, group: jobGroup}, {kind: pausedTriggerGroup, group: triggerGroup},
	}, tx.s.sched, jobGroup, triggerGroup)
}

// sharePaused runs a query that reads the paused_groups rows want (in that
// order) under shared locks and reports whether any is paused. Missing rows
// are created unpaused, in the order of want, and read again: the row,
// rather than its absence, is what a concurrent pause or resume locks. (On
// PostgreSQL, creating a row waits for another transaction creating the
// same one; a locking read of an absent row would not.)
func (tx *txn) sharePaused(tmpl string, want []pausedRow, args ...any) (bool, error) {
	for created := false; ; created = true {
		rows, err := tx.query(tmpl, args...)
		got, err := collect(rows, err, scanPausedRow)
		if err != nil {
			return false, err
		}
		if len(got) == len(want) {
			return slices.ContainsFunc(got, func(r pausedRow) bool { return r.paused }), nil
		}
		if created {
			return false, fmt.Errorf("read %d of the %d paused-group rows just created", len(got), len(want))
		}
		for _, w := range want {
			if slices.ContainsFunc(got, func(r pausedRow) bool { return r.kind == w.kind && r.group == w.group }) {
				continue
			}
			if _, err := tx.exec(tx.s.d.pausedGroupCreateSQL(), tx.s.sched, w.kind, w.group); err != nil {
				return false, err
			}
		}
	}
}

// recordPaused records what a selector of TriggersPause or TriggersResume
// selects as paused or not, before the triggers are updated. Everything
// (ALL) is written with its row's exclusive lock; a trigger group or job
// group first takes the ALL row's shared lock, then its own row's
// exclusive lock. A selector of a trigger or a job records nothing.
//
// The row locks serialize the pause or resume with every TriggerInsert of
// a trigger it covers, which share-locks the same rows before anything
// else: if the insert locked them first, the pause waits for it to commit,
// and its UPDATE of the triggers, a later statement, sees the new trigger;
// if the pause locked them first, the insert's locking read waits for the
// pause to commit and reads the committed value (PostgreSQL re-reads the
// latest version of a row it waited for; InnoDB's locking reads read the
// latest committed version). Locks are taken in the order ALL, JOB,
// TRIGGER everywhere.
func (tx *txn) recordPaused(sel *store.TriggerSelector, paused bool) error {
	set := tx.s.d.pausedGroupSetSQL()
	switch {
	case sel.All:
		if _, err := tx.exec(set, tx.s.sched, pausedAll, "", paused); err != nil {
			return err
		}
		if !paused {
			_, err := tx.exec(sqlPausedGroupsResume, tx.s.sched)
			return err
		}
		return nil
	case sel.Group != "", sel.JobGroup != "":
		kind, group := pausedTriggerGroup, sel.Group
		if sel.JobGroup != "" {
			kind, group = pausedJobGroup, sel.JobGroup
		}
		if _, err := tx.sharePaused(sqlPausedAllShare, []pausedRow{{kind: pausedAll}}, tx.s.sched); err != nil {
			return err
		}
		_, err := tx.exec(set, tx.s.sched, kind, group, paused)
		return err
	}
	return nil
}

// TriggersPause pauses the selected triggers; see [store.TriggerStore]. A
// selector naming a trigger or job that does not exist pauses nothing.
// Pausing a group or everything first records it (see recordPaused), then
// pauses the triggers.
func (s *Store) TriggersPause(ctx context.Context, sel *store.TriggerSelector) (int, error) {
	if err := s.enter(ctx); err != nil {
		return 0, err
	}
	where, args, err := selectorWhere(sel)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.write(ctx, "pausing triggers", func(tx *txn) error {
		if err := tx.recordPaused(sel, true); err != nil {
			return err
		}
		var err error
		n, err = tx.exec(sqlPauseTriggers+where, append([]any{s.sched}, args...)...)
		return err
	})
	if err != nil {
		return 0, s.translate("pausing triggers", err, nil, nil)
	}
	return int(n), nil
}

// TriggersResume undoes TriggersPause; see [store.TriggerStore]. Resuming
// everything also forgets every paused trigger group and job group.
// Resuming a group or everything first records it as not paused (see
// recordPaused), then resumes the triggers.
func (s *Store) TriggersResume(ctx context.Context, sel *store.TriggerSelector) (int, error) {
	if err := s.enter(ctx); err != nil {
		return 0, err
	}
	where, args, err := selectorWhere(sel)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.write(ctx, "resuming triggers", func(tx *txn) error {
		if err := tx.recordPaused(sel, false); err != nil {
			return err
		}
		var err error
		n, err = tx.execWake(sqlResumeTriggers+where+`{wake}`, append([]any{s.sched}, args...)...)
		return err
	})
	if err != nil {
		return 0, s.translate("resuming triggers", err, nil, nil)
	}
	return int(n), nil
}

// PausedGroups returns the trigger groups and job groups recorded as paused,
// each sorted, and whether everything is paused.
func (s *Store) PausedGroups(ctx context.Context) (*store.PausedGroups, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(sqlPausedGroupsList), s.sched)
	kinds, err := collect(rows, err, scanKey) // (kind, group name)
	if err != nil {
		return nil, s.translate("listing paused groups", err, nil, nil)
	}
	pg := &store.PausedGroups{}
	for _, k := range kinds {
		switch k.Group {
		case pausedAll:
			pg.All = true
		case pausedTriggerGroup:
			pg.TriggerGroups = append(pg.TriggerGroups, k.Name)
		case pausedJobGroup:
			pg.JobGroups = append(pg.JobGroups, k.Name)
		}
	}
	return pg, nil
}

// TriggersAcquire claims up to Limit due WAITING triggers, earliest first
// and, at the same instant, highest priority first (then by key). Claiming
// locks rows, skipping those other nodes are claiming: nodes never wait on
// each other. See sqlAcquirePostgres and sqlAcquireSelect.
func (s *Store) TriggersAcquire(ctx context.Context, p *store.TriggersAcquireParams) ([]store.TriggerRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	var out []store.TriggerRecord
	err := s.write(ctx, "acquiring triggers", func(tx *txn) error {
		out = nil
		if err := tx.lease(p.Lease); err != nil {
			return err
		}
		if p.Limit <= 0 || p.NoLaterThan.IsZero() {
			return nil
		}
		var err error
		args := []any{s.sched, boundNanos(p.NoLaterThan)}
		for _, typ := range p.ExcludeJobTypes {
			args = append(args, typ)
		}
		args = append(args, p.Limit)
		if s.d.name == Postgres {
			q := withoutJobTypes(sqlAcquirePostgres, "{p}triggers", len(p.ExcludeJobTypes))
			rows, qerr := tx.query(q, append(args, p.Lease.NodeID, p.Lease.Epoch)...)
			out, err = collect(rows, qerr, scanTrigger)
			slices.SortFunc(out, dueOrder)
			return err
		}
		q := withoutJobTypes(sqlAcquireSelect, "{p}triggers", len(p.ExcludeJobTypes))
		rows, qerr := tx.query(q, args...)
		out, err = collect(rows, qerr, scanTrigger)
		if err != nil || len(out) == 0 {
			return err
		}
		keys := make([]store.Key, len(out))
		for i := range out {
			keys[i] = out[i].Key
		}
		where, args := s.d.keysWhere("trigger_group", "trigger_name", keys,
			[]any{p.Lease.NodeID, p.Lease.Epoch, s.sched})
		n, err := tx.ExecContext(tx.ctx, s.d.render(s.prefix, acquireClaimSQL+where), args...)
		if err != nil {
			return err
		}
		if got, _ := n.RowsAffected(); got != int64(len(out)) {
			return fmt.Errorf("claimed %d of the %d triggers locked", got, len(out))
		}
		for i := range out {
			out[i].State = store.StateAcquired
			out[i].ClaimedBy = p.Lease.NodeID
			out[i].ClaimEpoch = p.Lease.Epoch
			out[i].Version++
		}
		return nil
	})
	if err != nil {
		return nil, s.translate("acquiring triggers", err, nil, nil)
	}
	s.sawClaims(len(out))
	return out, nil
}

// withoutJobTypes returns q, a claim that selects rows of table (which
// name a job), with a condition before its first ORDER BY that leaves out
// the rows whose job has one of n types, given as the parameters after
// those of q's WHERE clause. With n zero it returns q as it is, so that a
// node that runs every type pays no join.
func withoutJobTypes(q, table string, n int) string {
	if n == 0 {
		return q
	}
	i := strings.Index(q, " ORDER BY ")
	cond := " AND NOT EXISTS (SELECT 1 FROM {p}jobs xj WHERE xj.sched_name = " + table + ".sched_name" +
		" AND xj.job_group = " + table + ".job_group AND xj.job_name = " + table + ".job_name" +
		" AND xj.job_type IN (?" + strings.Repeat(", ?", n-1) + "))"
	return q[:i] + cond + q[i:]
}

// acquireClaimSQL is the second step of claiming on MySQL and SQLite: mark
// the rows sqlAcquireSelect locked ACQUIRED (their keys appended).
const acquireClaimSQL = `UPDATE {p}triggers SET state = 'ACQUIRED', claimed_by = ?, claim_epoch = ?, ` +
	`version = version + 1 WHERE sched_name = ? AND `

// claimed locks a trigger and returns it when l holds its claim.
func (tx *txn) claimed(key store.Key, l store.Lease) (store.TriggerRecord, error) {
	t, err := scanTrigger(tx.queryRow(sqlTriggerGetForUpdate, tx.s.sched, key.Group, key.Name))
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("%w: trigger %s no longer exists", store.ErrNotClaimed, key)
	}
	if err != nil {
		return t, err
	}
	if t.State != store.StateAcquired || t.ClaimedBy != l.NodeID || t.ClaimEpoch != l.Epoch {
		return t, fmt.Errorf("%w: trigger %s is %s (claimed by %q epoch %d)",
			store.ErrNotClaimed, key, t.State, t.ClaimedBy, t.ClaimEpoch)
	}
	return t, nil
}

// setTiming stores the timing fields of src on trigger key, in state st.
func (tx *txn) setTiming(key store.Key, src *store.TriggerRecord, st store.TriggerState) error {
	_, err := tx.exec(sqlTriggerSetTiming, nanos(src.NextFireTime), nanos(src.PreviousFireTime),
		int64(src.TimesTriggered), nanos(src.StartTime), nanos(src.EndTime), jsonArg(src.Schedule),
		src.MisfireInstruction, string(st), tx.s.sched, key.Group, key.Name)
	if err == nil && st == store.StateWaiting {
		tx.woke(src.NextFireTime)
	}
	return err
}

// TriggerRelease returns an acquired trigger to WAITING (BLOCKED when its
// job is busy), or COMPLETE when the new timing has no next fire time.
func (s *Store) TriggerRelease(ctx context.Context, p *store.TriggerReleaseParams) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	if p.Timing != nil {
		if err := checkJSON("schedule of trigger "+p.Key.String(), p.Timing.Schedule); err != nil {
			return err
		}
		tm := p.Timing
		if err := checkInstants("trigger "+p.Key.String(), tm.StartTime, tm.EndTime, tm.NextFireTime, tm.PreviousFireTime); err != nil {
			return err
		}
	}
	err := s.write(ctx, "releasing a trigger", func(tx *txn) error {
		if err := tx.lease(p.Lease); err != nil {
			return err
		}
		t, err := tx.claimed(p.Key, p.Lease)
		if err != nil {
			return err
		}
		timing := &t
		if p.Timing != nil {
			timing = p.Timing
		}
		st := store.StateComplete
		if !timing.NextFireTime.IsZero() {
			job, err := tx.lockJob(t.JobKey)
			if err != nil {
				return err
			}
			busy, err := tx.jobBusy(job)
			if err != nil {
				return err
			}
			st = store.StateWaiting
			if busy {
				st = store.StateBlocked
			}
		}
		return tx.setTiming(p.Key, timing, st)
	})
	return s.translate("releasing trigger "+p.Key.String(), err, nil, nil)
}

// newExecutionID returns a random execution ID: 26 characters of base32.
func newExecutionID() string { return execid.New(time.Now()) }

// TriggerFire fires an acquired trigger; see [store.TriggerStore]. In one
// transaction it checks the lease (shared lock on the node row) and the
// claim (exclusive lock on the trigger row), locks the job row when the job
// disallows concurrency (so that two firings of the job serialize and the
// second sees the first's execution), inserts the execution (the unique key
// on trigger and scheduled time refuses a second firing of one instant)
// and stores the advanced timing.
//
// The store fills the execution's TriggerKey, JobKey, NodeID and Epoch (from
// the lease), State (EXECUTING), Priority (the trigger's) and
// RequestsRecovery (the job's), and clears FinishedTime, Recovering and
// Error. FiredTime defaults to the database clock. When Execution.ID is
// empty the store generates a unique ID and writes it back to
// p.Execution.ID; a given ID that is taken is an error.
func (s *Store) TriggerFire(ctx context.Context, p *store.TriggerFireParams) (*store.TriggerFireResult, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	key := p.Trigger.Key
	if err := checkFiring(&store.TriggerFiring{Trigger: p.Trigger, Execution: p.Execution}); err != nil {
		return nil, err
	}
	var (
		res *store.TriggerFireResult
		id  string
	)
	err := s.write(ctx, "firing a trigger", func(tx *txn) error {
		res, id = nil, ""
		if err := tx.lease(p.Lease); err != nil {
			return err
		}
		t, err := tx.claimed(key, p.Lease)
		if err != nil {
			return err
		}
		job, err := scanJob(tx.queryRow(sqlJobGet, s.sched, t.JobKey.Group, t.JobKey.Name))
		if err != nil {
			return fmt.Errorf("reading job %s of trigger %s: %w", t.JobKey, key, err)
		}
		f := store.TriggerFiring{Trigger: p.Trigger, Execution: p.Execution}
		res, err = tx.fire(p.Lease, &f, t, job)
		id = f.Execution.ID
		return err
	})
	if err != nil {
		return nil, s.translate("firing trigger "+key.String(), err, nil, nil)
	}
	if id != "" {
		p.Execution.ID = id
	}
	return res, nil
}

// checkFiring refuses a firing the store cannot record, before any
// transaction.
func checkFiring(f *store.TriggerFiring) error {
	key := f.Trigger.Key
	if f.Execution.ScheduledTime.IsZero() {
		return fmt.Errorf("%w: firing trigger %s: execution has no scheduled time", errInvalid, key)
	}
	if err := checkJSON("schedule of trigger "+key.String(), f.Trigger.Schedule); err != nil {
		return err
	}
	tm, e := &f.Trigger, &f.Execution
	return checkInstants("firing trigger "+key.String(), tm.StartTime, tm.EndTime, tm.NextFireTime,
		tm.PreviousFireTime, e.ScheduledTime, e.FiredTime)
}

// fire fires trigger t, claimed under l and locked, whose job is job (read
// in this transaction): for a job that disallows concurrency, it locks the
// job row and either blocks the trigger, when the job runs, or fires it and
// blocks the job's other triggers. A generated execution ID is written to
// f.Execution.ID.
func (tx *txn) fire(l store.Lease, f *store.TriggerFiring, t store.TriggerRecord, job store.JobRecord) (*store.TriggerFireResult, error) {
	s := tx.s
	key := t.Key
	scheduled := f.Execution.ScheduledTime.UnixNano()
	if job.DisallowConcurrent {
		locked, err := tx.lockJob(job.Key)
		if err != nil || locked == nil {
			return nil, fmt.Errorf("locking job %s of trigger %s: %w", t.JobKey, key, cmpErr(err, sql.ErrNoRows))
		}
		job = *locked
		running, err := tx.jobRunning(job.Key)
		if err != nil {
			return nil, err
		}
		if running {
			var other string
			err := tx.queryRow(sqlExecutionOfInstant, s.sched, key.Group, key.Name, scheduled).Scan(&other)
			if err == nil {
				return nil, fmt.Errorf("%w: trigger %s at %s (execution %s)", store.ErrAlreadyFired, key,
					f.Execution.ScheduledTime, other)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return nil, err
			}
			if _, err := tx.exec(sqlTriggerSetState, string(store.StateBlocked), s.sched, key.Group, key.Name); err != nil {
				return nil, err
			}
			return &store.TriggerFireResult{Job: job, Blocked: true}, nil
		}
	}
	id := f.Execution.ID
	if id == "" {
		id = newExecutionID()
	}
	_, err := tx.exec(sqlExecutionInsert, s.sched, id, key.Group, key.Name, job.Key.Group, job.Key.Name,
		scheduled, nanos(f.Execution.FiredTime), l.NodeID, l.Epoch, job.RequestsRecovery, t.Priority)
	if c := s.d.classify(err); c.unique {
		if strings.HasSuffix(c.constraint, "executions_fire_key") {
			return nil, fmt.Errorf("%w: trigger %s at %s", store.ErrAlreadyFired, key, f.Execution.ScheduledTime)
		}
		return nil, fmt.Errorf("%w: firing trigger %s: execution ID %q is taken", errInvalid, key, id)
	}
	if err != nil {
		return nil, err
	}
	f.Execution.ID = id
	if err := tx.setTiming(key, &f.Trigger, firedState(&f.Trigger, t.RearmDelay, &job)); err != nil {
		return nil, err
	}
	if job.DisallowConcurrent {
		if _, err := tx.exec(sqlJobBlock, s.sched, job.Key.Group, job.Key.Name); err != nil {
			return nil, err
		}
	}
	return &store.TriggerFireResult{Job: job}, nil
}

// firedState is the state a trigger takes when it fired with the advanced
// timing of tm: COMPLETE when it will not fire again, BLOCKED while its job,
// which disallows concurrency, runs, or while it awaits its run to be
// re-armed (rearm is its stored RearmDelay), WAITING otherwise.
func firedState(tm *store.TriggerRecord, rearm time.Duration, job *store.JobRecord) store.TriggerState {
	switch {
	case tm.NextFireTime.IsZero() && rearm > 0:
		return store.StateBlocked // awaiting its run: see sqlTriggerRearm
	case tm.NextFireTime.IsZero():
		return store.StateComplete
	case job.DisallowConcurrent:
		return store.StateBlocked
	}
	return store.StateWaiting
}

// cmpErr returns err, or fallback when err is nil.
func cmpErr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}
