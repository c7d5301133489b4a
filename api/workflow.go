package api

import (
	"encoding/json"
	"time"
)

// Workflow is a named DAG of tasks: each task is a run of a job type with
// its own settings, and each edge says when its task runs after another
// (docs/workflows.md).
type Workflow struct {
	// Name identifies the workflow. Its tasks are the jobs of group
	// "workflow.<name>", which the server keeps in step with the tasks.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Tasks are the DAG's nodes, each named uniquely within the workflow.
	Tasks []WorkflowTask `json:"tasks"`
	// Edges say which task runs after which, and on what condition.
	Edges []WorkflowEdge `json:"edges,omitempty"`
	// Triggers start an instance on a schedule, as a job's do; each
	// firing's trigger data are the instance's parameters. The server
	// reports their state and next fire times.
	Triggers []Trigger `json:"triggers,omitempty"`
	// Version increases with every change. Read-only.
	Version int64 `json:"version,omitempty"`
	// Updated is when the workflow was last written. Read-only.
	Updated *time.Time `json:"updated,omitempty"`
}

// WorkflowTask is one task of a workflow: a job type with its settings,
// as the fields of a Job with the same names.
type WorkflowTask struct {
	Name string `json:"name"`
	// Type is "http", "shell", "executor" or a Go job type the server
	// registered.
	Type     string          `json:"type"`
	HTTP     json.RawMessage `json:"http,omitempty"`
	Shell    json.RawMessage `json:"shell,omitempty"`
	Executor *ExecutorTarget `json:"executor,omitempty"`
	// Data is the data map handed to a Go job type; an instance's
	// parameters are merged over it.
	Data    map[string]any `json:"data,omitempty"`
	Timeout string         `json:"timeout,omitempty"`
	Retry   *RetryPolicy   `json:"retry,omitempty"`
}

// EdgeCondition says on which end of its upstream task an edge's
// downstream task runs.
type EdgeCondition string

// Edge conditions.
const (
	// OnSuccess runs the downstream task when the upstream one succeeded
	// (the default).
	OnSuccess EdgeCondition = "success"
	// OnFailure runs it when the upstream task failed.
	OnFailure EdgeCondition = "failure"
	// OnAlways runs it whether the upstream task succeeded or failed.
	OnAlways EdgeCondition = "always"
)

// WorkflowEdge makes task To wait for task From, and run only when From
// ended as On says.
type WorkflowEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	// On defaults to OnSuccess.
	On EdgeCondition `json:"on,omitempty"`
}

// ChildJob names a job to run when an execution of its parent job ends
// for good: it succeeded, or failed (or timed out) with no retry left.
// The child's execution names the parent's as its cause.
type ChildJob struct {
	// Job is the child's key, "group/name"; it must exist when the
	// parent is saved.
	Job string `json:"job"`
	// On says on which end the child runs; defaults to OnSuccess.
	On EdgeCondition `json:"on,omitempty"`
}

// WorkflowList is a list of workflows, by name.
type WorkflowList struct {
	Workflows []Workflow `json:"workflows"`
}

// WorkflowRunRequest starts an instance of a workflow now.
type WorkflowRunRequest struct {
	// Params are merged over each task's data (or handed to its
	// templates as .Params).
	Params map[string]any `json:"params,omitempty"`
}

// WorkflowInstance is one run of a workflow: one execution per task.
type WorkflowInstance struct {
	ID       string `json:"id"`
	Workflow string `json:"workflow"`
	// State is running, paused, succeeded, failed or killed.
	State    string         `json:"state"`
	Params   map[string]any `json:"params,omitempty"`
	Created  time.Time      `json:"created"`
	Finished *time.Time     `json:"finished,omitempty"`
	// Tasks are the instance's tasks, in the workflow's order, with the
	// edges they had when it started.
	Tasks []WorkflowTaskRun `json:"tasks"`
	Edges []WorkflowEdge    `json:"edges,omitempty"`
}

// WorkflowTaskRun is the state of one task of an instance.
type WorkflowTaskRun struct {
	Task string `json:"task"`
	// State is pending, ready, running, succeeded, failed, skipped (an
	// upstream task did not end as its edge asks) or cancelled (the
	// instance was killed first).
	State string `json:"state"`
	// ExecutionID is the task's latest attempt in the execution history.
	ExecutionID string     `json:"execution_id,omitempty"`
	Attempts    int        `json:"attempts,omitempty"`
	Ready       *time.Time `json:"ready,omitempty"`
	Started     *time.Time `json:"started,omitempty"`
	Finished    *time.Time `json:"finished,omitempty"`
	Error       string     `json:"error,omitempty"`
}

// WorkflowInstanceList is a page of a workflow's instances, newest first.
type WorkflowInstanceList struct {
	Instances []WorkflowInstance `json:"instances"`
}
