package chime_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// readCounter is a store that counts the reads of jobs and triggers.
type readCounter struct {
	store.Store
	mu    sync.Mutex
	calls map[string]int
}

func (c *readCounter) count(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[method]++
}

// take returns the counts so far and starts again from zero.
func (c *readCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = make(map[string]int)
	return out
}

func (c *readCounter) JobList(ctx context.Context, p *store.JobListParams) ([]store.JobRecord, error) {
	c.count("JobList")
	return c.Store.JobList(ctx, p)
}

func (c *readCounter) JobGet(ctx context.Context, key store.Key) (*store.JobRecord, error) {
	c.count("JobGet")
	return c.Store.JobGet(ctx, key)
}

func (c *readCounter) TriggerList(ctx context.Context, p *store.TriggerListParams) ([]store.TriggerRecord, error) {
	c.count("TriggerList")
	return c.Store.TriggerList(ctx, p)
}

func (c *readCounter) TriggerGet(ctx context.Context, key store.Key) (*store.TriggerRecord, error) {
	c.count("TriggerGet")
	return c.Store.TriggerGet(ctx, key)
}

func TestJobsPageWalksEveryJobWithItsTriggersInTwoReadsAPage(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := &readCounter{Store: memstore.New(nil), calls: make(map[string]int)}
	s, _ := newScheduler(t, chime.Config{Store: st})
	every := &schedule.Simple{RepeatCount: schedule.RepeatForever, RepeatInterval: time.Hour}
	var want []chime.JobKey
	triggersOf := make(map[chime.JobKey][]string)
	for i := range 250 {
		// Two groups, and names whose byte order is not their number's.
		j := chime.JobDetail{Key: chime.NewJobKey(fmt.Sprintf("g%d", i%2), fmt.Sprintf("job-%d", i)), Type: "record"}
		var ts []chime.Trigger
		for n := range i % 3 {
			tk := chime.NewTriggerKey("t", fmt.Sprintf("%d-%d", i, n))
			ts = append(ts, chime.Trigger{Key: tk, Schedule: every})
			triggersOf[j.Key] = append(triggersOf[j.Key], tk.Name)
		}
		if len(ts) == 0 {
			j.Durable = true
		}
		scheduleJob(t, s, j, ts...)
		want = append(want, j.Key)
	}
	slices.SortFunc(want, func(a, b chime.JobKey) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Name, b.Name))
	})
	st.take()

	var got []chime.JobKey
	q := chime.JobPageQuery{Limit: 20}
	pages := 0
	for {
		page, err := s.JobsPage(ctx, q)
		if err != nil {
			t.Fatalf("JobsPage(%+v): %v", q, err)
		}
		pages++
		reads := st.take()
		wantReads := map[string]int{"JobList": 1, "TriggerList": 1}
		if len(page.Jobs) == 0 {
			wantReads = map[string]int{"JobList": 1}
		}
		if !maps.Equal(reads, wantReads) {
			t.Fatalf("page %d read the store %v; want %v", pages, reads, wantReads)
		}
		if len(page.Jobs) > q.Limit {
			t.Fatalf("page %d has %d jobs; want at most %d", pages, len(page.Jobs), q.Limit)
		}
		for _, j := range page.Jobs {
			got = append(got, j.Job.Key)
			var names []string
			for _, tr := range j.Triggers {
				if tr.JobKey != j.Job.Key {
					t.Errorf("job %s has trigger %s of job %s", j.Job.Key, tr.Key, tr.JobKey)
				}
				if tr.State != chime.TriggerNormal || tr.NextFireTime.IsZero() {
					t.Errorf("trigger %s: state %s, next fire time %v; want NORMAL with a next fire time", tr.Key, tr.State, tr.NextFireTime)
				}
				names = append(names, tr.Key.Name)
			}
			if !slices.Equal(names, triggersOf[j.Job.Key]) {
				t.Errorf("job %s has triggers %q; want %q", j.Job.Key, names, triggersOf[j.Job.Key])
			}
		}
		if page.Next == nil {
			break
		}
		q.After = *page.Next
		if pages > 50 {
			t.Fatal("JobsPage keeps returning a next page")
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages hold %d jobs %v…; want each of %d jobs once, in key order", len(got), got[:min(len(got), 5)], len(want))
	}
	if pages != 13 {
		t.Errorf("walked %d pages; want 13 (12 full ones and one of 10)", pages)
	}

	// Without their triggers, a page is one read of the store.
	got = nil
	q = chime.JobPageQuery{Limit: 100, WithoutTriggers: true}
	for pages = 1; ; pages++ {
		page, err := s.JobsPage(ctx, q)
		if err != nil {
			t.Fatalf("JobsPage(%+v): %v", q, err)
		}
		if reads, wantReads := st.take(), map[string]int{"JobList": 1}; !maps.Equal(reads, wantReads) {
			t.Fatalf("page %d without triggers read the store %v; want %v", pages, reads, wantReads)
		}
		for _, j := range page.Jobs {
			got = append(got, j.Job.Key)
			if j.Triggers != nil {
				t.Errorf("job %s has triggers %v on a page without triggers", j.Job.Key, j.Triggers)
			}
		}
		if page.Next == nil || pages > 5 {
			break
		}
		q.After = *page.Next
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Errorf("%d pages without triggers hold %d jobs; want 3 pages of the %d jobs, in key order", pages, len(got), len(want))
	}

	t.Run("Group", func(t *testing.T) {
		tests := []struct {
			name     string
			q        chime.JobPageQuery
			want     []string
			wantNext bool
		}{
			{"First", chime.JobPageQuery{Group: "g0", Limit: 3}, []string{"g0.job-0", "g0.job-10", "g0.job-100"}, true},
			{"Last", chime.JobPageQuery{Group: "g1", After: chime.NewJobKey("g1", "job-97"), Limit: 3}, []string{"g1.job-99"}, false},
			{"Exact", chime.JobPageQuery{Group: "g1", After: chime.NewJobKey("g1", "job-95"), Limit: 2}, []string{"g1.job-97", "g1.job-99"}, false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				page, err := s.JobsPage(ctx, tc.q)
				if err != nil {
					t.Fatalf("JobsPage: %v", err)
				}
				var keys []string
				for _, j := range page.Jobs {
					keys = append(keys, j.Job.Key.String())
				}
				if !slices.Equal(keys, tc.want) || (page.Next != nil) != tc.wantNext {
					t.Errorf("JobsPage(%+v) = %q, next %v; want %q, next page %v", tc.q, keys, page.Next, tc.want, tc.wantNext)
				}
			})
		}
	})
	t.Run("BadLimit", func(t *testing.T) {
		for _, limit := range []int{-1, chime.MaxJobPageLimit + 1} {
			_, err := s.JobsPage(ctx, chime.JobPageQuery{Limit: limit})
			var ve *chime.ValidationError
			if !errors.As(err, &ve) || ve.Field != "JobPageQuery.Limit" {
				t.Errorf("JobsPage(Limit %d) = %v; want a ValidationError of JobPageQuery.Limit", limit, err)
			}
		}
	})
}
