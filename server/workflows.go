package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/server/httpapi"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/workflow"
)

// Workflows (see docs/workflows.md and package server/workflow): each
// task of workflow W is the server job "workflow.W"/task, which the
// server keeps in step with the workflow's tasks and which requests
// recovery. A ready task of a running instance runs as a one-shot trigger
// of that job, of origin chime.OriginWorkflow, keyed by the instance, the
// task and its round (how many executions it had), so that the scheduler
// fires it exactly once however many nodes create it. Its run facts name
// the instance and the task, and a retry carries them on.

// Audit actions of workflows.
const (
	auditWorkflowPut    history.AuditAction = "workflow.put"
	auditWorkflowDelete history.AuditAction = "workflow.delete"
	auditWorkflowRun    history.AuditAction = "workflow.run"
	auditInstanceChange history.AuditAction = "workflow.instance"
)

// workflowTriggerGroup is the group of the tasks' one-shot triggers.
const workflowTriggerGroup = "WORKFLOW_TRIGGER"

// typeWorkflow is the job type that starts an instance of a workflow
// (workflowStarter), and startJob the name of the job of that type in
// group workflow.NAME that carries workflow NAME's triggers. A task name
// starts with a letter or digit, so no task takes it.
const (
	typeWorkflow = "workflow"
	startJob     = "_start"
)

// sweepAfter is how long a task stays ready, its trigger maybe never
// made (its node died first), before the sweep makes it; sweepEvery is
// how often each node sweeps.
const (
	sweepAfter = 5 * time.Second
	sweepEvery = 2 * time.Second
)

// workflowFacts name the task a run is for; runFacts carry them.
type workflowFacts struct {
	Instance string `json:"instance"`
	Task     string `json:"task"`
}

// workflowGroup is the job group of workflow name's tasks.
func workflowGroup(name string) string { return "workflow." + name }

// workflowNotFound is the API's error for a missing workflow.
func workflowNotFound(name string) *api.Error {
	return httpjson.Errorf(api.CodeNotFound, "", "workflow %q not found", name)
}

// workflowErr translates the errors of package workflow.
func workflowErr(err error) error {
	var fe *workflow.InvalidError
	switch {
	case errors.As(err, &fe):
		return invalidf(fe.Field, "%s", fe.Reason)
	case errors.Is(err, workflow.ErrExists):
		return err // the starter's; never the API's
	case errors.Is(err, workflow.ErrNotFound):
		return httpjson.Errorf(api.CodeNotFound, "", "%v", err)
	case errors.Is(err, workflow.ErrConflict):
		return httpjson.Errorf(api.CodeConflict, "", "%v", err)
	}
	return err
}

// graphOf returns a workflow's DAG.
func graphOf(wf *api.Workflow) workflow.Graph {
	g := workflow.Graph{Tasks: make([]string, len(wf.Tasks)), Edges: make([]workflow.Edge, len(wf.Edges))}
	for i, t := range wf.Tasks {
		g.Tasks[i] = t.Name
	}
	for i, e := range wf.Edges {
		g.Edges[i] = workflow.Edge{From: e.From, To: e.To, On: e.On}
	}
	return g
}

// taskJob is the server job that runs task t of workflow name.
func taskJob(name string, t api.WorkflowTask) api.Job {
	return api.Job{
		Group: workflowGroup(name), Name: t.Name, Description: "task " + t.Name + " of workflow " + name,
		Type: t.Type, HTTP: t.HTTP, Shell: t.Shell, Executor: t.Executor, Data: t.Data,
		Timeout: t.Timeout, Retry: t.Retry, RequestsRecovery: true,
	}
}

// starterJob is the job that carries wf's triggers and starts its
// instances.
func starterJob(wf *api.Workflow) api.Job {
	return api.Job{
		Group: workflowGroup(wf.Name), Name: startJob, Description: "starts an instance of workflow " + wf.Name,
		Type: typeWorkflow, Triggers: wf.Triggers, RequestsRecovery: true,
	}
}

// prefixed returns err with its field under prefix.
func prefixed(prefix string, err error) error {
	var ae *api.Error
	if errors.As(err, &ae) {
		out := *ae
		out.Field = prefix
		if ae.Field != "" {
			out.Field = prefix + "." + ae.Field
		}
		return &out
	}
	return err
}

