package sqlstore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// claimFireAll claims and fires, in one TriggersAcquireFire call, up to n
// due one-shot triggers, completing none.
func claimFireAll(t *testing.T, s *sqlstore.Store, lease store.Lease, n int) *store.TriggersAcquireFireResult {
	t.Helper()
	res, err := s.TriggersAcquireFire(t.Context(), &store.TriggersAcquireFireParams{
		TriggersAcquireParams: store.TriggersAcquireParams{Lease: lease, NoLaterThan: time.Now(), Limit: n},
		Fire: func(rec store.TriggerRecord) (store.TriggerFiring, bool) {
			advanced := rec
			advanced.PreviousFireTime, advanced.NextFireTime = rec.NextFireTime, time.Time{}
			advanced.TimesTriggered++
			return store.TriggerFiring{Trigger: advanced, Execution: store.ExecutionRecord{
				ScheduledTime: rec.NextFireTime, FiredTime: time.Now(),
			}}, true
		},
	})
	if err != nil {
		t.Fatalf("TriggersAcquireFire: %v", err)
	}
	return res
}

// TestAcquireFireStatements counts the statements PostgreSQL receives to
// claim and fire due one-shot triggers in one TriggersAcquireFire call:
// fewer than TriggersAcquire then TriggersFire (4 + 7, see
// TestStatementsPerFiring), in one transaction, and not growing with the
// batch.
func TestAcquireFireStatements(t *testing.T) {
	t.Parallel()
	// begin, lease check (which sets plan_cache_mode), locking read of
	// the due triggers, read of their jobs, INSERT of the executions,
	// UPDATE of the triggers, commit
	const want = 7
	for _, n := range []int{1, 50} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			s, log := openCounted(t)
			lease := dueOneShots(t, s, n)
			log.take()
			res := claimFireAll(t, s, lease, n)
			sent := log.take()
			if len(res.Firings) != n || len(res.Claimed) != 0 {
				t.Fatalf("fired %d and claimed %d, want %d fired", len(res.Firings), len(res.Claimed), n)
			}
			if len(sent) != want {
				t.Errorf("claiming and firing %d triggers sent %d statements, want %d:\n%s", n, len(sent), want, strings.Join(sent, "\n"))
			}
			if begins := strings.Count(strings.Join(sent, "\n"), "begin"); begins != 1 {
				t.Errorf("%d transactions, want 1:\n%s", begins, strings.Join(sent, "\n"))
			}
		})
	}
}

// TestStoreAnalyzesTablesWithoutStatistics checks that a PostgreSQL store
// whose tables PostgreSQL never analyzed analyzes its jobs and triggers at
// its first claim, before any firing, and its executions after its first
// hundred firings (see
// statsCheck in analyze.go), so that its batches are planned by key, not
// as scans of the scheduler's rows.
func TestStoreAnalyzesTablesWithoutStatistics(t *testing.T) {
	t.Parallel()
	const n = 150
	s, _ := openCounted(t)
	ctx := t.Context()
	for _, table := range []string{"jobs", "triggers", "executions"} {
		// Autovacuum, which may analyze them too, would make the test
		// pass without the store.
		if _, err := s.DB().ExecContext(ctx, s.SQL("ALTER TABLE {p}"+table+" SET (autovacuum_enabled = false)")); err != nil {
			t.Fatalf("turning autovacuum off for %s: %v", table, err)
		}
	}
	lease := dueOneShots(t, s, n)
	analyzed := func() map[string]bool {
		t.Helper()
		out := make(map[string]bool)
		for _, table := range []string{"jobs", "triggers", "executions"} {
			var done bool
			err := s.DB().QueryRowContext(ctx, `SELECT last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL `+
				`FROM pg_stat_user_tables WHERE relid = $1::regclass`, s.SQL("{p}"+table)).Scan(&done)
			if err != nil {
				t.Fatalf("reading the statistics of %s: %v", table, err)
			}
			out[table] = done
		}
		return out
	}
	// waitFor waits, up to a generous deadline, for the store's own
	// goroutine to have analyzed what want says, and checks it.
	waitFor := func(when string, want map[string]bool) {
		t.Helper()
		got := analyzed()
		for deadline := time.Now().Add(30 * time.Second); fmt.Sprint(got) != fmt.Sprint(want) && time.Now().Before(deadline); got = analyzed() {
			time.Sleep(50 * time.Millisecond)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("tables analyzed %s: %v, want %v", when, got, want)
		}
	}
	waitFor("before any claim", map[string]bool{"jobs": false, "triggers": false, "executions": false})
	const claimed = 10
	if got, err := s.TriggersAcquire(ctx, &store.TriggersAcquireParams{Lease: lease, NoLaterThan: time.Now(), Limit: claimed}); err != nil || len(got) != claimed {
		t.Fatalf("TriggersAcquire claimed %d, %v; want %d", len(got), err, claimed)
	}
	waitFor("after a claim", map[string]bool{"jobs": true, "triggers": true, "executions": false})
	claimFireAll(t, s, lease, n/3)
	waitFor(fmt.Sprintf("after %d firings", n/3), map[string]bool{"jobs": true, "triggers": true, "executions": false})
	claimFireAll(t, s, lease, n-n/3-claimed)
	waitFor(fmt.Sprintf("after %d firings", n), map[string]bool{"jobs": true, "triggers": true, "executions": true})
}
