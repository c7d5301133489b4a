package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/store"
)

// storeReads is a store that counts the reads of jobs and triggers, and
// the records they return ("JobList" and "JobList rows"…).
type storeReads struct {
	store.Store
	mu    sync.Mutex
	calls map[string]int
}

func (r *storeReads) count(method string, rows int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[method]++
	r.calls[method+" rows"] += rows
}

// take returns the counts so far and starts again from zero.
func (r *storeReads) take() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = make(map[string]int)
	return out
}

func (r *storeReads) JobList(ctx context.Context, p *store.JobListParams) ([]store.JobRecord, error) {
	out, err := r.Store.JobList(ctx, p)
	r.count("JobList", len(out))
	return out, err
}

func (r *storeReads) JobGet(ctx context.Context, key store.Key) (*store.JobRecord, error) {
	out, err := r.Store.JobGet(ctx, key)
	r.count("JobGet", 1)
	return out, err
}

func (r *storeReads) TriggerList(ctx context.Context, p *store.TriggerListParams) ([]store.TriggerRecord, error) {
	out, err := r.Store.TriggerList(ctx, p)
	r.count("TriggerList", len(out))
	return out, err
}

func (r *storeReads) TriggerGet(ctx context.Context, key store.Key) (*store.TriggerRecord, error) {
	out, err := r.Store.TriggerGet(ctx, key)
	r.count("TriggerGet", 1)
	return out, err
}

// newCountingServer returns a server on a new SQLite file whose scheduler's
// store counts its reads of jobs and triggers.
func newCountingServer(t *testing.T) (*Server, *storeReads) {
	t.Helper()
	reads := &storeReads{calls: make(map[string]int)}
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", func(c *Config) {
		c.configureScheduler = func(sc *chime.Config) {
			reads.Store = sc.Store
			sc.Store = reads
		}
	})
	return s, reads
}

// addJobs stores the jobs from to to-1 of listFixture, as CreateJob does
// without its audit entries, which the tests here do not need.
func addJobs(tb testing.TB, s *Server, from, to int) {
	tb.Helper()
	ctx := tb.Context()
	for i := range to - from {
		j := listFixture(from + i)
		w, err := s.jobFromAPI(ctx, j)
		if err != nil {
			tb.Fatalf("job %s/%s: %v", j.Group, j.Name, err)
		}
		if err := s.sched.ScheduleJob(ctx, w.detail, w.triggers, &chime.ScheduleJobOptions{Pause: w.pauseChange(false)}); err != nil {
			tb.Fatalf("ScheduleJob(%s): %v", w.detail.Key, err)
		}
	}
}

// listFixture returns job i of the listing tests: in group a or b, named
// so that byte order is not number order, every 7th one described as
// rare, every 10th one (from 3) paused.
func listFixture(i int) api.Job {
	j := api.Job{
		Group: []string{"a", "b"}[i%2], Name: fmt.Sprintf("job-%d", i), Type: "http", Description: "routine",
		HTTP:     json.RawMessage(`{"url":"https://example.com"}`),
		Triggers: []api.Trigger{{Schedule: cronSchedule("0 0 2 * * ?")}},
	}
	if i%7 == 0 {
		j.Description = "a rare report"
	}
	j.Paused = i%10 == 3
	return j
}

// walk lists every page of q, checking that no page is longer than its
// limit, and returns the keys it listed and how many pages it took.
func walk(t *testing.T, s *Server, q api.JobQuery) (keys []string, pages int) {
	t.Helper()
	for {
		page, err := s.ListJobs(t.Context(), q)
		if err != nil {
			t.Fatalf("ListJobs(%+v): %v", q, err)
		}
		pages++
		if len(page.Jobs) > q.Limit {
			t.Fatalf("ListJobs(%+v) returned %d jobs", q, len(page.Jobs))
		}
		for _, j := range page.Jobs {
			keys = append(keys, j.Group+"/"+j.Name)
		}
		if page.Next == "" {
			return keys, pages
		}
		if pages > 1000 {
			t.Fatalf("ListJobs(%+v) keeps returning a next page", q)
		}
		q.Cursor = page.Next
	}
}

