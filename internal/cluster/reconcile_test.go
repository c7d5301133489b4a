package cluster

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/logtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// reconcilingStore records Reconcile calls and answers them with the
// reports it is given, in order; past those, it asks the real store.
type reconcilingStore struct {
	Store
	mu      sync.Mutex
	calls   []time.Time
	reports []*store.Reconciliation
}

func (s *reconcilingStore) Reconcile(ctx context.Context, lease store.Lease) (*store.Reconciliation, error) {
	s.mu.Lock()
	s.calls = append(s.calls, time.Now())
	var canned *store.Reconciliation
	if len(s.reports) > 0 {
		canned, s.reports = s.reports[0], s.reports[1:]
	}
	s.mu.Unlock()
	if canned != nil {
		return canned, nil
	}
	return s.Store.Reconcile(ctx, lease)
}

func (s *reconcilingStore) callTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func TestReconcileRunsAtStartAndEveryIntervalAndLogsEachRepair(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		exec := store.ExecutionRecord{ID: "e1", TriggerKey: store.Key{Group: "g", Name: "t1"}, JobKey: store.Key{Group: "g", Name: "j1"}, RequestsRecovery: true}
		failed := store.ExecutionRecord{ID: "e2", TriggerKey: store.Key{Group: "g", Name: "t2"}, JobKey: store.Key{Group: "g", Name: "j2"}, Error: "node lost"}
		report := &store.Reconciliation{
			ReleasedTriggers:  []store.Key{{Group: "g", Name: "stuck"}},
			UnblockedTriggers: []store.Key{{Group: "g", Name: "blocked"}},
			Recoverable:       []store.ExecutionRecord{exec},
			Failed:            []store.ExecutionRecord{failed},
		}
		st := &reconcilingStore{Store: memstore.New(nil), reports: []*store.Reconciliation{{}, report}}
		logs, logger := logtest.New(slog.LevelInfo)
		var got []*store.Reconciliation
		m, err := New(Config{Store: st, NodeID: "n", Logger: logger, ReconcileInterval: 10 * time.Second,
			Observer: &observerFuncs{reconciled: func(r *store.Reconciliation) { got = append(got, r) }}})
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		if err := m.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(25 * time.Second)
		if err := m.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		want := []time.Time{begin, begin.Add(10 * time.Second), begin.Add(20 * time.Second)}
		if calls := st.callTimes(); !slices.Equal(calls, want) {
			t.Errorf("Reconcile called at %v, want %v", calls, want)
		}
		// The empty report at the start and the real store's later are not
		// reported; the canned one is, once.
		if len(got) != 1 || got[0] != report {
			t.Errorf("Reconciled got %v, want the canned report once", got)
		}
		type repair struct{ kind, trigger, execution, job string }
		var repairs []repair
		for _, r := range logs.Messages("reconciliation repaired the store") {
			if r.Level != slog.LevelWarn {
				t.Errorf("repair logged at %s, want WARN", r.Level)
			}
			repairs = append(repairs, repair{r.Attrs["repair"].String(), r.Attrs["trigger_key"].String(), attr(r, "execution_id"), attr(r, "job_key")})
		}
		wantRepairs := []repair{
			{"released_trigger", "g.stuck", "", ""},
			{"unblocked_trigger", "g.blocked", "", ""},
			{"recoverable_execution", "g.t1", "e1", "g.j1"},
			{"failed_execution", "g.t2", "e2", "g.j2"},
		}
		if !slices.Equal(repairs, wantRepairs) {
			t.Errorf("repairs logged %+v, want %+v", repairs, wantRepairs)
		}
	})
}

func attr(r logtest.Record, key string) string {
	v, ok := r.Attrs[key]
	if !ok {
		return ""
	}
	return v.String()
}
