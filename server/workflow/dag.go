package workflow

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/chime-scheduler/chime/api"
)

// Edge makes task To wait for task From, and run only when From ended as
// On says.
type Edge struct {
	From string            `json:"from"`
	To   string            `json:"to"`
	On   api.EdgeCondition `json:"on"`
}

// Graph is a workflow's DAG: its task names, in the workflow's order, and
// its edges.
type Graph struct {
	Tasks []string `json:"tasks"`
	Edges []Edge   `json:"edges,omitempty"`
}

// maxTasks bounds a workflow's tasks, and maxEdges its edges.
const (
	maxTasks = 1000
	maxEdges = 10000
)

// validTaskName is what a task name may be: it names a job and a trigger.
var validTaskName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)

// CheckTaskName refuses a task name that is not 1 to 100 letters,
// digits, '_', '.' and '-', starting with a letter or digit.
func CheckTaskName(field, name string) error {
	if !validTaskName.MatchString(name) {
		return invalid(field, "%q: want 1 to 100 letters, digits, '_', '.' and '-', starting with a letter or digit", name)
	}
	return nil
}

// Validate checks g: unique valid task names, edges between tasks that
// exist with a known condition, no edge twice, and no cycle. Each error
// is an *InvalidError naming the offending field: tasks[2].name,
// edges[4].to, or for a cycle the edge that closes it, with the path of
// tasks in the message. A missing edge condition is OnSuccess.
func Validate(g Graph) error {
	switch {
	case len(g.Tasks) == 0:
		return invalid("tasks", "a workflow needs at least one task")
	case len(g.Tasks) > maxTasks:
		return invalid("tasks", "has %d tasks; at most %d are allowed", len(g.Tasks), maxTasks)
	case len(g.Edges) > maxEdges:
		return invalid("edges", "has %d edges; at most %d are allowed", len(g.Edges), maxEdges)
	}
	index := make(map[string]int, len(g.Tasks))
	for i, name := range g.Tasks {
		field := fmt.Sprintf("tasks[%d].name", i)
		if err := CheckTaskName(field, name); err != nil {
			return err
		}
		if j, dup := index[name]; dup {
			return invalid(field, "%q is the name of tasks[%d] too", name, j)
		}
		index[name] = i
	}
	type pair struct{ from, to string }
	seen := make(map[pair]int, len(g.Edges))
	for i, e := range g.Edges {
		for _, end := range []struct{ field, name string }{{"from", e.From}, {"to", e.To}} {
			if _, ok := index[end.name]; !ok {
				return invalid(fmt.Sprintf("edges[%d].%s", i, end.field), "%q is not a task of the workflow", end.name)
			}
		}
		switch e.On {
		case "", api.OnSuccess, api.OnFailure, api.OnAlways:
		default:
			return invalid(fmt.Sprintf("edges[%d].on", i), "%q: want success, failure or always", string(e.On))
		}
		if e.From == e.To {
			return invalid(fmt.Sprintf("edges[%d]", i), "cycle: %s -> %s (a task cannot wait for itself)", e.From, e.To)
		}
		if j, dup := seen[pair{e.From, e.To}]; dup {
			return invalid(fmt.Sprintf("edges[%d]", i), "%s -> %s is edges[%d] too", e.From, e.To, j)
		}
		seen[pair{e.From, e.To}] = i
	}
	return checkAcyclic(g)
}

