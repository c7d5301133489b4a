package dispatch_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/dispatch"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// forEachDB runs fn on a fresh Service on every database.
func forEachDB(t *testing.T, opts *dispatch.Options, fn func(t *testing.T, s *dispatch.Service)) {
	t.Helper()
	forEachURL(t, func(t *testing.T, url string) { fn(t, newService(t, url, opts)) })
}

// forEachURL runs fn in a parallel subtest on every database, with its
// URL, for a test that builds its Service itself.
func forEachURL(t *testing.T, fn func(t *testing.T, url string)) {
	t.Helper()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, db.URL(t))
		})
	}
}

func newService(t *testing.T, url string, opts *dispatch.Options) *dispatch.Service {
	t.Helper()
	s, _ := newServiceOn(t, url, opts)
	return s
}

// newServiceOn is newService, with the store it runs on.
func newServiceOn(t *testing.T, url string, opts *dispatch.Options) (*dispatch.Service, *sqlstore.Store) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	o := &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: log}
	st, err := sqlstore.Open(t.Context(), url, o)
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var do dispatch.Options
	if opts != nil {
		do = *opts
	}
	do.Logger = log
	s, err := dispatch.New(t.Context(), st, &do)
	if err != nil {
		t.Fatalf("dispatch.New: %v", err)
	}
	return s, st
}

func register(t *testing.T, s *dispatch.Service, group string, labels map[string]string, handlers ...string) *dispatch.Executor {
	t.Helper()
	e, err := s.Register(t.Context(), api.ExecutorRegister{Group: group, Instance: "i-" + group, Labels: labels, Handlers: handlers})
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	return e
}

