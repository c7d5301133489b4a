package server

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// counter is a Go job type that counts its runs and succeeds.
type counter struct{ runs atomic.Int32 }

func (c *counter) Execute(context.Context, *chime.JobContext) error {
	c.runs.Add(1)
	return nil
}

// TestFiringsLostBeforeTheirRecordAreInTheHistory has a node fire two
// jobs through the store, as every node does, and die before its server
// records them in the history. A live server must then show both: the job
// that does not request recovery as node_lost, with a node_lost alert and
// no run; the one that does as a node_lost first attempt followed by its
// re-run.
func TestFiringsLostBeforeTheirRecordAreInTheHistory(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		hook := newWebhook(t)
		s := newServer(t, url)
		job := &counter{}
		if err := s.RegisterJobType("count", job); err != nil {
			t.Fatal(err)
		}
		start(t, s)
		if err := s.PutAlertSettings(ctx, "admin", api.AlertSettings{DefaultWebhooks: []string{hook.URL}}); err != nil {
			t.Fatalf("PutAlertSettings: %v", err)
		}
		// Both fire far in the future, so that only the dying node fires
		// them.
		far := func(name string) []api.Trigger {
			return []api.Trigger{{Name: name, Schedule: cronSchedule("0 0 0 1 1 ? 2099")}}
		}
		for _, j := range []api.Job{
			{Group: "g", Name: "lost", Type: "count", Triggers: far("lost-yearly")},
			{Group: "g", Name: "recovered", Type: "count", Triggers: far("recovered-yearly"), RequestsRecovery: true},
		} {
			if _, err := s.CreateJob(ctx, "alice", j); err != nil {
				t.Fatalf("CreateJob %s: %v", j.Name, err)
			}
		}

		ids := fireAndDie(t, url, 2)
		lostID, recoveredID := ids["lost"], ids["recovered"]

		waitFor(t, "the lost firing in the history", func() bool {
			e, err := s.GetExecution(ctx, lostID)
			return err == nil && e.Outcome == "node_lost"
		})
		e, _ := s.GetExecution(ctx, lostID)
		if e.NodeID != "ghost" || e.Attempt != 1 || e.FinishedTime == nil || e.Error == "" {
			t.Errorf("lost firing = %+v; want attempt 1 on ghost, finished, with the reason", e)
		}
		p := hook.next(t, alert.KindNodeLost)
		for p.Job.Name != "lost" && p.Job.Name != "recovered" {
			p = hook.next(t, alert.KindNodeLost)
		}

		var attempts []api.Execution
		waitFor(t, "the recovered firing's two attempts", func() bool {
			var err error
			attempts, err = s.Attempts(ctx, recoveredID)
			return err == nil && len(attempts) == 2 && attempts[1].Outcome == "succeeded"
		})
		if a := attempts[0]; a.ID != recoveredID || a.Outcome != "node_lost" {
			t.Errorf("attempt 1 = %+v; want %s node_lost", a, recoveredID)
		}
		if a := attempts[1]; a.Attempt != 2 || a.FirstID != recoveredID || !a.Recovering || a.NodeID != s.NodeID() {
			t.Errorf("attempt 2 = %+v; want the recovering re-run on %s", a, s.NodeID())
		}
		if n := job.runs.Load(); n != 1 {
			t.Errorf("the job ran %d times, want once: the recovered re-run only", n)
		}
		running, err := s.ListExecutions(ctx, api.ExecutionQuery{Outcomes: []string{"running"}})
		if err != nil || len(running.Executions) != 0 {
			t.Errorf("running executions = %+v, %v; want none", running, err)
		}
	})
}

// fireAndDie plays a node named ghost on the database at url: it joins,
// claims and fires every due trigger up to 2100 as the scheduler does,
// then stops checking in without leaving, as a process killed before it
// recorded anything. It returns the execution IDs by job name; want is
// the number of triggers it must find due.
func fireAndDie(t *testing.T, url string, want int) map[string]string {
	t.Helper()
	st := openStore(t, url)
	node, err := st.NodeRegister(t.Context(), "ghost")
	if err != nil {
		t.Fatalf("NodeRegister: %v", err)
	}
	return fireAll(t, st, store.Lease{NodeID: node.ID, Epoch: node.Epoch}, want)
}

