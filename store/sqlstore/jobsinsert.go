package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/chime-scheduler/chime/store"
)

// Columns of the multi-row INSERTs of JobsInsert, and the bind
// parameters each row takes.
const (
	jobInsertCols = `sched_name, job_group, job_name, job_type, description, durable, requests_recovery, ` +
		`disallow_concurrent, persist_data, timeout_ns, job_data, job_meta, version`
	jobInsertRow       = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`
	jobInsertParams    = 12
	triggerInsertRow   = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0, 1)`
	triggerInsertParam = 21
	// keysPerQuery bounds the keys or groups one lookup of JobsInsert
	// names, well under every dialect's limit of bind parameters.
	keysPerQuery = 500
	// cachedRows is the largest multi-row INSERT whose rendered text the
	// store keeps: one-job writes reuse theirs, large batches do not fill
	// the cache with one text per size.
	cachedRows = 8
)

// maxParams is the most bind parameters one statement may carry:
// SQLite's SQLITE_MAX_VARIABLE_NUMBER (32766 since 3.32), and the 65535
// of PostgreSQL's and MySQL's protocols.
func (d *dialect) maxParams() int {
	if d.name == SQLite {
		return 32766
	}
	return 65535
}

// JobsInsert stores new jobs with their triggers in one transaction; see
// [store.JobStore]. Whatever the number of jobs it sends a few statements:
// one locking read of the paused-group rows of all the new triggers,
// multi-row INSERTs of the jobs and of the triggers in chunks that fit
// the dialect's limit of bind parameters, and the reads of the calendars
// named and, for jobs that disallow concurrency, of their executions.
func (s *Store) JobsInsert(ctx context.Context, p *store.JobsInsertParams) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %w", errInvalid, err)
	}
	for i := range p.Jobs {
		e := &p.Jobs[i]
		if err := checkJob(&e.Job); err != nil {
			return err
		}
		for j := range e.Triggers {
			if err := checkTrigger(&e.Triggers[j]); err != nil {
				return err
			}
		}
	}
	if len(p.Jobs) == 0 {
		return nil
	}
	if len(p.Jobs) == 1 {
		return s.translate("inserting a job", s.insertCombined(ctx, &p.Jobs[0]), nil, nil)
	}
	return s.translate(fmt.Sprintf("inserting %d jobs", len(p.Jobs)), s.writeJobs(ctx, p.Jobs), nil, nil)
}

// writeJobs stores jobs with insertJobs in one transaction and, when a key
// is taken, names it.
func (s *Store) writeJobs(ctx context.Context, jobs []store.JobInsert) error {
	err := s.write(ctx, "inserting jobs", func(tx *txn) error { return tx.insertJobs(jobs) })
	if te := (*takenError)(nil); errors.As(err, &te) {
		err = s.nameTaken(ctx, te)
	}
	return err
}

// takenError is a multi-row INSERT refused because a key it inserts is
// taken. Which one the database does not say in a form every dialect
// shares; the store looks the keys up once the transaction has ended.
type takenError struct {
	sentinel error // store.ErrJobExists or store.ErrTriggerExists
	table    string
	cols     [2]string // group and name columns
	keys     []store.Key
}

func (e *takenError) Error() string {
	return fmt.Sprintf("%v: one of %d keys", e.sentinel, len(e.keys))
}

func (e *takenError) Unwrap() error { return e.sentinel }

// nameTaken returns te's sentinel naming the first of its keys that is
// stored, or te itself when the lookup fails or finds none (the row that
// collided is gone again).
func (s *Store) nameTaken(ctx context.Context, te *takenError) error {
	for chunk := range slices.Chunk(te.keys, keysPerQuery) {
		where, args := s.d.keysWhere(te.cols[0], te.cols[1], chunk, []any{s.sched})
		q := s.d.render(s.prefix, `SELECT `+te.cols[0]+`, `+te.cols[1]+` FROM {p}`+te.table+
			` WHERE sched_name = ? AND `+where+` ORDER BY `+te.cols[0]+`, `+te.cols[1]+` LIMIT 1`)
		rows, err := s.db.QueryContext(ctx, q, args...)
		taken, err := collect(rows, err, scanKey)
		if err != nil {
			return te
		}
		if len(taken) > 0 {
			return fmt.Errorf("%w: %s", te.sentinel, taken[0])
		}
	}
	return te
}

