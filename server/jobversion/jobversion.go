package jobversion

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Kind is what a change did to a job.
type Kind string

// Kinds of change.
const (
	// Created is a job's first write, or its first after a delete.
	Created Kind = "created"
	// Updated is a write that changed a stored job (pauses and resumes
	// included: they change its paused setting).
	Updated Kind = "updated"
	// Deleted is a job's deletion; its spec is the job as it was.
	Deleted Kind = "deleted"
	// RolledBack is a write of an older version's spec.
	RolledBack Kind = "rolled_back"
)

// Valid reports whether k is one of the kinds above.
func (k Kind) Valid() bool {
	switch k {
	case Created, Updated, Deleted, RolledBack:
		return true
	}
	return false
}

// Version is one recorded version of a job.
type Version struct {
	// Group and Name are the job's key.
	Group, Name string
	// Number numbers the job's versions from 1, in the order they were
	// recorded; Record assigns it.
	Number int64
	// ID makes Record idempotent: a second Record with the same ID returns
	// the first's version. Required; at most 200 bytes.
	ID string
	// JobVersion is the job's own version counter after the change; 0 for
	// a delete.
	JobVersion int64
	// Kind is what the change did.
	Kind Kind
	// Actor is who made the change; required.
	Actor string
	// Time is when; Record sets it to the present when it is zero.
	Time time.Time
	// RolledBackFrom is the number of the version a rollback restored; 0
	// for other kinds.
	RolledBackFrom int64
	// Spec is the job's spec as JSON, with its secrets masked; required.
	Spec json.RawMessage
	// Masked lists the JSON pointers (RFC 6901) of the values of Spec that
	// masking replaced.
	Masked []string
}

// RepairActor is the actor of a version recorded by a repair: a version
// made, after the fact, for a change of a job whose own version was never
// recorded (its writer died between the job's write and the version's).
// Who made that change is unknown. A version recorded later for the same
// job version by another actor replaces a repair's version at its number:
// the repair then raced with a record that was on its way.
const RepairActor = "chime:repair"

// ErrNotFound is matched by the error Get returns for a version that is
// not stored, a *NotFoundError.
var ErrNotFound = errors.New("jobversion: version not found")

// NotFoundError is the error of Get for a version that is not stored:
// never recorded, or pruned. errors.Is matches it to ErrNotFound.
type NotFoundError struct {
	Group, Name string
	Version     int64
}

// Detail says which version of which job is missing, without the
// package's prefix.
func (e *NotFoundError) Detail() string {
	return fmt.Sprintf("job %s/%s has no version %d", e.Group, e.Name, e.Version)
}

// Error returns ErrNotFound's text followed by the Detail.
func (e *NotFoundError) Error() string { return ErrNotFound.Error() + ": " + e.Detail() }

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ErrInvalid is wrapped by the errors of a request refused before the
// database is touched; the message names the field.
var ErrInvalid = errors.New("jobversion: invalid request")

// invalid returns an error wrapping ErrInvalid about field.
func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s %s", ErrInvalid, field, fmt.Sprintf(format, args...))
}

// Options configure Versions. A nil *Options means the defaults.
type Options struct {
	// Keep is how many of each job's newest versions are kept; older ones
	// are deleted as new ones are recorded. Defaults to 50.
	Keep int
}

// DefaultKeep is the default of Options.Keep.
const DefaultKeep = 50

// MaxListLimit bounds the versions one List returns.
const MaxListLimit = 1000

// maxRecordTries bounds the tries of Record that lose the race for a
// number to another Record of the same job.
const maxRecordTries = 10

// Versions stores the versions of the jobs of one store's scheduler. It is
// safe for concurrent use and, through the database, by many processes; it
// owns no goroutine.
type Versions struct {
	db    *sql.DB
	st    *sqlstore.Store
	sched string
	keep  int
	q     struct {
		byID, last, insert, prune, list, get, replace string
		// insertAlone is recordAlone's statement, on the dialects with
		// RETURNING (PostgreSQL and SQLite); empty on MySQL.
		insertAlone string
	}
	// recordedAlone counts the versions recordAlone stored.
	recordedAlone atomic.Int64
}

