package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// C1Options configure a run of C1, jobs created through the API.
type C1Options struct {
	// Jobs is how many jobs each path creates. Defaults to 5,000.
	Jobs int
	// Clients is how many clients create them at once, spread over the
	// nodes. Defaults to 8.
	Clients int
	// Nodes is how many server nodes serve the API. Defaults to 1.
	Nodes int
	// DatabaseURL names the database; the run makes a namespace of its
	// own there, as Run does with ViaServer. Required.
	DatabaseURL string
	// Executable is cmd/chime-bench, whose ServerNodeCommand runs the
	// nodes. Required.
	Executable string
	// Dir receives the nodes' logs and profiles, and is kept. Defaults to
	// a temporary directory removed at the end.
	Dir string
	// CPUProfile makes each node write a CPU profile to Dir/<node>.pprof.
	CPUProfile bool
	// Logger receives the run's progress. Defaults to a logger that
	// discards.
	Logger *slog.Logger
}

// C1BatchSize is how many jobs one request of C1's batch path creates,
// as `chime apply` sends them.
const C1BatchSize = 1000

// C1Path is what C1 measured of one way of creating jobs.
type C1Path struct {
	// Jobs is how many jobs it created; Took how long that took.
	Jobs int
	Took time.Duration
	// P50 and P99 are the requests' durations, as the clients saw them.
	P50, P99 time.Duration
	// DBCPU is the CPU the database server's processes used meanwhile,
	// when the server runs on this machine (DBCPUMeasured).
	DBCPU         time.Duration
	DBCPUMeasured bool
}

// PerSecond is the jobs created a second.
func (p C1Path) PerSecond() float64 {
	if p.Took <= 0 {
		return 0
	}
	return float64(p.Jobs) / p.Took.Seconds()
}

func (p C1Path) String() string {
	ms := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	s := fmt.Sprintf("jobs=%d create=%.0f/s p50=%s p99=%s", p.Jobs, p.PerSecond(), ms(p.P50), ms(p.P99))
	if p.DBCPUMeasured {
		s += fmt.Sprintf(" createcpu=%.3fms/job", float64(p.DBCPU)/float64(time.Millisecond)/float64(max(p.Jobs, 1)))
	}
	return s
}

// C1Result is what a C1 run measured.
type C1Result struct {
	Nodes, Clients int
	// Single is POST /api/v1/jobs, one job a request; Batch is POST
	// /api/v1/jobs/batch, C1BatchSize jobs a request.
	Single, Batch C1Path
}

// String is the result line.
func (r *C1Result) String() string {
	return fmt.Sprintf("chime C1 nodes=%d clients=%d single: %s batch: %s", r.Nodes, r.Clients, r.Single, r.Batch)
}

