package server

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/jobversion"
	"github.com/chime-scheduler/chime/server/secret"
)

// Job versions.
//
// Every successful create, update (pauses and resumes included), delete
// and rollback of a job through the server records a version of it in
// package jobversion's table: the job's spec as the API shows it, with its
// secrets masked as a viewer reads them, the actor, the time and the
// kind. The version is written right after the job's write, not in its
// transaction: the library's Scheduler.ScheduleJob stores a job in one
// transaction of the store's own and offers no hook to add a statement to
// it (its store contract, store.JobWriteParams, has none either, and the
// server may not reach the store under the scheduler). A database that
// fails between the two delays the version only: it is written through
// the write queue (writeQueue.persist), tried until the database takes it
// or the server stops, with an ID chosen before the first try, so that a
// try whose answer was lost is not recorded twice.
//
// A node that dies between the two (kill -9, power) leaves a change
// without its version; the gap heals on the next read of the job's
// versions (repairVersions): the job's own version counter, which every
// write moves, is compared with the one the newest version recorded, and
// a job that moved on, came back or went away gets the version it lacks,
// with actor jobversion.RepairActor. A version is never recorded before
// its job's write, so the reverse (a version of a change that did not
// happen) cannot occur. The spec is read right after the write: a
// concurrent write of the same job in between makes both versions show
// the later state. A batch create (CreateJobs) builds its versions from
// what it wrote instead, with no read at all. A delete's spec is read
// just before the delete, so a write in between is missing from it.