// New migrates the package's table on the store's database and returns
// the versions of the store's scheduler. It uses the store's connection
// pool; closing the store ends it.
func New(ctx context.Context, st *sqlstore.Store, opts *Options) (*Versions, error) {
	if st == nil {
		return nil, invalid("store", "is nil")
	}
	keep := DefaultKeep
	if opts != nil {
		switch {
		case opts.Keep < 0:
			return nil, invalid("Options.Keep", "%d is negative", opts.Keep)
		case opts.Keep > 0:
			keep = opts.Keep
		}
	}
	if err := st.MigrateComponent(ctx, component, migrations()); err != nil {
		return nil, fmt.Errorf("jobversion: %w", err)
	}
	v := &Versions{db: st.DB(), st: st, sched: st.SchedulerName(), keep: keep}
	v.q.byID = st.SQL(`SELECT ` + versionCols + ` FROM {p}versions_jobs WHERE sched_name = ? AND id = ?`)
	v.q.last = st.SQL(`SELECT seq, job_version, actor FROM {p}versions_jobs
		WHERE sched_name = ? AND job_group = ? AND job_name = ? ORDER BY seq DESC LIMIT 1`)
	v.q.replace = st.SQL(`UPDATE {p}versions_jobs SET id = ?, kind = ?, actor = ?, recorded_time = ?, rolled_back_from = ?, spec = ?, masked = ?
		WHERE sched_name = ? AND job_group = ? AND job_name = ? AND seq = ?`)
	v.q.insert = st.SQL(versionInsertHead + versionInsertRow)
	v.q.prune = st.SQL(`DELETE FROM {p}versions_jobs WHERE sched_name = ? AND job_group = ? AND job_name = ? AND seq <= ?`)
	v.q.list = st.SQL(`SELECT ` + versionCols + ` FROM {p}versions_jobs
		WHERE sched_name = ? AND job_group = ? AND job_name = ? AND seq < ? ORDER BY seq DESC LIMIT ?`)
	v.q.get = st.SQL(`SELECT ` + versionCols + ` FROM {p}versions_jobs
		WHERE sched_name = ? AND job_group = ? AND job_name = ? AND seq = ?`)
	if st.Returning() {
		v.q.insertAlone = st.SQL(`INSERT INTO {p}versions_jobs (sched_name, job_group, job_name, seq, id, job_version, kind, actor,
			recorded_time, rolled_back_from, spec, masked)
		SELECT ?, ?, ?, COALESCE(l.seq, 0) + 1, ?, ?, ?, ?, ?, ?, ?, ?
		FROM (SELECT 1 AS one) AS o LEFT JOIN (SELECT seq, job_version, actor FROM {p}versions_jobs
			WHERE sched_name = ? AND job_group = ? AND job_name = ? ORDER BY seq DESC LIMIT 1) AS l ON 1 = 1
		WHERE NOT EXISTS (SELECT 1 FROM {p}versions_jobs WHERE sched_name = ? AND id = ?)
		AND NOT (l.seq IS NOT NULL AND l.actor = ? AND l.job_version = ?)
		AND COALESCE(l.seq, 0) + 1 <= ?
		RETURNING seq`)
	}
	return v, nil
}

// versionCols are a version's columns, as scanVersion reads them.
const versionCols = `job_group, job_name, seq, id, job_version, kind, actor, recorded_time, rolled_back_from, spec, masked`