// checkWorkflow refuses a workflow whose name, graph or tasks are not
// valid, naming the field (tasks[2].http.url, edges[3]); it reads nothing
// but the server's configuration.
func (s *Server) checkWorkflow(ctx context.Context, wf *api.Workflow) error {
	if err := workflow.CheckTaskName("name", wf.Name); err != nil {
		return workflowErr(err)
	}
	if err := workflow.Validate(graphOf(wf)); err != nil {
		return workflowErr(err)
	}
	if len(wf.Triggers) > 0 {
		if _, err := s.jobFromAPI(ctx, starterJob(wf)); err != nil {
			return err
		}
	}
	for i, t := range wf.Tasks {
		prefix := fmt.Sprintf("tasks[%d]", i)
		job := taskJob(wf.Name, t)
		if err := s.checkShellWrite(ctx, chime.NewJobKey(job.Group, job.Name), job.Type, "writing"); err != nil {
			return prefixed(prefix, err)
		}
		if _, err := s.jobFromAPI(ctx, job); err != nil {
			return prefixed(prefix, err)
		}
	}
	return nil
}

// PutWorkflow creates or replaces a workflow and the jobs of its tasks.
// A workflow refused (a cycle, an unknown task type, an edge to a missing
// task, a bad task setting) changes nothing. With ifMatch above 0, the
// write happens only if the stored version is ifMatch.
func (s *Server) PutWorkflow(ctx context.Context, actor string, wf api.Workflow, ifMatch int64) (*api.Workflow, bool, error) {
	wf.Version, wf.Updated = 0, nil
	if err := s.checkWorkflow(ctx, &wf); err != nil {
		return nil, false, err
	}
	old, err := s.workflows.Get(ctx, wf.Name)
	created := errors.Is(err, workflow.ErrNotFound)
	if err != nil && !created {
		return nil, false, err
	}
	spec, err := json.Marshal(wf)
	if err != nil {
		return nil, false, err
	}
	version, changed, err := s.workflows.Put(ctx, wf.Name, spec, ifMatch, s.now())
	if err != nil {
		return nil, false, workflowErr(err)
	}
	keep := make(map[string]bool, len(wf.Tasks))
	for _, t := range wf.Tasks {
		keep[t.Name] = true
		if _, _, err := s.putJob(ctx, actor, taskJob(wf.Name, t), 0, nil, 0); err != nil {
			return nil, false, fmt.Errorf("writing the job of task %q: %w", t.Name, err)
		}
	}
	switch {
	case len(wf.Triggers) > 0:
		if _, _, err := s.putJob(ctx, actor, starterJob(&wf), 0, nil, 0); err != nil {
			return nil, false, fmt.Errorf("writing the job of the workflow's triggers: %w", err)
		}
	case old != nil:
		if err := s.deleteJob(ctx, actor, workflowGroup(wf.Name), startJob); err != nil && !isNotFound(err) {
			return nil, false, fmt.Errorf("deleting the job of the workflow's former triggers: %w", err)
		}
	}
	if old != nil {
		var prev api.Workflow
		if err := json.Unmarshal(old.Spec, &prev); err == nil {
			for _, t := range prev.Tasks {
				if keep[t.Name] {
					continue
				}
				if err := s.deleteJob(ctx, actor, workflowGroup(wf.Name), t.Name); err != nil && !isNotFound(err) {
					return nil, false, fmt.Errorf("deleting the job of former task %q: %w", t.Name, err)
				}
			}
		}
	}
	if changed {
		s.audit(ctx, actor, auditWorkflowPut, "workflow/"+wf.Name, map[string]any{"version": version, "tasks": len(wf.Tasks)})
	}
	out, err := s.GetWorkflow(ctx, wf.Name)
	return out, created, err
}

// CheckWorkflow refuses a workflow PutWorkflow would refuse for its
// content (its name, graph and tasks' settings), naming the field, and
// changes nothing. The check does not depend on who asks.
func (s *Server) CheckWorkflow(ctx context.Context, _ string, wf api.Workflow) error {
	return s.checkWorkflow(ctx, &wf)
}

