package sqlstore_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// exec runs raw SQL on the store's database, with ? Placeholders.
func exec(t *testing.T, s *sqlstore.Store, q string, args ...any) {
	t.Helper()
	if s.Dialect() == sqlstore.Postgres {
		for i := 1; strings.Contains(q, "?"); i++ {
			q = strings.Replace(q, "?", fmt.Sprintf("$%d", i), 1)
		}
	}
	res, err := s.DB().ExecContext(t.Context(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%s changed %d rows, want 1", q, n)
	}
}

// TestReconcileRepairsCorruption corrupts rows behind the store's back, as
// a crash of a non-transactional store or a hand edit could, and checks
// that Reconcile repairs exactly those rows and reports them.
func TestReconcileRepairsCorruption(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			sched := schedName()
			s := open(t, db.URL(t), &sqlstore.Options{SchedulerName: sched})
			ctx := t.Context()
			at := func(n int) time.Time { return time.Date(2030, 1, 1, 0, 0, n, 0, time.UTC) }
			k := func(g, n string) store.Key { return store.Key{Group: g, Name: n} }
			job := func(key store.Key, recovery, nonConcurrent bool) {
				t.Helper()
				j := store.JobRecord{Key: key, Durable: true, RequestsRecovery: recovery, DisallowConcurrent: nonConcurrent}
				if err := s.JobUpsert(ctx, &store.JobUpsertParams{Job: j}); err != nil {
					t.Fatalf("JobUpsert: %v", err)
				}
			}
			trigger := func(key, jk store.Key, next time.Time) {
				t.Helper()
				tr := store.TriggerRecord{Key: key, JobKey: jk, Kind: "simple", Schedule: []byte(`{}`), StartTime: at(0), NextFireTime: next}
				if err := s.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: tr}); err != nil {
					t.Fatalf("TriggerInsert(%s): %v", key, err)
				}
			}
			register := func(id string) store.Lease {
				t.Helper()
				n, err := s.NodeRegister(ctx, id)
				if err != nil {
					t.Fatalf("NodeRegister: %v", err)
				}
				return store.Lease{NodeID: n.ID, Epoch: n.Epoch}
			}
			acquire := func(l store.Lease, key store.Key) store.TriggerRecord {
				t.Helper()
				tr, err := s.TriggerGet(ctx, key)
				if err != nil {
					t.Fatalf("TriggerGet: %v", err)
				}
				got, err := s.TriggersAcquire(ctx, &store.TriggersAcquireParams{Lease: l, NoLaterThan: tr.NextFireTime, Limit: 1})
				if err != nil || len(got) != 1 || got[0].Key != key {
					t.Fatalf("TriggersAcquire = %v, %v; want %s", got, err, key)
				}
				return got[0]
			}
			fire := func(l store.Lease, key store.Key) string {
				t.Helper()
				tr := acquire(l, key)
				p := &store.TriggerFireParams{Lease: l, Trigger: tr, Execution: store.ExecutionRecord{ScheduledTime: tr.NextFireTime}}
				p.Trigger.NextFireTime = tr.NextFireTime.Add(time.Hour)
				if res, err := s.TriggerFire(ctx, p); err != nil || res.Blocked {
					t.Fatalf("TriggerFire(%s) = %+v, %v", key, res, err)
				}
				return p.Execution.ID
			}

			a, b := register("a"), register("b")
			plain, rec, fail := k("g", "plain"), k("g", "recoverable"), k("g", "failing")
			idle, busy := k("g", "idle-non-concurrent"), k("g", "busy-non-concurrent")
			job(plain, false, false)
			job(rec, true, false)
			job(fail, false, false)
			job(idle, false, true)
			job(busy, false, true)

			// Claims: one by a node that never existed, one under a stale
			// epoch of a live node, one healthy.
			ghostClaim, staleClaim, liveClaim := k("claim", "ghost"), k("claim", "stale"), k("claim", "live")
			trigger(ghostClaim, plain, at(1))
			trigger(staleClaim, plain, at(2))
			trigger(liveClaim, plain, at(3))
			exec(t, s, "UPDATE chime_triggers SET state = 'ACQUIRED', claimed_by = 'ghost', claim_epoch = 1 "+
				"WHERE sched_name = ? AND trigger_group = ? AND trigger_name = ?", sched, ghostClaim.Group, ghostClaim.Name)
			acquire(b, staleClaim)
			exec(t, s, "UPDATE chime_triggers SET claim_epoch = claim_epoch + 100 "+
				"WHERE sched_name = ? AND trigger_group = ? AND trigger_name = ?", sched, staleClaim.Group, staleClaim.Name)
			acquire(b, liveClaim)

			// Executions: two of a dead epoch of a, with and without
			// recovery, and a healthy one.
			trigger(k("exec", "recoverable"), rec, at(4))
			trigger(k("exec", "failing"), fail, at(5))
			trigger(k("exec", "healthy"), plain, at(6))
			lostRecoverable := fire(a, k("exec", "recoverable"))
			lostFailing := fire(a, k("exec", "failing"))
			healthy := fire(a, k("exec", "healthy"))
			for _, id := range []string{lostRecoverable, lostFailing} {
				exec(t, s, "UPDATE chime_executions SET epoch = epoch - 1 WHERE sched_name = ? AND id = ?", sched, id)
			}

			// Blocked triggers: two of a job with no running execution, and
			// one of a job that runs.
			idleBlocked, idlePausedBlocked := k("blocked", "idle"), k("blocked", "idle-paused")
			busyBlocked := k("blocked", "busy")
			trigger(idleBlocked, idle, at(7))
			trigger(idlePausedBlocked, idle, at(8))
			trigger(k("blocked", "busy-firing"), busy, at(9))
			trigger(busyBlocked, busy, at(100))
			exec(t, s, "UPDATE chime_triggers SET state = 'BLOCKED' "+
				"WHERE sched_name = ? AND trigger_group = ? AND trigger_name = ?", sched, idleBlocked.Group, idleBlocked.Name)
			exec(t, s, "UPDATE chime_triggers SET state = 'PAUSED_BLOCKED' "+
				"WHERE sched_name = ? AND trigger_group = ? AND trigger_name = ?", sched, idlePausedBlocked.Group, idlePausedBlocked.Name)
			busyRun := fire(a, k("blocked", "busy-firing"))

			got, err := s.Reconcile(ctx, a)
			if err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			keys := func(ks []store.Key) []string {
				var out []string
				for _, k := range ks {
					out = append(out, k.String())
				}
				return out
			}
			ids := func(es []store.ExecutionRecord) []string {
				var out []string
				for _, e := range es {
					out = append(out, e.ID)
				}
				return out
			}
			check := func(what string, got, want []string) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Errorf("%s = %q, want %q", what, got, want)
				}
			}
			check("ReleasedTriggers", keys(got.ReleasedTriggers), keys([]store.Key{ghostClaim, staleClaim}))
			check("UnblockedTriggers", keys(got.UnblockedTriggers), keys([]store.Key{idleBlocked, idlePausedBlocked}))
			check("Recoverable", ids(got.Recoverable), []string{lostRecoverable})
			check("Failed", ids(got.Failed), []string{lostFailing})
			for _, e := range got.Recoverable {
				if e.State != store.ExecutionRecoverable || e.NodeID != "" {
					t.Errorf("reported recoverable execution = %+v, want RECOVERABLE with no node", e)
				}
			}
			for _, e := range got.Failed {
				if e.State != store.ExecutionFailed || e.Error != "node lost" || e.FinishedTime.IsZero() {
					t.Errorf("reported failed execution = %+v, want FAILED, \"node lost\", a finished time", e)
				}
			}

			// The stored rows say the same, and healthy work is untouched.
			wantTriggers := map[store.Key]struct {
				state store.TriggerState
				claim string
			}{
				ghostClaim:        {store.StateWaiting, ""},
				staleClaim:        {store.StateWaiting, ""},
				liveClaim:         {store.StateAcquired, "b"},
				idleBlocked:       {store.StateWaiting, ""},
				idlePausedBlocked: {store.StatePaused, ""},
				busyBlocked:       {store.StateBlocked, ""},
			}
			for key, want := range wantTriggers {
				tr, err := s.TriggerGet(ctx, key)
				if err != nil || tr.State != want.state || tr.ClaimedBy != want.claim {
					t.Errorf("trigger %s = %+v, %v; want %s claimed by %q", key, tr, err, want.state, want.claim)
				}
			}
			es, err := s.ExecutionList(ctx, &store.ExecutionListParams{})
			if err != nil {
				t.Fatalf("ExecutionList: %v", err)
			}
			wantExecutions := map[string]store.ExecutionState{
				lostRecoverable: store.ExecutionRecoverable,
				lostFailing:     store.ExecutionFailed,
				healthy:         store.ExecutionExecuting,
				busyRun:         store.ExecutionExecuting,
			}
			for _, e := range es {
				if want := wantExecutions[e.ID]; e.State != want {
					t.Errorf("execution %s state = %s, want %s", e.ID, e.State, want)
				}
			}

			again, err := s.Reconcile(ctx, b)
			if err != nil || !again.Empty() {
				t.Errorf("second Reconcile = %+v, %v; want nothing repaired", again, err)
			}
		})
	}
}