// versionInsertHead and versionInsertRow make the INSERT of versions, a
// row each.
const (
	versionInsertHead = `INSERT INTO {p}versions_jobs (sched_name, ` + versionCols + `) VALUES `
	versionInsertRow  = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// Keep returns how many versions of each job are kept.
func (v *Versions) Keep() int { return v.keep }

// Record stores a new version of a job, numbered after the job's last
// one, and deletes the job's versions older than the newest Keep. It
// returns the version as stored. A version whose ID is stored already is
// returned as it is, and nothing is written. A malformed version is
// refused with an error wrapping ErrInvalid that names the field.
func (v *Versions) Record(ctx context.Context, ver *Version) (*Version, error) {
	out, err := v.RecordAll(ctx, []*Version{ver})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// RecordAll records versions as Record does, in one transaction: all of
// them or, on an error, none. A batch of new jobs costs one commit
// instead of one per job. The versions are numbered in the order given,
// so a job may appear more than once.
func (v *Versions) RecordAll(ctx context.Context, vers []*Version) ([]*Version, error) {
	recs := make([]*Version, len(vers))
	masked := make([]string, len(vers))
	for i, ver := range vers {
		rec, m, err := prepare(ver)
		if err != nil {
			if len(vers) > 1 {
				return nil, fmt.Errorf("versions[%d]: %w", i, err)
			}
			return nil, err
		}
		recs[i], masked[i] = rec, m
	}
	if len(recs) == 0 {
		return nil, nil
	}
	what := fmt.Sprintf("job %s/%s", recs[0].Group, recs[0].Name)
	if len(recs) > 1 {
		what = fmt.Sprintf("%d jobs", len(recs))
	}
	for range maxRecordTries {
		if len(recs) == 1 && v.q.insertAlone != "" {
			n, err := v.recordAlone(ctx, recs[0], masked[0])
			if err != nil && v.st.IsUniqueViolation(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("jobversion: recording versions of %s: %w", what, err)
			}
			if n != nil {
				return []*Version{n}, nil
			}
		}
		out, err := v.recordOnce(ctx, recs, masked)
		if err != nil && v.st.IsUniqueViolation(err) {
			// Another Record of a job took the number, or an ID got
			// stored meanwhile: look again.
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("jobversion: recording versions of %s: %w", what, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("jobversion: recording versions of %s: lost the race for a number %d times", what, maxRecordTries)
}

// prepare checks a version and returns a copy to record, with its Time
// set, and its masked pointers encoded.
func prepare(ver *Version) (*Version, string, error) {
	switch {
	case ver.Group == "" || ver.Name == "":
		return nil, "", invalid("Group/Name", "are required")
	case ver.ID == "" || len(ver.ID) > 200:
		return nil, "", invalid("ID", "%q: want 1 to 200 bytes", ver.ID)
	case !ver.Kind.Valid():
		return nil, "", invalid("Kind", "%q: want created, updated, deleted or rolled_back", ver.Kind)
	case ver.Actor == "":
		return nil, "", invalid("Actor", "is required")
	case !json.Valid(ver.Spec):
		return nil, "", invalid("Spec", "is not JSON")
	case ver.JobVersion < 0 || ver.RolledBackFrom < 0:
		return nil, "", invalid("JobVersion/RolledBackFrom", "are negative")
	}
	rec := *ver
	if rec.Time.IsZero() {
		rec.Time = time.Now()
	}
	rec.Time = rec.Time.UTC()
	masked, err := json.Marshal(nonNil(rec.Masked))
	if err != nil {
		return nil, "", fmt.Errorf("jobversion: encoding the masked pointers: %w", err)
	}
	return &rec, string(masked), nil
}

// recordOnce makes one try of RecordAll in one transaction.
func (v *Versions) recordOnce(ctx context.Context, recs []*Version, masked []string) (out []*Version, err error) {
	tx, err := v.st.BeginTx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	out = make([]*Version, len(recs))
	first, err := v.firstVersions(ctx, tx, recs)
	if err != nil {
		return nil, err
	}
	var firstIdx []int
	for i, rec := range recs {
		if first[i] {
			firstIdx = append(firstIdx, i)
			continue
		}
		if out[i], err = v.recordTx(ctx, tx, rec, masked[i]); err != nil {
			return nil, err
		}
	}
	for chunk := range slices.Chunk(firstIdx, versionsPerStatement) {
		args := make([]any, 0, 12*len(chunk))
		for _, i := range chunk {
			n := *recs[i]
			n.Number = 1
			out[i] = &n
			args = append(args, v.sched, n.Group, n.Name, n.Number, n.ID, n.JobVersion, string(n.Kind),
				n.Actor, n.Time.UnixNano(), n.RolledBackFrom, string(n.Spec), masked[i])
		}
		q := versionInsertHead + sqlstore.Rows(versionInsertRow, len(chunk))
		if _, err := tx.ExecContext(ctx, v.st.SQL(q), args...); err != nil {
			return nil, err
		}
	}
	return out, tx.Commit()
}

// recordAlone records rec with one statement (q.insertAlone), numbered
// after the job's last version, when that is all recordTx would do: its
// ID is not stored, the job's last version is not a repair this record
// takes the place of, and no version needs pruning. It returns nil and no
// error when it stored nothing, for recordTx to do it.
func (v *Versions) recordAlone(ctx context.Context, rec *Version, masked string) (*Version, error) {
	// With an actor other than the repair's, a last version that a repair
	// recorded for the same job version is left to recordTx, which
	// replaces it; a repair's own record never replaces one.
	repairActor := RepairActor
	if rec.Actor == RepairActor {
		repairActor = ""
	}
	n := *rec
	err := v.db.QueryRowContext(ctx, v.q.insertAlone,
		v.sched, n.Group, n.Name, n.ID, n.JobVersion, string(n.Kind), n.Actor, n.Time.UnixNano(), n.RolledBackFrom, string(n.Spec), masked,
		v.sched, n.Group, n.Name,
		v.sched, n.ID, repairActor, n.JobVersion, v.keep).Scan(&n.Number)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	v.recordedAlone.Add(1)
	return &n, nil
}

// versionsPerStatement bounds the rows of one statement of a batch: 12
// bind parameters a version, under every dialect's limit.
const versionsPerStatement = 200

// firstVersions reports, for a batch of more than one version, which of
// recs are the first version of their job: no version of the job is
// stored, no other element of the batch is of the same job, and no
// version has the element's ID. Those are numbered 1 and inserted
// together, with a read of the IDs and one of the jobs for the whole
// batch (a batch of new jobs, CreateJobs, is all of them), instead of two
// reads and an insert each; the others take recordTx. Two batches that
// number the same job's first version at once meet on its unique number,
// and RecordAll tries again, as for single versions.
func (v *Versions) firstVersions(ctx context.Context, tx *sql.Tx, recs []*Version) ([]bool, error) {
	first := make([]bool, len(recs))
	if len(recs) < 2 {
		return first, nil
	}
	type jobKey struct{ group, name string }
	count := make(map[jobKey]int, len(recs))
	for _, r := range recs {
		count[jobKey{r.Group, r.Name}]++
	}
	taken := make(map[string]bool)
	versioned := make(map[jobKey]bool)
	for chunk := range slices.Chunk(recs, versionsPerStatement) {
		ids := []any{v.sched}
		for _, r := range chunk {
			ids = append(ids, r.ID)
		}
		rows, err := tx.QueryContext(ctx, v.st.SQL(`SELECT id FROM {p}versions_jobs WHERE sched_name = ? AND id IN (`+
			sqlstore.Placeholders(len(chunk))+`)`), ids...)
		if err := scanStrings(rows, err, 1, func(s ...string) { taken[s[0]] = true }); err != nil {
			return nil, err
		}
		where, args := sqlstore.KeysWhere("job_group", "job_name", len(chunk),
			func(i int) (string, string) { return chunk[i].Group, chunk[i].Name }, []any{v.sched})
		rows, err = tx.QueryContext(ctx, v.st.SQL(`SELECT DISTINCT job_group, job_name FROM {p}versions_jobs WHERE sched_name = ? AND `+
			where), args...)
		if err := scanStrings(rows, err, 2, func(s ...string) { versioned[jobKey{s[0], s[1]}] = true }); err != nil {
			return nil, err
		}
	}
	for i, r := range recs {
		k := jobKey{r.Group, r.Name}
		first[i] = count[k] == 1 && !versioned[k] && !taken[r.ID]
	}
	return first, nil
}

// scanStrings reads the rows of a query of n string columns into each,
// and closes them.
func scanStrings(rows *sql.Rows, err error, n int, each func(...string)) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]string, n)
	dest := make([]any, n)
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		each(vals...)
	}
	return rows.Err()
}

// recordTx records one version in tx: the stored one when its ID is
// taken; in place of the job's last when that is a repair's of the same
// job version (see RepairActor); else a new one numbered after the job's
// last, deleting the job's versions older than the newest Keep.
func (v *Versions) recordTx(ctx context.Context, tx *sql.Tx, rec *Version, masked string) (*Version, error) {
	stored, err := scanVersion(tx.QueryRowContext(ctx, v.q.byID, v.sched, rec.ID))
	switch {
	case err == nil:
		return stored, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	var (
		last, lastJobVersion int64
		lastActor            string
	)
	err = tx.QueryRowContext(ctx, v.q.last, v.sched, rec.Group, rec.Name).Scan(&last, &lastJobVersion, &lastActor)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	n := *rec
	if last > 0 && lastActor == RepairActor && rec.Actor != RepairActor && lastJobVersion == rec.JobVersion {
		// A repair recorded this job version while its own record was
		// on its way: the record, which knows the actor, takes its place.
		n.Number = last
		if _, err := tx.ExecContext(ctx, v.q.replace, n.ID, string(n.Kind), n.Actor, n.Time.UnixNano(), n.RolledBackFrom,
			string(n.Spec), masked, v.sched, n.Group, n.Name, n.Number); err != nil {
			return nil, err
		}
		return &n, nil
	}
	n.Number = last + 1
	if _, err := tx.ExecContext(ctx, v.q.insert, v.sched, n.Group, n.Name, n.Number, n.ID, n.JobVersion, string(n.Kind),
		n.Actor, n.Time.UnixNano(), n.RolledBackFrom, string(n.Spec), masked); err != nil {
		return nil, err
	}
	if cut := n.Number - int64(v.keep); cut > 0 {
		if _, err := tx.ExecContext(ctx, v.q.prune, v.sched, n.Group, n.Name, cut); err != nil {
			return nil, err
		}
	}
	return &n, nil
}

// List returns a page of a job's versions, newest first: those numbered
// before before (0: from the newest), at most limit (1 to MaxListLimit;
// 0 means 50). Specs are included.
func (v *Versions) List(ctx context.Context, group, name string, before int64, limit int) ([]Version, error) {
	switch {
	case before < 0:
		return nil, invalid("before", "%d is negative", before)
	case limit < 0 || limit > MaxListLimit:
		return nil, invalid("limit", "%d: want 1 to %d", limit, MaxListLimit)
	case limit == 0:
		limit = 50
	}
	if before == 0 {
		before = 1<<63 - 1
	}
	rows, err := v.db.QueryContext(ctx, v.q.list, v.sched, group, name, before, limit)
	if err != nil {
		return nil, fmt.Errorf("jobversion: listing the versions of job %s/%s: %w", group, name, err)
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		ver, err := scanVersion(rows)
		if err != nil {
			return nil, fmt.Errorf("jobversion: listing the versions of job %s/%s: %w", group, name, err)
		}
		out = append(out, *ver)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jobversion: listing the versions of job %s/%s: %w", group, name, err)
	}
	return out, nil
}

// Get returns version n of a job, or a *NotFoundError.
func (v *Versions) Get(ctx context.Context, group, name string, n int64) (*Version, error) {
	ver, err := scanVersion(v.db.QueryRowContext(ctx, v.q.get, v.sched, group, name, n))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, &NotFoundError{Group: group, Name: name, Version: n}
	case err != nil:
		return nil, fmt.Errorf("jobversion: reading version %d of job %s/%s: %w", n, group, name, err)
	}
	return ver, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanVersion reads a row of the columns versionCols.
func scanVersion(r scanner) (*Version, error) {
	var (
		ver          Version
		kind         string
		nanos        int64
		spec, masked string
	)
	if err := r.Scan(&ver.Group, &ver.Name, &ver.Number, &ver.ID, &ver.JobVersion, &kind, &ver.Actor, &nanos,
		&ver.RolledBackFrom, &spec, &masked); err != nil {
		return nil, err
	}
	ver.Kind = Kind(kind)
	ver.Time = time.Unix(0, nanos).UTC()
	ver.Spec = json.RawMessage(spec)
	if err := json.Unmarshal([]byte(masked), &ver.Masked); err != nil {
		return nil, fmt.Errorf("version %d of job %s/%s: decoding its masked pointers: %w", ver.Number, ver.Group, ver.Name, err)
	}
	if len(ver.Masked) == 0 {
		ver.Masked = nil
	}
	return &ver, nil
}

// nonNil returns s, or an empty slice for nil, which encodes as [].
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