func TestListJobsWalksEveryPage(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		const n = 250
		addJobs(t, s, 0, n)
		// Every 9th job's last run failed; every 18th one also succeeded
		// before, which does not make it less failing.
		failing := make(map[int]bool)
		for i := 0; i < n; i += 9 {
			j := listFixture(i)
			if i%18 == 0 {
				recordRun(t, s.history, fmt.Sprintf("ok-%d", i), j, t0, history.OutcomeSucceeded)
			}
			recordRun(t, s.history, fmt.Sprintf("bad-%d", i), j, t0.Add(time.Minute), history.OutcomeFailed)
			failing[i] = true
		}
		// Every 11th job's last run succeeded, after a failure.
		for i := 1; i < n; i += 11 {
			if failing[i] {
				continue
			}
			j := listFixture(i)
			recordRun(t, s.history, fmt.Sprintf("bad-%d", i), j, t0, history.OutcomeFailed)
			recordRun(t, s.history, fmt.Sprintf("ok-%d", i), j, t0.Add(time.Minute), history.OutcomeSucceeded)
		}

		want := func(keep func(i int, j api.Job) bool) []string {
			var out []string
			for i := range n {
				if j := listFixture(i); keep(i, j) {
					out = append(out, j.Group+"/"+j.Name)
				}
			}
			slices.SortFunc(out, cmp.Compare)
			return out
		}
		tests := []struct {
			name string
			q    api.JobQuery
			want []string
		}{
			{"All", api.JobQuery{}, want(func(int, api.Job) bool { return true })},
			{"Group", api.JobQuery{Group: "b"}, want(func(_ int, j api.Job) bool { return j.Group == "b" })},
			{"Text", api.JobQuery{Text: "RARE"}, want(func(i int, _ api.Job) bool { return i%7 == 0 })},
			{"Paused", api.JobQuery{State: "paused"}, want(func(i int, _ api.Job) bool { return i%10 == 3 })},
			{"ActiveInGroup", api.JobQuery{Group: "a", State: "active"}, want(func(i int, j api.Job) bool { return i%10 != 3 && j.Group == "a" })},
			{"Failing", api.JobQuery{Failing: true}, want(func(i int, _ api.Job) bool { return failing[i] })},
			{"FailingRare", api.JobQuery{Failing: true, Text: "rare"}, want(func(i int, _ api.Job) bool { return failing[i] && i%7 == 0 })},
			{"Nothing", api.JobQuery{Text: "no such job"}, nil},
		}
		for _, tc := range tests {
			tc.q.Limit = 20
			keys, pages := walk(t, s, tc.q)
			if !slices.Equal(keys, tc.want) {
				t.Errorf("%s: pages of 20 listed %d jobs %v; want each of %d once, in order: %v", tc.name, len(keys), keys, len(tc.want), tc.want)
			}
			if wantPages := max(1, (len(tc.want)+19)/20); pages != wantPages {
				t.Errorf("%s: %d pages of 20 for %d jobs; want %d", tc.name, pages, len(tc.want), wantPages)
			}
		}
		// The status of a listed job is what GetJob says.
		page, err := s.ListJobs(ctx, api.JobQuery{Failing: true, Limit: 1})
		if err != nil || len(page.Jobs) != 1 {
			t.Fatalf("ListJobs(failing, limit 1) = %+v, %v; want a job", page, err)
		}
		one, err := s.GetJob(ctx, page.Jobs[0].Group, page.Jobs[0].Name)
		if err != nil {
			t.Fatal(err)
		}
		listed := page.Jobs[0].Status
		if !listed.Failing || listed.LastOutcome != "failed" || listed.LastRun == nil || listed.NextFireTime == nil ||
			!reflect.DeepEqual(listed, one.Status) {
			t.Errorf("listed status %+v; want a failing job's, as GetJob says: %+v", *listed, *one.Status)
		}

		// With a small scan cap, filtered pages come short, or empty, and
		// their cursors still list every match exactly once.
		s.listBatch, s.listMaxScan = 15, 40
		for _, tc := range tests {
			tc.q.Limit = 20
			keys, pages := walk(t, s, tc.q)
			if !slices.Equal(keys, tc.want) {
				t.Errorf("%s, scanning 40 jobs a request: listed %d jobs %v; want each of %d once, in order: %v",
					tc.name, len(keys), keys, len(tc.want), tc.want)
			}
			if filtered := tc.q.Text != "" || tc.q.State != "" || tc.q.Failing; filtered && pages < (n+39)/40 && tc.q.Group == "" {
				t.Errorf("%s, scanning 40 jobs a request: %d pages; want at least %d", tc.name, pages, (n+39)/40)
			}
		}
	})
}

