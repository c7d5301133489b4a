package pool_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/pool"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// forEachDB runs fn on every database with a function that opens a
// Service on it, as one more node of the same cluster.
func forEachDB(t *testing.T, fn func(t *testing.T, open func() (*pool.Service, *sqlstore.Store))) {
	t.Helper()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			sched := "test-" + rand.Text()
			fn(t, func() (*pool.Service, *sqlstore.Store) { return newService(t, url, sched) })
		})
	}
}

func newService(t *testing.T, url, sched string) (*pool.Service, *sqlstore.Store) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := sqlstore.Open(t.Context(), url, &sqlstore.Options{SchedulerName: sched, Logger: log})
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s, err := pool.New(t.Context(), st, &pool.Options{Logger: log, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatalf("pool.New: %v", err)
	}
	return s, st
}

func put(t *testing.T, s *pool.Service, name string, limit int) {
	t.Helper()
	if _, err := s.Put(t.Context(), pool.Pool{Name: name, Limit: limit}); err != nil {
		t.Fatalf("Put(%s, %d): %v", name, limit, err)
	}
}

var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ticket(poolName, node, id string, sec int) pool.Ticket {
	return pool.Ticket{ID: id, Pool: poolName, NodeID: node, JobGroup: "g", JobName: "j-" + id, Scheduled: base.Add(time.Duration(sec) * time.Second)}
}

func enqueue(t *testing.T, s *pool.Service, tk pool.Ticket) {
	t.Helper()
	if err := s.Enqueue(t.Context(), tk); err != nil {
		t.Fatalf("Enqueue(%s): %v", tk.ID, err)
	}
}

func grant(t *testing.T, s *pool.Service, name string) []string {
	t.Helper()
	ids, err := s.Grant(t.Context(), name)
	if err != nil {
		t.Fatalf("Grant(%s): %v", name, err)
	}
	slices.Sort(ids)
	return ids
}

func counts(t *testing.T, s *pool.Service, name string) (running, waiting int) {
	t.Helper()
	p, err := s.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("Get(%s): %v", name, err)
	}
	return p.Running, p.Waiting
}

func TestPoolCRUD(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, open func() (*pool.Service, *sqlstore.Store)) {
		s, _ := open()
		ctx := t.Context()
		created, err := s.Put(ctx, pool.Pool{Name: "reports", Limit: 4, Description: "nightly reports"})
		if err != nil || !created {
			t.Fatalf("Put = %v, %v; want created", created, err)
		}
		created, err = s.Put(ctx, pool.Pool{Name: "reports", Limit: 2})
		if err != nil || created {
			t.Fatalf("second Put = %v, %v; want replaced", created, err)
		}
		put(t, s, "a-first", 1)
		all, err := s.List(ctx)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		var names []string
		for _, p := range all {
			names = append(names, fmt.Sprintf("%s:%d", p.Name, p.Limit))
		}
		if want := []string{"a-first:1", "reports:2"}; !slices.Equal(names, want) {
			t.Errorf("List = %v, want %v", names, want)
		}
		for _, tc := range []struct {
			p     pool.Pool
			field string
		}{
			{pool.Pool{Name: "", Limit: 1}, "name"},
			{pool.Pool{Name: "a b", Limit: 1}, "name"},
			{pool.Pool{Name: "x", Limit: 0}, "limit"},
			{pool.Pool{Name: "x", Limit: pool.MaxLimit + 1}, "limit"},
		} {
			_, err := s.Put(ctx, tc.p)
			var fe *pool.InvalidError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, pool.ErrInvalid) {
				t.Errorf("Put(%+v) = %v, want an InvalidError naming %s", tc.p, err, tc.field)
			}
		}
		if _, err := s.Get(ctx, "x"); !errors.Is(err, pool.ErrNotFound) {
			t.Errorf("Get of a refused pool = %v, want ErrNotFound", err)
		}
		if err := s.Delete(ctx, "reports"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if err := s.Delete(ctx, "reports"); !errors.Is(err, pool.ErrNotFound) {
			t.Errorf("second Delete = %v, want ErrNotFound", err)
		}
		if err := s.Enqueue(ctx, ticket("reports", "n1", "e1", 0)); !errors.Is(err, pool.ErrNotFound) {
			t.Errorf("Enqueue in a deleted pool = %v, want ErrNotFound", err)
		}
	})
}

