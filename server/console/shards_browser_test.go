package console_test

import (
	"context"
	"errors"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// flakyItem is a Go job type whose item 1 fails while fail is set.
type flakyItem struct{ fail atomic.Bool }

func (f *flakyItem) Execute(_ context.Context, jc *chime.JobContext) error {
	if jc.Shard != nil && jc.Shard.Index == 1 && f.fail.Load() {
		return errors.New("customer 1 is locked")
	}
	return nil
}

// TestShardItems shows a sharded firing's items on its execution page: a
// viewer sees them and no re-run; an admin re-runs the failed item alone,
// after confirming, and lands on the firing's next attempt, succeeded.
func TestShardItems(t *testing.T) {
	job := &flakyItem{}
	job.fail.Store(true)
	srv := servertest.Start(t, &servertest.Options{JobTypes: map[string]chime.Job{"items": job}})
	ctx := context.Background()
	if _, err := srv.Client.CreateJob(ctx, api.Job{Group: "billing", Name: "close", Type: "items", Shards: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "viewer-password-1"}); err != nil {
		t.Fatal(err)
	}
	acc, err := srv.Client.RunJob(ctx, "billing", "close", api.RunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	id := acc.ExecutionIDs[0]
	deadline := time.Now().Add(30 * time.Second)
	for {
		e, err := srv.Client.GetExecution(ctx, id)
		if err == nil && e.Outcome == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("parent %s: %+v, %v after 30s; want failed", id, e, err)
		}
		time.Sleep(100 * time.Millisecond) // the items run in the background
	}
	route := "/executions/" + url.PathEscape(id)

	b := browsertest.New(t)
	v := b.NewPage(t)
	v.Login(srv.URL, route, "vera", "viewer-password-1")
	v.WaitText(`[data-testid="items-summary"]`, "4 items: 3 succeeded, 1 failed")
	v.WaitText(`[data-testid="item"][data-state="failed"]`, "customer 1 is locked")
	if n := v.Count(`[data-testid="item"]`); n != 4 {
		t.Errorf("%d item rows; want 4", n)
	}
	if n := v.Count(`[data-testid="rerun-failed"]`) + v.Count(`[data-testid="retry"]`) + v.Count(`[data-testid="kill"]`); n != 0 {
		t.Errorf("a viewer sees %d re-run, retry or kill buttons", n)
	}

	p := b.NewPage(t)
	p.Login(srv.URL, route, servertest.AdminName, srv.AdminPassword)
	p.WaitText(`[data-testid="item"][data-state="failed"]`, "customer 1 is locked")
	p.Screenshot("shard-items-failed")
	job.fail.Store(false)
	p.Click(`[data-testid="rerun-failed"]`)
	p.WaitText("dialog h2", "Re-run the 1 failed items?")
	p.ClickText("dialog button", "Re-run failed items")
	p.WaitText(`[data-testid="items-summary"]`, "4 items: 4 succeeded (failed items re-run 1 times)")
	p.WaitText(`[data-testid="outcome"]`, "succeeded")
	p.Screenshot("shard-items-rerun")
	attempts, err := srv.Client.Attempts(ctx, id)
	if err != nil || len(attempts) != 2 || attempts[1].Outcome != "succeeded" {
		t.Errorf("attempts of the firing: %+v, %v; want the re-run as attempt 2, succeeded", attempts, err)
	}
}
