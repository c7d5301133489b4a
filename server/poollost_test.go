package server

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/pool"
)

// TestLostNodeKeepsItsPoolSlots: recording a node lost does not hand its
// pool slots to others: a node wrongly presumed dead may still run in
// them, and its runs stop (pool.Service.Hold) before their lease lapses.
func TestLostNodeKeepsItsPoolSlots(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		if _, err := s.pools.Put(ctx, pool.Pool{Name: "p", Limit: 1}); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		if err := s.pools.Enqueue(ctx, pool.Ticket{ID: "slow-run", Pool: "p", NodeID: "slow", JobGroup: "g", JobName: "j", Scheduled: at}); err != nil {
			t.Fatal(err)
		}
		if ids, err := s.pools.Grant(ctx, "p"); err != nil || len(ids) != 1 {
			t.Fatalf("Grant = %v, %v; want slow-run", ids, err)
		}
		s.markNodeLost(ctx, "slow", time.Now().Add(time.Hour))
		if err := s.pools.Enqueue(ctx, pool.Ticket{ID: "other-run", Pool: "p", NodeID: "other", JobGroup: "g", JobName: "k", Scheduled: at}); err != nil {
			t.Fatal(err)
		}
		if ids, err := s.pools.Grant(ctx, "p"); err != nil || len(ids) != 0 {
			t.Errorf("Grant after the slow node was recorded lost = %v, %v; want nothing: its slot is still held", ids, err)
		}
	})
}
