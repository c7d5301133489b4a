package sqlstore

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
)

// TestCheckInDoesNotWaitForTheNodesWrites checks the lock modes of the
// lease on PostgreSQL: a node's check-in does not queue behind its own
// write in flight (which would hold up every later write of the node
// behind the check-in), while recovering the node waits for that write and
// fences the node after it.
func TestCheckInDoesNotWaitForTheNodesWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := Open(ctx, dbtest.PostgresURL(t), &Options{Logger: slog.New(slog.DiscardHandler), MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	lease := func(id string) store.Lease {
		n, err := s.NodeRegister(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return store.Lease{NodeID: n.ID, Epoch: n.Epoch}
	}
	a, b := lease("a"), lease("b")

	// A write of node a in flight: its lease check holds until it ends.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	var writer int
	if err := tx.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&writer); err != nil {
		t.Fatal(err)
	}
	w := &txn{Tx: tx, s: s, ctx: ctx}
	if err := w.lease(a); err != nil {
		t.Fatal(err)
	}

	// A check-in that waited for the write would wait until the deadline.
	checkInCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := s.NodeCheckIn(checkInCtx, a); err != nil {
		t.Fatalf("NodeCheckIn while a write of the node is in flight: %v", err)
	}

	recovered := make(chan error, 1)
	go func() {
		_, err := s.NodesRecover(ctx, &store.NodesRecoverParams{Lease: b, DeadAfter: time.Nanosecond})
		recovered <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); ; {
		var waiting int
		err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", writer).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-recovered:
			t.Fatalf("NodesRecover returned (%v) while a write of the recovered node was in flight", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("NodesRecover never waited for the write in flight")
		}
		time.Sleep(10 * time.Millisecond) // polling the server, which signals nothing
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-recovered; err != nil {
		t.Fatalf("NodesRecover: %v", err)
	}
	if _, err := s.NodeCheckIn(ctx, a); !errors.Is(err, store.ErrFenced) {
		t.Errorf("NodeCheckIn of the recovered node = %v, want ErrFenced", err)
	}
}