// t0 is the start time of the executions the listing tests record.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// recordRun records an execution of j that started at and ended with
// outcome a second later.
func recordRun(t *testing.T, h *history.History, id string, j api.Job, at time.Time, outcome history.Outcome) {
	t.Helper()
	e := &history.Execution{ID: id, JobGroup: j.Group, JobName: j.Name, TriggerGroup: j.Group, TriggerName: j.Name,
		NodeID: "n1", ScheduledTime: at, StartedTime: at}
	if err := h.Start(t.Context(), e); err != nil {
		t.Fatalf("Start(%s): %v", id, err)
	}
	if err := h.Finish(t.Context(), id, history.Finish{Outcome: outcome, FinishedTime: at.Add(time.Second)}); err != nil {
		t.Fatalf("Finish(%s): %v", id, err)
	}
}

func TestListJobsStoreReadsDoNotGrowWithJobs(t *testing.T) {
	t.Parallel()
	s, reads := newCountingServer(t)
	s.listBatch, s.listMaxScan = 30, 90
	queries := []struct {
		name string
		q    api.JobQuery
		want map[string]int
	}{
		// A page, one job more to tell whether another page follows, and
		// the page's triggers, one a job.
		{"All", api.JobQuery{Limit: 20}, map[string]int{"JobList": 1, "JobList rows": 21, "TriggerList": 1, "TriggerList rows": 20}},
		{"Group", api.JobQuery{Group: "b", Limit: 20}, map[string]int{"JobList": 1, "JobList rows": 21, "TriggerList": 1, "TriggerList rows": 20}},
		// Filters read store pages of 30 until the page is full or 90
		// jobs were read: here three pages, as fewer than 20 of 90 jobs
		// are rare.
		{"RareText", api.JobQuery{Text: "rare", Limit: 20}, map[string]int{"JobList": 3, "JobList rows": 93, "TriggerList": 3, "TriggerList rows": 90}},
	}
	measure := func(jobs int) map[string]map[string]int {
		out := make(map[string]map[string]int)
		for _, tc := range queries {
			reads.take()
			if _, err := s.ListJobs(t.Context(), tc.q); err != nil {
				t.Fatalf("ListJobs(%+v) with %d jobs: %v", tc.q, jobs, err)
			}
			out[tc.name] = reads.take()
		}
		return out
	}
	addJobs(t, s, 0, 300)
	few := measure(300)
	addJobs(t, s, 300, 1200)
	many := measure(1200)
	for _, tc := range queries {
		if !maps.Equal(few[tc.name], tc.want) || !maps.Equal(many[tc.name], tc.want) {
			t.Errorf("%s: store reads of a page %v with 300 jobs, %v with 1200; want %v both times", tc.name, few[tc.name], many[tc.name], tc.want)
		}
	}
}

// BenchmarkListJobs lists the first page, and a page of a rare match, of
// 10,000 jobs on SQLite.
func BenchmarkListJobs(b *testing.B) {
	s := newServer(b, "sqlite:"+b.TempDir()+"/chime.db")
	addJobs(b, s, 0, 10000)
	for _, q := range []api.JobQuery{{Limit: 50}, {Limit: 50, Text: "rare"}} {
		b.Run(fmt.Sprintf("text=%q", q.Text), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.ListJobs(b.Context(), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