// openStore opens the store at url for the test's own writes.
func openStore(t *testing.T, url string) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatalf("opening the store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// fireAll claims and fires, under lease, every trigger due up to 2100, as
// the scheduler does, and records nothing else. It returns the execution
// IDs by job name; want is the number of triggers it must find due.
func fireAll(t *testing.T, st store.Store, lease store.Lease, want int) map[string]string {
	t.Helper()
	ctx := t.Context()
	acquired, err := st.TriggersAcquire(ctx, &store.TriggersAcquireParams{
		Lease: lease, NoLaterThan: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), Limit: 10,
	})
	if err != nil || len(acquired) != want {
		t.Fatalf("TriggersAcquire = %d triggers, %v; want %d", len(acquired), err, want)
	}
	ids := make(map[string]string)
	for _, tr := range acquired {
		adv := tr
		adv.PreviousFireTime, adv.NextFireTime = tr.NextFireTime, tr.NextFireTime.AddDate(1, 0, 0)
		adv.TimesTriggered++
		id := newID()
		if _, err := st.TriggerFire(ctx, &store.TriggerFireParams{Lease: lease, Trigger: adv, Execution: store.ExecutionRecord{
			ID: id, TriggerKey: tr.Key, JobKey: tr.JobKey, ScheduledTime: tr.NextFireTime, FiredTime: time.Now(),
			NodeID: lease.NodeID, Epoch: lease.Epoch, State: store.ExecutionExecuting,
		}}); err != nil {
			t.Fatalf("TriggerFire %s: %v", tr.Key, err)
		}
		ids[tr.JobKey.Name] = id
	}
	return ids
}

// createFarJob creates the job g/name of type count, with a trigger that
// fires in 2099 only, so that only the test fires it.
func createFarJob(t *testing.T, s *Server, name string) {
	t.Helper()
	j := api.Job{Group: "g", Name: name, Type: "count",
		Triggers: []api.Trigger{{Name: name + "-yearly", Schedule: cronSchedule("0 0 0 1 1 ? 2099")}}}
	if _, err := s.CreateJob(t.Context(), "alice", j); err != nil {
		t.Fatalf("CreateJob %s: %v", name, err)
	}
}

// TestFiringLostWhenTheNodeRegistersAgainIsInTheHistory fires a job under
// a running server's lease, as its engine does, then has the server's
// node ID register again from elsewhere, as a node declared dead while it
// was stopped (SIGSTOP) finds it: registering recovers the firing as lost
// with the old lease, and the server, fenced, registers again. Its node
// never looks dead in the cluster's view, so only its registering again
// tells it to give the history the firing it never recorded.
func TestFiringLostWhenTheNodeRegistersAgainIsInTheHistory(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		job := &counter{}
		if err := s.RegisterJobType("count", job); err != nil {
			t.Fatal(err)
		}
		start(t, s)
		createFarJob(t, s, "lost")
		st := openStore(t, url)
		nodes, err := st.NodeList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var lease store.Lease
		for _, n := range nodes {
			if n.ID == s.NodeID() {
				lease = store.Lease{NodeID: n.ID, Epoch: n.Epoch}
			}
		}
		if lease.NodeID == "" {
			t.Fatalf("node %s not in %+v", s.NodeID(), nodes)
		}
		id := fireAll(t, st, lease, 1)["lost"]
		if _, err := st.NodeRegister(ctx, s.NodeID()); err != nil {
			t.Fatalf("NodeRegister: %v", err)
		}
		waitFor(t, "the lost firing in the history", func() bool {
			e, err := s.GetExecution(ctx, id)
			return err == nil && e.Outcome == "node_lost"
		})
		if e, _ := s.GetExecution(ctx, id); e.NodeID != s.NodeID() || e.Attempt != 1 || e.Error == "" {
			t.Errorf("lost firing = %+v; want attempt 1 on %s, with the reason", e, s.NodeID())
		}
		if n := job.runs.Load(); n != 0 {
			t.Errorf("the job ran %d times, want never", n)
		}
	})
}