// order returns the IDs of a group's executors in registration order.
func order(t *testing.T, s *dispatch.Service, group string) []string {
	t.Helper()
	all, err := s.List(t.Context())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var ids []string
	for _, e := range all {
		if e.Group == group {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

func handover(t *testing.T, s *dispatch.Service, target api.ExecutorTarget, params map[string]any) (*dispatch.Assignment, error) {
	t.Helper()
	id := rand.Text()
	return s.Handover(t.Context(), dispatch.Handover{
		RunID: id, ExecutionID: id, Attempt: 1, Target: target, JobGroup: "g", JobName: "j",
		ScheduledTime: time.Unix(1, 0), Params: params, NodeID: "node-a",
	})
}

// TestRouting hands runs over by each strategy, on every database, and
// checks whom each picks among three live executors.
func TestRouting(t *testing.T) {
	t.Parallel()
	forEachDB(t, nil, func(t *testing.T, s *dispatch.Service) {
		tests := []struct {
			routing api.Routing
			hashKey string
			params  []map[string]any
			// want checks the picks, given the executors in registration
			// order.
			want func(t *testing.T, ids, picks []string)
		}{
			{api.RoutingFirst, "", nil, func(t *testing.T, ids, picks []string) { same(t, picks, ids[0], ids[0], ids[0]) }},
			{api.RoutingLast, "", nil, func(t *testing.T, ids, picks []string) { same(t, picks, ids[2], ids[2], ids[2]) }},
			{api.RoutingFailover, "", nil, func(t *testing.T, ids, picks []string) { same(t, picks, ids[0], ids[0], ids[0]) }},
			{api.RoutingRoundRobin, "", make([]map[string]any, 4), func(t *testing.T, ids, picks []string) {
				distinct(t, picks[:3], 3)
				if picks[3] != picks[0] {
					t.Errorf("the 4th pick %s is not the 1st %s", picks[3], picks[0])
				}
			}},
			{api.RoutingLRU, "", nil, func(t *testing.T, ids, picks []string) { distinct(t, picks, 3) }},
			{api.RoutingLFU, "", nil, func(t *testing.T, ids, picks []string) { distinct(t, picks, 3) }},
			// The runs are not taken, so each stays running (assigned).
			{api.RoutingBusyOver, "", nil, func(t *testing.T, ids, picks []string) { same(t, picks, ids[0], ids[1], ids[2]) }},
			{api.RoutingConsistentHash, "customer", []map[string]any{{"customer": "acme"}, {"customer": "acme"}, {"customer": "acme"}},
				func(t *testing.T, ids, picks []string) { distinct(t, picks, 1) }},
			{api.RoutingConsistentHash, "", nil, func(t *testing.T, ids, picks []string) { distinct(t, picks, 1) }},
			{api.RoutingRandom, "", nil, func(t *testing.T, ids, picks []string) {
				for _, p := range picks {
					if !strings.Contains(strings.Join(ids, " "), p) {
						t.Errorf("picked %s, not one of %v", p, ids)
					}
				}
			}},
		}
		for _, tc := range tests {
			t.Run(string(tc.routing)+tc.hashKey, func(t *testing.T) {
				group := "g-" + string(tc.routing) + tc.hashKey
				for range 3 {
					register(t, s, group, nil, "h")
				}
				ids := order(t, s, group)
				params := tc.params
				if params == nil {
					params = make([]map[string]any, 3)
				}
				var picks []string
				for _, p := range params {
					a, err := handover(t, s, api.ExecutorTarget{Group: group, Handler: "h", Routing: tc.routing, HashKey: tc.hashKey}, p)
					if err != nil {
						t.Fatalf("Handover: %v", err)
					}
					if a.Token != 1 {
						t.Errorf("token %d, want 1", a.Token)
					}
					picks = append(picks, a.ExecutorID)
				}
				tc.want(t, ids, picks)
			})
		}
		t.Run("Labels", func(t *testing.T) {
			register(t, s, "lab", map[string]string{"region": "us"}, "h")
			eu := register(t, s, "lab", map[string]string{"region": "eu", "gpu": "true"}, "h")
			register(t, s, "lab", map[string]string{"region": "eu"}, "other")
			for range 3 {
				a, err := handover(t, s, api.ExecutorTarget{Group: "lab", Handler: "h", Labels: map[string]string{"region": "eu"}}, nil)
				if err != nil {
					t.Fatalf("Handover: %v", err)
				}
				if a.ExecutorID != eu.ID {
					t.Errorf("picked %s, want %s, the only one with region=eu and handler h", a.ExecutorID, eu.ID)
				}
			}
		})
		t.Run("NoExecutor", func(t *testing.T) {
			register(t, s, "none", map[string]string{"region": "us"}, "h")
			_, err := handover(t, s, api.ExecutorTarget{Group: "none", Handler: "h", Labels: map[string]string{"region": "eu"}}, nil)
			var ne *dispatch.NoExecutorError
			if !errors.As(err, &ne) {
				t.Fatalf("Handover: %v, want a *NoExecutorError", err)
			}
			want := `no live executor of group "none" runs handler "h" with labels region=eu (1 live executors in the group)`
			if ne.Error() != want {
				t.Errorf("error %q, want %q", ne.Error(), want)
			}
			_, err = handover(t, s, api.ExecutorTarget{Group: "empty", Handler: "h"}, nil)
			if !errors.As(err, &ne) || ne.Live != 0 {
				t.Errorf("Handover to an empty group: %v, want a *NoExecutorError with no live executor", err)
			}
		})
	})
}

func same(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("picks %v, want %v", got, want)
	}
}

func distinct(t *testing.T, picks []string, n int) {
	t.Helper()
	set := map[string]bool{}
	for _, p := range picks {
		set[p] = true
	}
	if len(set) != n {
		t.Errorf("picks %v: %d distinct executors, want %d", picks, len(set), n)
	}
}

// TestFencing checks that only the executor a run is leased to, under its
// token, may report its result, once, and that the node waiting for it
// gets it.
func TestFencing(t *testing.T) {
	t.Parallel()
	forEachDB(t, &dispatch.Options{PollInterval: 20 * time.Millisecond}, func(t *testing.T, s *dispatch.Service) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go s.Watch(ctx, "node-a")
		e := register(t, s, "fence", nil, "h")
		other := register(t, s, "fence", nil, "other")
		id := rand.Text()
		updates, stop := s.Await(id)
		defer stop()
		a, err := s.Handover(ctx, dispatch.Handover{RunID: id, ExecutionID: id, Attempt: 1,
			Target: api.ExecutorTarget{Group: "fence", Handler: "h"}, JobGroup: "g", JobName: "j",
			Params: map[string]any{"n": 1.0}, NodeID: "node-a", Timeout: time.Minute})
		if err != nil {
			t.Fatalf("Handover: %v", err)
		}
		work, err := s.Take(ctx, e.ID, 10, time.Second)
		if err != nil || len(work.Runs) != 1 {
			t.Fatalf("Take: %+v, %v; want the run", work, err)
		}
		r := work.Runs[0]
		if r.ID != id || r.Token != a.Token || r.Params["n"] != 1.0 || r.Timeout != "1m0s" {
			t.Errorf("taken run %+v", r)
		}
		bad := []struct {
			name     string
			executor string
			token    int64
		}{
			{"StaleToken", e.ID, a.Token + 1},
			{"OtherExecutor", other.ID, a.Token},
		}
		for _, b := range bad {
			err := s.Report(ctx, b.executor, id, api.ExecutorResult{Token: b.token, Outcome: "succeeded"})
			if !errors.Is(err, dispatch.ErrStale) {
				t.Errorf("%s: Report: %v, want ErrStale", b.name, err)
			}
		}
		if err := s.Report(ctx, e.ID, id, api.ExecutorResult{Token: a.Token, Outcome: "bogus"}); !errors.Is(err, dispatch.ErrInvalid) {
			t.Errorf("Report with a bad outcome: %v, want ErrInvalid", err)
		}
		if err := s.Report(ctx, e.ID, id, api.ExecutorResult{Token: a.Token, Outcome: "failed", Error: "boom", Output: "out"}); err != nil {
			t.Fatalf("Report: %v", err)
		}
		if err := s.Report(ctx, e.ID, id, api.ExecutorResult{Token: a.Token, Outcome: "succeeded"}); !errors.Is(err, dispatch.ErrStale) {
			t.Errorf("second Report: %v, want ErrStale", err)
		}
		u := await(t, updates, a.Token)
		if u.State != dispatch.StateDone || u.Result.Outcome != "failed" || u.Result.Error != "boom" || u.Result.Output != "out" || u.ExecutorID != e.ID {
			t.Errorf("update %+v, want the first result", u)
		}
	})
}

// await returns the next update of the hand-over with token, skipping
// those of earlier hand-overs.
func await(t *testing.T, updates <-chan dispatch.Update, token int64) dispatch.Update {
	t.Helper()
	timeout := time.After(10 * time.Second) // a bound, not a speed check
	for {
		select {
		case u := <-updates:
			if u.Token == token {
				return u
			}
		case <-timeout:
			t.Fatal("no update within 10s")
			return dispatch.Update{}
		}
	}
}

// TestLostAndRehandover lets an executor's lease lapse: its run is lost,
// handed to another executor with the next token and recovering set, and
// what the lost executor sends is refused.
func TestLostAndRehandover(t *testing.T) {
	t.Parallel()
	forEachDB(t, &dispatch.Options{Lease: time.Second, PollInterval: 20 * time.Millisecond}, func(t *testing.T, s *dispatch.Service) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go s.Watch(ctx, "node-a")
		lost := register(t, s, "lost", nil, "h")
		id := rand.Text()
		updates, stop := s.Await(id)
		defer stop()
		h := dispatch.Handover{RunID: id, ExecutionID: id, Attempt: 1,
			Target: api.ExecutorTarget{Group: "lost", Handler: "h"}, JobGroup: "g", JobName: "j", NodeID: "node-a"}
		a, err := s.Handover(ctx, h)
		if err != nil {
			t.Fatalf("Handover: %v", err)
		}
		if _, err := s.Take(ctx, lost.ID, 10, 0); err != nil {
			t.Fatalf("Take: %v", err)
		}
		// No heartbeat: the lease lapses after a second.
		if u := await(t, updates, a.Token); u.State != dispatch.StateLost || u.ExecutorID != lost.ID {
			t.Fatalf("update %+v, want lost with %s", u, lost.ID)
		}
		next := register(t, s, "lost", nil, "h")
		h.ExecutionID, h.Attempt, h.Recovering = rand.Text(), 2, true
		updates, stop2 := s.Await(id)
		defer stop2()
		b, err := s.Rehandover(ctx, h)
		if err != nil {
			t.Fatalf("Rehandover: %v", err)
		}
		if b.ExecutorID != next.ID || b.Token <= a.Token {
			t.Errorf("handed over again to %s with token %d; want %s and a token above %d", b.ExecutorID, b.Token, next.ID, a.Token)
		}
		if err := s.Report(ctx, lost.ID, id, api.ExecutorResult{Token: a.Token, Outcome: "succeeded"}); !errors.Is(err, dispatch.ErrStale) {
			t.Errorf("the lost executor's Report: %v, want ErrStale", err)
		}
		if _, err := s.Heartbeat(ctx, lost.ID, nil); !errors.Is(err, dispatch.ErrLeaseLost) {
			t.Errorf("the lost executor's Heartbeat: %v, want ErrLeaseLost", err)
		}
		if _, err := s.Take(ctx, lost.ID, 10, 0); !errors.Is(err, dispatch.ErrLeaseLost) {
			t.Errorf("the lost executor's Take: %v, want ErrLeaseLost", err)
		}
		work, err := s.Take(ctx, next.ID, 10, 0)
		if err != nil || len(work.Runs) != 1 || !work.Runs[0].Recovering || work.Runs[0].Token != b.Token || work.Runs[0].Attempt != 2 {
			t.Fatalf("Take: %+v, %v; want the recovering run under the new token", work, err)
		}
		if _, err := s.Heartbeat(ctx, next.ID, []api.ExecutorRunRef{{ID: id, Token: b.Token}}); err != nil {
			t.Fatalf("Heartbeat: %v", err)
		}
		if err := s.Report(ctx, next.ID, id, api.ExecutorResult{Token: b.Token, Outcome: "succeeded"}); err != nil {
			t.Fatalf("Report: %v", err)
		}
		if u := await(t, updates, b.Token); u.State != dispatch.StateDone || u.ExecutorID != next.ID {
			t.Errorf("update %+v, want done by %s", u, next.ID)
		}
	})
}

