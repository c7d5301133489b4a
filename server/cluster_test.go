package server

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/logtest"
	"github.com/chime-scheduler/chime/server/alert"
)

// twoNodes starts two servers on one PostgreSQL database, each with one
// worker, so that a firing due while one node runs a job goes to the
// other. Both register the job type "block" as b.
func twoNodes(t *testing.T, b *blocker, mods ...func(*Config)) (*Server, *Server) {
	t.Helper()
	url := dbtest.PostgresURL(t)
	var nodes [2]*Server
	for i, id := range []string{"node-a", "node-b"} {
		nodes[i] = newServer(t, url, append([]func(*Config){func(c *Config) { c.NodeID, c.Workers = id, 1 }}, mods...)...)
		if err := nodes[i].RegisterJobType("block", b); err != nil {
			t.Fatalf("RegisterJobType: %v", err)
		}
	}
	for _, n := range nodes {
		start(t, n)
	}
	return nodes[0], nodes[1]
}

// running returns the execution of the job that runs, once one does.
func running(t *testing.T, s *Server, group, name string) api.Execution {
	t.Helper()
	var e api.Execution
	waitFor(t, "an execution of "+group+"/"+name+" to run", func() bool {
		list, err := s.ListExecutions(t.Context(), api.ExecutionQuery{JobGroup: group, JobName: name, Outcomes: []string{"running"}})
		if err != nil || len(list.Executions) == 0 {
			return false
		}
		e = list.Executions[0]
		return true
	})
	return e
}

