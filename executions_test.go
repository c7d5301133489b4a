package chime_test

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
)

// ghostFire plays a node of lease on st: it claims every trigger due by
// noLaterThan and fires it as the engine does, then records nothing more.
// It returns the firings' execution records by job name.
func ghostFire(t *testing.T, st store.Store, lease store.Lease, noLaterThan time.Time) map[string]store.ExecutionRecord {
	t.Helper()
	ctx := t.Context()
	acquired, err := st.TriggersAcquire(ctx, &store.TriggersAcquireParams{Lease: lease, NoLaterThan: noLaterThan, Limit: 10})
	if err != nil {
		t.Fatalf("TriggersAcquire: %v", err)
	}
	out := make(map[string]store.ExecutionRecord)
	for i, tr := range acquired {
		adv := tr
		adv.PreviousFireTime, adv.NextFireTime = tr.NextFireTime, tr.NextFireTime.AddDate(1, 0, 0)
		adv.TimesTriggered++
		exec := store.ExecutionRecord{
			ID: lease.NodeID + "-" + tr.Key.Name, TriggerKey: tr.Key, JobKey: tr.JobKey,
			ScheduledTime: tr.NextFireTime, FiredTime: time.Date(2098, 1, 1, 0, 0, i, 0, time.UTC),
			NodeID: lease.NodeID, Epoch: lease.Epoch, State: store.ExecutionExecuting,
		}
		if _, err := st.TriggerFire(ctx, &store.TriggerFireParams{Lease: lease, Trigger: adv, Execution: exec}); err != nil {
			t.Fatalf("TriggerFire %s: %v", tr.Key, err)
		}
		out[tr.JobKey.Name] = exec
	}
	return out
}

// TestExecutionsShowEveryNodesFiringsAndThoseLostWithTheirNode checks that
// Executions reads the store's executions of any node, filtered, newest
// scheduled first, and tells the firings lost with their node (declared
// dead as it restarts, or leaving) from those recovered.
func TestExecutionsShowEveryNodesFiringsAndThoseLostWithTheirNode(t *testing.T) {
	t.Parallel()
	for name, open := range limitStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			st := open(t)
			s, _ := newScheduler(t, chime.Config{Store: st, NodeID: "watcher"})
			day := func(d int) time.Time { return time.Date(2099, 1, d, 0, 0, 0, 0, time.UTC) }
			for i, name := range []string{"lost", "recovered", "stopped"} {
				j := job(name)
				j.RequestsRecovery = name == "recovered"
				tr := trig(name, &schedule.Simple{})
				tr.StartTime = day(i + 1)
				scheduleJob(t, s, j, tr)
			}

			node, err := st.NodeRegister(ctx, "ghost")
			if err != nil {
				t.Fatalf("NodeRegister: %v", err)
			}
			lease := store.Lease{NodeID: node.ID, Epoch: node.Epoch}
			fired := ghostFire(t, st, lease, day(2).Add(time.Hour))
			if len(fired) != 2 {
				t.Fatalf("the ghost fired %d triggers, want lost and recovered", len(fired))
			}
			got, err := s.Executions(ctx, &chime.ExecutionFilter{NodeID: "ghost"})
			if err != nil {
				t.Fatalf("Executions: %v", err)
			}
			want := []chime.Execution{toExecution(fired["recovered"]), toExecution(fired["lost"])}
			want[0].RequestsRecovery = true
			checkExecutions(t, "the ghost's running executions", got, want...)

			lostKey, stoppedKey := chime.NewJobKey("", "lost"), chime.NewJobKey("", "stopped")
			for _, f := range []struct {
				what   string
				filter chime.ExecutionFilter
				want   []chime.Execution
			}{
				{"a job's", chime.ExecutionFilter{JobKey: &lostKey}, want[1:]},
				{"a trigger's", chime.ExecutionFilter{TriggerKey: &chime.TriggerKey{Group: chime.DefaultGroup, Name: "recovered"}}, want[:1]},
				{"the newest", chime.ExecutionFilter{Limit: 1}, want[:1]},
				{"running", chime.ExecutionFilter{Running: true}, want},
				{"another node's", chime.ExecutionFilter{NodeID: "watcher"}, nil},
			} {
				got, err := s.Executions(ctx, &f.filter)
				if err != nil {
					t.Fatalf("Executions(%s): %v", f.what, err)
				}
				checkExecutions(t, f.what+" executions", got, f.want...)
			}

			// The ghost restarts: registering again recovers what its
			// previous incarnation ran. Its next incarnation fires and
			// leaves while the job runs.
			node, err = st.NodeRegister(ctx, "ghost")
			if err != nil {
				t.Fatalf("NodeRegister again: %v", err)
			}
			lease = store.Lease{NodeID: node.ID, Epoch: node.Epoch}
			if f := ghostFire(t, st, lease, day(3).Add(time.Hour)); len(f) != 1 {
				t.Fatalf("the restarted ghost fired %d triggers, want stopped", len(f))
			}
			if err := st.NodeUnregister(ctx, lease); err != nil {
				t.Fatalf("NodeUnregister: %v", err)
			}
			for _, c := range []struct {
				key   chime.JobKey
				error string
			}{{lostKey, store.ErrorNodeLost}, {stoppedKey, store.ErrorNodeStopped}} {
				got, err := s.Executions(ctx, &chime.ExecutionFilter{JobKey: &c.key})
				if err != nil {
					t.Fatalf("Executions: %v", err)
				}
				if len(got) != 1 || got[0].State != chime.ExecutionFailed || !got[0].State.Done() || !got[0].LostWithNode ||
					got[0].Error != c.error || got[0].FinishedTime.IsZero() || got[0].NodeID != "ghost" {
					t.Errorf("executions of %s = %+v; want one FAILED %q, lost with node ghost, finished", c.key, got, c.error)
				}
			}
			running, err := s.Executions(ctx, &chime.ExecutionFilter{Running: true})
			if err != nil {
				t.Fatalf("Executions: %v", err)
			}
			if len(running) != 1 || running[0].ID != want[0].ID || running[0].State != chime.ExecutionRecoverable ||
				running[0].State.Done() || running[0].LostWithNode || running[0].NodeID != "" {
				t.Errorf("running executions = %+v; want only %s, RECOVERABLE on no node, not lost", running, want[0].ID)
			}

			_, err = s.Executions(ctx, &chime.ExecutionFilter{Limit: -1})
			if verr := (*chime.ValidationError)(nil); !errors.As(err, &verr) || verr.Field != "ExecutionFilter.Limit" {
				t.Errorf("Executions with a negative limit = %v; want a ValidationError on ExecutionFilter.Limit", err)
			}
		})
	}
}