// refuseWorkflowJob refuses, through the jobs API, a write of a job in
// the group of an existing workflow (workflow.NAME): those jobs are the
// workflow's tasks and the carrier of its triggers, which only the
// workflow's own writes change (PutWorkflow, DeleteWorkflow); a change
// behind its back would break its instances. verb says what the request
// does to the job ("changed", "deleted").
func (s *Server) refuseWorkflowJob(ctx context.Context, group, name, verb string) error {
	wf, ok := strings.CutPrefix(group, "workflow.")
	if !ok {
		return nil
	}
	d, err := s.workflows.Get(ctx, wf)
	switch {
	case errors.Is(err, workflow.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	what := fmt.Sprintf("in the group of workflow %q, which keeps its tasks' jobs,", wf)
	if spec, err := workflowOf(d); err == nil && slices.ContainsFunc(spec.Tasks, func(t api.WorkflowTask) bool { return t.Name == name }) {
		what = fmt.Sprintf("task %q of workflow %q", name, wf)
	}
	if name == startJob {
		what = fmt.Sprintf("the job that carries the triggers of workflow %q", wf)
	}
	return httpjson.Errorf(api.CodeConflict, "group",
		"job %s/%s is %s and cannot be %s through the jobs API; change the workflow instead (chime workflows apply, or PUT/DELETE /api/v1/workflows/%s)",
		group, name, what, verb, wf)
}

// isNotFound reports whether err is the API's not_found.
func isNotFound(err error) bool {
	var ae *api.Error
	return errors.As(err, &ae) && ae.Code == api.CodeNotFound
}

// GetWorkflow returns workflow name.
func (s *Server) GetWorkflow(ctx context.Context, name string) (*api.Workflow, error) {
	d, err := s.workflows.Get(ctx, name)
	if errors.Is(err, workflow.ErrNotFound) {
		return nil, workflowNotFound(name)
	}
	if err != nil {
		return nil, err
	}
	wf, err := workflowOf(d)
	if err != nil || len(wf.Triggers) == 0 {
		return wf, err
	}
	// The triggers' state and fire times are the starter job's.
	if job, err := s.GetJob(ctx, workflowGroup(name), startJob); err == nil {
		wf.Triggers = job.Triggers
	}
	return wf, nil
}

func workflowOf(d *workflow.Definition) (*api.Workflow, error) {
	var wf api.Workflow
	if err := json.Unmarshal(d.Spec, &wf); err != nil {
		return nil, fmt.Errorf("workflow %q: decoding its spec: %w", d.Name, err)
	}
	wf.Version = d.Version
	updated := d.Updated
	wf.Updated = &updated
	return &wf, nil
}

// ListWorkflows lists the workflows, by name.
func (s *Server) ListWorkflows(ctx context.Context) (*api.WorkflowList, error) {
	defs, err := s.workflows.List(ctx)
	if err != nil {
		return nil, err
	}
	out := &api.WorkflowList{Workflows: []api.Workflow{}}
	for i := range defs {
		wf, err := workflowOf(&defs[i])
		if err != nil {
			return nil, err
		}
		out.Workflows = append(out.Workflows, *wf)
	}
	return out, nil
}

// DeleteWorkflow deletes a workflow and its tasks' jobs; its instances
// stay in the record.
func (s *Server) DeleteWorkflow(ctx context.Context, actor, name string) error {
	wf, err := s.GetWorkflow(ctx, name)
	if err != nil {
		return err
	}
	jobs := []string{startJob}
	for _, t := range wf.Tasks {
		jobs = append(jobs, t.Name)
	}
	for _, job := range jobs {
		if err := s.deleteJob(ctx, actor, workflowGroup(name), job); err != nil && !isNotFound(err) {
			return err
		}
	}
	if _, err := s.workflows.Delete(ctx, name); err != nil {
		return err
	}
	s.audit(ctx, actor, auditWorkflowDelete, "workflow/"+name, nil)
	return nil
}

// RunWorkflow starts an instance of workflow name now, with params its
// tasks see.
func (s *Server) RunWorkflow(ctx context.Context, actor, name string, req api.WorkflowRunRequest) (*api.WorkflowInstance, error) {
	if n, err := dataSize(req.Params); err != nil || n > s.cfg.MaxJobDataBytes {
		return nil, invalidf("params", "encode to %d bytes, more than this server's limit of %d", n, s.cfg.MaxJobDataBytes)
	}
	wf, err := s.GetWorkflow(ctx, name)
	if err != nil {
		return nil, err
	}
	id := newID()
	if err := s.startInstance(ctx, id, wf, req.Params); err != nil {
		return nil, err
	}
	s.audit(ctx, actor, auditWorkflowRun, "workflow/"+name, map[string]any{"instance": id, "params": len(req.Params)})
	return s.GetWorkflowInstance(ctx, id)
}

// startInstance starts instance id of wf and triggers its first tasks.
func (s *Server) startInstance(ctx context.Context, id string, wf *api.Workflow, params map[string]any) error {
	ready, err := s.workflows.Start(ctx, workflow.StartParams{ID: id, Workflow: wf.Name, Graph: graphOf(wf), Params: params, Now: s.now()})
	if err != nil {
		return workflowErr(err)
	}
	s.triggerTasks(ctx, ready)
	return nil
}

// workflowStarter is the Go job type "workflow": each run starts an
// instance of the workflow its job belongs to (group workflow.NAME), with
// the run's data as parameters. The instance's ID comes from the firing
// (its trigger and scheduled time), so that a run re-run after its node
// died finds the instance it started and starts no other.
type workflowStarter struct{ s *Server }

// Execute starts the instance.
func (w workflowStarter) Execute(ctx context.Context, jc *chime.JobContext) error {
	name, ok := strings.CutPrefix(jc.Job.Key.Group, "workflow.")
	if !ok {
		return fmt.Errorf("job %s is not in the group of a workflow (workflow.NAME)", jc.Job.Key)
	}
	wf, err := w.s.GetWorkflow(ctx, name)
	if err != nil {
		return err
	}
	firing := jc.Job.Key.String() + "\x00" + jc.ScheduledFireTime.UTC().Format(time.RFC3339Nano)
	if jc.Trigger != nil {
		firing += "\x00" + jc.Trigger.Key.String()
	}
	sum := sha256.Sum256([]byte(firing))
	id := hex.EncodeToString(sum[:16])
	params := maps.Clone(map[string]any(jc.MergedData))
	err = w.s.startInstance(ctx, id, wf, params)
	if errors.Is(err, workflow.ErrExists) {
		jc.Logger.Info("the instance of this firing was started already", "instance", id)
		return nil
	}
	if err != nil {
		return err
	}
	jc.Logger.Info("started a workflow instance", "workflow", name, "instance", id)
	return nil
}

// triggerTasks makes the one-shot triggers of the ready tasks, in one
// write (the eight tasks a diamond's start readies cost the database one
// commit, not eight); those that exist already are left as they are. When
// the batch is refused (say, a task's job was deleted), each trigger is
// made on its own, so that one bad task holds back no other. A trigger it
// cannot make is left to the sweep (sweepWorkflows), which finds the task
// still ready.
func (s *Server) triggerTasks(ctx context.Context, ready []workflow.Ready) {
	if len(ready) == 0 {
		return
	}
	triggers := make([]chime.Trigger, 0, len(ready))
	for _, r := range ready {
		t, err := taskTrigger(r)
		if err != nil {
			s.log.Warn("cannot trigger a workflow task; the sweep will", "instance", r.Instance, "task", r.Task, "error", err)
			continue
		}
		triggers = append(triggers, t)
	}
	opts := &chime.ScheduleTriggersOptions{SkipExisting: true}
	_, err := s.sched.ScheduleTriggers(ctx, triggers, opts)
	if err == nil {
		return
	}
	if len(triggers) > 1 {
		for _, t := range triggers {
			if _, err := s.sched.ScheduleTriggers(ctx, []chime.Trigger{t}, opts); err != nil {
				s.log.Warn("cannot trigger a workflow task; the sweep will", "trigger_key", t.Key.String(), "error", err)
			}
		}
		return
	}
	s.log.Warn("cannot trigger a workflow task; the sweep will", "trigger_key", triggers[0].Key.String(), "error", err)
}

// taskTrigger is ready task r's one-shot trigger, keyed by its instance,
// task and round.
func taskTrigger(r workflow.Ready) (chime.Trigger, error) {
	meta, err := factsMeta(runFacts{Workflow: &workflowFacts{Instance: r.Instance, Task: r.Task}})
	if err != nil {
		return chime.Trigger{}, err
	}
	t := chime.Trigger{
		Key:      chime.NewTriggerKey(workflowTriggerGroup, fmt.Sprintf("%s.%s.%d", r.Instance, r.Task, r.Round)),
		JobKey:   chime.NewJobKey(workflowGroup(r.Workflow), r.Task),
		Schedule: &schedule.Simple{},
		Origin:   chime.OriginWorkflow,
		Metadata: meta,
	}
	if len(r.Params) > 0 {
		t.Data = chime.JobData(maps.Clone(r.Params))
	}
	return t, nil
}

// sweepWorkflows makes, every sweepEvery until ctx ends, the triggers of
// the tasks ready for longer than sweepAfter: a node that died between
// readying a task and making its trigger left it so. Every
// workflowPruneEvery it also prunes the old instances (pruneWorkflows).
func (s *Server) sweepWorkflows(ctx context.Context) {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	var pruned time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if now := s.now(); now.Sub(pruned) >= workflowPruneEvery {
			pruned = now
			s.pruneWorkflows(ctx, now)
		}
		ready, err := s.workflows.ReadyTasks(ctx, s.now().Add(-sweepAfter), 500)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("cannot read the ready workflow tasks", "error", err)
			}
			continue
		}
		s.triggerTasks(ctx, ready)
	}
}

