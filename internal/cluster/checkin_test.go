package cluster

import (
	"context"
	"errors"
	"fmt"
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

var errUnreachable = errors.New("dial tcp 10.0.0.5:5432: connect: connection refused")

// cutStore is a store the node cannot reach while cut.
type cutStore struct {
	reconcilingStore
	cut bool
}

func (s *cutStore) setCut(cut bool) {
	s.mu.Lock()
	s.cut = cut
	s.mu.Unlock()
}

func (s *cutStore) down() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cut {
		return errUnreachable
	}
	return nil
}

func (s *cutStore) NodeRegister(ctx context.Context, id string) (*store.NodeRecord, error) {
	if err := s.down(); err != nil {
		return nil, err
	}
	return s.Store.NodeRegister(ctx, id)
}

func (s *cutStore) NodeCheckIn(ctx context.Context, l store.Lease) (time.Time, error) {
	if err := s.down(); err != nil {
		return time.Time{}, err
	}
	return s.Store.NodeCheckIn(ctx, l)
}

func (s *cutStore) NodesRecover(ctx context.Context, p *store.NodesRecoverParams) ([]store.NodeRecovery, error) {
	if err := s.down(); err != nil {
		return nil, err
	}
	return s.Store.NodesRecover(ctx, p)
}

func (s *cutStore) Reconcile(ctx context.Context, l store.Lease) (*store.Reconciliation, error) {
	if err := s.down(); err != nil {
		return nil, err
	}
	return s.reconcilingStore.Reconcile(ctx, l)
}

// A node cut off from the store for longer than its lease renews that lease
// when the store answers again and no node declared it dead meanwhile, and
// registers again under a new epoch when one did.
func TestUnreachableStoreLapsesTheLeaseLogsOnceAndRenewsOrReplacesIt(t *testing.T) {
	for _, declaredDead := range []bool{false, true} {
		t.Run(fmt.Sprintf("declared_dead_%v", declaredDead), func(t *testing.T) {
			testUnreachableStore(t, declaredDead)
		})
	}
}

func testUnreachableStore(t *testing.T, declaredDead bool) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		raw := memstore.New(nil)
		st := &cutStore{reconcilingStore: reconcilingStore{Store: raw}}
		logs, logger := logtest.New(slog.LevelInfo)
		var mu sync.Mutex
		var lostAt, restoredAt []time.Time
		m, err := New(Config{Store: st, NodeID: "n", Logger: logger, CheckInInterval: time.Second, DeadAfter: 3 * time.Second,
			Observer: &observerFuncs{
				lost: func() {
					mu.Lock()
					lostAt = append(lostAt, time.Now())
					mu.Unlock()
				},
				restored: func() {
					mu.Lock()
					restoredAt = append(restoredAt, time.Now())
					mu.Unlock()
				},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		if err := m.Start(ctx); err != nil {
			t.Fatal(err)
		}
		first := m.Lease()
		// Check-ins at 1s and 2s succeed; the store is cut from 2.5s to
		// 7.5s: check-ins at 3s to 7s fail, the lease lapses at 5s (2s +
		// DeadAfter), and the check-in at 8s renews it, or is refused and
		// the node registers again at once when node "b" declared it dead
		// at 6.5s.
		var validAt []time.Duration
		for step := range 100 {
			at := time.Duration(step)*100*time.Millisecond + 50*time.Millisecond
			time.Sleep(time.Until(begin.Add(at)))
			switch at {
			case 2550 * time.Millisecond:
				st.setCut(true)
			case 6550 * time.Millisecond:
				if declaredDead {
					b, err := raw.NodeRegister(ctx, "b")
					if err != nil {
						t.Fatal(err)
					}
					r, err := raw.NodesRecover(ctx, &store.NodesRecoverParams{Lease: store.Lease{NodeID: b.ID, Epoch: b.Epoch}, DeadAfter: 3 * time.Second})
					if err != nil || len(r) != 1 {
						t.Fatalf("b recovered %+v, %v; want node n", r, err)
					}
				}
			case 7550 * time.Millisecond:
				st.setCut(false)
			}
			if m.LeaseValid() {
				validAt = append(validAt, at)
			}
		}
		if err := m.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		var wantValid []time.Duration
		for step := range 100 {
			at := time.Duration(step)*100*time.Millisecond + 50*time.Millisecond
			if at < 5*time.Second || at > 8*time.Second {
				wantValid = append(wantValid, at)
			}
		}
		if !slices.Equal(validAt, wantValid) {
			t.Errorf("lease valid at %v, want before 5s and from 8s on: %v", validAt, wantValid)
		}
		if want := []time.Time{begin.Add(5 * time.Second)}; !slices.Equal(lostAt, want) {
			t.Errorf("LeaseLost at %v, want once at %v", lostAt, want)
		}
		if want := []time.Time{begin.Add(8 * time.Second)}; !slices.Equal(restoredAt, want) {
			t.Errorf("LeaseRestored at %v, want once at %v", restoredAt, want)
		}
		got := m.Lease()
		if declaredDead && got.Epoch <= first.Epoch {
			t.Errorf("epoch after registering again %d, want > %d", got.Epoch, first.Epoch)
		}
		if !declaredDead && got != first {
			t.Errorf("lease after the outage %+v, want %+v renewed", got, first)
		}
		// Reconciled at the start and at once after registering again;
		// never while the store was cut.
		wantReconciled := []time.Time{begin}
		if declaredDead {
			wantReconciled = append(wantReconciled, begin.Add(8*time.Second))
		}
		if got := st.callTimes(); !slices.Equal(got, wantReconciled) {
			t.Errorf("Reconcile called at %v, want %v", got, wantReconciled)
		}
		if got := logs.Messages("check-ins failing: store unreachable"); len(got) != 1 || got[0].Level != slog.LevelWarn {
			t.Errorf("outage start logged as %+v, want one Warn", got)
		}
		if got := logs.Messages("check-ins still failing: store unreachable"); len(got) != 0 {
			t.Errorf("%d reminders in a 5s outage, want none", len(got))
		}
		if got := logs.Messages("lease not renewed in time; assuming this node was declared dead"); len(got) != 1 {
			t.Errorf("lease lapse logged %d times, want once", len(got))
		}
		back := logs.Messages("check-ins succeed again")
		if len(back) != 1 || back[0].Attrs["outage"].Duration() != 5*time.Second || back[0].Attrs["attempts"].Int64() != 5 {
			t.Errorf("outage end logged as %+v, want one line: 5s, 5 attempts", back)
		}
	})
}

func TestRefusedLeaseIsReplacedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memstore.New(nil)
		var lost int
		m, err := New(Config{Store: st, NodeID: "n", Logger: quiet, CheckInInterval: 10 * time.Second, Observer: &observerFuncs{lost: func() { lost++ }}})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Start(ctx); err != nil {
			t.Fatal(err)
		}
		first := m.Lease()
		time.Sleep(time.Second)
		m.LeaseRefused(store.Lease{NodeID: "n", Epoch: first.Epoch - 1}) // an older lease: ignored
		if !m.LeaseValid() || lost != 0 {
			t.Fatalf("refusing an older lease invalidated the current one")
		}
		m.LeaseRefused(first)
		if m.LeaseValid() {
			t.Error("lease still valid after the store refused it")
		}
		synctest.Wait() // the member registers again without waiting 10s
		if got := m.Lease(); got.Epoch <= first.Epoch || !m.LeaseValid() {
			t.Errorf("lease %+v valid=%v after the refusal, want a new valid epoch", got, m.LeaseValid())
		}
		if lost != 1 {
			t.Errorf("LeaseLost called %d times, want 1", lost)
		}
		if err := m.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// partitionedStore is a store behind a silent network partition while
// partitioned: calls neither succeed nor fail, they wait for the network to
// heal (and then go through) or for their context to end.
type partitionedStore struct {
	reconcilingStore
	healed chan struct{} // nil while the network is whole
}

func (s *partitionedStore) partition() {
	s.mu.Lock()
	s.healed = make(chan struct{})
	s.mu.Unlock()
}

func (s *partitionedStore) heal() {
	s.mu.Lock()
	close(s.healed)
	s.healed = nil
	s.mu.Unlock()
}

func (s *partitionedStore) wait(ctx context.Context) error {
	s.mu.Lock()
	healed := s.healed
	s.mu.Unlock()
	if healed == nil {
		return nil
	}
	select {
	case <-healed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *partitionedStore) NodeRegister(ctx context.Context, id string) (*store.NodeRecord, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Store.NodeRegister(ctx, id)
}

func (s *partitionedStore) NodeCheckIn(ctx context.Context, l store.Lease) (time.Time, error) {
	if err := s.wait(ctx); err != nil {
		return time.Time{}, err
	}
	return s.Store.NodeCheckIn(ctx, l)
}

func (s *partitionedStore) NodesRecover(ctx context.Context, p *store.NodesRecoverParams) ([]store.NodeRecovery, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Store.NodesRecover(ctx, p)
}

func (s *partitionedStore) Reconcile(ctx context.Context, l store.Lease) (*store.Reconciliation, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.reconcilingStore.Reconcile(ctx, l)
}

// A check-in that hangs must not hide the lease's end: the node learns it
// by its own clock, when the lease would lapse, and cancels its jobs then,
// not when the network heals.
func TestSilentPartitionLapsesTheLeaseOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := &partitionedStore{reconcilingStore: reconcilingStore{Store: memstore.New(nil)}}
		var mu sync.Mutex
		var lostAt, restoredAt []time.Time
		m, err := New(Config{Store: st, NodeID: "n", Logger: quiet, CheckInInterval: time.Second, DeadAfter: 3 * time.Second,
			Observer: &observerFuncs{
				lost: func() {
					mu.Lock()
					lostAt = append(lostAt, time.Now())
					mu.Unlock()
				},
				restored: func() {
					mu.Lock()
					restoredAt = append(restoredAt, time.Now())
					mu.Unlock()
				},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		if err := m.Start(ctx); err != nil {
			t.Fatal(err)
		}
		// Check-ins at 1s and 2s succeed; the partition lasts from 2.5s
		// to 7.5s. The check-in sent at 3s hangs until the lease would
		// end, at 5s (2s + DeadAfter); the one sent at 6s hangs for one
		// check-in interval; the one sent at 8s renews the lease (no node
		// declared this one dead).
		time.Sleep(2500 * time.Millisecond)
		st.partition()
		time.Sleep(5 * time.Second)
		st.heal()
		time.Sleep(time.Second)
		synctest.Wait()
		if err := m.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if want := []time.Time{begin.Add(5 * time.Second)}; !slices.Equal(lostAt, want) {
			t.Errorf("LeaseLost at %v, want once at %v", lostAt, want)
		}
		if want := []time.Time{begin.Add(8 * time.Second)}; !slices.Equal(restoredAt, want) {
			t.Errorf("LeaseRestored at %v, want once at %v", restoredAt, want)
		}
	})
}
