package history_test

import (
	"errors"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/history"
)

func testKill(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	a := execution("a", "g", "long", t0)
	a.NodeID = "node-a"
	b := execution("b", "g", "long", t0)
	b.NodeID = "node-b"
	done := execution("done", "g", "short", t0)
	done.NodeID = "node-a"
	start(t, h, a, b, done)
	finish(t, h, "done", history.OutcomeSucceeded, t0.Add(time.Second))

	kills, err := h.Kills(ctx, "node-a")
	if err != nil {
		t.Fatalf("Kills before any request: %v", err)
	}
	equal(t, "kills before any request", kills, map[string]string{})

	if first, err := h.RequestKill(ctx, "a", "alice"); err != nil || !first {
		t.Fatalf("RequestKill(a) = %v, %v; want the first request", first, err)
	}
	if first, err := h.RequestKill(ctx, "a", "bob"); err != nil || first {
		t.Errorf("second RequestKill(a) = %v, %v; want false, nil (the first killer stays)", first, err)
	}
	for _, tc := range []struct {
		id   string
		want error
	}{{"done", history.ErrNotRunning}, {"missing", history.ErrNotFound}} {
		if _, err := h.RequestKill(ctx, tc.id, "alice"); !errors.Is(err, tc.want) {
			t.Errorf("RequestKill(%s): %v, want %v", tc.id, err, tc.want)
		}
	}
	_, err = h.RequestKill(ctx, "b", "")
	wantInvalid(t, "RequestKill without an actor", err, "actor")

	kills, err = h.Kills(ctx, "node-a")
	if err != nil {
		t.Fatalf("Kills: %v", err)
	}
	equal(t, "kills of node-a", kills, map[string]string{"a": "alice"})
	kills, err = h.Kills(ctx, "node-b")
	if err != nil {
		t.Fatalf("Kills: %v", err)
	}
	equal(t, "kills of node-b", kills, map[string]string{})

	if err := h.Finish(ctx, "a", history.Finish{Outcome: history.OutcomeKilled, FinishedTime: t0.Add(2 * time.Second), Error: "killed by alice"}); err != nil {
		t.Fatalf("Finish(a, killed): %v", err)
	}
	got, err := h.Get(ctx, "a")
	if err != nil {
		t.Fatalf("Get(a): %v", err)
	}
	if got.Outcome != history.OutcomeKilled || got.KilledBy != "alice" {
		t.Errorf("a after its kill: outcome %q killed by %q, want killed by alice", got.Outcome, got.KilledBy)
	}
	kills, err = h.Kills(ctx, "node-a")
	if err != nil {
		t.Fatalf("Kills after the end: %v", err)
	}
	equal(t, "kills of node-a after a ended", kills, map[string]string{})
	page, err := h.List(ctx, &history.Query{Outcome: []history.Outcome{history.OutcomeKilled}})
	if err != nil {
		t.Fatalf("List(killed): %v", err)
	}
	equal(t, "killed executions", ids(page.Executions), []string{"a"})
}