// RunC1 runs C1: server nodes on a namespace of their own, and Jobs
// one-shot jobs, each due in an hour so that none fires during the run,
// created through the API by Clients clients spread over the nodes, first
// one a request (POST /api/v1/jobs, what a service that creates a job per
// user action sends), then as many again C1BatchSize a request (POST
// /api/v1/jobs/batch, what `chime apply` sends). It measures each path's
// rate, the requests' durations and the database server's CPU, and then
// that the server lists every job it created.
func RunC1(ctx context.Context, opts C1Options) (res *C1Result, err error) {
	if opts.DatabaseURL == "" || opts.Executable == "" {
		return nil, errors.New("bench: C1Options.DatabaseURL and Executable are required")
	}
	opts.Jobs = cmp.Or(opts.Jobs, 5000)
	opts.Clients = cmp.Or(opts.Clients, 8)
	opts.Nodes = cmp.Or(opts.Nodes, 1)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r, clients, stop, err := startServerRun(ctx, Options{
		Workload: Workload{Name: "C1"}, Nodes: opts.Nodes, DatabaseURL: opts.DatabaseURL, Via: ViaServer,
		Executable: opts.Executable, CPUProfile: opts.CPUProfile, Logger: opts.Logger,
	}, opts.Dir)
	if err != nil {
		return nil, err
	}
	defer stop(&err)
	dbNames := dbServerNames(r.url)
	due := time.Now().Add(time.Hour)
	res = &C1Result{Nodes: opts.Nodes, Clients: opts.Clients}

	r.log.Info("creating jobs one a request", "jobs", opts.Jobs, "clients", opts.Clients)
	res.Single, err = measureC1(opts.Jobs, dbNames, func() ([]time.Duration, error) {
		return createEach(ctx, clients, opts.Clients, opts.Jobs, func(c *apiclient.Client, i int) error {
			_, err := c.CreateJob(ctx, c1Job("single", i, due))
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	r.log.Info("creating jobs in batches", "jobs", opts.Jobs, "batch", C1BatchSize)
	batches := (opts.Jobs + C1BatchSize - 1) / C1BatchSize
	res.Batch, err = measureC1(opts.Jobs, dbNames, func() ([]time.Duration, error) {
		return createEach(ctx, clients, opts.Clients, batches, func(c *apiclient.Client, b int) error {
			jobs := make([]api.Job, 0, C1BatchSize)
			for i := b * C1BatchSize; i < min((b+1)*C1BatchSize, opts.Jobs); i++ {
				jobs = append(jobs, c1Job("batch", i, due))
			}
			_, err := c.CreateJobs(ctx, jobs)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	for _, path := range []string{"single", "batch"} {
		if err := countC1(ctx, clients[0], path, opts.Jobs); err != nil {
			return nil, err
		}
	}
	// Stopped, not killed, so that each node writes its CPU profile.
	if err := r.stopNodes(NewSQLCounts()); err != nil {
		return nil, err
	}
	r.log.Info("done", "result", res.String())
	return res, nil
}

// countC1 checks that the server lists the jobs of path, want of them.
func countC1(ctx context.Context, c *apiclient.Client, path string, want int) error {
	n := 0
	for _, err := range c.Jobs(ctx, api.JobQuery{Group: "c1-" + path, Limit: 500}) {
		if err != nil {
			return fmt.Errorf("bench: listing the jobs of C1's %s path: %w", path, err)
		}
		n++
	}
	if n != want {
		return fmt.Errorf("bench: C1's %s path created %d jobs, the server lists %d", path, want, n)
	}
	return nil
}

// measureC1 runs create, which makes jobs jobs and returns its requests'
// durations, and measures it.
func measureC1(jobs int, dbNames []string, create func() ([]time.Duration, error)) (C1Path, error) {
	p := C1Path{Jobs: jobs}
	cpuBefore, cpuBeforeOK := dbServerCPU(dbNames...)
	began := time.Now()
	took, err := create()
	if err != nil {
		return p, err
	}
	p.Took = time.Since(began)
	if cpuAfter, cpuAfterOK := dbServerCPU(dbNames...); cpuBeforeOK && cpuAfterOK {
		p.DBCPU, p.DBCPUMeasured = cpuAfter-cpuBefore, true
	}
	slices.Sort(took)
	p.P50, p.P99 = percentile(took, 0.50), percentile(took, 0.99)
	return p, nil
}

// createEach calls request for 0 to n-1 from workers goroutines, worker w
// with the client of node w modulo the nodes, and returns each call's
// duration.
func createEach(ctx context.Context, clients []*apiclient.Client, workers, n int, request func(*apiclient.Client, int) error) ([]time.Duration, error) {
	took := make([]time.Duration, n)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		c := clients[w%len(clients)]
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if err := ctx.Err(); err != nil {
					errs[w] = err
					return
				}
				began := time.Now()
				if err := request(c, i); err != nil {
					errs[w] = fmt.Errorf("bench: request %d: %w", i, err)
					return
				}
				took[i] = time.Since(began)
			}
		})
	}
	wg.Wait()
	return took, errors.Join(errs...)
}

// c1Job is C1's job i of a path: a job of the benchmark's record type
// with one trigger that fires once at due.
func c1Job(path string, i int, due time.Time) api.Job {
	return api.Job{
		Group: "c1-" + path,
		Name:  fmt.Sprintf("j%06d", i),
		Type:  jobRecord,
		Triggers: []api.Trigger{{
			Schedule:  json.RawMessage(`{"kind":"once"}`),
			StartTime: &due,
		}},
	}
}