// TestFiringLostByANodeThatRegistersAgainAtOnceIsInTheHistory has a node
// fire a job and die; as soon as a server declared it dead and recovered
// the firing as lost, the node registers again and lives on, so that the
// cluster's view no longer shows it dead. The server that recovered it
// must still give the history the firing the node never recorded.
func TestFiringLostByANodeThatRegistersAgainAtOnceIsInTheHistory(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		if err := s.RegisterJobType("count", &counter{}); err != nil {
			t.Fatal(err)
		}
		start(t, s)
		createFarJob(t, s, "lost")
		st := openStore(t, url)
		id := fireAndDie(t, url, 1)["lost"]
		deadline := time.Now().Add(30 * time.Second)
		for {
			recs, err := st.ExecutionList(ctx, &store.ExecutionListParams{NodeID: "ghost"})
			if err == nil && len(recs) == 1 && recs[0].State == store.ExecutionFailed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the ghost's executions = %+v, %v; want its firing failed with it within 30s", recs, err)
			}
			time.Sleep(time.Millisecond)
		}
		node, err := st.NodeRegister(ctx, "ghost")
		if err != nil {
			t.Fatalf("NodeRegister: %v", err)
		}
		// The ghost lives on: no node declares this incarnation dead.
		checkIns, stopCheckIns := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer stopCheckIns()
		wg.Go(func() {
			for checkIns.Err() == nil {
				_, _ = st.NodeCheckIn(checkIns, store.Lease{NodeID: node.ID, Epoch: node.Epoch})
				select {
				case <-checkIns.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
		waitFor(t, "the lost firing in the history", func() bool {
			e, err := s.GetExecution(ctx, id)
			return err == nil && e.Outcome == "node_lost"
		})
	})
}

// TestRecoveredSuccessIsNotRunAgain has a node fire a job that requests
// recovery, run it to success and record that in the history, and die
// before the scheduler records the end. The cluster recovers the firing;
// the live server must not run the job again (the firing has one
// succeeded attempt, on the dead node), must say why in a decision, and
// must still do what follows the success: the job's child runs once.
func TestRecoveredSuccessIsNotRunAgain(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		parent, other, child := &counter{}, &counter{}, &counter{}
		for typ, job := range map[string]*counter{"parent": parent, "other": other, "child": child} {
			if err := s.RegisterJobType(typ, job); err != nil {
				t.Fatal(err)
			}
		}
		start(t, s)
		far := func(name string) []api.Trigger {
			return []api.Trigger{{Name: name, Schedule: cronSchedule("0 0 0 1 1 ? 2099")}}
		}
		for _, j := range []api.Job{
			{Group: "g", Name: "child", Type: "child"},
			{Group: "g", Name: "done", Type: "parent", Triggers: far("done-yearly"), RequestsRecovery: true,
				Children: []api.ChildJob{{Job: "g/child"}}},
			{Group: "g", Name: "other", Type: "other", Triggers: far("other-yearly")},
		} {
			if _, err := s.CreateJob(ctx, "alice", j); err != nil {
				t.Fatalf("CreateJob %s: %v", j.Name, err)
			}
		}

		ids := fireAndDie(t, url, 2)
		doneID := ids["done"]
		// The ghost ran "done" and recorded its success, as a node's
		// history writer does, before it died.
		at := time.Now()
		if _, err := s.history.RecordBatch(ctx, []history.Record{{
			Start: &history.Execution{ID: doneID, FirstID: doneID, Attempt: 1, JobGroup: "g", JobName: "done",
				TriggerGroup: "g", TriggerName: "done-yearly", NodeID: "ghost",
				ScheduledTime: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), StartedTime: at},
			End: &history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: at.Add(time.Millisecond)},
		}}); err != nil {
			t.Fatalf("recording the ghost's success: %v", err)
		}

		waitFor(t, "the child job's run", func() bool { return child.runs.Load() == 1 })
		waitFor(t, "the recovered firing's end", func() bool {
			running, err := s.ListExecutions(ctx, api.ExecutionQuery{Outcomes: []string{"running"}})
			return err == nil && len(running.Executions) == 0
		})
		if n := parent.runs.Load(); n != 0 {
			t.Errorf("the job whose success was recorded ran %d more times, want none", n)
		}
		attempts, err := s.Attempts(ctx, doneID)
		if err != nil || len(attempts) != 1 || attempts[0].Outcome != "succeeded" || attempts[0].NodeID != "ghost" {
			t.Errorf("the firing's attempts = %+v, %v; want the one succeeded attempt on ghost", attempts, err)
		}
		decisions, err := s.history.Decisions(ctx, "g", "done", time.Time{}, time.Now().AddDate(100, 0, 0), history.MaxLimit)
		if err != nil {
			t.Fatalf("Decisions: %v", err)
		}
		found := false
		for _, d := range decisions {
			if d.Kind == history.DecisionSkipped && d.ExecutionID == doneID && strings.Contains(d.Reason, "succeeded on node ghost") {
				found = true
			}
		}
		if !found {
			t.Errorf("decisions of g/done = %+v; want the skipped re-run naming ghost's success", decisions)
		}
		time.Sleep(200 * time.Millisecond) // a second child run would show by now
		if n := child.runs.Load(); n != 1 {
			t.Errorf("the child ran %d times, want once", n)
		}
	})
}

