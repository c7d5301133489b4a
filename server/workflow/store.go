package workflow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	invalidreq "github.com/chime-scheduler/chime/server/internal/invalid"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrInvalid reports a request refused before the database is
	// touched; the error is an *InvalidError naming the field.
	ErrInvalid = errors.New("workflow: invalid request")
	// ErrNotFound reports a workflow or instance that does not exist.
	ErrNotFound = errors.New("workflow: not found")
	// ErrExists reports an instance ID that is taken: the instance was
	// started already.
	ErrExists = errors.New("workflow: instance exists")
	// ErrConflict reports a change the instance's state does not allow,
	// such as resuming a running instance; nothing was changed.
	ErrConflict = errors.New("workflow: not allowed in the instance's state")
	// ErrPaused reports a task that may not start because its instance
	// is paused; it stays ready and starts once the instance is resumed.
	ErrPaused = errors.New("workflow: instance paused")
)

// InvalidError is a request refused before the database is touched.
// errors.Is(err, ErrInvalid) holds for it. Its Field names the field at
// fault, as the API spells it; its Reason says what is wrong. It is the
// one definition the server's storage packages share
// (server/internal/invalid); here its Err is ErrInvalid.
type InvalidError = invalidreq.Error

// invalid returns an *InvalidError about field.
func invalid(field, format string, args ...any) error {
	return invalidreq.New(ErrInvalid, field, format, args...)
}

func conflict(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConflict, fmt.Sprintf(format, args...))
}

// Store keeps workflows and their instances on the server's database.
// It is safe for concurrent use, by any number of nodes.
type Store struct {
	st    *sqlstore.Store
	db    *sql.DB
	sched string
	q     queries
}

// New migrates the package's tables on st's database and returns a
// Store.
func New(ctx context.Context, st *sqlstore.Store) (*Store, error) {
	if err := st.MigrateComponent(ctx, component, migrations()); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return &Store{st: st, db: st.DB(), sched: st.SchedulerName(), q: renderQueries(st.SQL)}, nil
}

// Definition is a stored workflow: its spec, as the server encodes it,
// and its version.
type Definition struct {
	Name    string
	Spec    json.RawMessage
	Version int64
	Updated time.Time
}

// Put stores spec as workflow name's, and returns its version. A spec
// equal to the stored one changes nothing (changed false). With ifMatch
// above 0 the write happens only if the stored version is ifMatch
// (ErrConflict otherwise).
func (s *Store) Put(ctx context.Context, name string, spec json.RawMessage, ifMatch int64, now time.Time) (version int64, changed bool, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var cur []byte
		var v int64
		err := tx.QueryRowContext(ctx, s.q.defLock, s.sched, name).Scan(&cur, &v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if ifMatch > 0 {
				return conflict("workflow %q does not exist; If-Match names version %d", name, ifMatch)
			}
			version, changed = 1, true
			_, err = tx.ExecContext(ctx, s.q.defInsert, s.sched, name, string(spec), 1, now.UnixNano())
			return err
		case err != nil:
			return err
		case ifMatch > 0 && ifMatch != v:
			return conflict("workflow %q is at version %d; If-Match names version %d", name, v, ifMatch)
		case string(cur) == string(spec):
			version = v
			return nil
		}
		version, changed = v+1, true
		_, err = tx.ExecContext(ctx, s.q.defUpdate, string(spec), version, now.UnixNano(), s.sched, name)
		return err
	})
	return version, changed, err
}

