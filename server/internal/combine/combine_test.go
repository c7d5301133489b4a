package combine

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
)

// TestRequestsThatWaitAreCommittedTogether commits one request alone
// while it blocks, lets five more arrive, and checks that they are
// committed together in the next batch, each once, and that a request
// never returns before the batch that held it was committed.
func TestRequestsThatWaitAreCommittedTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Combiner[*int]{Parallel: 1}
		release := make(chan struct{})
		var (
			mu        sync.Mutex
			batches   [][]int
			committed = make(map[int]bool)
		)
		commit := func(_ context.Context, batch []*int) {
			var ns []int
			for _, r := range batch {
				ns = append(ns, *r)
			}
			if ns[0] == 0 {
				<-release
			}
			mu.Lock()
			defer mu.Unlock()
			batches = append(batches, ns)
			for _, n := range ns {
				committed[n] = true
			}
		}
		var wg sync.WaitGroup
		do := func(n int) {
			wg.Go(func() {
				c.Do(t.Context(), &n, 10, commit)
				mu.Lock()
				defer mu.Unlock()
				if !committed[n] {
					t.Errorf("request %d returned before its batch was committed", n)
				}
			})
		}
		do(0)
		synctest.Wait()
		for n := 1; n <= 5; n++ {
			do(n)
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		if len(batches) != 2 || !slices.Equal(batches[0], []int{0}) || len(batches[1]) != 5 {
			t.Fatalf("batches %v: want [0], then the five that waited together", batches)
		}
		got := slices.Sorted(slices.Values(batches[1]))
		if !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
			t.Errorf("second batch %v: want 1 to 5 once each", batches[1])
		}
	})
}

// TestBatchesAreBoundedByMax lets seven requests wait behind a blocked
// one with max 3: they go in batches of at most 3.
func TestBatchesAreBoundedByMax(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Combiner[*int]{Parallel: 1}
		release := make(chan struct{})
		var (
			mu    sync.Mutex
			sizes []int
		)
		commit := func(_ context.Context, batch []*int) {
			if *batch[0] == 0 {
				<-release
			}
			mu.Lock()
			sizes = append(sizes, len(batch))
			mu.Unlock()
		}
		var wg sync.WaitGroup
		for n := range 8 {
			wg.Go(func() { c.Do(t.Context(), &n, 3, commit) })
			if n == 0 {
				synctest.Wait()
			}
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		total := 0
		for _, s := range sizes {
			if s > 3 {
				t.Errorf("a batch of %d, more than max 3: %v", s, sizes)
			}
			total += s
		}
		if total != 8 || len(sizes) != 4 {
			t.Errorf("batch sizes %v: want 1, then 3, 3 and 1 (8 requests, 4 batches)", sizes)
		}
	})
}