func TestOverlapSkipAcrossNodes(t *testing.T) {
	t.Parallel()
	b := newBlocker()
	a, _ := twoNodes(t, b)
	ctx := t.Context()
	if _, err := a.CreateJob(ctx, "alice", api.Job{Group: "g", Name: "single", Type: "block", Overlap: api.OverlapSkip}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if _, err := a.RunJob(ctx, "alice", "g", "single", api.RunRequest{}); err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	b.waitStarted(t)
	first := running(t, a, "g", "single")
	acc, err := a.RunJob(ctx, "alice", "g", "single", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	skipped := waitExecution(t, a, acc.ExecutionIDs[0])
	if skipped.Outcome != "skipped" || !strings.Contains(skipped.Error, first.ID) || !strings.Contains(skipped.Error, "overlap: skip") {
		t.Fatalf("second execution = %+v, want skipped because %s runs", skipped, first.ID)
	}
	if skipped.NodeID == first.NodeID {
		t.Errorf("both firings ran on %s; the test wants them on two nodes", first.NodeID)
	}
	close(b.release)
	if e := waitExecution(t, a, first.ID); e.Outcome != "succeeded" {
		t.Errorf("first execution = %+v, want succeeded", e)
	}
}

func TestOverlapCancelAcrossNodes(t *testing.T) {
	t.Parallel()
	b := newBlocker()
	a, _ := twoNodes(t, b)
	ctx := t.Context()
	if _, err := a.CreateJob(ctx, "alice", api.Job{Group: "g", Name: "latest", Type: "block", Overlap: api.OverlapCancel}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if _, err := a.RunJob(ctx, "alice", "g", "latest", api.RunRequest{}); err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	b.waitStarted(t)
	first := running(t, a, "g", "latest")
	acc, err := a.RunJob(ctx, "alice", "g", "latest", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	b.waitStarted(t) // the second run starts once the first is cancelled
	cancelled := waitExecution(t, a, first.ID)
	if cancelled.Outcome != "cancelled" || !strings.Contains(cancelled.Error, "overlap: cancel") {
		t.Fatalf("first execution = %+v, want cancelled by the newer firing", cancelled)
	}
	close(b.release)
	second := waitExecution(t, a, acc.ExecutionIDs[0])
	if second.Outcome != "succeeded" {
		t.Fatalf("second execution = %+v, want succeeded", second)
	}
	if second.NodeID == first.NodeID {
		t.Errorf("both firings ran on %s; the test wants them on two nodes", first.NodeID)
	}
}

func TestNodeLossIsRecordedAlertedAndRecovered(t *testing.T) {
	t.Parallel()
	b := newBlocker()
	hook := newWebhook(t)
	nodeHook := newWebhook(t) // the default webhook: alerts about nodes
	logs, logger := logtest.New(slog.LevelInfo)
	a, bNode := twoNodes(t, b, func(c *Config) {
		c.Logger = logger
		c.Alert.DefaultWebhooks = []string{nodeHook.URL}
	})
	ctx := t.Context()
	j := api.Job{Group: "g", Name: "precious", Type: "block", RequestsRecovery: true, Alerts: &api.JobAlerts{Webhooks: []string{hook.URL}}}
	if _, err := a.CreateJob(ctx, "alice", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := a.RunJob(ctx, "alice", "g", "precious", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	b.waitStarted(t)
	first := running(t, a, "g", "precious")
	lost, survivor := a, bNode
	if first.NodeID == bNode.NodeID() {
		lost, survivor = bNode, a
	}
	// The node dies without a word: its database connections go, so it
	// neither checks in nor records anything again.
	if err := lost.store.Close(); err != nil {
		t.Fatalf("closing the lost node's store: %v", err)
	}

	p := hook.next(t, alert.KindNodeLost)
	if p.ExecutionID != acc.ExecutionIDs[0] || p.NodeID != lost.NodeID() {
		t.Errorf("node_lost alert = %+v, want one about %s on %s", p, acc.ExecutionIDs[0], lost.NodeID())
	}
	// The survivor, which recovered the lost node, alerts about the node
	// itself, once.
	if p := nodeHook.next(t, alert.KindNodeLost); p.NodeID != lost.NodeID() || p.Job.Name != "" {
		t.Errorf("node alert = %+v, want one about node %s and no job", p, lost.NodeID())
	}
	if e := waitExecution(t, survivor, first.ID); e.Outcome != "node_lost" {
		t.Errorf("execution on the lost node = %+v, want node_lost", e)
	}
	var attempts []api.Execution
	waitFor(t, "the recovered run to finish", func() bool {
		attempts, err = survivor.Attempts(ctx, first.ID)
		return err == nil && len(attempts) == 2 && attempts[1].Outcome == "succeeded"
	})
	re := attempts[1]
	if !re.Recovering || re.NodeID != survivor.NodeID() || re.Attempt != 2 || re.FirstID != first.ID {
		t.Errorf("recovered run = %+v, want attempt 2 of %s, recovering, on %s", re, first.ID, survivor.NodeID())
	}
	// Each run's log records and the job itself name the run by its ID in
	// the API, in one format.
	for _, e := range []api.Execution{first, re} {
		var n int
		for _, r := range logs.Messages("block ran") {
			if r.Attrs["execution_id"].String() == e.ID && r.Attrs["job_sees"].String() == e.ID && r.Attrs["node_id"].String() == e.NodeID {
				n++
			}
		}
		if n != 1 || len(e.ID) != 32 {
			t.Errorf("execution %s (attempt %d): %d log records naming it, want 1; its ID is %d characters, want 32", e.ID, e.Attempt, n, len(e.ID))
		}
	}
	nodes, err := survivor.Nodes(ctx)
	if err != nil {
		t.Fatalf("Nodes: %v", err)
	}
	for _, n := range nodes {
		if want := n.ID == survivor.NodeID(); n.Alive != want || n.Self != want {
			t.Errorf("node %+v: want alive and self %v", n, want)
		}
	}
}

func TestMisfireIsRecordedAndExplained(t *testing.T) {
	t.Parallel()
	hook := newWebhook(t)
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", func(c *Config) {
		c.MisfireThreshold = 100 * time.Millisecond
		c.Alert.DefaultWebhooks = []string{hook.URL}
	})
	if err := s.RegisterJobType("record", &recorder{}); err != nil {
		t.Fatalf("RegisterJobType: %v", err)
	}
	start(t, s)
	ctx := t.Context()
	missed := time.Now().UTC().Truncate(5 * time.Second).Add(-10 * time.Second)
	j := api.Job{Group: "g", Name: "late", Type: "record",
		Triggers: []api.Trigger{{Schedule: cronSchedule("0/5 * * * * ?"), StartTime: &missed}}}
	if _, err := s.CreateJob(ctx, "alice", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if p := hook.next(t, alert.KindMisfire); p.Job.Name != "late" || p.ScheduledTime == nil || !p.ScheduledTime.Equal(missed) {
		t.Errorf("misfire alert = %+v, want one about g/late at %s", p, missed)
	}
	ex, err := s.Explain(ctx, "g", "late", missed)
	if err != nil {
		t.Fatalf("Explain: %v", err)
	}
	if !strings.HasPrefix(ex.Summary, "Misfired: ") || !strings.Contains(ex.Summary, "SMART_POLICY") {
		t.Errorf("Explain summary = %q, want the misfire", ex.Summary)
	}
	if len(ex.Decisions) == 0 || ex.Decisions[0].Kind != "misfired" || !ex.Decisions[0].ScheduledTime.Equal(missed) {
		t.Errorf("Explain decisions = %+v, want the misfire at %s", ex.Decisions, missed)
	}
}

func TestExplainPausedAndSkippedFirings(t *testing.T) {
	t.Parallel()
	b := newBlocker()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db")
	if err := s.RegisterJobType("block", b); err != nil {
		t.Fatalf("RegisterJobType: %v", err)
	}
	start(t, s)
	ctx := t.Context()
	every := []api.Trigger{{Schedule: cronSchedule("* * * * * ?")}}
	if _, err := s.CreateJob(ctx, "alice", api.Job{Group: "g", Name: "busy", Type: "block", Overlap: api.OverlapSkip, Triggers: every}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if _, err := s.CreateJob(ctx, "alice", api.Job{Group: "g", Name: "quiet", Type: "block", Triggers: every}); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if err := s.PauseJob(ctx, "alice", "g", "quiet"); err != nil {
		t.Fatalf("PauseJob: %v", err)
	}
	paused := time.Now()

	// busy's first run blocks; the next firings are skipped.
	var skipped api.Execution
	waitFor(t, "a skipped firing", func() bool {
		list, err := s.ListExecutions(ctx, api.ExecutionQuery{JobGroup: "g", JobName: "busy", Outcomes: []string{"skipped"}})
		if err != nil || len(list.Executions) == 0 {
			return false
		}
		skipped = list.Executions[0]
		return true
	})
	ex, err := s.Explain(ctx, "g", "busy", skipped.ScheduledTime)
	if err != nil {
		t.Fatalf("Explain: %v", err)
	}
	if !strings.HasPrefix(ex.Summary, "Skipped: ") || !strings.Contains(ex.Summary, "overlap: skip") {
		t.Errorf("Explain of a skipped firing = %q, want why it was skipped", ex.Summary)
	}

	// A fire time of quiet after it was paused.
	target := paused.UTC().Truncate(time.Second).Add(time.Second)
	waitFor(t, "a fire time of the paused job to pass", func() bool { return time.Now().After(target.Add(100 * time.Millisecond)) })
	ex, err = s.Explain(ctx, "g", "quiet", target)
	if err != nil {
		t.Fatalf("Explain: %v", err)
	}
	if !strings.HasPrefix(ex.Summary, "Not run: the job was paused at ") || !strings.Contains(ex.Summary, "pause by alice") {
		t.Errorf("Explain of a paused job = %q, want that it was paused", ex.Summary)
	}
	if len(ex.FireTimes) == 0 {
		t.Error("Explain listed no fire times")
	}
	if err := s.PauseJob(ctx, "alice", "g", "busy"); err != nil {
		t.Fatalf("PauseJob: %v", err)
	}
	close(b.release)
}

// TestNodesReportTheirClockOffsets checks that each node's Nodes shows the
// other live node's clock offset, as that node reported it.
func TestNodesReportTheirClockOffsets(t *testing.T) {
	t.Parallel()
	a, b := twoNodes(t, newBlocker())
	for _, pair := range [][2]*Server{{a, b}, {b, a}} {
		asker, other := pair[0], pair[1]
		waitFor(t, asker.NodeID()+" to show the clock offset of "+other.NodeID(), func() bool {
			nodes, err := asker.Nodes(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range nodes {
				if n.ID == other.NodeID() && n.ClockOffset != "" {
					got, err := time.ParseDuration(n.ClockOffset)
					if err != nil {
						t.Fatalf("clock offset %q: %v", n.ClockOffset, err)
					}
					// Both nodes share this machine's clock: their
					// offsets differ by the measurement's error only.
					if d := got - other.clockOffset(); d > 100*time.Millisecond || d < -100*time.Millisecond {
						t.Errorf("%s reports %s for %s, which measures %s", asker.NodeID(), got, other.NodeID(), other.clockOffset())
					}
					return true
				}
			}
			return false
		})
	}
}

// TestNodesShowVersionWorkersAndRunning checks, on every database, that
// each node's Nodes shows every node's version and worker count (its own
// as it knows them, the other's as that node reported them) and the
// executions each node runs now.
func TestNodesShowVersionWorkersAndRunning(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		b := newBlocker()
		workers := map[string]int{"node-a": 2, "node-b": 3}
		var nodes []*Server
		for _, id := range []string{"node-a", "node-b"} {
			s := newServer(t, url, func(c *Config) { c.NodeID, c.Workers = id, workers[id] })
			if err := s.RegisterJobType("block", b); err != nil {
				t.Fatalf("RegisterJobType: %v", err)
			}
			nodes = append(nodes, s)
		}
		for _, s := range nodes {
			start(t, s)
		}
		ctx := t.Context()
		if _, err := nodes[0].CreateJob(ctx, "alice", api.Job{Group: "g", Name: "hold", Type: "block"}); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		if _, err := nodes[0].RunJob(ctx, "alice", "g", "hold", api.RunRequest{}); err != nil {
			t.Fatalf("RunJob: %v", err)
		}
		b.waitStarted(t)
		held := running(t, nodes[0], "g", "hold")

		// check waits until asker's Nodes lists both nodes with their
		// reports, then wants runningOn to run one execution and the
		// other node none.
		check := func(asker *Server, runningOn string) {
			t.Helper()
			waitFor(t, asker.NodeID()+" to list both nodes' reports", func() bool {
				got, err := asker.Nodes(ctx)
				if err != nil {
					t.Fatalf("Nodes: %v", err)
				}
				if len(got) != 2 || got[0].Workers == 0 || got[1].Workers == 0 {
					return false // the other node has not reported yet
				}
				for _, n := range got {
					want := 0
					if n.ID == runningOn {
						want = 1
					}
					if n.Version != buildVersion() || n.Workers != workers[n.ID] || n.Running != want {
						t.Errorf("%s lists %s with version %q, %d workers, %d running; want %q, %d, %d",
							asker.NodeID(), n.ID, n.Version, n.Workers, n.Running, buildVersion(), workers[n.ID], want)
					}
				}
				return true
			})
		}
		for _, asker := range nodes {
			check(asker, held.NodeID)
		}
		close(b.release)
		waitExecution(t, nodes[0], held.ID)
		for _, asker := range nodes {
			check(asker, "")
		}
	})
}

// TestShellJobsRunOnlyOnNodesThatEnableThem runs two nodes on one
// database, one started with shell jobs and one without: every firing of a
// shell job, scheduled or run by hand through either node, runs on the
// node that runs shell jobs, and none fails for want of them.
func TestShellJobsRunOnlyOnNodesThatEnableThem(t *testing.T) {
	t.Parallel()
	for _, db := range []struct {
		name string
		url  func(testing.TB) string
	}{{"Postgres", dbtest.PostgresURL}, {"MySQL", dbtest.MySQLURL}} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			url := db.url(t)
			shellNode := newServer(t, url, func(c *Config) {
				c.NodeID, c.EnableShellJobs, c.ShellAllow = "shell-node", true, []string{"/bin/echo"}
			})
			plainNode := newServer(t, url, func(c *Config) { c.NodeID = "plain-node" })
			start(t, shellNode)
			start(t, plainNode)
			ctx := t.Context()
			j := api.Job{Group: "ops", Name: "echo", Type: "shell",
				Shell:    []byte(`{"argv":["/bin/echo","{{.ExecutionID}}"]}`),
				Triggers: []api.Trigger{{Schedule: cronSchedule("* * * * * ?")}}}
			if _, err := shellNode.CreateJob(ctx, "alice", j); err != nil {
				t.Fatalf("CreateJob: %v", err)
			}
			var byHand []string
			for _, n := range []*Server{plainNode, shellNode, plainNode} {
				acc, err := n.RunJob(ctx, "alice", "ops", "echo", api.RunRequest{})
				if err != nil {
					t.Fatalf("RunJob on %s: %v", n.NodeID(), err)
				}
				byHand = append(byHand, acc.ExecutionIDs...)
			}
			for _, id := range byHand {
				waitExecution(t, plainNode, id)
			}
			var finished []api.Execution
			waitFor(t, "five scheduled firings besides the three runs by hand", func() bool {
				list, err := plainNode.ListExecutions(ctx, api.ExecutionQuery{JobGroup: "ops", JobName: "echo", Limit: 100})
				if err != nil {
					return false
				}
				finished = finished[:0]
				for _, e := range list.Executions {
					if e.Outcome != "running" {
						finished = append(finished, e)
					}
				}
				return len(finished) >= 8
			})
			for _, e := range finished {
				if e.NodeID != "shell-node" || e.Outcome != "succeeded" {
					t.Errorf("execution %s (manual %v) ran on %s with outcome %s (%s); want succeeded on shell-node",
						e.ID, e.Manual, e.NodeID, e.Outcome, e.Error)
				}
			}
		})
	}
}