// insertJobs stores new jobs and their triggers as JobsInsert does, in
// the transaction tx. It takes its locks in the order JobWrite does: the
// paused-group rows of the new triggers (shared, in key order), the job
// rows it inserts, the calendars the triggers name (shared), then the
// trigger rows it inserts. It checks in JobWrite's order too: a taken job
// key before a missing calendar, before a taken trigger key.
func (tx *txn) insertJobs(jobs []store.JobInsert) error {
	paused, err := tx.pausedOfInserts(jobs)
	if err != nil {
		return err
	}
	busy, err := tx.runningJobs(jobs)
	if err != nil {
		return err
	}
	rows := make([][]any, 0, len(jobs))
	for i := range jobs {
		rows = append(rows, jobInsertArgs(make([]any, 0, jobInsertParams), tx.s.sched, &jobs[i].Job))
	}
	jobKeys := func(rows [][]any) []store.Key {
		keys := make([]store.Key, len(rows))
		for i, r := range rows {
			keys[i] = store.Key{Group: r[1].(string), Name: r[2].(string)}
		}
		return keys
	}
	if err := tx.insertRows("jobs", jobInsertCols, jobInsertRow, jobInsertParams, rows, func(rows [][]any) *takenError {
		return &takenError{sentinel: store.ErrJobExists, table: "jobs", cols: [2]string{"job_group", "job_name"}, keys: jobKeys(rows)}
	}); err != nil {
		return err
	}
	if err := tx.shareCalendars(jobs); err != nil {
		return err
	}
	rows = rows[:0]
	for i := range jobs {
		e := &jobs[i]
		for k := range e.Triggers {
			rec := &e.Triggers[k]
			state := store.StateComplete
			if !rec.NextFireTime.IsZero() {
				inPause := paused.covers(rec)
				switch e.Pause {
				case store.PauseTriggers:
					inPause = true
				case store.ResumeTriggers:
					inPause = false
				}
				state = stateOf(inPause, e.Job.DisallowConcurrent && busy[e.Job.Key])
			}
			if state == store.StateWaiting {
				tx.woke(rec.NextFireTime)
			}
			rows = append(rows, append(triggerInsertArgs(make([]any, 0, triggerInsertParam), tx.s.sched, rec), string(state)))
		}
	}
	return tx.insertRows("triggers", `sched_name, `+triggerCols, triggerInsertRow, triggerInsertParam, rows, func(rows [][]any) *takenError {
		return &takenError{sentinel: store.ErrTriggerExists, table: "triggers", cols: [2]string{"trigger_group", "trigger_name"}, keys: jobKeys(rows)}
	})
}

// jobInsertArgs appends to args the arguments of j's row of jobInsertRow.
func jobInsertArgs(args []any, sched string, j *store.JobRecord) []any {
	return append(args, sched, j.Key.Group, j.Key.Name, j.Type, j.Description, j.Durable,
		j.RequestsRecovery, j.DisallowConcurrent, j.PersistData, int64(j.Timeout), jsonArg(j.Data), jsonArg(j.Meta))
}

// triggerInsertArgs appends to args the arguments of rec's row of
// triggerInsertRow but the last, its state.
func triggerInsertArgs(args []any, sched string, rec *store.TriggerRecord) []any {
	return append(args, sched, rec.Key.Group, rec.Key.Name, rec.JobKey.Group, rec.JobKey.Name,
		rec.Description, rec.Priority, rec.Kind, jsonArg(rec.Schedule), rec.CalendarName, rec.MisfireInstruction,
		jsonArg(rec.Data), rec.Origin, jsonArg(rec.Meta), rec.RearmDelay.Milliseconds(), nanos(rec.StartTime), nanos(rec.EndTime),
		nanos(rec.NextFireTime), nanos(rec.PreviousFireTime), int64(rec.TimesTriggered))
}