// TestCancel asks to cancel a running run: the executor's poll and its
// heartbeats say so, and a heartbeat names runs no longer leased to it.
func TestCancel(t *testing.T) {
	t.Parallel()
	forEachDB(t, &dispatch.Options{PollInterval: 20 * time.Millisecond}, func(t *testing.T, s *dispatch.Service) {
		ctx := t.Context()
		e := register(t, s, "cancel", nil, "h")
		a, err := handover(t, s, api.ExecutorTarget{Group: "cancel", Handler: "h"}, nil)
		if err != nil {
			t.Fatalf("Handover: %v", err)
		}
		if _, err := s.Take(ctx, e.ID, 10, 0); err != nil {
			t.Fatalf("Take: %v", err)
		}
		polled := make(chan *api.ExecutorWork, 1)
		go func() {
			w, err := s.Take(ctx, e.ID, 10, 10*time.Second)
			if err != nil {
				t.Errorf("Take: %v", err)
			}
			polled <- w
		}()
		if err := s.RequestCancel(ctx, a); err != nil {
			t.Fatalf("RequestCancel: %v", err)
		}
		w := <-polled
		want := api.ExecutorRunRef{ID: a.RunID, Token: a.Token}
		if len(w.Cancel) != 1 || w.Cancel[0] != want {
			t.Errorf("poll's cancels %+v, want %+v", w.Cancel, want)
		}
		stale := api.ExecutorRunRef{ID: "gone", Token: 1}
		cancels, err := s.Heartbeat(ctx, e.ID, []api.ExecutorRunRef{want, stale})
		if err != nil {
			t.Fatalf("Heartbeat: %v", err)
		}
		if len(cancels) != 2 || cancels[0] != want || cancels[1] != stale {
			t.Errorf("heartbeat's cancels %+v, want %+v and %+v", cancels, want, stale)
		}
		// A busy executor (max 0) takes cancel requests only.
		if _, err := handover(t, s, api.ExecutorTarget{Group: "cancel", Handler: "h"}, nil); err != nil {
			t.Fatalf("Handover: %v", err)
		}
		if w, err := s.Take(ctx, e.ID, 0, 100*time.Millisecond); err != nil || len(w.Runs) != 0 || len(w.Cancel) != 0 {
			t.Errorf("Take with max 0: %+v, %v; want nothing", w, err)
		}
		if w, err := s.Take(ctx, e.ID, 10, 0); err != nil || len(w.Runs) != 1 {
			t.Errorf("Take: %+v, %v; want the run a busy Take left", w, err)
		}
	})
}

