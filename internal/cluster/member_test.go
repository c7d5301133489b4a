package cluster

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// observerFuncs is an Observer that calls its non-nil functions.
type observerFuncs struct {
	recovered  func([]store.NodeRecovery)
	reconciled func(*store.Reconciliation)
	lost       func()
	restored   func()
}

func (o *observerFuncs) NodesRecovered(r []store.NodeRecovery) {
	if o.recovered != nil {
		o.recovered(r)
	}
}

func (o *observerFuncs) Reconciled(r *store.Reconciliation) {
	if o.reconciled != nil {
		o.reconciled(r)
	}
}

func (o *observerFuncs) LeaseLost() {
	if o.lost != nil {
		o.lost()
	}
}

func (o *observerFuncs) RegisteredAgain() {}

func (o *observerFuncs) LeaseRestored() {
	if o.restored != nil {
		o.restored()
	}
}

func newMember(t *testing.T, st Store, id string, onLost func(), onRecovered func([]store.NodeRecovery)) *Member {
	t.Helper()
	m, err := New(Config{Store: st, NodeID: id, Logger: quiet, CheckInInterval: time.Second, Observer: &observerFuncs{lost: onLost, recovered: onRecovered}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestConfigValidation(t *testing.T) {
	_, err := New(Config{Store: memstore.New(nil), NodeID: "n", CheckInInterval: 2 * time.Second, DeadAfter: time.Second})
	if err == nil {
		t.Fatal("DeadAfter shorter than CheckInInterval accepted")
	}
	if _, err := New(Config{Store: memstore.New(nil)}); err == nil {
		t.Fatal("missing NodeID accepted")
	}
}

func TestFencedNodeLosesLeaseAndRegistersAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memstore.New(nil)
		var lost atomic.Int32
		a := newMember(t, st, "a", func() { lost.Add(1) }, nil)
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		first := a.Lease()
		// Another node declares a dead: simulate by recovering with a
		// DeadAfter so short that a counts as dead right now.
		b := newMember(t, st, "b", nil, nil)
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		recovered, err := st.NodesRecover(ctx, &store.NodesRecoverParams{Lease: b.Lease(), DeadAfter: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if len(recovered) != 1 || recovered[0].Node.ID != "a" {
			t.Fatalf("recovered %+v, want node a", recovered)
		}
		time.Sleep(1500 * time.Millisecond) // a's next check-in is refused
		if lost.Load() != 1 {
			t.Errorf("LeaseLost called %d times, want 1", lost.Load())
		}
		if got := a.Lease(); got.Epoch <= first.Epoch {
			t.Errorf("epoch after re-registering %d, want > %d", got.Epoch, first.Epoch)
		}
		if _, err := st.NodeCheckIn(ctx, first); err == nil {
			t.Error("check-in under the old epoch accepted")
		}
		for _, m := range []*Member{a, b} {
			if err := m.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestSilentNodeIsRecoveredByALiveOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memstore.New(nil)
		recovered := make(chan []store.NodeRecovery, 1)
		// Node "gone" registers and never checks in again.
		gone, err := st.NodeRegister(ctx, "gone")
		if err != nil {
			t.Fatal(err)
		}
		live := newMember(t, st, "live", nil, func(r []store.NodeRecovery) { recovered <- r })
		if err := live.Start(ctx); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		r := <-recovered
		took := time.Since(begin)
		if len(r) != 1 || r[0].Node.ID != "gone" || r[0].Node.Epoch != gone.Epoch {
			t.Errorf("recovered %+v, want node gone at epoch %d", r, gone.Epoch)
		}
		// DeadAfter is 3s; the live node notices at its first check-in
		// after that.
		if took < 3*time.Second || took > 4*time.Second {
			t.Errorf("recovered after %s, want between DeadAfter and DeadAfter + one check-in", took)
		}
		if err := live.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