// Get returns workflow name.
func (s *Store) Get(ctx context.Context, name string) (*Definition, error) {
	d, err := scanDef(s.db.QueryRowContext(ctx, s.q.defGet, s.sched, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: workflow %q", ErrNotFound, name)
	}
	return d, err
}

// List returns every workflow, by name.
func (s *Store) List(ctx context.Context) ([]Definition, error) {
	rows, err := s.db.QueryContext(ctx, s.q.defList, s.sched)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []Definition
	for rows.Next() {
		d, err := scanDef(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, rows.Err()
}

// Delete removes workflow name; its instances stay, for the record. It
// reports whether the workflow existed.
func (s *Store) Delete(ctx context.Context, name string) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.q.defDelete, s.sched, name)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

type scanner interface{ Scan(dest ...any) error }

func scanDef(r scanner) (*Definition, error) {
	var d Definition
	var spec string
	var updated int64
	if err := r.Scan(&d.Name, &spec, &d.Version, &updated); err != nil {
		return nil, err
	}
	d.Spec, d.Updated = json.RawMessage(spec), time.Unix(0, updated).UTC()
	return &d, nil
}

// Instance is one run of a workflow.
type Instance struct {
	ID, Workflow string
	State        InstanceState
	Graph        Graph
	Params       map[string]any
	Created      time.Time
	// Finished is zero until the instance ends.
	Finished time.Time
	// Tasks are in the graph's order.
	Tasks []Task
}

// Task is the state of one task of an instance.
type Task struct {
	Name  string
	State TaskState
	// ExecutionID is the task's latest execution; Attempts counts its
	// executions that started.
	ExecutionID string
	Attempts    int
	// Ready, Started and Finished are zero until they happen.
	Ready, Started, Finished time.Time
	Error                    string
}

// TaskRef names a task of an instance.
type TaskRef struct {
	Instance, Task string
}

// Ready is a task to trigger: ready in a running instance.
type Ready struct {
	TaskRef
	Workflow string
	// Params are the instance's parameters, which the task runs with.
	Params map[string]any
	// Round counts the task's executions before this readiness (its
	// Attempts): with the instance and the task it makes the trigger's
	// key, so that a re-run's trigger is a new one.
	Round int
}

// readyOf returns the Ready of the tasks names of in.
func (in *Instance) readyOf(names []string) []Ready {
	out := make([]Ready, 0, len(names))
	for _, n := range names {
		t := in.task(n)
		out = append(out, Ready{TaskRef: TaskRef{Instance: in.ID, Task: n}, Workflow: in.Workflow, Params: in.Params, Round: t.Attempts})
	}
	return out
}

// StartParams describe a new instance.
type StartParams struct {
	// ID is the instance's ID, chosen by the caller.
	ID       string
	Workflow string
	Graph    Graph
	Params   map[string]any
	Now      time.Time
}

// Start records a new running instance and returns the tasks it made
// ready (those without upstream tasks). An instance with p.ID exists
// already: ErrExists, and nothing changes.
func (s *Store) Start(ctx context.Context, p StartParams) ([]Ready, error) {
	if err := Validate(p.Graph); err != nil {
		return nil, err
	}
	g := p.Graph.normalized()
	graph, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	var params []byte
	if len(p.Params) > 0 {
		if params, err = json.Marshal(p.Params); err != nil {
			return nil, invalid("params", "cannot be encoded: %v", err)
		}
	}
	states := make(map[string]TaskState, len(g.Tasks))
	for _, t := range g.Tasks {
		states[t] = TaskPending
	}
	ready := g.advance(states)
	now := p.Now.UnixNano()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q.instInsert, s.sched, p.ID, p.Workflow, string(InstanceRunning), string(graph), nullBytes(params), now); err != nil {
			return err
		}
		for i, t := range g.Tasks {
			var readyAt any
			if states[t] == TaskReady {
				readyAt = now
			}
			if _, err := tx.ExecContext(ctx, s.q.taskInsert, s.sched, p.ID, t, i, string(states[t]), readyAt); err != nil {
				return err
			}
		}
		return nil
	})
	if s.st.IsUniqueViolation(err) {
		return nil, fmt.Errorf("%w: %s", ErrExists, p.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("workflow: starting instance %s of %q: %w", p.ID, p.Workflow, err)
	}
	out := make([]Ready, len(ready))
	for i, n := range ready {
		out[i] = Ready{TaskRef: TaskRef{Instance: p.ID, Task: n}, Workflow: p.Workflow, Params: p.Params}
	}
	return out, nil
}

// TaskStarted records that execution executionID of task ref starts, and
// reports whether it may run: false for a task that already ended or was
// cancelled, or for an instance that ended or was killed. A ready task of
// a paused instance does not start (ErrPaused, and nothing changes): it
// stays ready, and Resume returns it. A task already running (a retry or
// a recovery of its execution) goes on while its instance is paused.
func (s *Store) TaskStarted(ctx context.Context, ref TaskRef, executionID string, now time.Time) (bool, error) {
	run := false
	err := s.change(ctx, ref.Instance, func(in *Instance) error {
		switch in.taskStarted(ref.Task, executionID, now) {
		case StartRun:
			run = true
		case StartHeld:
			return fmt.Errorf("%w: task %q of instance %s starts when the instance is resumed", ErrPaused, ref.Task, ref.Instance)
		}
		return nil
	})
	return run, err
}