// TestCheckTarget refuses bad targets, naming the field.
func TestCheckTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		t     *api.ExecutorTarget
		field string
	}{
		{"Missing", nil, "executor"},
		{"NoGroup", &api.ExecutorTarget{Handler: "h"}, "executor.group"},
		{"NoHandler", &api.ExecutorTarget{Group: "g"}, "executor.handler"},
		{"UnknownRouting", &api.ExecutorTarget{Group: "g", Handler: "h", Routing: "fastest"}, "executor.routing"},
		{"BadLabel", &api.ExecutorTarget{Group: "g", Handler: "h", Labels: map[string]string{"": "x"}}, "executor.labels"},
		{"BadLabelValue", &api.ExecutorTarget{Group: "g", Handler: "h", Labels: map[string]string{"a": " x"}}, "executor.labels.a"},
		{"HashKeyWithoutHash", &api.ExecutorTarget{Group: "g", Handler: "h", HashKey: "k"}, "executor.hash_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := dispatch.CheckTarget("executor", tc.t)
			var fe *dispatch.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, dispatch.ErrInvalid) {
				t.Errorf("CheckTarget: %v, want an error naming %s", err, tc.field)
			}
		})
	}
	for _, good := range []*api.ExecutorTarget{
		{Group: "g", Handler: "h", Routing: api.RoutingConsistentHash, HashKey: "k"},
		{Group: "g", Handler: "h", Routing: api.RoutingShardingBroadcast},
	} {
		if err := dispatch.CheckTarget("executor", good); err != nil {
			t.Errorf("CheckTarget(%+v): %v", good, err)
		}
	}
}

