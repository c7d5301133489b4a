package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
)

// shardJob is a Go job type that records every run of an item, and fails
// the runs its fail function says.
type shardJob struct {
	mu   sync.Mutex
	runs []shardRun
	fail func(index, attempt int) bool
}

type shardRun struct {
	index, total int
	customer     any
	ok           bool
}

func (j *shardJob) Execute(_ context.Context, jc *chime.JobContext) error {
	if jc.Shard == nil {
		return errors.New("not an item of a sharded firing")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	attempt := 1
	for _, r := range j.runs {
		if r.index == jc.Shard.Index {
			attempt++
		}
	}
	failing := j.fail != nil && j.fail(jc.Shard.Index, attempt)
	j.runs = append(j.runs, shardRun{index: jc.Shard.Index, total: jc.Shard.Total, customer: jc.MergedData["customer"], ok: !failing})
	if failing {
		return fmt.Errorf("item %d fails", jc.Shard.Index)
	}
	return nil
}

// successes counts the successful runs of each index.
func (j *shardJob) successes() map[int]int {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make(map[int]int)
	for _, r := range j.runs {
		if r.ok {
			out[r.index]++
		}
	}
	return out
}

func (j *shardJob) setFail(f func(index, attempt int) bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.fail = f
}

// shardedJob is a job of type "sharded" with n shards, each with its
// customer, and two attempts per item.
func shardedJob(name string, n int) api.Job {
	params := make([]map[string]any, n)
	for i := range params {
		params[i] = map[string]any{"customer": fmt.Sprint("c", i)}
	}
	return api.Job{
		Group: "shards", Name: name, Type: "sharded", Shards: n, ShardParams: params,
		Retry: &api.RetryPolicy{MaxAttempts: 2, Delay: "10ms", Backoff: "fixed"},
	}
}

func TestShardedFiringRunsEachItemOnceToSuccess(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		// Item 2 fails its first attempt, and succeeds on its retry.
		job := &shardJob{fail: func(index, attempt int) bool { return index == 2 && attempt == 1 }}
		if err := s.RegisterJobType("sharded", job); err != nil {
			t.Fatal(err)
		}
		start(t, s)
		const n = 6
		if _, err := s.CreateJob(ctx, "alice", shardedJob("nightly", n)); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		acc, err := s.RunJob(ctx, "alice", "shards", "nightly", api.RunRequest{})
		if err != nil {
			t.Fatalf("RunJob: %v", err)
		}
		parent := waitExecution(t, s, acc.ExecutionIDs[0])
		if parent.Outcome != "succeeded" {
			t.Fatalf("parent = %+v; want succeeded", parent)
		}
		got := job.successes()
		for i := range n {
			if got[i] != 1 {
				t.Errorf("item %d succeeded %d times; want once", i, got[i])
			}
		}
		job.mu.Lock()
		for _, r := range job.runs {
			if r.total != n || r.customer != fmt.Sprint("c", r.index) {
				t.Errorf("run %+v; want total %d and its own customer", r, n)
			}
		}
		job.mu.Unlock()
		items, err := s.ShardItems(ctx, parent.ID)
		if err != nil {
			t.Fatalf("ShardItems: %v", err)
		}
		if items.State != "succeeded" || items.Total != n || len(items.Items) != n || items.Remaining != 0 {
			t.Fatalf("items = %+v; want %d succeeded", items, n)
		}
		for _, it := range items.Items {
			wantAttempts := 1
			if it.Index == 2 {
				wantAttempts = 2
			}
			if it.State != "succeeded" || it.Attempts != wantAttempts || it.NodeID != s.NodeID() || it.Duration == "" {
				t.Errorf("item %+v; want succeeded after %d attempts on %s", it, wantAttempts, s.NodeID())
			}
			e, err := s.GetExecution(ctx, it.ExecutionID)
			if err != nil || e.Outcome != "succeeded" {
				t.Errorf("item %d's execution = %+v, %v; want succeeded", it.Index, e, err)
			}
		}
		if _, err := s.ShardItems(ctx, items.Items[0].ExecutionID); err == nil {
			t.Error("ShardItems of an item's execution: want not_found")
		}
	})
}

func TestShardedFiringFailsNamingItemsAndRerunsThem(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		job := &shardJob{fail: func(index, _ int) bool { return index == 1 || index == 4 }}
		if err := s.RegisterJobType("sharded", job); err != nil {
			t.Fatal(err)
		}
		start(t, s)
		const n = 5
		if _, err := s.CreateJob(ctx, "alice", shardedJob("monthly", n)); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		acc, err := s.RunJob(ctx, "alice", "shards", "monthly", api.RunRequest{})
		if err != nil {
			t.Fatalf("RunJob: %v", err)
		}
		parent := waitExecution(t, s, acc.ExecutionIDs[0])
		if parent.Outcome != "failed" || parent.Error != "2 of 5 items failed: 1, 4" {
			t.Fatalf("parent = %s %q; want failed naming items 1 and 4", parent.Outcome, parent.Error)
		}
		job.setFail(nil)
		rerun, err := s.RerunFailedItems(ctx, parent.ID, "alice")
		if err != nil {
			t.Fatalf("RerunFailedItems: %v", err)
		}
		if rerun.Attempt != 2 || rerun.FirstID != parent.ID {
			t.Errorf("re-run = attempt %d of %s; want attempt 2 of %s", rerun.Attempt, rerun.FirstID, parent.ID)
		}
		second := waitExecution(t, s, rerun.ID)
		if second.Outcome != "succeeded" {
			t.Fatalf("re-run = %+v; want succeeded", second)
		}
		got := job.successes()
		for i := range n {
			if got[i] != 1 {
				t.Errorf("item %d succeeded %d times; want once", i, got[i])
			}
		}
		job.mu.Lock()
		var ran []int
		for _, r := range job.runs {
			ran = append(ran, r.index)
		}
		job.mu.Unlock()
		slices.Sort(ran)
		// Items 1 and 4: two failed attempts, then one that succeeded.
		if want := []int{0, 1, 1, 1, 2, 3, 4, 4, 4}; !slices.Equal(ran, want) {
			t.Errorf("runs by index = %v; want %v", ran, want)
		}
		_, err = s.RerunFailedItems(ctx, parent.ID, "alice")
		wantAPIError(t, err, api.CodeConflict, "")
	})
}

func TestShardedJobValidation(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db")
	if err := s.RegisterJobType("sharded", &shardJob{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		mod   func(*api.Job)
		field string
	}{
		{"too many shards", func(j *api.Job) { j.Shards, j.ShardParams = 10001, nil }, "shards"},
		{"negative shards", func(j *api.Job) { j.Shards, j.ShardParams = -1, nil }, "shards"},
		{"params without shards", func(j *api.Job) { j.Shards = 0 }, "shard_params"},
		{"params of another length", func(j *api.Job) { j.ShardParams = j.ShardParams[:2] }, "shard_params"},
		{"a null param", func(j *api.Job) { j.ShardParams[1] = nil }, "shard_params[1]"},
		{"overlap skip", func(j *api.Job) { j.Overlap = api.OverlapSkip }, "overlap"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := shardedJob("bad", 3)
			tc.mod(&j)
			_, err := s.CreateJob(t.Context(), "alice", j)
			wantAPIError(t, err, api.CodeInvalidArgument, tc.field)
			if _, err := s.GetJob(t.Context(), "shards", "bad"); err == nil {
				t.Error("the refused job was stored")
			}
		})
	}
}
