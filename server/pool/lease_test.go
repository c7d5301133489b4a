package pool_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/pool"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestHoldLearnsLostLease: a node whose renewals fail tells the holders
// of its slots that they lost them (its store is closed under it here,
// as a node that lost the database sees it), so that they stop before
// the other nodes may take the slots back.
func TestHoldLearnsLostLease(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			st, err := sqlstore.Open(t.Context(), db.URL(t), &sqlstore.Options{SchedulerName: "lease-" + t.Name(), Logger: log})
			if err != nil {
				t.Fatalf("sqlstore.Open: %v", err)
			}
			t.Cleanup(func() { _ = st.Close() })
			s, err := pool.New(t.Context(), st, &pool.Options{Logger: log, Lease: time.Second})
			if err != nil {
				t.Fatalf("pool.New: %v", err)
			}
			put(t, s, "p", 1)
			ctx, stop := context.WithCancel(t.Context())
			var run sync.WaitGroup
			run.Go(func() { s.Run(ctx, "n") })
			defer run.Wait()
			defer stop()
			if err := s.Wait(t.Context(), ticket("p", "n", "e1", 1)); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			lost := make(chan error, 1)
			defer s.Hold("e1", func(err error) { lost <- err })()
			if err := st.Close(); err != nil {
				t.Fatalf("closing the store: %v", err)
			}
			if err := <-lost; !errors.Is(err, pool.ErrLeaseLost) {
				t.Errorf("the holder was told %v, want ErrLeaseLost", err)
			}
		})
	}
}

// TestWaitOutlivesLostPlace: a waiting firing whose place in the queue
// was taken back while its pool exists (its lease lapsed) queues again
// and gets its slot, instead of being told that the pool is gone.
func TestWaitOutlivesLostPlace(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, open func() (*pool.Service, *sqlstore.Store)) {
		s, st := open()
		put(t, s, "p", 1)
		enqueue(t, s, ticket("p", "other", "h", 0))
		grant(t, s, "p")
		ctx, stop := context.WithCancel(t.Context())
		var run sync.WaitGroup
		run.Go(func() { s.Run(ctx, "n") })
		defer run.Wait()
		defer stop()
		waited := make(chan error, 1)
		go func() { waited <- s.Wait(t.Context(), ticket("p", "n", "w", 1)) }()
		for { // until w is queued
			p, err := s.Get(t.Context(), "p")
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if p.Waiting == 1 {
				break
			}
			time.Sleep(time.Millisecond) // nothing tells when another goroutine's insert landed
		}
		if _, err := st.DB().ExecContext(t.Context(), st.SQL(`DELETE FROM {p}pool_slots WHERE sched_name = ? AND id = ?`), st.SchedulerName(), "w"); err != nil {
			t.Fatalf("taking w's place back: %v", err)
		}
		if err := s.Release(t.Context(), "p", "h"); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if err := <-waited; err != nil {
			t.Errorf("Wait = %v, want the slot", err)
		}
	})
}

// TestRestartedNodeFreesItsOldSlots: a node's new process frees the slots
// its killed predecessor of the same ID held (their lease has not
// lapsed), which its renewals would otherwise keep for ever.
func TestRestartedNodeFreesItsOldSlots(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, open func() (*pool.Service, *sqlstore.Store)) {
		old, _ := open()
		put(t, old, "p", 1)
		enqueue(t, old, ticket("p", "n", "old-run", 1))
		grant(t, old, "p")
		restarted, _ := open()
		ctx, stop := context.WithCancel(t.Context())
		var run sync.WaitGroup
		run.Go(func() { restarted.Run(ctx, "n") })
		defer run.Wait()
		defer stop()
		if err := restarted.Wait(t.Context(), ticket("p", "n", "new-run", 2)); err != nil {
			t.Fatalf("Wait of the restarted node: %v", err)
		}
	})
}