// toExecution is the Execution the scheduler shows of rec, as fired.
func toExecution(rec store.ExecutionRecord) chime.Execution {
	return chime.Execution{
		ID: rec.ID, JobKey: chime.NewJobKey(rec.JobKey.Group, rec.JobKey.Name),
		TriggerKey:        chime.NewTriggerKey(rec.TriggerKey.Group, rec.TriggerKey.Name),
		ScheduledFireTime: rec.ScheduledTime, FireTime: rec.FiredTime, NodeID: rec.NodeID,
		State: chime.ExecutionExecuting, RequestsRecovery: rec.RequestsRecovery,
	}
}

// checkExecutions compares executions, times by instant.
func checkExecutions(t *testing.T, what string, got []chime.Execution, want ...chime.Execution) {
	t.Helper()
	norm := func(es []chime.Execution) []chime.Execution {
		out := make([]chime.Execution, len(es))
		for i, e := range es {
			e.ScheduledFireTime, e.FireTime, e.FinishedTime = e.ScheduledFireTime.UTC(), e.FireTime.UTC(), e.FinishedTime.UTC()
			out[i] = e
		}
		return out
	}
	g, w := norm(got), norm(want)
	if len(g) != len(w) {
		t.Errorf("%s = %+v; want %+v", what, g, w)
		return
	}
	for i := range g {
		if g[i] != w[i] {
			t.Errorf("%s[%d] = %+v; want %+v", what, i, g[i], w[i])
		}
	}
}

// batchMetrics is a chime.Metrics that records what it is told.
type batchMetrics struct {
	mu       sync.Mutex
	claimed  []int
	fired    []int
	negative bool
}

func (m *batchMetrics) TriggersAcquired(claimed int, took time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claimed = append(m.claimed, claimed)
	m.negative = m.negative || took < 0
}

func (m *batchMetrics) TriggersFired(firings int, took time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fired = append(m.fired, firings)
	m.negative = m.negative || took < 0
}

// TestMetricsHearOfEachClaimAndFire checks that Config.Metrics hears of
// the claims and the fired batches: three triggers due together are
// claimed and fired in one batch.
func TestMetricsHearOfEachClaimAndFire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &batchMetrics{}
		s, rec := newScheduler(t, chime.Config{Metrics: m})
		at := time.Now().Add(10 * time.Second)
		for _, name := range []string{"a", "b", "c"} {
			tr := trig(name, &schedule.Simple{})
			tr.StartTime = at
			scheduleJob(t, s, job(name), tr)
		}
		start(t, s)
		time.Sleep(20 * time.Second)
		stop(t, s)
		if n := len(rec.all()); n != 3 {
			t.Fatalf("%d firings, want 3", n)
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		claimed := 0
		for _, n := range m.claimed {
			claimed += n
		}
		if claimed != 3 || len(m.fired) != 1 || m.fired[0] != 3 || m.negative {
			t.Errorf("metrics heard claims of %v triggers and fired batches of %v, negative durations %v; want 3 claimed, one batch of 3, none negative",
				m.claimed, m.fired, m.negative)
		}
	})
}