// TestFailureRecordedByALostNodeIsFollowedOnce has a node fire three jobs
// that do not request recovery, record each run as failed in the history
// and die before the scheduler records the executions' ends, as a node
// killed between the two does: in between it schedules the retry or
// raises the alert. It had scheduled the retry of one of them. A live
// server must do what the dead node did not get to, once: schedule the
// retry of the job with a retry left, which then runs once, and raise the
// failure alert of the job with none; and it must not schedule again the
// retry the dead node had scheduled.
func TestFailureRecordedByALostNodeIsFollowedOnce(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		hook := newWebhook(t)
		s := newServer(t, url)
		runs := map[string]*counter{"retried": {}, "final": {}, "scheduled": {}}
		for typ, job := range runs {
			if err := s.RegisterJobType(typ, job); err != nil {
				t.Fatal(err)
			}
		}
		start(t, s)
		if err := s.PutAlertSettings(ctx, "admin", api.AlertSettings{DefaultWebhooks: []string{hook.URL}}); err != nil {
			t.Fatalf("PutAlertSettings: %v", err)
		}
		yearly := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
		retry := &api.RetryPolicy{MaxAttempts: 2, Backoff: "fixed", Delay: "200ms"}
		for _, j := range []api.Job{
			{Group: "g", Name: "retried", Type: "retried", Retry: retry},
			{Group: "g", Name: "final", Type: "final"},
			{Group: "g", Name: "scheduled", Type: "scheduled", Retry: retry},
		} {
			j.Triggers = []api.Trigger{{Name: j.Name + "-yearly", Schedule: cronSchedule("0 0 0 1 1 ? 2099")}}
			if _, err := s.CreateJob(ctx, "alice", j); err != nil {
				t.Fatalf("CreateJob %s: %v", j.Name, err)
			}
		}

		ids := fireAndDie(t, url, 3)
		// The ghost ran the three, recorded their failures, and scheduled
		// the retry of "scheduled" before it died.
		at := time.Now()
		var recs []history.Record
		for name, id := range ids {
			recs = append(recs, history.Record{
				Start: &history.Execution{ID: id, FirstID: id, Attempt: 1, JobGroup: "g", JobName: name,
					TriggerGroup: "g", TriggerName: name + "-yearly", NodeID: "ghost", ScheduledTime: yearly, StartedTime: at},
				End: &history.Finish{Outcome: history.OutcomeFailed, FinishedTime: at.Add(time.Millisecond), Error: "boom"},
			})
		}
		if _, err := s.history.RecordBatch(ctx, recs); err != nil {
			t.Fatalf("recording the ghost's failures: %v", err)
		}
		ghosts := &attempt{id: ids["scheduled"], firstID: ids["scheduled"], number: 1, job: chime.NewJobKey("g", "scheduled"),
			scheduled: yearly, triggerGroup: "g", triggerName: "scheduled-yearly"}
		if err := s.scheduleRetry(ctx, ghosts, retryID(ghosts.id), 2, time.Now().Add(500*time.Millisecond)); err != nil {
			t.Fatalf("scheduling the ghost's retry: %v", err)
		}

		p := hook.next(t, alert.KindFailure)
		if p.ExecutionID != ids["final"] || p.Job.Name != "final" || p.Attempt != 1 {
			t.Errorf("failure alert %+v; want the one of g/final's execution %s, attempt 1", p, ids["final"])
		}
		for _, name := range []string{"retried", "scheduled"} {
			var attempts []api.Execution
			waitFor(t, name+"'s retry", func() bool {
				var err error
				attempts, err = s.Attempts(ctx, ids[name])
				return err == nil && len(attempts) == 2 && attempts[1].Outcome == "succeeded"
			})
			if a := attempts[1]; a.ID != retryID(ids[name]) || a.Attempt != 2 || a.FirstID != ids[name] {
				t.Errorf("%s's attempt 2 = %+v; want %s, the retry of %s", name, a, retryID(ids[name]), ids[name])
			}
		}
		running, err := s.ListExecutions(ctx, api.ExecutionQuery{Outcomes: []string{"running"}})
		if err != nil || len(running.Executions) != 0 {
			t.Errorf("running executions = %+v, %v; want none", running, err)
		}
		// A retry scheduled twice, or a second sweep, would show by now.
		time.Sleep(time.Second)
		for name, want := range map[string]int32{"retried": 1, "final": 0, "scheduled": 1} {
			if n := runs[name].runs.Load(); n != want {
				t.Errorf("g/%s ran %d times on the live node, want %d", name, n, want)
			}
		}
		decisions, err := s.history.Decisions(ctx, "g", "retried", time.Time{}, time.Now().AddDate(100, 0, 0), history.MaxLimit)
		if err != nil {
			t.Fatalf("Decisions: %v", err)
		}
		scheduledRetries := 0
		for _, d := range decisions {
			if d.Kind == history.DecisionRetryScheduled && d.ExecutionID == ids["retried"] {
				scheduledRetries++
			}
		}
		if scheduledRetries != 1 {
			t.Errorf("decisions of g/retried = %+v; want one retry_scheduled for %s", decisions, ids["retried"])
		}
		select {
		case p := <-hook.alerts:
			if p.Kind == alert.KindFailure {
				t.Errorf("a second failure alert: %+v", p)
			}
		default:
		}
	})
}
