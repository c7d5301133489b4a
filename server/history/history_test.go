package history_test

import (
	"crypto/rand"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/store/sqlstore"
	"github.com/google/go-cmp/cmp"
)

// opener returns a fresh history for a test: its own scheduler name on
// the test's database, so that it sees no other test's rows.
type opener func(opts *history.Options) *history.History

// t0 is the base of the tests' instants.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// TestHistory runs every behaviour on every dialect. PostgreSQL and MySQL
// get one database each, shared by the subtests under their own scheduler
// names (which also proves that scheduler names isolate); each SQLite
// subtest gets its own file, since SQLite has one writer at a time.
func TestHistory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, open opener)
	}{
		{"Lifecycle", testLifecycle},
		{"StartInvalid", testStartInvalid},
		{"Truncation", testTruncation},
		{"Attempts", testAttempts},
		{"ListFilters", testListFilters},
		{"ListPaging", testListPaging},
		{"ListInvalid", testListInvalid},
		{"MarkNodeLost", testMarkNodeLost},
		{"RecordLost", testRecordLost},
		{"RecordBatch", testRecordBatch},
		{"RecordBatchMany", testRecordBatchMany},
		{"MarkLost", testMarkLost},
		{"RunningByNode", testRunningByNode},
		{"Kill", testKill},
		{"LastSuccess", testLastSuccess},
		{"JobSummaries", testJobSummaries},
		{"Stats", testStats},
		{"Decisions", testDecisions},
		{"Audit", testAudit},
		{"AuditMany", testAuditMany},
		{"PruneRule", testPruneRule},
		{"PruneCap", testPruneCap},
		{"PruneBatches", testPruneBatches},
		{"Pruner", testPruner},
		{"SchedulerIsolation", testSchedulerIsolation},
	}
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			urlFor := db.Shared(t)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					url := urlFor(t)
					tc.run(t, func(opts *history.Options) *history.History { return newHistory(t, url, opts) })
				})
			}
		})
	}
}

// newHistory opens a store with a fresh scheduler name on url and returns
// its history; both close when the test ends.
func newHistory(t *testing.T, url string, opts *history.Options) *history.History {
	t.Helper()
	o := &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: quiet()}
	if !strings.HasPrefix(url, "sqlite:") {
		o.MaxOpenConns = 2
	}
	st, err := sqlstore.Open(t.Context(), url, o)
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var ho history.Options
	if opts != nil {
		ho = *opts
	}
	if ho.Logger == nil {
		ho.Logger = quiet()
	}
	h, err := history.New(t.Context(), st, &ho)
	if err != nil {
		t.Fatalf("history.New: %v", err)
	}
	return h
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// execution returns a running execution of group.name started at the
// given time on node n1.
func execution(id, group, name string, started time.Time) *history.Execution {
	return &history.Execution{
		ID: id, JobGroup: group, JobName: name, TriggerGroup: "triggers", TriggerName: name + "-trigger",
		NodeID: "n1", ScheduledTime: started.Add(-time.Second), StartedTime: started,
	}
}

// start records executions, failing the test on an error.
func start(t *testing.T, h *history.History, es ...*history.Execution) {
	t.Helper()
	for _, e := range es {
		if err := h.Start(t.Context(), e); err != nil {
			t.Fatalf("Start(%s): %v", e.ID, err)
		}
	}
}

// finish records the end of an execution, failing the test on an error.
func finish(t *testing.T, h *history.History, id string, o history.Outcome, at time.Time) {
	t.Helper()
	if err := h.Finish(t.Context(), id, history.Finish{Outcome: o, FinishedTime: at}); err != nil {
		t.Fatalf("Finish(%s): %v", id, err)
	}
}

// wantInvalid checks that err is ErrInvalid and mentions want.
func wantInvalid(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !errors.Is(err, history.ErrInvalid) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %v, want ErrInvalid mentioning %q", what, err, want)
	}
}

// ids returns the IDs of executions.
func ids(es []history.Execution) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// equal fails the test unless got equals want, printing the difference.
func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func TestNewOptions(t *testing.T) {
	t.Parallel()
	st, err := sqlstore.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "h.db"), &sqlstore.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tests := []struct {
		name string
		opts history.Options
		want string
	}{
		{"NegativeOutput", history.Options{MaxOutputBytes: -1}, "MaxOutputBytes"},
		{"TinyOutput", history.Options{MaxOutputBytes: 10}, "MaxOutputBytes"},
		{"NegativeLogLines", history.Options{MaxLogLines: -5}, "MaxLogLines"},
		{"TinyLogLines", history.Options{MaxLogLines: 2}, "MaxLogLines"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := history.New(t.Context(), st, &tc.opts)
			wantInvalid(t, "New", err, tc.want)
		})
	}
	if _, err := history.New(t.Context(), nil, nil); !errors.Is(err, history.ErrInvalid) {
		t.Errorf("New(nil store): %v, want ErrInvalid", err)
	}
	// Nothing was migrated by the refused calls.
	var n int
	if err := st.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'chime_server%'").Scan(&n); err != nil || n != 0 {
		t.Errorf("server tables after refused New: %d, %v; want none", n, err)
	}
	if _, err := history.New(t.Context(), st, nil); err != nil {
		t.Errorf("New with defaults: %v", err)
	}
}

func testSchedulerIsolation(t *testing.T, open opener) {
	a, b := open(nil), open(nil)
	ctx := t.Context()
	start(t, a, execution("x1", "g", "job", t0))
	finish(t, a, "x1", history.OutcomeSucceeded, t0.Add(time.Second))
	if err := a.RecordDecision(ctx, &history.Decision{JobGroup: "g", JobName: "job", At: t0, Kind: history.DecisionFired}); err != nil {
		t.Fatal(err)
	}
	if err := a.RecordAudit(ctx, &history.AuditEntry{Time: t0, Actor: "ann", Action: "job.create"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "x1"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("other scheduler: Get = %v, want ErrNotFound", err)
	}
	if p, err := b.List(ctx, nil); err != nil || len(p.Executions) != 0 {
		t.Errorf("other scheduler: List = %+v, %v; want nothing", p, err)
	}
	if last, err := b.LastSuccess(ctx, "g", "job"); err != nil || !last.IsZero() {
		t.Errorf("other scheduler: LastSuccess = %v, %v; want zero", last, err)
	}
	if ds, err := b.Decisions(ctx, "", "", time.Time{}, time.Time{}, 0); err != nil || len(ds) != 0 {
		t.Errorf("other scheduler: Decisions = %+v, %v; want none", ds, err)
	}
	if p, err := b.ListAudit(ctx, nil); err != nil || len(p.Entries) != 0 {
		t.Errorf("other scheduler: ListAudit = %+v, %v; want nothing", p, err)
	}
	// The same execution ID can be recorded by another scheduler.
	start(t, b, execution("x1", "g", "job", t0))
}
