package dispatch_test

import (
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/dispatch"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// wantField checks that err is a *dispatch.FieldError naming field.
func wantField(t *testing.T, err error, field string) {
	t.Helper()
	var fe *dispatch.FieldError
	if !errors.As(err, &fe) || fe.Field != field || !errors.Is(err, dispatch.ErrInvalid) {
		t.Errorf("CheckAdvertised: %v, want an error naming %s", err, field)
	}
}

// TestCheckAdvertised refuses a target whose group no executor has ever
// registered in, or whose handler no executor of the group has ever
// advertised, and remembers what was advertised after the executors'
// rows are pruned; allow_unregistered lets anything through.
func TestCheckAdvertised(t *testing.T) {
	t.Parallel()
	forEachDB(t, nil, func(t *testing.T, s *dispatch.Service) {
		ctx := t.Context()
		target := func(group, handler string) api.ExecutorTarget {
			return api.ExecutorTarget{Group: group, Handler: handler}
		}
		wantField(t, s.CheckAdvertised(ctx, "executor", target("billing", "invoice.close")), "executor.group")
		register(t, s, "billing", nil, "invoice.close", "invoice.send")
		register(t, s, "billing", nil, "invoice.void")
		register(t, s, "payroll", nil, "pay")
		for _, h := range []string{"invoice.close", "invoice.send", "invoice.void"} {
			if err := s.CheckAdvertised(ctx, "executor", target("billing", h)); err != nil {
				t.Errorf("CheckAdvertised(billing, %s): %v", h, err)
			}
		}
		wantField(t, s.CheckAdvertised(ctx, "executor", target("billing", "pay")), "executor.handler")
		wantField(t, s.CheckAdvertised(ctx, "jobs[2].executor", target("hr", "pay")), "jobs[2].executor.group")
		allowed := target("hr", "pay")
		allowed.AllowUnregistered = true
		if err := s.CheckAdvertised(ctx, "executor", allowed); err != nil {
			t.Errorf("CheckAdvertised(allow_unregistered): %v", err)
		}
		// Every executor's lease lapsed and its row is gone: what they
		// advertised is still known.
		if n, err := s.PruneExecutors(ctx, time.Now().Add(time.Hour)); err != nil || n != 3 {
			t.Fatalf("PruneExecutors = %d, %v; want 3", n, err)
		}
		if err := s.CheckAdvertised(ctx, "executor", target("billing", "invoice.void")); err != nil {
			t.Errorf("CheckAdvertised after the executors were pruned: %v", err)
		}
	})
}

// TestCatalogFilledFromEarlierExecutors starts a Service on a database
// whose executors registered before the catalog existed (their catalog
// rows deleted): their groups and handlers are known at once.
func TestCatalogFilledFromEarlierExecutors(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			st, err := sqlstore.Open(t.Context(), url, &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: log})
			if err != nil {
				t.Fatalf("sqlstore.Open: %v", err)
			}
			t.Cleanup(func() { _ = st.Close() })
			s, err := dispatch.New(t.Context(), st, &dispatch.Options{Logger: log})
			if err != nil {
				t.Fatalf("dispatch.New: %v", err)
			}
			register(t, s, "billing", nil, "invoice.close")
			if _, err := st.DB().ExecContext(t.Context(), st.SQL(`DELETE FROM {p}executor_catalog_handlers WHERE sched_name = ?`), st.SchedulerName()); err != nil {
				t.Fatal(err)
			}
			wantField(t, s.CheckAdvertised(t.Context(), "executor", api.ExecutorTarget{Group: "billing", Handler: "invoice.close"}), "executor.group")
			again, err := dispatch.New(t.Context(), st, &dispatch.Options{Logger: log})
			if err != nil {
				t.Fatalf("dispatch.New: %v", err)
			}
			if err := again.CheckAdvertised(t.Context(), "executor", api.ExecutorTarget{Group: "billing", Handler: "invoice.close"}); err != nil {
				t.Errorf("CheckAdvertised after the catalog was filled: %v", err)
			}
		})
	}
}