// startWorkflowTask records that a's execution of its workflow task
// starts, and reports whether it may run: not when the task already
// ended or its instance was killed, nor while its instance is paused (the
// run is recorded as skipped; a paused task stays ready, and resuming the
// instance triggers it again). The starts the node's workers record at
// once share one transaction (see taskStartBatcher).
func (s *Server) startWorkflowTask(ctx context.Context, a *attempt) bool {
	ref := workflow.TaskRef{Instance: a.workflow.Instance, Task: a.workflow.Task}
	verdict, err := s.taskStarts.start(workflow.TaskStart{TaskRef: ref, ExecutionID: a.id}, func(starts []workflow.TaskStart) ([]workflow.StartVerdict, error) {
		var verdicts []workflow.StartVerdict
		err := s.writes.persist(ctx, a.log, "the start of workflow tasks", func(ctx context.Context) error {
			var err error
			verdicts, err = s.workflows.TasksStarted(ctx, starts, s.now())
			return err
		})
		return verdicts, err
	})
	switch {
	case err == nil && verdict == workflow.StartHeld:
		s.recordSkipped(ctx, a, fmt.Sprintf("workflow instance %s is paused; task %q starts when it is resumed", ref.Instance, ref.Task))
		return false
	case err != nil || verdict != workflow.StartRun:
		s.recordSkipped(ctx, a, fmt.Sprintf("task %q of workflow instance %s already ended, or the instance did", ref.Task, ref.Instance))
		return false
	}
	return true
}

