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

// jobWorkflowTask is the job type of D1's tasks, which server nodes
// register: it records its run under the key "<instance param i>.<task>".
const jobWorkflowTask = "bench.workflow-task"

// instanceParam is the instance parameter that numbers a D1 instance.
const instanceParam = "i"

// workflowTask records the run of a D1 task, keyed by its instance's
// number and its task's name.
func (j *jobs) workflowTask(_ context.Context, jc *chime.JobContext) error {
	i, _ := jc.MergedData.String(instanceParam)
	err := j.out.Write(firelog.Record{
		Trigger: "d1." + i + "." + jc.Job.Key.Name, Scheduled: jc.ScheduledFireTime, Actual: time.Now(),
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

// D1Options configure a run of workflow benchmark D1 (issue 17).
type D1Options struct {
	// Instances is how many instances are started. Defaults to 1,000.
	Instances int
	// Nodes is how many server nodes run them. Defaults to 2.
	Nodes int
	// DatabaseURL names the database; the run makes a namespace of its
	// own there, as Run does with ViaServer. Required.
	DatabaseURL string
	// Executable is cmd/chime-bench, whose ServerNodeCommand runs the
	// nodes. Required.
	Executable string
	// Workers is each node's worker count. Defaults to 10.
	Workers int
	// Rate, when positive, starts the instances evenly at Rate a second,
	// so that the lag measured is that of a cluster that keeps up rather
	// than that of the queue of tasks offered at once. Zero starts them
	// as fast as the clients go (the D1: within about a second).
	Rate int
	// Timeout bounds the wait for every task to run, from the last start.
	// Defaults to 120 s.
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

// D1Tasks is the number of tasks of D1's workflow: start, then 8 tasks in
// parallel, then end.
const D1Tasks = 10

// D1Result is what a D1 run measured.
type D1Result struct {
	Nodes, Instances, Tasks int
	// Rate is D1Options.Rate: instances started a second, 0 for at once.
	Rate int
	// StartedIn is how long starting every instance through the API took.
	StartedIn time.Duration
	// Span is from the first instance's creation to the last task's end,
	// on the instances' recorded times.
	Span time.Duration
	// P50, P99 and Max are the task-start lag: from the end of a task's
	// last upstream task to its start, on the instances' recorded times.
	P50, P99, Max time.Duration
	// Duplicates counts the (instance, task) pairs that ran more than
	// once; Misses those that did not run, or whose task did not succeed.
	Duplicates, Misses int
	// DBCPU is the CPU the database server's processes used from the
	// first start to the last task's run, when the server runs on this
	// machine (DBCPUMeasured). Divided by Tasks it is the line's dbcpu.
	DBCPU         time.Duration
	DBCPUMeasured bool
}

// PerSecond is the instances per second over the span.
func (r *D1Result) PerSecond() float64 {
	if r.Span <= 0 {
		return 0
	}
	return float64(r.Instances) / r.Span.Seconds()
}

// OK reports whether every task ran exactly once and succeeded.
func (r *D1Result) OK() bool { return r.Duplicates == 0 && r.Misses == 0 }

// String is the result line.
func (r *D1Result) String() string {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	rate := "burst"
	if r.Rate > 0 {
		rate = fmt.Sprintf("%d/s", r.Rate)
	}
	line := fmt.Sprintf("chime D1 nodes=%d instances=%d tasks=%d start_rate=%s started_in=%s span=%s inst/s=%.0f lag_p50=%s lag_p99=%s lag_max=%s dup=%d miss=%d",
		r.Nodes, r.Instances, r.Tasks, rate, ms(r.StartedIn), ms(r.Span), r.PerSecond(), ms(r.P50), ms(r.P99), ms(r.Max), r.Duplicates, r.Misses)
	if r.DBCPUMeasured {
		line += fmt.Sprintf(" dbcpu=%.3fms/task", float64(r.DBCPU)/float64(time.Millisecond)/float64(max(r.Tasks, 1)))
	}
	return line
}

// RunD1 runs workflow benchmark D1 of issue 17: server nodes on a
// namespace of their own, a workflow of D1Tasks tasks shaped as a diamond
// (start, 8 in parallel, end), and Instances instances of it started at
// once through the API by 50 clients spread over the nodes. It waits
// until every task ran (or Timeout passed), reads each instance back and
// measures.
func RunD1(ctx context.Context, opts D1Options) (res *D1Result, err error) {
	if opts.DatabaseURL == "" || opts.Executable == "" {
		return nil, errors.New("bench: D1Options.DatabaseURL and Executable are required")
	}
	opts.Instances = cmp.Or(opts.Instances, 1000)
	opts.Nodes = cmp.Or(opts.Nodes, 2)
	opts.Timeout = cmp.Or(opts.Timeout, missAfter)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r, clients, stop, err := startServerRun(ctx, Options{
		Workload: Workload{Name: "D1"}, Nodes: opts.Nodes, DatabaseURL: opts.DatabaseURL, Via: ViaServer,
		Executable: opts.Executable, Workers: cmp.Or(opts.Workers, 10), CPUProfile: opts.CPUProfile, Logger: opts.Logger,
	}, opts.Dir)
	if err != nil {
		return nil, err
	}
	defer stop(&err)
	if _, _, err := clients[0].PutWorkflow(ctx, d1Workflow(), 0); err != nil {
		return nil, fmt.Errorf("bench: saving workflow d1: %w", err)
	}
	r.log.Info("starting instances", "instances", opts.Instances, "nodes", opts.Nodes)

	res = &D1Result{Nodes: opts.Nodes, Instances: opts.Instances, Tasks: opts.Instances * D1Tasks, Rate: max(opts.Rate, 0)}
	dbNames := dbServerNames(r.url)
	cpuBefore, cpuBeforeOK := dbServerCPU(dbNames...)
	ids, startedIn, err := startD1(ctx, clients, opts.Instances, opts.Rate)
	if err != nil {
		return nil, err
	}
	res.StartedIn = startedIn
	deadline := time.Now().Add(opts.Timeout)
	records, err := r.waitD1(ctx, res.Tasks, deadline)
	if err != nil {
		return nil, err
	}
	if cpuAfter, cpuAfterOK := dbServerCPU(dbNames...); cpuBeforeOK && cpuAfterOK {
		res.DBCPU, res.DBCPUMeasured = cpuAfter-cpuBefore, true
	}
	instances, err := readD1(ctx, clients[0], ids, deadline)
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
	measureD1(res, instances, records)
	r.log.Info("done", "result", res.String())
	return res, nil
}

// d1Clients logs in to the first node as the admin and returns a client
// of each node with that session.
func (r *run) d1Clients(ctx context.Context) ([]*apiclient.Client, error) {
	clients := make([]*apiclient.Client, len(r.nodes))
	for i, n := range r.nodes {
		c, err := apiclient.New(n.url, nil)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		clients[i] = c
	}
	session, err := clients[0].Login(ctx, "admin", r.adminPassword)
	if err != nil {
		return nil, fmt.Errorf("bench: logging in to node %s: %w", r.nodes[0].id, err)
	}
	for i, c := range clients {
		clients[i] = c.WithToken(session.Token)
	}
	return clients, nil
}

// d1Workflow is D1's workflow: start -> m1…m8 -> end.
func d1Workflow() api.Workflow {
	wf := api.Workflow{Name: "d1"}
	names := []string{"start", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "end"}
	for _, n := range names {
		wf.Tasks = append(wf.Tasks, api.WorkflowTask{Name: n, Type: jobWorkflowTask})
	}
	for _, m := range names[1 : D1Tasks-1] {
		wf.Edges = append(wf.Edges, api.WorkflowEdge{From: "start", To: m}, api.WorkflowEdge{From: m, To: "end"})
	}
	return wf
}

// d1Starters is how many clients start D1's instances at once.
const d1Starters = 50

// startD1 starts n instances of d1 with d1Starters clients spread over
// the nodes, instance i with parameter i (at i/rate seconds when rate is
// positive), and returns their IDs by i and how long starting them took.
func startD1(ctx context.Context, clients []*apiclient.Client, n, rate int) ([]string, time.Duration, error) {
	ids := make([]string, n)
	errs := make([]error, d1Starters)
	began := time.Now()
	var wg sync.WaitGroup
	for w := range d1Starters {
		c := clients[w%len(clients)]
		wg.Go(func() {
			for i := w; i < n; i += d1Starters {
				if rate > 0 {
					at := began.Add(time.Duration(i) * time.Second / time.Duration(rate))
					if err := sleepUntil(ctx, at); err != nil {
						errs[w] = err
						return
					}
				}
				in, err := c.RunWorkflow(ctx, "d1", map[string]any{instanceParam: fmt.Sprint(i)})
				if err != nil {
					errs[w] = fmt.Errorf("bench: starting instance %d: %w", i, err)
					return
				}
				ids[i] = in.ID
			}
		})
	}
	wg.Wait()
	return ids, time.Since(began), errors.Join(errs...)
}

// waitD1 follows the nodes' fire logs until want task runs are in them
// or the deadline passed, and returns the records read.
func (r *run) waitD1(ctx context.Context, want int, deadline time.Time) ([]firelog.Record, error) {
	timeout := time.NewTimer(time.Until(deadline))
	defer timeout.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var records []firelog.Record
	for {
		for _, n := range r.nodes {
			more, err := n.follow.Next()
			if err != nil {
				return nil, err
			}
			records = append(records, more...)
		}
		if len(records) >= want {
			return records, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout.C:
			r.log.Warn("not every task ran in time", "ran", len(records), "want", want)
			return records, nil
		case <-tick.C:
		}
	}
}

// readD1 reads the instances of ids back, waiting for each to end (a
// task records its run before its end is recorded) until the deadline.
func readD1(ctx context.Context, c *apiclient.Client, ids []string, deadline time.Time) ([]*api.WorkflowInstance, error) {
	instances := make([]*api.WorkflowInstance, len(ids))
	for i, id := range ids {
		for {
			in, err := c.GetWorkflowInstance(ctx, id)
			if err != nil {
				return nil, fmt.Errorf("bench: reading instance %s: %w", id, err)
			}
			instances[i] = in
			if in.State != "running" || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond): // the instance's last task is ending
			}
		}
	}
	return instances, nil
}

// measureD1 sets res's lag, span, duplicates and misses from the
// instances read back and the tasks' runs recorded.
func measureD1(res *D1Result, instances []*api.WorkflowInstance, records []firelog.Record) {
	runs := map[string]int{}
	for _, rec := range records {
		runs[rec.Trigger]++
	}
	var lags []time.Duration
	var first, last time.Time
	for i, in := range instances {
		if first.IsZero() || in.Created.Before(first) {
			first = in.Created
		}
		finished := map[string]time.Time{}
		for _, task := range in.Tasks {
			n := runs[fmt.Sprintf("d1.%d.%s", i, task.Task)]
			switch {
			case task.State != "succeeded" || task.Finished == nil || n == 0:
				res.Misses++
				continue
			case n > 1:
				res.Duplicates++
			}
			finished[task.Task] = *task.Finished
			if task.Finished.After(last) {
				last = *task.Finished
			}
		}
		for _, task := range in.Tasks {
			if task.Started == nil {
				continue
			}
			var after time.Time
			for _, e := range in.Edges {
				if e.To == task.Task && finished[e.From].After(after) {
					after = finished[e.From]
				}
			}
			if !after.IsZero() {
				lags = append(lags, task.Started.Sub(after))
			}
		}
	}
	if !last.IsZero() {
		res.Span = last.Sub(first)
	}
	slices.Sort(lags)
	res.P50, res.P99, res.Max = percentile(lags, 0.50), percentile(lags, 0.99), percentile(lags, 1)
}

// percentile returns the p-th fraction (0 to 1) of sorted; zero when it
// is empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

// startServerRun starts o.Nodes server processes for the workload o
// names, in a database namespace of their own (and a run directory, dir
// or a temporary one), and returns the run, a client per node, and stop,
// which kills the nodes, drops the namespace even when ctx was cancelled,
// and joins what failed to *err.
func startServerRun(ctx context.Context, o Options, dir string) (r *run, clients []*apiclient.Client, stop func(err *error), err error) {
	r = &run{o: o, log: o.Logger, prefix: "bench_" + randomHex(4) + "_", adminPassword: "Bench-" + randomHex(16)}
	var done func()
	if r.dir, done, err = runDir(dir); err != nil {
		return nil, nil, nil, err
	}
	var drop func(context.Context) error
	if r.url, drop, err = newNamespace(ctx, o.DatabaseURL, strings.TrimSuffix(r.prefix, "_"), r.dir); err != nil {
		done()
		return nil, nil, nil, err
	}
	stop = func(err *error) {
		r.killAll()
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		*err = errors.Join(*err, drop(dctx))
		done()
	}
	if err = r.startNodes(ctx); err == nil {
		clients, err = r.d1Clients(ctx)
	}
	if err != nil {
		stop(&err)
		return nil, nil, nil, err
	}
	return r, clients, stop, nil
}