// TaskStart is one element of TasksStarted: execution ExecutionID of a
// task starts.
type TaskStart struct {
	TaskRef
	ExecutionID string
}

// StartVerdict is what TasksStarted decided about one start.
type StartVerdict int

// The verdicts of TasksStarted.
const (
	// StartRefused: the execution must not run (the task already ended or
	// was cancelled, the instance ended, was killed or does not exist).
	StartRefused StartVerdict = iota
	// StartRun: the execution runs; the task is recorded running.
	StartRun
	// StartHeld: the task is ready but its instance is paused; nothing
	// changed, and resuming the instance triggers the task again.
	StartHeld
)

// TasksStarted records the starts of several tasks' executions in one
// transaction, each as TaskStarted records one, and reports by element
// what it decided; a start whose instance does not exist is refused. The
// instances' rows are locked in the order of their IDs, so that two
// batches never wait on each other in a cycle, and each instance's tasks
// are decided under its lock, as TaskStarted decides them: the batch only
// saves the commits of separate transactions.
func (s *Store) TasksStarted(ctx context.Context, starts []TaskStart, now time.Time) ([]StartVerdict, error) {
	byInstance := make(map[string][]int)
	for i, st := range starts {
		byInstance[st.Instance] = append(byInstance[st.Instance], i)
	}
	ids := slices.Sorted(maps.Keys(byInstance))
	var run []StartVerdict
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		run = make([]StartVerdict, len(starts))
		for _, id := range ids {
			err := s.changeTx(ctx, tx, id, func(in *Instance) error {
				for _, i := range byInstance[id] {
					run[i] = in.taskStarted(starts[i].Task, starts[i].ExecutionID, now)
				}
				return nil
			})
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("workflow: recording %d task starts: %w", len(starts), err)
	}
	return run, nil
}

// taskStarted moves task name to running with execution executionID, and
// reports whether the execution may run (see TaskStarted): a ready task of
// a paused instance is held, unchanged.
func (in *Instance) taskStarted(name, executionID string, now time.Time) StartVerdict {
	t := in.task(name)
	if t == nil || in.State.Final() || (t.State != TaskReady && t.State != TaskRunning) {
		return StartRefused
	}
	if in.State == InstancePaused && t.State == TaskReady {
		return StartHeld
	}
	if t.State == TaskRunning && t.ExecutionID == executionID {
		return StartRun
	}
	t.State, t.ExecutionID, t.Error = TaskRunning, executionID, ""
	t.Attempts++
	if t.Started.IsZero() {
		t.Started = now
	}
	return StartRun
}

// TaskEnded records that task ref's execution executionID ended for good
// (succeeded, or failed with no retry left), and in the same transaction
// makes ready the tasks that waited only for it. It returns the tasks to
// trigger now: none while the instance is paused. An end of an execution
// that is not the task's latest, or of a task not running, changes
// nothing.
func (s *Store) TaskEnded(ctx context.Context, ref TaskRef, executionID string, succeeded bool, message string, now time.Time) ([]Ready, error) {
	var ready []Ready
	err := s.change(ctx, ref.Instance, func(in *Instance) error {
		t := in.task(ref.Task)
		if t == nil || t.State != TaskRunning || t.ExecutionID != executionID {
			return nil
		}
		t.State, t.Finished, t.Error = TaskFailed, now, message
		if succeeded {
			t.State, t.Error = TaskSucceeded, ""
		}
		ready = in.readyOf(in.advance(now))
		return nil
	})
	return ready, err
}

// Pause stops the tasks of a running instance from starting: TaskStarted
// refuses its ready tasks (ErrPaused) and TaskEnded readies no task to
// trigger. The tasks running go on to their end.
func (s *Store) Pause(ctx context.Context, id string) error {
	return s.change(ctx, id, func(in *Instance) error {
		if in.State != InstanceRunning {
			return conflict("instance %s is %s; only a running instance can be paused", id, in.State)
		}
		in.State = InstancePaused
		return nil
	})
}