// stateOf is the state of a new trigger that will fire, given whether a
// pause covers it and whether its job is busy.
func stateOf(paused, busy bool) store.TriggerState {
	switch {
	case paused && busy:
		return store.StatePausedBlocked
	case paused:
		return store.StatePaused
	case busy:
		return store.StateBlocked
	}
	return store.StateWaiting
}

// insertRows inserts rows into table ({p}table) with multi-row INSERTs,
// as many rows to a statement as the dialect's limit of bind parameters
// allows. A row is the arguments of one rowSQL, which takes params of
// them. A unique violation becomes the error taken makes of the rows of
// the refused statement, named at once when that is one row.
func (tx *txn) insertRows(table, cols, rowSQL string, params int, rows [][]any, taken func([][]any) *takenError) error {
	per := tx.s.d.maxParams() / params
	for chunk := range slices.Chunk(rows, per) {
		var b strings.Builder
		b.Grow(len(cols) + 40 + len(chunk)*(len(rowSQL)+2))
		b.WriteString("INSERT INTO {p}" + table + " (" + cols + ") VALUES ")
		args := make([]any, 0, len(chunk)*params)
		for i, r := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(rowSQL)
			args = append(args, r...)
		}
		q := b.String()
		if len(chunk) <= cachedRows {
			q = tx.s.q(q)
		} else {
			q = tx.s.d.render(tx.s.prefix, q)
		}
		_, err := tx.ExecContext(tx.ctx, q, args...)
		if tx.s.d.classify(err).unique {
			te := taken(chunk)
			if len(te.keys) == 1 {
				return fmt.Errorf("%w: %s", te.sentinel, te.keys[0])
			}
			return te
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// pausedSet is what the paused-group rows say about new triggers.
type pausedSet struct {
	all                     bool
	jobGroups, triggerGroup map[string]bool
}

// covers reports whether a recorded pause covers rec.
func (p *pausedSet) covers(rec *store.TriggerRecord) bool {
	return p.all || p.jobGroups[rec.JobKey.Group] || p.triggerGroup[rec.Key.Group]
}

// pausedOfInserts reads the paused-group rows that decide whether the new
// triggers that will fire start paused (everything, their job groups,
// their trigger groups), under shared locks held until commit, as
// pausedOfInsert does for one trigger: missing rows are created unpaused
// first, so that a concurrent pause or resume has a row to wait on. The
// rows are locked in key order (ALL, JOB, TRIGGER, then by group), a
// chunk of keysPerQuery at a time.
func (tx *txn) pausedOfInserts(jobs []store.JobInsert) (*pausedSet, error) {
	jobGroups := map[string]bool{}
	triggerGroups := map[string]bool{}
	for i := range jobs {
		for k := range jobs[i].Triggers {
			if rec := &jobs[i].Triggers[k]; !rec.NextFireTime.IsZero() {
				jobGroups[rec.JobKey.Group] = false
				triggerGroups[rec.Key.Group] = false
			}
		}
	}
	set := &pausedSet{jobGroups: jobGroups, triggerGroup: triggerGroups}
	if len(triggerGroups) == 0 {
		return set, nil
	}
	want := []pausedRow{{kind: pausedAll}}
	for _, g := range slices.Sorted(maps.Keys(jobGroups)) {
		want = append(want, pausedRow{kind: pausedJobGroup, group: g})
	}
	for _, g := range slices.Sorted(maps.Keys(triggerGroups)) {
		want = append(want, pausedRow{kind: pausedTriggerGroup, group: g})
	}
	for chunk := range slices.Chunk(want, keysPerQuery) {
		got, err := tx.sharePausedRows(chunk)
		if err != nil {
			return nil, err
		}
		for _, r := range got {
			switch r.kind {
			case pausedAll:
				set.all = set.all || r.paused
			case pausedJobGroup:
				jobGroups[r.group] = r.paused
			case pausedTriggerGroup:
				triggerGroups[r.group] = r.paused
			}
		}
	}
	return set, nil
}

// sharePausedRows reads the paused-group rows want under shared locks,
// creating the missing ones unpaused first, as sharePaused does.
func (tx *txn) sharePausedRows(want []pausedRow) ([]pausedRow, error) {
	var b strings.Builder
	args := []any{tx.s.sched}
	b.WriteString(`SELECT kind, group_name, paused FROM {p}paused_groups WHERE sched_name = ? AND (`)
	byKind := map[string][]string{}
	var kinds []string
	for _, w := range want {
		if _, ok := byKind[w.kind]; !ok {
			kinds = append(kinds, w.kind)
		}
		byKind[w.kind] = append(byKind[w.kind], w.group)
	}
	for i, k := range kinds {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString("(kind = ? AND group_name IN (")
		args = append(args, k)
		for j, g := range byKind[k] {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("?")
			args = append(args, g)
		}
		b.WriteString("))")
	}
	b.WriteString(") ORDER BY kind, group_name{share}")
	tmpl := b.String()
	q := tx.s.d.render(tx.s.prefix, tmpl)
	if len(want) <= 3 {
		q = tx.s.q(tmpl) // the rows of a one-job write
	}
	for created := false; ; created = true {
		rows, err := tx.QueryContext(tx.ctx, q, args...)
		got, err := collect(rows, err, scanPausedRow)
		if err != nil {
			return nil, err
		}
		if len(got) == len(want) {
			return got, nil
		}
		if created {
			return nil, fmt.Errorf("read %d of the %d paused-group rows just created", len(got), len(want))
		}
		for _, w := range want {
			if slices.ContainsFunc(got, func(r pausedRow) bool { return r.kind == w.kind && r.group == w.group }) {
				continue
			}
			if _, err := tx.exec(tx.s.d.pausedGroupCreateSQL(), tx.s.sched, w.kind, w.group); err != nil {
				return nil, err
			}
		}
	}
}

// runningJobs returns the jobs of jobs that disallow concurrency, have a
// trigger that will fire, and have an EXECUTING or RECOVERABLE execution
// (left by an earlier job of the same key): their new triggers start
// blocked.
func (tx *txn) runningJobs(jobs []store.JobInsert) (map[store.Key]bool, error) {
	var keys []store.Key
	for i := range jobs {
		e := &jobs[i]
		if e.Job.DisallowConcurrent && slices.ContainsFunc(e.Triggers, func(t store.TriggerRecord) bool { return !t.NextFireTime.IsZero() }) {
			keys = append(keys, e.Job.Key)
		}
	}
	busy := make(map[store.Key]bool)
	if len(keys) == 1 {
		running, err := tx.jobRunning(keys[0])
		busy[keys[0]] = running
		return busy, err
	}
	for chunk := range slices.Chunk(keys, keysPerQuery) {
		where, args := tx.s.d.keysWhere("job_group", "job_name", chunk, []any{tx.s.sched})
		rows, err := tx.QueryContext(tx.ctx, tx.s.d.render(tx.s.prefix, `SELECT DISTINCT job_group, job_name FROM {p}executions `+
			`WHERE sched_name = ? AND state IN ('EXECUTING', 'RECOVERABLE') AND `+where), args...)
		running, err := collect(rows, err, scanKey)
		if err != nil {
			return nil, err
		}
		for _, k := range running {
			busy[k] = true
		}
	}
	return busy, nil
}

// shareCalendars checks that every calendar the triggers name exists,
// holding its row's shared lock until commit, so that it is not deleted
// before the triggers that name it are stored.
func (tx *txn) shareCalendars(jobs []store.JobInsert) error {
	first := make(map[string]store.Key)
	for i := range jobs {
		for k := range jobs[i].Triggers {
			rec := &jobs[i].Triggers[k]
			if _, ok := first[rec.CalendarName]; rec.CalendarName != "" && !ok {
				first[rec.CalendarName] = rec.Key
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(first)) {
		_, err := scanCalendar(tx.queryRow(sqlCalendarGetForShare, tx.s.sched, name))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %q, calendar of trigger %s", store.ErrCalendarNotFound, name, first[name])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sqlJobInsertOne stores a new job with one trigger in one statement on
// PostgreSQL, with no BEGIN or COMMIT: it takes the shared locks of the
// paused-group rows that decide the trigger's state (ALL, JOB, TRIGGER,
// in key order, as sqlPausedOfInsert does), inserts the job and the
// trigger, PAUSED or not as those rows say, and notifies the trigger's
// next fire time when it is left WAITING. When one of the three rows is
// missing it inserts nothing, and says so: the transaction of
// insertJobs creates the rows. Its arguments are, in order: the
// scheduler, the job group and the trigger group of the paused rows; the
// 12 of jobInsertRow; the first 20 of triggerInsertRow; the trigger's
// state when a pause covers it and when none does; the channel.
const sqlJobInsertOne = `WITH p AS (SELECT paused FROM {p}paused_groups WHERE sched_name = ? ` +
	`AND ((kind = 'ALL' AND group_name = '') OR (kind = 'JOB' AND group_name = ?) ` +
	`OR (kind = 'TRIGGER' AND group_name = ?)) ORDER BY kind, group_name FOR SHARE), ` +
	`ok AS (SELECT count(*) = 3 AS found, coalesce(bool_or(paused), FALSE) AS paused FROM p), ` +
	`j AS (INSERT INTO {p}jobs (` + jobInsertCols + `) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1 FROM ok WHERE ok.found RETURNING 1), ` +
	`t AS (INSERT INTO {p}triggers (sched_name, ` + triggerCols + `) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ` +
	`CASE WHEN ok.paused THEN CAST(? AS TEXT) ELSE CAST(? AS TEXT) END, '', 0, 1 FROM ok, j RETURNING state, next_fire_time), ` +
	`n AS (SELECT pg_notify(?, CAST(min(next_fire_time) / 1000000 AS TEXT)) FROM t WHERE state = 'WAITING' HAVING count(*) > 0) ` +
	`SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM n)`

// insertOneStatement stores e as insertJobs does, with sqlJobInsertOne,
// when the store is on PostgreSQL and e is a job with one trigger that
// names no calendar and whose job allows concurrent executions (or that
// will not fire): the checks of the other cases need the transaction. It
// reports whether it stored e. It stores nothing when a paused-group row
// it reads is missing or a key is taken; the caller then runs insertJobs,
// which creates the rows or names the taken key.
func (s *Store) insertOneStatement(ctx context.Context, e *store.JobInsert) (bool, error) {
	if s.d.name != Postgres || len(e.Triggers) != 1 {
		return false, nil
	}
	j, rec := &e.Job, &e.Triggers[0]
	fires := !rec.NextFireTime.IsZero()
	if rec.CalendarName != "" || (fires && j.DisallowConcurrent) {
		return false, nil
	}
	paused, unpaused := store.StateComplete, store.StateComplete
	if fires {
		paused, unpaused = store.StatePaused, store.StateWaiting
		switch e.Pause {
		case store.PauseTriggers:
			unpaused = store.StatePaused
		case store.ResumeTriggers:
			paused = store.StateWaiting
		}
	}
	args := []any{s.sched, rec.JobKey.Group, rec.Key.Group}
	args = jobInsertArgs(args, s.sched, j)
	args = triggerInsertArgs(args, s.sched, rec)
	args = append(args, string(paused), string(unpaused), s.channel)
	var stored, notified int
	err := s.retry(ctx, "inserting a job", func() error {
		return s.db.QueryRowContext(ctx, s.q(sqlJobInsertOne), args...).Scan(&stored, &notified)
	})
	if s.d.classify(err).unique {
		return false, nil
	}
	return stored == 1, err
}