// endWorkflowTask records the end of a's workflow task when a was its
// last attempt (it succeeded, was killed, failed with no retry left, or
// was cancelled by its node's stop, which no recovery re-runs),
// and triggers the tasks that waited only for it.
func (s *Server) endWorkflowTask(ctx context.Context, a *attempt, p *plan, f history.Finish) {
	if a.workflow == nil {
		return
	}
	stopped := errors.Is(context.Cause(ctx), chime.ErrStopped) || errors.Is(context.Cause(ctx), chime.ErrInterrupted)
	switch {
	case f.Outcome == history.OutcomeSucceeded, f.Outcome == history.OutcomeKilled:
	case f.Outcome == history.OutcomeCancelled && stopped:
		// The node stopped before the task ended: no recovery re-runs
		// it, so it failed; a re-run of the instance runs it again.
	case decides(f.Outcome) && !p.retryLeft(a.number):
	default:
		return // a retry follows, or a recovery re-runs it
	}
	ref := workflow.TaskRef{Instance: a.workflow.Instance, Task: a.workflow.Task}
	var ready []workflow.Ready
	_ = s.writes.persist(ctx, a.log, "the end of a workflow task", func(ctx context.Context) error {
		var err error
		ready, err = s.workflows.TaskEnded(ctx, ref, a.id, f.Outcome == history.OutcomeSucceeded, f.Error, f.FinishedTime)
		if errors.Is(err, workflow.ErrNotFound) {
			return permanent(err)
		}
		return err
	})
	rec, done := recordCtx(ctx)
	defer done()
	s.triggerTasks(rec, ready)
}