// Resume lets the tasks of a paused instance start again, and returns
// those ready to trigger.
func (s *Store) Resume(ctx context.Context, id string) ([]Ready, error) {
	var ready []Ready
	err := s.change(ctx, id, func(in *Instance) error {
		if in.State != InstancePaused {
			return conflict("instance %s is %s; only a paused instance can be resumed", id, in.State)
		}
		in.State = InstanceRunning
		ready = in.readyOf(in.inState(TaskReady))
		return nil
	})
	return ready, err
}

// Kill ends an instance that has not ended: its tasks that did not start
// are cancelled, and it returns the executions of those running, which
// the caller kills (their tasks end as failed when they stop).
func (s *Store) Kill(ctx context.Context, id string, now time.Time) ([]string, error) {
	var running []string
	err := s.change(ctx, id, func(in *Instance) error {
		if in.State.Final() {
			return conflict("instance %s already ended (%s)", id, in.State)
		}
		for i := range in.Tasks {
			t := &in.Tasks[i]
			switch t.State {
			case TaskPending, TaskReady:
				t.State, t.Finished = TaskCancelled, now
			case TaskRunning:
				running = append(running, t.ExecutionID)
			}
		}
		in.State, in.Finished = InstanceKilled, now
		return nil
	})
	return running, err
}

// Rerun starts an ended instance that did not succeed again from its
// failed tasks: those failed, skipped or cancelled, and every task
// downstream of them, are pending again, and it returns those ready to
// trigger. The other succeeded tasks keep their result.
func (s *Store) Rerun(ctx context.Context, id string, now time.Time) ([]Ready, error) {
	var ready []Ready
	err := s.change(ctx, id, func(in *Instance) error {
		if !in.State.Final() || in.State == InstanceSucceeded {
			return conflict("instance %s is %s; only a failed or killed instance can be re-run", id, in.State)
		}
		for _, t := range in.Tasks {
			if t.State == TaskRunning {
				return conflict("task %q of instance %s is still running", t.Name, id)
			}
		}
		again := in.Graph.downstream(in.Tasks, func(t Task) bool { return t.State != TaskSucceeded })
		for i := range in.Tasks {
			t := &in.Tasks[i]
			if again[t.Name] {
				t.State, t.Ready, t.Started, t.Finished, t.Error = TaskPending, time.Time{}, time.Time{}, time.Time{}, ""
			}
		}
		in.State, in.Finished = InstanceRunning, time.Time{}
		ready = in.readyOf(in.advance(now))
		return nil
	})
	return ready, err
}

// Instance returns instance id with its tasks.
func (s *Store) Instance(ctx context.Context, id string) (*Instance, error) {
	in, err := s.load(ctx, s.db, s.q.instGet, id)
	if err != nil {
		return nil, err
	}
	return in, nil
}