// TestForgetNode withdraws the runs of a lost node: its executor's next
// heartbeat says to cancel them, and their results are refused; a later
// incarnation's runs stay.
func TestForgetNode(t *testing.T) {
	t.Parallel()
	forEachDB(t, nil, func(t *testing.T, s *dispatch.Service) {
		ctx := t.Context()
		e := register(t, s, "forget", nil, "h")
		old, err := handover(t, s, api.ExecutorTarget{Group: "forget", Handler: "h"}, nil)
		if err != nil {
			t.Fatalf("Handover: %v", err)
		}
		if _, err := s.Take(ctx, e.ID, 10, 0); err != nil {
			t.Fatalf("Take: %v", err)
		}
		n, err := s.ForgetNode(ctx, "node-a", time.Now().Add(time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("ForgetNode: %d, %v; want 1", n, err)
		}
		ref := api.ExecutorRunRef{ID: old.RunID, Token: old.Token}
		cancels, err := s.Heartbeat(ctx, e.ID, []api.ExecutorRunRef{ref})
		if err != nil || len(cancels) != 1 || cancels[0] != ref {
			t.Errorf("Heartbeat: %+v, %v; want the forgotten run cancelled", cancels, err)
		}
		if err := s.Report(ctx, e.ID, old.RunID, api.ExecutorResult{Token: old.Token, Outcome: "succeeded"}); !errors.Is(err, dispatch.ErrStale) {
			t.Errorf("Report of a forgotten run: %v, want ErrStale", err)
		}
		if n, err := s.ForgetNode(ctx, "node-a", time.Unix(0, 0)); err != nil || n != 0 {
			t.Errorf("ForgetNode before any run: %d, %v; want 0", n, err)
		}
	})
}

func TestPruneExecutors(t *testing.T) {
	t.Parallel()
	forEachDB(t, nil, func(t *testing.T, s *dispatch.Service) {
		ctx := t.Context()
		idle := register(t, s, "prune", nil, "h")
		busy := register(t, s, "prune", nil, "h")
		other := register(t, s, "prune-other", nil, "h")
		asg, err := handover(t, s, api.ExecutorTarget{Group: "prune", Handler: "h", Routing: "last"}, nil)
		if err != nil {
			t.Fatalf("Handover: %v", err)
		}
		// Two executors registered within the clock's resolution are
		// equally "last": the one that took the run is the busy one.
		if asg.ExecutorID == idle.ID {
			idle, busy = busy, idle
		}
		// Leases lapse within Lease of the database clock: a bound past
		// them prunes every lapsed executor but the one holding a run.
		n, err := s.PruneExecutors(ctx, time.Now().Add(time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("PruneExecutors = %d, %v; want 2 (the idle one and the other group's, both lapsed by then)", n, err)
		}
		got := map[string]bool{}
		for _, id := range append(order(t, s, "prune"), order(t, s, "prune-other")...) {
			got[id] = true
		}
		if !got[busy.ID] || got[idle.ID] || got[other.ID] || len(got) != 1 {
			t.Errorf("executors left = %v; want only %s, which holds a run", got, busy.ID)
		}
		// A bound before every lease prunes nothing.
		again := register(t, s, "prune", nil, "h")
		if n, err := s.PruneExecutors(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
			t.Errorf("PruneExecutors before every lease = %d, %v; want 0", n, err)
		}
		if ids := order(t, s, "prune"); len(ids) != 2 || !slices.Contains(ids, busy.ID) || !slices.Contains(ids, again.ID) {
			t.Errorf("executors of the group = %v; want %s and %s", ids, busy.ID, again.ID)
		}
	})
}

// TestBatches checks the hand-overs and the results made at once, which
// the Service commits in batches: a round robin hand-over of each run,
// the turns spread evenly, each result fenced on its own and delivered
// to its waiter, and the released runs deleted by Watch's last pass.
func TestBatches(t *testing.T) {
	t.Parallel()
	forEachDB(t, &dispatch.Options{PollInterval: 20 * time.Millisecond}, func(t *testing.T, s *dispatch.Service) {
		ctx, cancel := context.WithCancel(t.Context())
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			s.Watch(ctx, "node-a")
		}()
		defer func() { cancel(); <-watched }()
		const executors, perExecutor = 4, 10
		for range executors {
			register(t, s, "batch", nil, "h")
		}
		ids := make([]string, executors*perExecutor)
		updates := make([]<-chan dispatch.Update, len(ids))
		for i := range ids {
			ids[i] = rand.Text()
			var stop func()
			updates[i], stop = s.Await(ids[i])
			defer stop()
		}
		asgs := make([]*dispatch.Assignment, len(ids))
		errs := make([]error, len(ids))
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() {
				asgs[i], errs[i] = s.Handover(ctx, dispatch.Handover{RunID: id, ExecutionID: id, Attempt: 1,
					Target:   api.ExecutorTarget{Group: "batch", Handler: "h", Routing: api.RoutingRoundRobin},
					JobGroup: "g", JobName: "j", NodeID: "node-a"})
			})
		}
		wg.Wait()
		got := make(map[string]int)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Handover %d: %v", i, err)
			}
			got[asgs[i].ExecutorID]++
		}
		for id, n := range got {
			if n != perExecutor {
				t.Errorf("executor %s got %d runs, want %d (all: %v)", id, n, perExecutor, got)
			}
		}
		for id := range got {
			work, err := s.Take(ctx, id, 100, time.Second)
			if err != nil || len(work.Runs) != perExecutor {
				t.Fatalf("Take of %s: %d runs, %v; want %d", id, len(work.Runs), err, perExecutor)
			}
		}
		stale := make([]error, len(ids))
		for i, id := range ids {
			a := asgs[i]
			wg.Go(func() {
				errs[i] = s.Report(ctx, a.ExecutorID, id, api.ExecutorResult{Token: a.Token, Outcome: "succeeded", Output: id})
			})
			wg.Go(func() {
				stale[i] = s.Report(ctx, a.ExecutorID, id, api.ExecutorResult{Token: a.Token + 1, Outcome: "failed"})
			})
		}
		wg.Wait()
		for i := range ids {
			if errs[i] != nil {
				t.Errorf("Report %d: %v", i, errs[i])
			}
			if !errors.Is(stale[i], dispatch.ErrStale) {
				t.Errorf("Report %d under a stale token: %v, want ErrStale", i, stale[i])
			}
			u := await(t, updates[i], asgs[i].Token)
			if u.State != dispatch.StateDone || u.Result.Outcome != "succeeded" || u.Result.Output != ids[i] {
				t.Errorf("update of run %d: %+v, want its result", i, u)
			}
			s.Release(ids[i])
		}
		cancel()
		<-watched
		n, err := s.ForgetNode(context.WithoutCancel(ctx), "node-a", time.Now().Add(time.Hour))
		if err != nil || n != 0 {
			t.Errorf("ForgetNode after the runs were released: %d runs, %v; want 0", n, err)
		}
	})
}

