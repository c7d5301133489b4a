package server

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/history"
)

// TestKillFromAnotherNode kills a shell job and a Go job running on one
// node through the other node, which only the database connects: each
// job's context is cancelled, each execution ends killed by the person
// who asked, the audit log has it, and neither is retried nor alerted.
func TestKillFromAnotherNode(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		b := newBlocker()
		hook := newWebhook(t)
		// Only the worker runs the jobs (shell jobs and the Go type
		// "block"); the other node only answers the kill requests.
		worker := newServer(t, url, func(c *Config) {
			c.NodeID, c.EnableShellJobs, c.ShellAllow = "worker", true, []string{"/bin/sleep"}
		})
		front := newServer(t, url, func(c *Config) {
			c.NodeID = "front"
			c.configureScheduler = func(sc *chime.Config) { sc.ExcludeJobTypes = append(sc.ExcludeJobTypes, "block") }
		})
		for _, n := range []*Server{worker, front} {
			if err := n.RegisterJobType("block", b); err != nil {
				t.Fatalf("RegisterJobType: %v", err)
			}
		}
		stopWorker := start(t, worker)
		start(t, front)
		ctx := t.Context()
		retry := &api.RetryPolicy{MaxAttempts: 3, Delay: "100ms"}
		alerts := &api.JobAlerts{Webhooks: []string{hook.URL}}
		jobs := []api.Job{
			{Group: "ops", Name: "sleep", Type: "shell", Shell: []byte(`{"argv":["/bin/sleep","600"]}`), Retry: retry, Alerts: alerts},
			{Group: "ops", Name: "block", Type: "block", Retry: retry, Alerts: alerts},
		}
		var killed []api.Execution
		for i, j := range jobs {
			actor := []string{"alice", "bob"}[i]
			if _, err := worker.CreateJob(ctx, "admin", j); err != nil {
				t.Fatalf("CreateJob(%s): %v", j.Name, err)
			}
			if _, err := front.RunJob(ctx, "admin", j.Group, j.Name, api.RunRequest{}); err != nil {
				t.Fatalf("RunJob(%s): %v", j.Name, err)
			}
			run := running(t, front, j.Group, j.Name)
			if run.NodeID != "worker" {
				t.Fatalf("%s runs on %s, want worker", j.Name, run.NodeID)
			}
			got, err := front.KillExecution(ctx, actor, run.ID)
			if err != nil {
				t.Fatalf("KillExecution(%s): %v", j.Name, err)
			}
			if got.ID != run.ID || got.KilledBy != actor {
				t.Errorf("KillExecution(%s) = %+v, want the execution, killed by %s", j.Name, got, actor)
			}
			if again, err := front.KillExecution(ctx, "carol", run.ID); err != nil {
				// Unless the job already ended: then it is a conflict.
				wantAPIError(t, err, api.CodeConflict, "")
			} else if again.KilledBy != actor {
				t.Errorf("second kill of %s = %+v, want it killed by the first to ask, %s", j.Name, again, actor)
			}
			e := waitExecution(t, front, run.ID)
			if e.Outcome != "killed" || e.KilledBy != actor || !strings.Contains(e.Error, "killed by "+actor) {
				t.Errorf("%s after its kill: outcome %s, killed by %q, error %q; want killed by %s",
					j.Name, e.Outcome, e.KilledBy, e.Error, actor)
			}
			killed = append(killed, *e)

			audit, err := front.ListAudit(ctx, api.AuditQuery{Target: "executions/" + run.ID})
			if err != nil {
				t.Fatalf("ListAudit: %v", err)
			}
			if len(audit.Entries) != 1 || audit.Entries[0].Action != string(auditExecutionKill) || audit.Entries[0].Actor != actor {
				t.Errorf("audit of %s = %+v, want one execution.kill by %s", run.ID, audit.Entries, actor)
			}
		}

		_, err := front.KillExecution(ctx, "alice", killed[0].ID)
		wantAPIError(t, err, api.CodeConflict, "")
		if !strings.Contains(err.Error(), "killed") {
			t.Errorf("kill of a killed execution: %v, want the conflict to name its outcome", err)
		}
		_, err = front.KillExecution(ctx, "alice", strings.Repeat("0", 32))
		wantAPIError(t, err, api.CodeNotFound, "")

		// Stopping the worker waits until it recorded the ends, scheduled
		// what it would retry and delivered what it would alert.
		if err := stopWorker(); err != nil {
			t.Fatalf("stopping the worker: %v", err)
		}
		for _, e := range killed {
			attempts, err := front.Attempts(ctx, e.ID)
			if err != nil {
				t.Fatalf("Attempts: %v", err)
			}
			if len(attempts) != 1 {
				t.Errorf("%s/%s has %d attempts, want 1: a killed execution is not retried", e.JobGroup, e.JobName, len(attempts))
			}
			ex, err := front.Explain(ctx, e.JobGroup, e.JobName, e.ScheduledTime)
			if err != nil {
				t.Fatalf("Explain: %v", err)
			}
			for _, d := range ex.Decisions {
				if d.Kind == "retry_scheduled" {
					t.Errorf("%s/%s: decision %+v, want no retry of a killed execution", e.JobGroup, e.JobName, d)
				}
			}
		}
		select {
		case p := <-hook.alerts:
			t.Errorf("alert %+v, want none for a killed execution", p)
		default:
		}
	})
}

// TestExecutionNotYetInTheHistory asks the node running an execution,
// whose start its history writer still holds back, for the execution and
// then kills another: the node writes each start at once, so that the
// execution is found running and the kill takes.
func TestExecutionNotYetInTheHistory(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		b := newBlocker()
		s := newServer(t, url)
		s.recorder.startDelay = time.Hour
		if err := s.RegisterJobType("block", b); err != nil {
			t.Fatalf("RegisterJobType: %v", err)
		}
		start(t, s)
		ctx := t.Context()
		if _, err := s.CreateJob(ctx, "admin", api.Job{Group: "ops", Name: "block", Type: "block"}); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		runBlocked := func() string {
			t.Helper()
			acc, err := s.RunJob(ctx, "admin", "ops", "block", api.RunRequest{})
			if err != nil {
				t.Fatalf("RunJob: %v", err)
			}
			b.waitStarted(t)
			id := acc.ExecutionIDs[0]
			if _, err := s.history.Get(ctx, id); !errors.Is(err, history.ErrNotFound) {
				t.Fatalf("execution %s is in the history while its start is held back: %v", id, err)
			}
			return id
		}

		id := runBlocked()
		e, err := s.GetExecution(ctx, id)
		if err != nil || e.Outcome != "running" {
			t.Fatalf("GetExecution(%s) = %+v, %v; want it running", id, e, err)
		}

		id = runBlocked()
		got, err := s.KillExecution(ctx, "alice", id)
		if err != nil || got.KilledBy != "alice" {
			t.Fatalf("KillExecution(%s) = %+v, %v; want it killed by alice", id, got, err)
		}
		if e := waitExecution(t, s, id); e.Outcome != "killed" {
			t.Errorf("execution %s after its kill: %s, want killed", id, e.Outcome)
		}
		close(b.release)
	})
}