// Instances returns the newest instances of a workflow (of every
// workflow when workflow is empty), at most limit, without their tasks.
func (s *Store) Instances(ctx context.Context, workflow string, limit int) ([]Instance, error) {
	q, args := s.q.instList, []any{s.sched, limit}
	if workflow != "" {
		q, args = s.q.instListOf, []any{s.sched, workflow, limit}
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []Instance
	for rows.Next() {
		in, err := scanInstance(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *in)
	}
	return out, rows.Err()
}

// ReadyTasks returns up to limit tasks of running instances that became
// ready before before: those whose trigger the node that readied them
// may not have created.
func (s *Store) ReadyTasks(ctx context.Context, before time.Time, limit int) ([]Ready, error) {
	rows, err := s.db.QueryContext(ctx, s.q.readyTasks, s.sched, before.UnixNano(), limit)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []Ready
	for rows.Next() {
		var r Ready
		var params sql.NullString
		if err := rows.Scan(&r.Instance, &r.Task, &r.Round, &r.Workflow, &params); err != nil {
			return nil, err
		}
		if params.Valid && params.String != "" {
			if err := json.Unmarshal([]byte(params.String), &r.Params); err != nil {
				return nil, fmt.Errorf("workflow: instance %s: decoding its params: %w", r.Instance, err)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// task returns the instance's task name, or nil.
func (in *Instance) task(name string) *Task {
	for i := range in.Tasks {
		if in.Tasks[i].Name == name {
			return &in.Tasks[i]
		}
	}
	return nil
}

// inState returns the names of the instance's tasks in state st.
func (in *Instance) inState(st TaskState) []string {
	var out []string
	for _, t := range in.Tasks {
		if t.State == st {
			out = append(out, t.Name)
		}
	}
	return out
}

// advance decides the pending tasks whose upstream tasks ended and, once
// every task ended, the instance's outcome. It returns the tasks to
// trigger: those it made ready, unless the instance is paused.
func (in *Instance) advance(now time.Time) []string {
	states := make(map[string]TaskState, len(in.Tasks))
	for _, t := range in.Tasks {
		states[t.Name] = t.State
	}
	ready := in.Graph.advance(states)
	for i := range in.Tasks {
		t := &in.Tasks[i]
		if states[t.Name] == t.State {
			continue
		}
		t.State = states[t.Name]
		switch t.State {
		case TaskReady:
			t.Ready = now
		case TaskSkipped:
			t.Finished = now
		}
	}
	if in.State == InstanceRunning || in.State == InstancePaused {
		if st := outcome(in.State, states); st.Final() {
			in.State, in.Finished = st, now
		}
	}
	if in.State != InstanceRunning {
		return nil
	}
	return ready
}

// change runs fn on instance id, read under its row's lock, and writes
// what fn changed, in one transaction.
func (s *Store) change(ctx context.Context, id string, fn func(*Instance) error) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return s.changeTx(ctx, tx, id, fn) })
}

// changeTx is change in the transaction tx.
func (s *Store) changeTx(ctx context.Context, tx *sql.Tx, id string, fn func(*Instance) error) error {
	in, err := s.load(ctx, tx, s.q.instLock, id)
	if err != nil {
		return err
	}
	before := *in
	before.Tasks = append([]Task(nil), in.Tasks...)
	if err := fn(in); err != nil {
		return err
	}
	for i, t := range in.Tasks {
		if t == before.Tasks[i] {
			continue
		}
		if _, err := tx.ExecContext(ctx, s.q.taskUpdate, string(t.State), t.ExecutionID, t.Attempts,
			nullTime(t.Ready), nullTime(t.Started), nullTime(t.Finished), t.Error, s.sched, id, t.Name); err != nil {
			return err
		}
	}
	if in.State != before.State || !in.Finished.Equal(before.Finished) {
		if _, err := tx.ExecContext(ctx, s.q.instUpdate, string(in.State), nullTime(in.Finished), s.sched, id); err != nil {
			return err
		}
	}
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// load reads instance id with q (instGet or instLock) and its tasks.
func (s *Store) load(ctx context.Context, db querier, q, id string) (*Instance, error) {
	in, err := scanInstance(db.QueryRowContext(ctx, q, s.sched, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: instance %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, s.q.taskList, s.sched, id)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var t Task
		var st string
		var ready, started, finished sql.NullInt64
		if err := rows.Scan(&t.Name, &st, &t.ExecutionID, &t.Attempts, &ready, &started, &finished, &t.Error); err != nil {
			return nil, err
		}
		t.State, t.Ready, t.Started, t.Finished = TaskState(st), timeOf(ready), timeOf(started), timeOf(finished)
		in.Tasks = append(in.Tasks, t)
	}
	return in, rows.Err()
}

func scanInstance(r scanner) (*Instance, error) {
	var in Instance
	var st, graph string
	var params sql.NullString
	var created int64
	var finished sql.NullInt64
	if err := r.Scan(&in.ID, &in.Workflow, &st, &graph, &params, &created, &finished); err != nil {
		return nil, err
	}
	in.State, in.Created, in.Finished = InstanceState(st), time.Unix(0, created).UTC(), timeOf(finished)
	if err := json.Unmarshal([]byte(graph), &in.Graph); err != nil {
		return nil, fmt.Errorf("workflow: instance %s: decoding its graph: %w", in.ID, err)
	}
	if params.Valid && params.String != "" {
		if err := json.Unmarshal([]byte(params.String), &in.Params); err != nil {
			return nil, fmt.Errorf("workflow: instance %s: decoding its params: %w", in.ID, err)
		}
	}
	return &in, nil
}

// inTx runs fn in a transaction and commits it when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

func timeOf(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}