// checkAcyclic refuses a graph with a cycle, naming the edge that closes
// it (the first, in the edges' order, that a depth-first walk finds going
// back) and the cycle's path of tasks.
func checkAcyclic(g Graph) error {
	out := make(map[string][]int) // task -> indexes of its outgoing edges
	for i, e := range g.Edges {
		out[e.From] = append(out[e.From], i)
	}
	const (
		unseen = iota
		onPath
		done
	)
	mark := make(map[string]int, len(g.Tasks))
	var path []string
	var visit func(task string) error
	visit = func(task string) error {
		mark[task] = onPath
		path = append(path, task)
		for _, i := range out[task] {
			next := g.Edges[i].To
			switch mark[next] {
			case onPath:
				start := 0
				for k, t := range path {
					if t == next {
						start = k
					}
				}
				cycle := append(append([]string{}, path[start:]...), next)
				return invalid(fmt.Sprintf("edges[%d]", i), "cycle: %s", strings.Join(cycle, " -> "))
			case unseen:
				if err := visit(next); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		mark[task] = done
		return nil
	}
	for _, t := range g.Tasks {
		if mark[t] == unseen {
			if err := visit(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// normalized returns g with every edge's condition set (OnSuccess when
// empty).
func (g Graph) normalized() Graph {
	edges := make([]Edge, len(g.Edges))
	for i, e := range g.Edges {
		if e.On == "" {
			e.On = api.OnSuccess
		}
		edges[i] = e
	}
	return Graph{Tasks: append([]string(nil), g.Tasks...), Edges: edges}
}

// TaskState is the state of a task of an instance.
type TaskState string

// Task states. Pending waits for upstream tasks; ready may start (its
// trigger exists or is about to); running has started; the rest are
// final.
const (
	TaskPending   TaskState = "pending"
	TaskReady     TaskState = "ready"
	TaskRunning   TaskState = "running"
	TaskSucceeded TaskState = "succeeded"
	TaskFailed    TaskState = "failed"
	// TaskSkipped: an upstream task did not end as its edge asks, so the
	// task will not run in this instance.
	TaskSkipped TaskState = "skipped"
	// TaskCancelled: the instance was killed before the task ended.
	TaskCancelled TaskState = "cancelled"
)

// Final reports whether s is a state a task leaves only by a re-run.
func (s TaskState) Final() bool {
	switch s {
	case TaskSucceeded, TaskFailed, TaskSkipped, TaskCancelled:
		return true
	}
	return false
}

// satisfied reports whether an upstream task that ended in state s lets
// an edge with condition on through.
func satisfied(on api.EdgeCondition, s TaskState) bool {
	switch on {
	case api.OnFailure:
		return s == TaskFailed
	case api.OnAlways:
		return s == TaskSucceeded || s == TaskFailed
	}
	return s == TaskSucceeded
}

// advance moves the pending tasks of states whose upstream tasks have
// all ended: to ready when every incoming edge's condition holds, to
// skipped otherwise (which may decide their own downstream tasks in
// turn). It changes states in place and returns the tasks it made ready,
// in the graph's order. g's conditions must be normalized.
func (g Graph) advance(states map[string]TaskState) []string {
	in := make(map[string][]Edge)
	for _, e := range g.Edges {
		in[e.To] = append(in[e.To], e)
	}
	var ready []string
	for changed := true; changed; {
		changed = false
		for _, t := range g.Tasks {
			if states[t] != TaskPending {
				continue
			}
			decided, run := true, true
			for _, e := range in[t] {
				up := states[e.From]
				if !up.Final() {
					decided = false
					break
				}
				run = run && satisfied(e.On, up)
			}
			if !decided {
				continue
			}
			changed = true
			if run {
				states[t] = TaskReady
				ready = append(ready, t)
			} else {
				states[t] = TaskSkipped
			}
		}
	}
	return ready
}

// downstream returns the tasks for which pick is true and every task
// downstream of them.
func (g Graph) downstream(tasks []Task, pick func(Task) bool) map[string]bool {
	out := make(map[string][]string)
	for _, e := range g.Edges {
		out[e.From] = append(out[e.From], e.To)
	}
	marked := make(map[string]bool)
	var mark func(string)
	mark = func(t string) {
		if marked[t] {
			return
		}
		marked[t] = true
		for _, next := range out[t] {
			mark(next)
		}
	}
	for _, t := range tasks {
		if pick(t) {
			mark(t.Name)
		}
	}
	return marked
}

// InstanceState is the state of a workflow instance.
type InstanceState string

// Instance states.
const (
	// InstanceRunning: tasks start as they become ready.
	InstanceRunning InstanceState = "running"
	// InstancePaused: no task starts; those running finish.
	InstancePaused InstanceState = "paused"
	// InstanceSucceeded: every task ended, none failed.
	InstanceSucceeded InstanceState = "succeeded"
	// InstanceFailed: every task ended, at least one failed.
	InstanceFailed InstanceState = "failed"
	// InstanceKilled: a person killed it.
	InstanceKilled InstanceState = "killed"
)

// Final reports whether s is a state an instance leaves only by a re-run.
func (s InstanceState) Final() bool {
	return s == InstanceSucceeded || s == InstanceFailed || s == InstanceKilled
}

// outcome returns the state of an instance whose tasks are in states:
// succeeded or failed when every task ended, otherwise current.
func outcome(current InstanceState, states map[string]TaskState) InstanceState {
	failed := false
	for _, s := range states {
		if !s.Final() {
			return current
		}
		failed = failed || s == TaskFailed
	}
	if failed {
		return InstanceFailed
	}
	return InstanceSucceeded
}