// TestGrantInOrder: slots go to the firings with the earliest scheduled
// times first, then by execution ID, whichever node queued them, and
// never more than the limit.
func TestGrantInOrder(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, open func() (*pool.Service, *sqlstore.Store)) {
		n1, _ := open()
		n2, _ := open()
		put(t, n1, "p", 2)
		enqueue(t, n1, ticket("p", "n1", "e4", 4))
		enqueue(t, n2, ticket("p", "n2", "e3", 3))
		enqueue(t, n1, ticket("p", "n1", "e1b", 1))
		enqueue(t, n2, ticket("p", "n2", "e1a", 1))
		enqueue(t, n2, ticket("p", "n2", "e2", 2))
		enqueue(t, n2, ticket("p", "n2", "e2", 2)) // again: nothing changes
		if r, w := counts(t, n1, "p"); r != 0 || w != 5 {
			t.Fatalf("counts = %d running, %d waiting; want 0, 5", r, w)
		}
		if got, want := grant(t, n2, "p"), []string{"e1a", "e1b"}; !slices.Equal(got, want) {
			t.Fatalf("first Grant = %v, want %v", got, want)
		}
		if got := grant(t, n1, "p"); len(got) != 0 {
			t.Fatalf("Grant of a full pool = %v, want none", got)
		}
		if err := n1.Release(t.Context(), "p", "e1b"); err != nil {
			t.Fatalf("Release: %v", err)
		}
		// Release handed the slot on to the head of the queue.
		if r, w := counts(t, n1, "p"); r != 2 || w != 2 {
			t.Fatalf("after Release: %d running, %d waiting; want 2, 2", r, w)
		}
		granted, err := n2.Withdraw(t.Context(), "e2")
		if err != nil || !granted {
			t.Fatalf("Withdraw(e2) = %v, %v; want granted (it got e1b's slot)", granted, err)
		}
		granted, err = n1.Withdraw(t.Context(), "e4")
		if err != nil || granted {
			t.Fatalf("Withdraw(e4) = %v, %v; want withdrawn", granted, err)
		}
		if r, w := counts(t, n1, "p"); r != 2 || w != 1 {
			t.Fatalf("after Withdraw: %d running, %d waiting; want 2, 1", r, w)
		}
	})
}

// TestBehind: a firing knows whether a later firing of its job waits
// behind it.
func TestBehind(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, open func() (*pool.Service, *sqlstore.Store)) {
		s, _ := open()
		put(t, s, "p", 1)
		first := pool.Ticket{ID: "a", Pool: "p", NodeID: "n", JobGroup: "g", JobName: "j", Scheduled: base}
		second := first
		second.ID, second.Scheduled = "b", base.Add(time.Second)
		other := first
		other.ID, other.JobName, other.Scheduled = "c", "k", base.Add(time.Minute)
		for _, tk := range []pool.Ticket{first, other} {
			enqueue(t, s, tk)
		}
		if behind, err := s.Behind(t.Context(), first); err != nil || behind {
			t.Fatalf("Behind with no later firing of the job = %v, %v; want false", behind, err)
		}
		enqueue(t, s, second)
		if behind, err := s.Behind(t.Context(), first); err != nil || !behind {
			t.Fatalf("Behind with a later firing = %v, %v; want true", behind, err)
		}
		if behind, err := s.Behind(t.Context(), second); err != nil || behind {
			t.Fatalf("Behind of the last firing = %v, %v; want false", behind, err)
		}
	})
}

// TestNodeLossFreesSlots: the slots of a node that is lost come back, by
// ForgetNode or when their lease lapses, and go to the next in line.
func TestNodeLossFreesSlots(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, open func() (*pool.Service, *sqlstore.Store)) {
		dead, _ := open()
		live, st := open()
		put(t, live, "p", 2)
		enqueue(t, dead, ticket("p", "dead", "d1", 1))
		enqueue(t, dead, ticket("p", "dead", "d2", 2))
		enqueue(t, live, ticket("p", "live", "l3", 3))
		enqueue(t, live, ticket("p", "live", "l4", 4))
		if got, want := grant(t, live, "p"), []string{"d1", "d2"}; !slices.Equal(got, want) {
			t.Fatalf("Grant = %v, want %v", got, want)
		}
		n, err := live.ForgetNode(t.Context(), "dead", time.Now().Add(time.Minute))
		if err != nil || n != 2 {
			t.Fatalf("ForgetNode = %d, %v; want 2", n, err)
		}
		if got, want := grant(t, live, "p"), []string{"l3", "l4"}; !slices.Equal(got, want) {
			t.Fatalf("Grant after ForgetNode = %v, want %v", got, want)
		}

		// A holder whose lease lapsed (its node stopped renewing) loses
		// its slot at the next grant; one that renews keeps it.
		enqueue(t, live, ticket("p", "live", "l5", 5))
		if err := live.Renew(t.Context(), "live"); err != nil {
			t.Fatalf("Renew: %v", err)
		}
		if got := grant(t, live, "p"); len(got) != 0 {
			t.Fatalf("Grant while both holders renew = %v, want none", got)
		}
		lapse(t, st, "l3")
		if got, want := grant(t, live, "p"), []string{"l5"}; !slices.Equal(got, want) {
			t.Fatalf("Grant after l3's lease lapsed = %v, want %v", got, want)
		}
	})
}

