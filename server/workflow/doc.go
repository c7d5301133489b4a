// Package workflow keeps the workflows of chime server and the state of
// their instances: a workflow is a named DAG of tasks whose edges say on
// which end of a task (success, failure, always) the next one runs, and
// an instance is one run of it, with one state per task. The package
// decides which tasks run; the server runs them as executions of ordinary
// jobs (see docs/workflows.md).
//
// It keeps its own tables on the server's database:
//
//   - {p}workflow_defs: one row per workflow, with its spec as JSON and
//     its version;
//   - {p}workflow_instances: one row per instance, with its state, its
//     parameters and the graph it started with (later edits of the
//     workflow do not change a running instance);
//   - {p}workflow_tasks: one row per (instance, task), with the task's
//     state, its latest execution and attempt count, and when it became
//     ready, started and ended.
//
// # Protocol
//
// Every change of an instance is one transaction that first locks the
// instance's row, so that the decisions about one instance are taken one
// at a time, whichever node takes them, and reads and writes its tasks'
// rows:
//
//  1. Start inserts the instance as running and its tasks as pending, and
//     makes ready those with no upstream task.
//  2. TaskStarted, when an execution of a task begins, moves it from
//     ready (or running, for a retry or a recovery) to running with that
//     execution's ID. A task that already ended, or whose instance was
//     killed, is refused: its execution must not run. TasksStarted
//     records several starts in one transaction, each decided under its
//     instance's lock as alone, the instances locked in the order of
//     their IDs.
//  3. TaskEnded, when a task's last attempt ended, records its end (only
//     for the execution TaskStarted recorded last) and, in the same
//     transaction, moves each pending task whose upstream tasks all ended
//     to ready or skipped (advance), and the instance to succeeded or
//     failed once every task ended. A task becomes ready in the same
//     transaction that records its last dependency's end: no decision
//     lives only in a node's memory.
//
// The server turns each ready task of a running instance into a one-shot
// trigger keyed by (instance, task), which the scheduler fires exactly
// once; a node that dies between the commit and the trigger leaves the
// task ready, and every node's sweep (ReadyTasks) creates the trigger
// again, which its key makes harmless when it exists.
//
// Pause stops ready tasks from being triggered; Resume returns them.
// Kill cancels the tasks that did not end and returns the executions
// still running, for the server to kill. Rerun sets the failed, skipped
// and cancelled tasks of an ended instance back to pending, and starts
// again from there. Prune deletes the instances that ended before a cut,
// with their tasks, each under its row's lock, so that any number of
// nodes may prune at once.
package workflow
