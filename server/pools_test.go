package server

import (
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

// TestPoolJobs: a job naming a pool that does not exist is refused,
// naming the field, and nothing is written; while a run holds the only
// slot of a pool of 1, another job's firings wait pool_max_wait and,
// under DO_NOTHING, are recorded skipped with the pool's reason; a run by
// hand waits on and runs once the slot is released by a kill; a failure
// and a timeout release theirs; a pool a job names is not deleted.
func TestPoolJobs(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url)
		b := newBlocker()
		if err := s.RegisterJobType("block", b); err != nil {
			t.Fatal(err)
		}
		start(t, s)
		ctx := t.Context()
		ep := newEndpoint(t, 200)
		tick := api.Job{Group: "rep", Name: "tick", Type: "http", HTTP: httpSpec(t, map[string]any{"url": ep.URL}),
			Pool: "reports", PoolMaxWait: "300ms",
			Triggers: []api.Trigger{{Schedule: cronSchedule("* * * * * ?"), Misfire: "DO_NOTHING"}}}

		_, err := s.CreateJob(ctx, "tester", tick)
		wantAPIError(t, err, api.CodeInvalidArgument, "pool")
		if _, err := s.GetJob(ctx, "rep", "tick"); err == nil {
			t.Fatal("a refused job was stored")
		}
		noPool := tick
		noPool.Pool = ""
		_, err = s.CreateJob(ctx, "tester", noPool)
		wantAPIError(t, err, api.CodeInvalidArgument, "pool")
		zero := tick
		zero.PoolMaxWait = "0s"
		_, err = s.CreateJob(ctx, "tester", zero)
		wantAPIError(t, err, api.CodeInvalidArgument, "pool_max_wait")
		_, _, err = s.PutPool(ctx, "tester", api.Pool{Name: "reports", Limit: 0})
		wantAPIError(t, err, api.CodeInvalidArgument, "limit")

		if _, created, err := s.PutPool(ctx, "tester", api.Pool{Name: "reports", Limit: 1}); err != nil || !created {
			t.Fatalf("PutPool = %v, %v; want created", created, err)
		}
		hold := api.Job{Group: "rep", Name: "hold", Type: "block", Pool: "reports"}
		if _, err := s.CreateJob(ctx, "tester", hold); err != nil {
			t.Fatalf("CreateJob(hold): %v", err)
		}
		held, err := s.RunJob(ctx, "tester", "rep", "hold", api.RunRequest{})
		if err != nil {
			t.Fatal(err)
		}
		b.waitStarted(t)
		if _, err := s.CreateJob(ctx, "tester", tick); err != nil {
			t.Fatalf("CreateJob(tick): %v", err)
		}
		var skipped api.Execution
		waitFor(t, "a firing of tick skipped for the pool", func() bool {
			list, err := s.ListExecutions(ctx, api.ExecutionQuery{JobGroup: "rep", JobName: "tick", Outcomes: []string{"skipped"}, Limit: 1})
			if err != nil || len(list.Executions) == 0 {
				return false
			}
			skipped = list.Executions[0]
			return true
		})
		if !strings.Contains(skipped.Error, "pool reports full for") || !strings.Contains(skipped.Error, "DO_NOTHING") {
			t.Errorf("skipped with %q, want the pool's reason and the misfire instruction", skipped.Error)
		}
		if n := ep.count(); n != 0 {
			t.Errorf("tick ran %d times while the pool was full, want none", n)
		}
		p, err := s.GetPool(ctx, "reports")
		if err != nil || p.Running != 1 || len(p.Jobs) != 2 {
			t.Errorf("GetPool = %+v, %v; want 1 running and jobs rep/hold, rep/tick", p, err)
		}
		err = s.DeletePool(ctx, "tester", "reports")
		wantAPIError(t, err, api.CodeConflict, "")

		// A run by hand (FIRE_NOW) of a full pool waits on past its
		// max wait, and runs once the slot is free: the held run is
		// killed, which releases it.
		if err := s.PauseJob(ctx, "tester", "rep", "tick"); err != nil {
			t.Fatal(err)
		}
		acc, err := s.RunJob(ctx, "tester", "rep", "tick", api.RunRequest{})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the run by hand to wait for the pool", func() bool {
			p, err := s.GetPool(ctx, "reports")
			return err == nil && p.Waiting == 1
		})
		if _, err := s.KillExecution(ctx, "tester", held.ExecutionIDs[0]); err != nil {
			t.Fatal(err)
		}
		if e := waitExecution(t, s, acc.ExecutionIDs[0]); e.Outcome != "succeeded" {
			t.Errorf("the run by hand ended %s %q, want succeeded", e.Outcome, e.Error)
		}

		// A failure and a timeout give the slot back too.
		fails := newEndpoint(t, 500)
		for _, j := range []api.Job{
			{Group: "rep", Name: "fails", Type: "http", HTTP: httpSpec(t, map[string]any{"url": fails.URL}), Pool: "reports"},
			{Group: "rep", Name: "slow", Type: "block", Timeout: "200ms", Pool: "reports"},
		} {
			if _, err := s.CreateJob(ctx, "tester", j); err != nil {
				t.Fatalf("CreateJob(%s): %v", j.Name, err)
			}
			acc, err := s.RunJob(ctx, "tester", j.Group, j.Name, api.RunRequest{})
			if err != nil {
				t.Fatal(err)
			}
			e := waitExecution(t, s, acc.ExecutionIDs[0])
			waitFor(t, "the slot of "+j.Name+", which ended "+e.Outcome+", to be released", func() bool {
				p, err := s.GetPool(ctx, "reports")
				return err == nil && p.Running == 0 && p.Waiting == 0
			})
		}
	})
}