// lapse moves the lease of execution id's slot into the past, as if its
// node had stopped renewing it a while ago.
func lapse(t *testing.T, st *sqlstore.Store, id string) {
	t.Helper()
	q := st.SQL(`UPDATE {p}pool_slots SET lease_until = {now} - 1000000000 WHERE sched_name = ? AND id = ?`)
	if _, err := st.DB().ExecContext(t.Context(), q, st.SchedulerName(), id); err != nil {
		t.Fatalf("lapsing %s: %v", id, err)
	}
}

// TestWaitHoldsTheLimitAcrossNodes: three nodes' firings wait for a pool
// of 3 and hold their slot a moment; at no instant do more than 3 hold
// one, and every firing gets its turn.
func TestWaitHoldsTheLimitAcrossNodes(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, open func() (*pool.Service, *sqlstore.Store)) {
		const limit, perNode = 3, 12
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var loops sync.WaitGroup
		defer loops.Wait()
		defer cancel()
		var (
			holding, most atomic.Int64
			done          atomic.Int64
			firings       sync.WaitGroup
		)
		for n := range 3 {
			s, _ := open()
			if n == 0 {
				put(t, s, "p", limit)
			}
			node := fmt.Sprintf("n%d", n)
			loops.Go(func() { s.Run(ctx, node) })
			for i := range perNode {
				firings.Go(func() {
					tk := ticket("p", node, fmt.Sprintf("%s-%02d", node, i), i)
					if err := s.Wait(ctx, tk); err != nil {
						t.Errorf("Wait(%s): %v", tk.ID, err)
						return
					}
					now := holding.Add(1)
					for {
						m := most.Load()
						if now <= m || most.CompareAndSwap(m, now) {
							break
						}
					}
					time.Sleep(2 * time.Millisecond) // holds the slot a moment, so that others contend
					holding.Add(-1)
					if err := s.Release(context.WithoutCancel(ctx), "p", tk.ID); err != nil {
						t.Errorf("Release(%s): %v", tk.ID, err)
					}
					done.Add(1)
				})
			}
		}
		firings.Wait()
		if got := most.Load(); got > limit || got < 1 {
			t.Errorf("at most %d held a slot at once, want 1 to %d", got, limit)
		}
		if got := done.Load(); got != 3*perNode {
			t.Errorf("%d firings ran, want %d", got, 3*perNode)
		}
		t.Logf("at most %d of %d held a slot at once", most.Load(), limit)
	})
}

// TestWaitPoolDeleted: a firing waiting in a pool that is deleted is told.
func TestWaitPoolDeleted(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, open func() (*pool.Service, *sqlstore.Store)) {
		s, _ := open()
		ctx, cancel := context.WithCancel(t.Context())
		var loop sync.WaitGroup
		defer loop.Wait()
		defer cancel()
		loop.Go(func() { s.Run(ctx, "n") })
		if err := s.Wait(ctx, ticket("nope", "n", "x", 0)); !errors.Is(err, pool.ErrNotFound) {
			t.Fatalf("Wait in a missing pool = %v, want ErrNotFound", err)
		}
		put(t, s, "p", 1)
		if err := s.Wait(ctx, ticket("p", "n", "a", 0)); err != nil {
			t.Fatalf("Wait(a): %v", err)
		}
		errc := make(chan error, 1)
		go func() { errc <- s.Wait(ctx, ticket("p", "n", "b", 1)) }()
		for {
			if _, w := counts(t, s, "p"); w == 1 {
				break
			}
			time.Sleep(time.Millisecond) // until b is queued; nothing to wait on
		}
		if err := s.Delete(ctx, "p"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if err := <-errc; !errors.Is(err, pool.ErrNotFound) {
			t.Fatalf("Wait(b) when its pool was deleted = %v, want ErrNotFound", err)
		}
	})
}