// ListWorkflowInstances lists the newest instances of workflow name (of
// every workflow when name is empty), at most limit, without their tasks.
func (s *Server) ListWorkflowInstances(ctx context.Context, name string, limit int) (*api.WorkflowInstanceList, error) {
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	list, err := s.workflows.Instances(ctx, name, limit)
	if err != nil {
		return nil, err
	}
	out := &api.WorkflowInstanceList{Instances: []api.WorkflowInstance{}}
	for i := range list {
		out.Instances = append(out.Instances, *instanceOf(&list[i]))
	}
	return out, nil
}

// GetWorkflowInstance returns instance id with its tasks.
func (s *Server) GetWorkflowInstance(ctx context.Context, id string) (*api.WorkflowInstance, error) {
	in, err := s.workflows.Instance(ctx, id)
	if err != nil {
		return nil, workflowErr(err)
	}
	return instanceOf(in), nil
}

func instanceOf(in *workflow.Instance) *api.WorkflowInstance {
	out := &api.WorkflowInstance{
		ID: in.ID, Workflow: in.Workflow, State: string(in.State), Params: in.Params, Created: in.Created,
		Finished: timePtr(in.Finished), Tasks: []api.WorkflowTaskRun{},
	}
	for _, e := range in.Graph.Edges {
		out.Edges = append(out.Edges, api.WorkflowEdge{From: e.From, To: e.To, On: e.On})
	}
	for _, t := range in.Tasks {
		out.Tasks = append(out.Tasks, api.WorkflowTaskRun{
			Task: t.Name, State: string(t.State), ExecutionID: t.ExecutionID, Attempts: t.Attempts,
			Ready: timePtr(t.Ready), Started: timePtr(t.Started), Finished: timePtr(t.Finished), Error: t.Error,
		})
	}
	return out
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Actions on an instance, as the API names them.
const (
	InstancePause  = "pause"
	InstanceResume = "resume"
	InstanceKill   = "kill"
	InstanceRerun  = "rerun"
)

// ChangeWorkflowInstance pauses, resumes, kills or re-runs (from its
// failed tasks) instance id, and returns it. Killing asks the nodes
// running its tasks to kill them.
func (s *Server) ChangeWorkflowInstance(ctx context.Context, actor, id, action string) (*api.WorkflowInstance, error) {
	var ready []workflow.Ready
	var err error
	switch action {
	case InstancePause:
		err = s.workflows.Pause(ctx, id)
	case InstanceResume:
		ready, err = s.workflows.Resume(ctx, id)
	case InstanceRerun:
		ready, err = s.workflows.Rerun(ctx, id, s.now())
	case InstanceKill:
		var running []string
		running, err = s.workflows.Kill(ctx, id, s.now())
		for _, exec := range running {
			if _, kerr := s.KillExecution(ctx, actor, exec); kerr != nil && !isNotFound(kerr) {
				s.log.Warn("cannot kill a task of a killed workflow instance", "instance", id, "execution_id", exec, "error", kerr)
			}
		}
	default:
		return nil, invalidf("action", "%q: want pause, resume, kill or rerun", action)
	}
	if err != nil {
		return nil, workflowErr(err)
	}
	s.triggerTasks(ctx, ready)
	s.audit(ctx, actor, auditInstanceChange, "workflow_instance/"+id, map[string]any{"action": action})
	return s.GetWorkflowInstance(ctx, id)
}

// The API serves workflows through the Server.
var _ httpapi.Workflows = (*Server)(nil)