// TestHandoverBatchWithATakenRunID hands over, at once, runs of which
// one has the ID of a run handed over before. The batch's INSERT fails
// as a whole; each run must then be handed over alone, so that only the
// run with the taken ID fails and every other one reaches an executor.
func TestHandoverBatchWithATakenRunID(t *testing.T) {
	t.Parallel()
	forEachDB(t, nil, func(t *testing.T, s *dispatch.Service) {
		ctx := t.Context()
		e := register(t, s, "taken", nil, "h")
		handover := func(id string) (*dispatch.Assignment, error) {
			return s.Handover(ctx, dispatch.Handover{RunID: id, ExecutionID: id, Attempt: 1,
				Target:   api.ExecutorTarget{Group: "taken", Handler: "h", Routing: api.RoutingRoundRobin},
				JobGroup: "g", JobName: "j", NodeID: "node-a"})
		}
		first := rand.Text()
		if _, err := handover(first); err != nil {
			t.Fatalf("Handover of the first run: %v", err)
		}
		ids := make([]string, 24)
		for i := range ids {
			ids[i] = rand.Text()
		}
		ids[len(ids)/2] = first
		errs := make([]error, len(ids))
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() { _, errs[i] = handover(id) })
		}
		wg.Wait()
		for i, err := range errs {
			if ids[i] == first {
				if err == nil {
					t.Errorf("Handover of the taken run ID %s succeeded", first)
				}
				continue
			}
			if err != nil {
				t.Errorf("Handover %d: %v", i, err)
			}
		}
		work, err := s.Take(ctx, e.ID, 100, time.Second)
		if err != nil || len(work.Runs) != len(ids) {
			t.Fatalf("Take: %d runs, %v; want %d (the first and the %d new)", len(work.Runs), err, len(ids), len(ids)-1)
		}
	})
}

