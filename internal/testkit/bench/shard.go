package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

// jobShardItem is the job type of S1's sharded job, which server nodes
// register: each item records its run under the key
// "s1.<firing param f>.<item index>".
const jobShardItem = "bench.shard-item"

// firingParam is the run parameter that numbers an S1 firing.
const firingParam = "f"

// shardItem records the run of an S1 item, keyed by its firing's number
// and its index.
func (j *jobs) shardItem(_ context.Context, jc *chime.JobContext) error {
	if jc.Shard == nil {
		return errors.New("bench: job type " + jobShardItem + " runs only the items of a sharded job")
	}
	f, _ := jc.MergedData.String(firingParam)
	err := j.out.Write(firelog.Record{
		Trigger: fmt.Sprintf("s1.%s.%d", f, jc.Shard.Index), Scheduled: jc.ScheduledFireTime, Actual: time.Now(),
		Node: j.node, Recovering: jc.Recovering, Event: firelog.EventFire,
	})
	if err != nil {
		select {
		case j.failed <- err:
		default:
		}
	}
	return err
}

// S1Options configure a run of sharded-job benchmark S1 (issue 17).
type S1Options struct {
	// Firings is how many firings of the job are run. Defaults to 20.
	Firings int
	// Items is the job's shard count: items per firing. Defaults to 64.
	Items int
	// Nodes is how many server nodes run the items. Defaults to 2.
	Nodes int
	// DatabaseURL names the database; the run makes a namespace of its
	// own there, as Run does with ViaServer. Required.
	DatabaseURL string
	// Executable is cmd/chime-bench, whose ServerNodeCommand runs the
	// nodes. Required.
	Executable string
	// Workers is each node's worker count. Defaults to 10.
	Workers int
	// Timeout bounds the wait for every item to run, from the last
	// firing. Defaults to 120 s.
	Timeout time.Duration
	// Dir receives the nodes' fire logs, logs and profiles, and is kept.
	// Defaults to a temporary directory removed at the end.
	Dir string
	// CPUProfile makes each node write a CPU profile to Dir/<node>.pprof.
	CPUProfile bool
	// Logger receives the run's progress. Defaults to a logger that
	// discards.
	Logger *slog.Logger
}

// S1Result is what an S1 run measured.
type S1Result struct {
	Nodes, Firings, Items int
	// Span is from the first firing's request to the last item's run.
	Span time.Duration
	// Split counts the item runs each node made, by node ID.
	Split map[string]int
	// Duplicates counts the (firing, item) pairs that ran more than
	// once; Misses those that did not run.
	Duplicates, Misses int
}

// PerSecond is the item runs per second over the span.
func (r *S1Result) PerSecond() float64 {
	if r.Span <= 0 {
		return 0
	}
	return float64(r.Firings*r.Items) / r.Span.Seconds()
}

// OK reports whether every item of every firing ran exactly once.
func (r *S1Result) OK() bool { return r.Duplicates == 0 && r.Misses == 0 }

// String is the result line; split lists the item runs by node, in node
// order.
func (r *S1Result) String() string {
	nodes := slices.Sorted(func(yield func(string) bool) {
		for n := range r.Split {
			if !yield(n) {
				return
			}
		}
	})
	split := make([]string, len(nodes))
	for i, n := range nodes {
		split[i] = fmt.Sprintf("%s:%d", n, r.Split[n])
	}
	return fmt.Sprintf("chime S1 nodes=%d firings=%d items=%d span=%s items/s=%.0f split=%s dup=%d miss=%d",
		r.Nodes, r.Firings, r.Items, r.Span.Round(time.Millisecond), r.PerSecond(), strings.Join(split, ","), r.Duplicates, r.Misses)
}

// RunS1 runs sharded-job benchmark S1 of issue 17: server nodes on a
// namespace of their own, a job of Items shards, and Firings runs of it
// requested at once through the API, spread over the nodes. It waits until
// every item of every firing ran (or Timeout passed) and reports how the
// items spread over the nodes, the duplicates and the misses.
func RunS1(ctx context.Context, opts S1Options) (res *S1Result, err error) {
	if opts.DatabaseURL == "" || opts.Executable == "" {
		return nil, errors.New("bench: S1Options.DatabaseURL and Executable are required")
	}
	opts.Firings = cmp.Or(opts.Firings, 20)
	opts.Items = cmp.Or(opts.Items, 64)
	opts.Nodes = cmp.Or(opts.Nodes, 2)
	opts.Timeout = cmp.Or(opts.Timeout, missAfter)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r, clients, stop, err := startServerRun(ctx, Options{
		Workload: Workload{Name: "S1"}, Nodes: opts.Nodes, DatabaseURL: opts.DatabaseURL, Via: ViaServer,
		Executable: opts.Executable, Workers: cmp.Or(opts.Workers, 10), CPUProfile: opts.CPUProfile, Logger: opts.Logger,
	}, opts.Dir)
	if err != nil {
		return nil, err
	}
	defer stop(&err)
	job := api.Job{Group: "s1", Name: "items", Type: jobShardItem, Shards: opts.Items, RequestsRecovery: true}
	if _, err := clients[0].CreateJob(ctx, job); err != nil {
		return nil, fmt.Errorf("bench: creating job s1/items: %w", err)
	}
	r.log.Info("running firings", "firings", opts.Firings, "items", opts.Items, "nodes", opts.Nodes)

	res = &S1Result{Nodes: opts.Nodes, Firings: opts.Firings, Items: opts.Items, Split: map[string]int{}}
	began := time.Now()
	if err := runS1Firings(ctx, clients, opts.Firings); err != nil {
		return nil, err
	}
	records, err := r.waitD1(ctx, opts.Firings*opts.Items, time.Now().Add(opts.Timeout))
	if err != nil {
		return nil, err
	}
	if err := r.stopNodes(NewSQLCounts()); err != nil {
		return nil, err
	}
	for _, n := range r.nodes {
		more, err := n.follow.Next()
		if err != nil {
			return nil, err
		}
		records = append(records, more...)
	}
	measureS1(res, records, began)
	r.log.Info("done", "result", res.String())
	return res, nil
}

// runS1Firings requests n runs of job s1/items, run f with parameter f,
// one client per node at once.
func runS1Firings(ctx context.Context, clients []*apiclient.Client, n int) error {
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for w, c := range clients {
		wg.Go(func() {
			for f := w; f < n; f += len(clients) {
				if _, err := c.RunJob(ctx, "s1", "items", api.RunRequest{Params: map[string]any{firingParam: fmt.Sprint(f)}}); err != nil {
					errs[w] = fmt.Errorf("bench: running firing %d: %w", f, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// measureS1 sets res's span, split, duplicates and misses from the item
// runs recorded.
func measureS1(res *S1Result, records []firelog.Record, began time.Time) {
	runs := map[string]int{}
	var last time.Time
	for _, rec := range records {
		runs[rec.Trigger]++
		res.Split[rec.Node]++
		if rec.Actual.After(last) {
			last = rec.Actual
		}
	}
	for f := range res.Firings {
		for i := range res.Items {
			switch n := runs[fmt.Sprintf("s1.%d.%d", f, i)]; {
			case n == 0:
				res.Misses++
			case n > 1:
				res.Duplicates++
			}
		}
	}
	if !last.IsZero() {
		res.Span = last.Sub(began)
	}
}