// versionSpec reads a job as a version records it: its API form without
// status, version, warnings and the triggers' firing state. It returns
// the job's own version too.
func (s *Server) versionSpec(ctx context.Context, key chime.JobKey) (*api.Job, int64, error) {
	d, err := s.sched.Job(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	triggers, err := s.jobTriggers(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	j, err := jobToAPI(d, triggers)
	if err != nil {
		return nil, 0, err
	}
	return specForm(*j), d.Version, nil
}

// specForm strips from j what is not the job's spec: the fields the
// server computes.
func specForm(j api.Job) *api.Job {
	j.Version, j.Status, j.Warnings = 0, nil, nil
	if j.Triggers != nil {
		ts := make([]api.Trigger, len(j.Triggers))
		for i, t := range j.Triggers {
			t.State, t.NextFireTime, t.PreviousFireTime = "", nil, nil
			ts[i] = t
		}
		j.Triggers = ts
	}
	return &j
}

// jsonTree decodes v's JSON form into maps, slices, strings, booleans,
// json.Numbers and nils.
func jsonTree(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var tree any
	if err := d.Decode(&tree); err != nil {
		return nil, err
	}
	return tree, nil
}

// maskedSpec returns the canonical JSON of spec as a version stores it:
// masked as secret.MaskJob masks a job for viewers, indented, object keys
// sorted; and the JSON pointers of the values masking replaced.
func maskedSpec(spec *api.Job) (json.RawMessage, []string, error) {
	clear, err := jsonTree(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("server: encoding the spec of job %s/%s: %w", spec.Group, spec.Name, err)
	}
	masked, err := jsonTree(secret.MaskJob(*spec))
	if err != nil {
		return nil, nil, fmt.Errorf("server: encoding the spec of job %s/%s: %w", spec.Group, spec.Name, err)
	}
	var pointers []string
	diffPointers("", clear, masked, &pointers)
	slices.Sort(pointers) // maps are walked in random order
	b, err := json.MarshalIndent(masked, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("server: encoding the spec of job %s/%s: %w", spec.Group, spec.Name, err)
	}
	return b, pointers, nil
}

// diffPointers appends to out the pointers, under at, of the strings of
// masked that differ from clear's.
func diffPointers(at string, clear, masked any, out *[]string) {
	switch m := masked.(type) {
	case map[string]any:
		c, _ := clear.(map[string]any)
		for k, v := range m {
			diffPointers(at+"/"+escapePointer(k), c[k], v, out)
		}
	case []any:
		c, _ := clear.([]any)
		for i, v := range m {
			var cv any
			if i < len(c) {
				cv = c[i]
			}
			diffPointers(at+"/"+strconv.Itoa(i), cv, v, out)
		}
	case string:
		if c, ok := clear.(string); !ok || c != m {
			*out = append(*out, at)
		}
	}
}

// escapePointer escapes a JSON pointer's token (RFC 6901).
func escapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// pointerTokens splits a JSON pointer into its unescaped tokens.
func pointerTokens(p string) []string {
	if p == "" {
		return nil
	}
	toks := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

// pointerGet returns the value at pointer p of tree.
func pointerGet(tree any, p string) (any, bool) {
	cur := tree
	for _, tok := range pointerTokens(p) {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// pointerSet replaces the value at pointer p of tree, which must exist.
func pointerSet(tree any, p string, v any) bool {
	toks := pointerTokens(p)
	if len(toks) == 0 {
		return false
	}
	parent := tree
	if len(toks) > 1 {
		var ok bool
		if parent, ok = pointerGet(tree, "/"+strings.Join(escapeAll(toks[:len(toks)-1]), "/")); !ok {
			return false
		}
	}
	last := toks[len(toks)-1]
	switch c := parent.(type) {
	case map[string]any:
		if _, ok := c[last]; !ok {
			return false
		}
		c[last] = v
		return true
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(c) {
			return false
		}
		c[i] = v
		return true
	}
	return false
}

// escapeAll escapes pointer tokens.
func escapeAll(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = escapePointer(t)
	}
	return out
}

// recordVersion records a version of the job key after a change by
// actor; spec is the job as it now is (as it was, for a delete), jobVersion
// its own version. A failure to record it is logged, not returned: the
// change stands, and an error would tell the client it did not.
func (s *Server) recordVersion(ctx context.Context, actor string, kind jobversion.Kind, key chime.JobKey, spec *api.Job, jobVersion, from int64) {
	ver, err := s.newVersion(actor, kind, key, spec, jobVersion, from)
	if err != nil {
		s.log.Error("cannot record a version of a job", "job_key", key.String(), "error", err)
		return
	}
	s.storeVersions(ctx, "a version of job "+key.String(), []*jobversion.Version{ver})
}

// newVersion makes the version to record of the job key.
func (s *Server) newVersion(actor string, kind jobversion.Kind, key chime.JobKey, spec *api.Job, jobVersion, from int64) (*jobversion.Version, error) {
	b, masked, err := maskedSpec(spec)
	if err != nil {
		return nil, err
	}
	return &jobversion.Version{
		Group: key.Group, Name: key.Name, ID: newID(), JobVersion: jobVersion, Kind: kind,
		Actor: actor, Time: s.now(), RolledBackFrom: from, Spec: b, Masked: masked,
	}, nil
}

// storeVersions records vers in one transaction, through the write queue.
func (s *Server) storeVersions(ctx context.Context, what string, vers []*jobversion.Version) {
	_ = s.writes.persist(ctx, s.log, what, func(ctx context.Context) error {
		_, err := s.versions.RecordAll(ctx, vers)
		if errors.Is(err, jobversion.ErrInvalid) {
			return permanent(err)
		}
		return err
	})
}

// recordCreatedVersions records a created version of each of the jobs
// that writes created, in one transaction. Their specs are built from the
// writes, which are what the store now holds (CreateJobs gave every
// trigger its start time): reading back every new job and its triggers
// would cost two store reads a job.
func (s *Server) recordCreatedVersions(ctx context.Context, actor string, writes []*jobWrite) {
	rec, done := recordCtx(ctx)
	defer done()
	vers := make([]*jobversion.Version, 0, len(writes))
	for _, w := range writes {
		key := w.detail.Key
		spec, err := createdSpec(w)
		if err == nil {
			var ver *jobversion.Version
			if ver, err = s.newVersion(actor, jobversion.Created, key, spec, createdJobVersion, 0); err == nil {
				vers = append(vers, ver)
				continue
			}
		}
		s.log.Error("cannot record a version of a job", "job_key", key.String(), "error", err)
	}
	if len(vers) > 0 {
		s.storeVersions(rec, fmt.Sprintf("the versions of %d new jobs", len(vers)), vers)
	}
}

// createdJobVersion is the version the store gives a new job.
const createdJobVersion = 1

// createdSpec is the spec of the new job w created, as versionSpec would
// read it back: the job at its first version with its triggers in the
// store's order (by group, then name), each with the start time it was
// given.
func createdSpec(w *jobWrite) (*api.Job, error) {
	d := w.detail
	d.Version = createdJobVersion
	infos := make([]chime.TriggerInfo, len(w.triggers))
	for i, t := range w.triggers {
		if t.Origin == "" {
			t.Origin = chime.OriginSchedule // the scheduler's default
		}
		infos[i] = chime.TriggerInfo{Trigger: t}
	}
	slices.SortFunc(infos, func(a, b chime.TriggerInfo) int {
		ka, kb := chime.NewTriggerKey(a.Key.Group, a.Key.Name), chime.NewTriggerKey(b.Key.Group, b.Key.Name)
		return cmp.Or(strings.Compare(ka.Group, kb.Group), strings.Compare(ka.Name, kb.Name))
	})
	j, err := jobToAPI(&d, infos)
	if err != nil {
		return nil, err
	}
	return specForm(*j), nil
}

// recordJobVersion reads the job key as it now is and records it as a
// version.
func (s *Server) recordJobVersion(ctx context.Context, actor string, kind jobversion.Kind, key chime.JobKey, from int64) {
	rec, done := recordCtx(ctx)
	defer done()
	spec, v, err := s.versionSpec(rec, key)
	if err != nil {
		s.log.Error("cannot record a version of a job", "job_key", key.String(), "error", err)
		return
	}
	s.recordVersion(rec, actor, kind, key, spec, v, from)
}

// repairVersions records the version the job key lacks when its newest
// recorded version is not the job as it now is: a change whose writer
// died before recording its version. A job whose own version differs
// from the newest version's, and whose spec differs from it, gets an
// updated version (created when the
// newest is a delete, or there is none); a job that is gone, while its
// newest version is not a delete, gets a deleted version with the newest
// version's spec. The repair's ID is derived from the job's state, so
// that readers repairing the same gap at once record it once; and a
// record on its way for the same job version takes the repair's place
// (see jobversion.RepairActor).
func (s *Server) repairVersions(ctx context.Context, key chime.JobKey) error {
	if strings.HasPrefix(key.Group, workflowGroup("")) {
		return nil // a workflow's task jobs are written with the workflow, which has no job versions
	}
	newest, err := s.versions.List(ctx, key.Group, key.Name, 0, 1)
	if err != nil {
		return err
	}
	var last *jobversion.Version
	if len(newest) == 1 {
		last = &newest[0]
	}
	spec, jobVersion, err := s.versionSpec(ctx, key)
	var ver *jobversion.Version
	switch {
	case errors.Is(err, chime.ErrJobNotFound):
		if last == nil || last.Kind == jobversion.Deleted {
			return nil
		}
		ver = &jobversion.Version{
			Group: key.Group, Name: key.Name, Kind: jobversion.Deleted, Spec: last.Spec, Masked: last.Masked,
		}
	case err != nil:
		return err
	case last != nil && last.Kind != jobversion.Deleted && last.JobVersion == jobVersion:
		return nil
	default:
		kind := jobversion.Updated
		if last == nil || last.Kind == jobversion.Deleted {
			kind = jobversion.Created
		}
		b, masked, err := maskedSpec(spec)
		if err != nil {
			return err
		}
		if kind == jobversion.Updated && bytes.Equal(b, last.Spec) {
			return nil // the job's counter moved without a change of its spec
		}
		ver = &jobversion.Version{
			Group: key.Group, Name: key.Name, Kind: kind, JobVersion: jobVersion, Spec: b, Masked: masked,
		}
	}
	var lastNumber int64
	if last != nil {
		lastNumber = last.Number
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d\x00%d", key.Group, key.Name, lastNumber, ver.JobVersion))
	ver.ID = "repair-" + hex.EncodeToString(sum[:])
	ver.Actor, ver.Time = jobversion.RepairActor, s.now()
	if _, err := s.versions.Record(ctx, ver); err != nil {
		return err
	}
	s.log.Warn("recorded a job's missing version", "job_key", key.String(), "kind", string(ver.Kind), "job_version", ver.JobVersion)
	return nil
}

// versionErr translates the errors of package jobversion into API errors.
func versionErr(err error) error {
	if nf, ok := errors.AsType[*jobversion.NotFoundError](err); ok {
		return httpjson.Errorf(api.CodeNotFound, "version", "%s", nf.Detail())
	}
	if errors.Is(err, jobversion.ErrInvalid) {
		return invalidf("", "%v", err)
	}
	return err
}

// versionToAPI translates a stored version; withSpec decodes its spec.
func versionToAPI(v *jobversion.Version, withSpec bool) (api.JobVersion, error) {
	out := api.JobVersion{
		Number: v.Number, JobVersion: v.JobVersion, Kind: string(v.Kind), Actor: v.Actor, Time: v.Time,
		RolledBackFrom: v.RolledBackFrom, Masked: v.Masked,
	}
	if withSpec {
		var j api.Job
		if err := json.Unmarshal(v.Spec, &j); err != nil {
			return out, fmt.Errorf("server: version %d of job %s/%s: decoding its spec: %w", v.Number, v.Group, v.Name, err)
		}
		out.Spec = &j
	}
	return out, nil
}

// ListJobVersions returns a page of a job's versions, newest first,
// without their specs. A deleted job's versions are listed too.
func (s *Server) ListJobVersions(ctx context.Context, group, name string, q api.JobVersionQuery) (*api.JobVersionList, error) {
	limit := q.Limit
	switch {
	case limit == 0:
		limit = defaultListLimit
	case limit < 0 || limit > maxListLimit:
		return nil, invalidf("limit", "%d: want 1 to %d", q.Limit, maxListLimit)
	}
	var before int64
	if q.Cursor != "" {
		n, err := strconv.ParseInt(q.Cursor, 10, 64)
		if err != nil || n < 1 {
			return nil, invalidf("cursor", "%q is not a cursor this server returned", q.Cursor)
		}
		before = n
	}
	if before == 0 {
		if err := s.repairVersions(ctx, chime.NewJobKey(group, name)); err != nil {
			return nil, versionErr(err)
		}
	}
	page, err := s.versions.List(ctx, group, name, before, limit+1)
	if err != nil {
		return nil, versionErr(err)
	}
	out := &api.JobVersionList{Versions: []api.JobVersion{}}
	for i := range page {
		if i == limit {
			out.Next = strconv.FormatInt(page[i-1].Number, 10)
			break
		}
		v, err := versionToAPI(&page[i], false)
		if err != nil {
			return nil, err
		}
		out.Versions = append(out.Versions, v)
	}
	if len(out.Versions) == 0 && before == 0 {
		// No version: say whether the job is unknown altogether.
		if _, err := s.sched.Job(ctx, chime.NewJobKey(group, name)); err != nil {
			return nil, schedulerErr(chime.NewJobKey(group, name), err)
		}
	}
	return out, nil
}

// GetJobVersion returns version n of a job with its spec.
func (s *Server) GetJobVersion(ctx context.Context, group, name string, n int64) (*api.JobVersion, error) {
	v, err := s.versions.Get(ctx, group, name, n)
	if err != nil {
		return nil, versionErr(err)
	}
	out, err := versionToAPI(v, true)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DiffJobVersions compares two versions of a job: a unified diff from
// version from to version to of their specs. from 0 compares to with the
// job's version before it (nothing when to is the oldest kept).
func (s *Server) DiffJobVersions(ctx context.Context, group, name string, from, to int64) (*api.JobVersionDiff, error) {
	if from < 0 {
		return nil, invalidf("from", "%d is negative", from)
	}
	b, err := s.versions.Get(ctx, group, name, to)
	if err != nil {
		return nil, versionErr(err)
	}
	var a *jobversion.Version
	if from == 0 {
		prev, err := s.versions.List(ctx, group, name, to, 1)
		if err != nil {
			return nil, versionErr(err)
		}
		if len(prev) == 1 {
			a = &prev[0]
		}
	} else if a, err = s.versions.Get(ctx, group, name, from); err != nil {
		return nil, versionErr(err)
	}
	out := &api.JobVersionDiff{To: to}
	var aText, aName string
	if a != nil {
		out.From, aText, aName = a.Number, string(a.Spec)+"\n", fmt.Sprintf("version %d", a.Number)
	} else {
		aName = "nothing"
	}
	out.Diff = udiff.Unified(aName, fmt.Sprintf("version %d", b.Number), aText, string(b.Spec)+"\n")
	return out, nil
}

// RollbackJob writes version n's spec of a job as the job, as PutJob
// writes a whole job (so with the same checks, and with ifMatch, only if
// the job is at that version), and records it as a rolled_back version. A
// deleted job comes back. The values the version masked keep the job's
// current ones; a masked value the job no longer has is refused, naming
// its pointer. A rollback to a spec the job already has writes nothing.
func (s *Server) RollbackJob(ctx context.Context, actor, group, name string, n, ifMatch int64) (*api.Job, error) {
	if err := s.refuseWorkflowJob(ctx, group, name, "rolled back"); err != nil {
		return nil, err
	}
	v, err := s.versions.Get(ctx, group, name, n)
	if err != nil {
		return nil, versionErr(err)
	}
	d := json.NewDecoder(bytes.NewReader(v.Spec))
	d.UseNumber()
	var tree any
	if err := d.Decode(&tree); err != nil {
		return nil, fmt.Errorf("server: version %d of job %s/%s: decoding its spec: %w", n, group, name, err)
	}
	key := chime.NewJobKey(group, name)
	if len(v.Masked) > 0 {
		var cur any
		spec, _, err := s.versionSpec(ctx, key)
		switch {
		case errors.Is(err, chime.ErrJobNotFound):
		case err != nil:
			return nil, err
		default:
			if cur, err = jsonTree(spec); err != nil {
				return nil, err
			}
		}
		for _, p := range v.Masked {
			val, ok := pointerGet(cur, p)
			if !ok || !pointerSet(tree, p, val) {
				return nil, invalidf("version", "version %d of job %s/%s holds a masked value at %s, which a rollback takes from the job, "+
					"and the job has none there; restore it with PUT", n, group, name, p)
			}
		}
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return nil, err
	}
	var job api.Job
	if err := json.Unmarshal(b, &job); err != nil {
		return nil, fmt.Errorf("server: version %d of job %s/%s: decoding its spec: %w", n, group, name, err)
	}
	job.Group, job.Name = group, name
	stored, _, err := s.putJob(ctx, actor, job, ifMatch, nil, n)
	if err != nil {
		return nil, err
	}
	s.audit(ctx, actor, auditJobRollback, jobTarget(key), map[string]any{"version": n, "job_version": stored.Version})
	return stored, nil
}