// TestResultSentManyTimesAtOnce reports one run's result under its token
// many times at once, each copy with its own output, as an executor that
// retries its request may. The copies meet in one batch; exactly one
// must be recorded, the others refused as stale, and the output recorded
// must be the accepted copy's.
func TestResultSentManyTimesAtOnce(t *testing.T) {
	t.Parallel()
	forEachDB(t, nil, func(t *testing.T, s *dispatch.Service) {
		ctx := t.Context()
		e := register(t, s, "twice", nil, "h")
		id := rand.Text()
		updates, stop := s.Await(id)
		defer stop()
		asg, err := s.Handover(ctx, dispatch.Handover{RunID: id, ExecutionID: id, Attempt: 1,
			Target:   api.ExecutorTarget{Group: "twice", Handler: "h", Routing: api.RoutingRoundRobin},
			JobGroup: "g", JobName: "j", NodeID: "node-a"})
		if err != nil {
			t.Fatalf("Handover: %v", err)
		}
		if work, err := s.Take(ctx, e.ID, 10, time.Second); err != nil || len(work.Runs) != 1 {
			t.Fatalf("Take: %d runs, %v; want 1", len(work.Runs), err)
		}
		const copies = 16
		errs := make([]error, copies)
		var wg sync.WaitGroup
		for i := range copies {
			wg.Go(func() {
				errs[i] = s.Report(ctx, e.ID, id, api.ExecutorResult{Token: asg.Token, Outcome: "succeeded", Output: fmt.Sprint("copy ", i)})
			})
		}
		wg.Wait()
		accepted := -1
		for i, err := range errs {
			switch {
			case err == nil && accepted >= 0:
				t.Errorf("copies %d and %d were both recorded", accepted, i)
			case err == nil:
				accepted = i
			case !errors.Is(err, dispatch.ErrStale):
				t.Errorf("copy %d: %v, want nil or ErrStale", i, err)
			}
		}
		if accepted < 0 {
			t.Fatalf("no copy was recorded: %v", errs)
		}
		if u := await(t, updates, asg.Token); u.Result.Output != fmt.Sprint("copy ", accepted) {
			t.Errorf("recorded output %q, want the accepted copy's %q", u.Result.Output, fmt.Sprint("copy ", accepted))
		}
	})
}

// newClockedService returns a Service on url whose leases last 10s on
// its own clock, which reads now (Unix nanoseconds, from 2030-01-01):
// tests move it forward.
func newClockedService(t *testing.T, url string) (s *dispatch.Service, now *atomic.Int64, clock func() time.Time) {
	now = new(atomic.Int64)
	now.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock = func() time.Time { return time.Unix(0, now.Load()).UTC() }
	return newService(t, url, &dispatch.Options{Lease: 10 * time.Second, Clock: clock}), now, clock
}

// TestClockGivesAndJudgesLeases: with Options.Clock, leases are given and
// judged by it, not by the database's clock. An executor registered at
// the clock's time, four years ahead of the database's, holds its lease
// until the clock passes it.
func TestClockGivesAndJudgesLeases(t *testing.T) {
	t.Parallel()
	forEachURL(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s, now, clock := newClockedService(t, url)
		e := register(t, s, "clock", nil, "h")
		if !e.Registered.Equal(clock()) || !e.LeaseUntil.Equal(clock().Add(10*time.Second)) {
			t.Errorf("registered %s, lease until %s; want %s and 10s later, the clock's", e.Registered, e.LeaseUntil, clock())
		}
		now.Add(int64(9 * time.Second))
		if _, err := s.Take(ctx, e.ID, 10, 0); err != nil {
			t.Errorf("Take 9s later by the clock: %v, want the lease held", err)
		}
		now.Add(int64(2 * time.Second))
		if _, err := s.Take(ctx, e.ID, 10, 0); !errors.Is(err, dispatch.ErrLeaseLost) {
			t.Errorf("Take 11s later by the clock: %v, want ErrLeaseLost", err)
		}
	})
}

// TestGroupOf: an executor's group, read once, is kept: an executor never
// changes group. An unknown executor is ErrNotFound.
func TestGroupOf(t *testing.T) {
	t.Parallel()
	forEachURL(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newService(t, url, nil)
		e := register(t, s, "billing", nil, "h")
		if g, err := s.GroupOf(ctx, e.ID); err != nil || g != "billing" {
			t.Fatalf("GroupOf = %q, %v; want billing", g, err)
		}
		if _, err := s.GroupOf(ctx, "no-such-executor"); !errors.Is(err, dispatch.ErrNotFound) {
			t.Errorf("GroupOf of an unknown executor: %v, want ErrNotFound", err)
		}
		// Removed behind the service's back: the group is still known,
		// without a read.
		st, err := sqlstore.Open(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.DB().ExecContext(ctx, st.SQL("DELETE FROM {p}dispatch_executors WHERE id = ?"), e.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, e.ID); !errors.Is(err, dispatch.ErrNotFound) {
			t.Fatalf("Get after the delete: %v, want ErrNotFound", err)
		}
		if g, err := s.GroupOf(ctx, e.ID); err != nil || g != "billing" {
			t.Errorf("GroupOf after the delete = %q, %v; want billing, kept", g, err)
		}
	})
}

// TestRoundRobinUsesAreRecordedByWatch: the uses of the executors that
// round robin hand-overs pick reach their rows on Watch's next pass, one
// count a hand-over.
func TestRoundRobinUsesAreRecordedByWatch(t *testing.T) {
	t.Parallel()
	forEachDB(t, &dispatch.Options{PollInterval: 20 * time.Millisecond}, func(t *testing.T, s *dispatch.Service) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		a, b := register(t, s, "rr", nil, "h"), register(t, s, "rr", nil, "h")
		target := api.ExecutorTarget{Group: "rr", Handler: "h", Routing: api.RoutingRoundRobin}
		for range 5 {
			if _, err := handover(t, s, target, nil); err != nil {
				t.Fatalf("Handover: %v", err)
			}
		}
		go s.Watch(ctx, "node-a")
		deadline := time.Now().Add(10 * time.Second)
		for {
			all, err := s.List(ctx)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			counts := map[string]int64{}
			used := 0
			for _, e := range all {
				counts[e.ID] = e.UseCount
				if !e.LastUsed.IsZero() {
					used++
				}
			}
			if counts[a.ID]+counts[b.ID] == 5 && min(counts[a.ID], counts[b.ID]) == 2 && used == 2 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("use counts %v, %d with a last use; want 3 and 2 over %s and %s, both used", counts, used, a.ID, b.ID)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
