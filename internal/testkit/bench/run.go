package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Options configure a benchmark run.
type Options struct {
	// Workload is what to run.
	Workload Workload
	// Nodes is how many node processes to start. Defaults to the
	// workload's Nodes, or 1.
	Nodes int
	// DatabaseURL names the database, as sqlstore.Open takes it. The run
	// creates its own tables there (a unique table prefix) and drops them
	// when it ends; with ViaServer, whose nodes take no table prefix, it
	// creates a schema (PostgreSQL), a database (MySQL) or a file in Dir
	// (SQLite) of its own instead, and removes it. Required.
	DatabaseURL string
	// Via says what the nodes are: ViaLibrary (the default), processes
	// each running a chime.Scheduler (RunNode), or ViaServer, processes
	// each running the product's server with the benchmark's job types
	// (RunServerNode).
	Via string
	// Executable is cmd/chime-bench: each node is started as it, with
	// NodeCommand or ServerNodeCommand and the node's flags (see
	// nodeFlags). Required.
	Executable string
	// Workers is each node's worker count. Defaults to the workload's
	// Workers, or 10.
	Workers int
	// CheckIn and DeadAfter configure the nodes' cluster leases; zero
	// takes the scheduler's defaults (2 s and 3 × CheckIn).
	CheckIn   time.Duration
	DeadAfter time.Duration
	// WarmUp is the time from all nodes being ready (when the seeded
	// triggers are moved to their fire times) to the first fire time.
	// Defaults to 5 s.
	WarmUp time.Duration
	// Dir receives the nodes' fire logs, logs and profiles, and is kept.
	// Defaults to a temporary directory removed at the end.
	Dir string
	// CPUProfile makes each node write a CPU profile to Dir/<node>.pprof.
	CPUProfile bool
	// Seed says how the jobs are created before the run: SeedBatch (the
	// default), ScheduleJobs with SeedBatchSize jobs to a call, or
	// SeedSingle, one ScheduleJob per job. Result.Created and CreateCPU
	// measure it.
	Seed string
	// CountSQL makes each node count the statements it sends (PostgreSQL
	// only); Report.SQL holds the sum.
	CountSQL bool
	// ExecutorLease is the executors' lease on the server nodes; zero
	// takes the server's default (15s).
	ExecutorLease time.Duration
	// CheckHistory makes a run with executors read, at the end, the
	// history of its executor jobs through a live node's API
	// (Report.History).
	CheckHistory bool
	// Logger receives the run's progress. Defaults to a logger that
	// discards.
	Logger *slog.Logger
}

// Report is a run's Result with what else was observed.
type Report struct {
	Result *Result
	// Seeded is how long seeding took; Gap the time from the triggers
	// being moved to their fire times, once all nodes were ready, to the
	// first fire time.
	Seeded, Gap time.Duration
	// LoadBefore and LoadAfter are the machine's load averages (1, 5 and
	// 15 minutes) when the nodes started and when they stopped.
	LoadBefore, LoadAfter string
	// Waits counts, on PostgreSQL, the samples of the nodes' active
	// sessions by wait event ("Lock:transactionid", "IO:WALSync", or "CPU"
	// when not waiting), taken every 100ms while the workload fired.
	Waits map[string]int
	// SQL counts the statements the nodes sent, with Options.CountSQL.
	SQL *SQLCounts
	// Dir holds the nodes' files when Options.Dir was set.
	Dir string
	// History is what the server's history says of the executor jobs,
	// with Options.CheckHistory.
	History *HistoryCheck
}

// Run runs a workload: it creates the run's tables, seeds the triggers,
// starts the node processes, waits until every firing ran or its grace
// passed (killing the busiest node on the way for a failover workload),
// stops the nodes, merges their fire logs into a Result and drops the
// tables.
func Run(ctx context.Context, opts Options) (*Report, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &run{o: o, log: o.Logger, prefix: "bench_" + randomHex(4) + "_", adminPassword: "Bench-" + randomHex(16)}
	var done func()
	if r.dir, done, err = runDir(opts.Dir); err != nil {
		return nil, err
	}
	defer done()
	return r.run(ctx)
}

// runDir returns the directory of a run's files: dir, made if need be
// and kept, or when dir is empty a temporary one that done removes.
func runDir(dir string) (path string, done func(), err error) {
	if dir == "" {
		if path, err = os.MkdirTemp("", "chime-bench-"); err != nil {
			return "", nil, fmt.Errorf("bench: %w", err)
		}
		return path, func() { _ = os.RemoveAll(path) }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("bench: %w", err)
	}
	return dir, func() {}, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Workload.Name == "" || len(o.Workload.Series) == 0 {
		return o, errors.New("bench: Options.Workload is required")
	}
	if o.DatabaseURL == "" {
		return o, errors.New("bench: Options.DatabaseURL is required")
	}
	if o.Executable == "" {
		return o, errors.New("bench: Options.Executable is required")
	}
	if o.Workload.Executors > 0 {
		switch o.Via {
		case "":
			o.Via = ViaServer
		case ViaServer:
		default:
			return o, fmt.Errorf("bench: workload %s runs on executors, which need server nodes (Via %q)", o.Workload.Name, ViaServer)
		}
	} else if o.Workload.onExecutors() {
		return o, fmt.Errorf("bench: workload %s has jobs on executors but no executors", o.Workload.Name)
	}
	switch o.Via {
	case "":
		o.Via = ViaLibrary
	case ViaLibrary:
	case ViaServer:
		if o.CountSQL {
			return o, errors.New("bench: Options.CountSQL needs the library path (Via library)")
		}
	default:
		return o, fmt.Errorf("bench: Options.Via %q: want %q or %q", o.Via, ViaLibrary, ViaServer)
	}
	switch o.Seed {
	case "":
		o.Seed = SeedBatch
	case SeedBatch, SeedSingle:
	default:
		return o, fmt.Errorf("bench: Options.Seed %q: want %q or %q", o.Seed, SeedBatch, SeedSingle)
	}
	if o.Nodes == 0 {
		o.Nodes = max(o.Workload.Nodes, 1)
	}
	if o.Nodes < 1 {
		return o, fmt.Errorf("bench: Options.Nodes %d: want at least 1", o.Nodes)
	}
	if o.Workload.Nodes != 0 && o.Nodes != o.Workload.Nodes {
		return o, fmt.Errorf("bench: workload %s runs on %d nodes, not %d", o.Workload.Name, o.Workload.Nodes, o.Nodes)
	}
	if o.Workers == 0 {
		o.Workers = cmp.Or(o.Workload.Workers, 10)
	}
	// Refused by the nodes too, but only after seeding; 2s is the
	// scheduler's default check-in interval.
	if checkIn := cmp.Or(o.CheckIn, 2*time.Second); o.DeadAfter != 0 && o.DeadAfter <= checkIn {
		return o, fmt.Errorf("bench: DeadAfter (%s) must exceed the check-in interval (%s)", o.DeadAfter, checkIn)
	}
	if o.WarmUp == 0 {
		o.WarmUp = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o, nil
}

// run is one benchmark run.
type run struct {
	o   Options
	log *slog.Logger
	// prefix is unique to the run: its table prefix, and its nodes'
	// application_name on PostgreSQL.
	prefix string
	// url and tables are the database and table prefix the nodes use:
	// DatabaseURL and prefix, or with ViaServer the run's own namespace
	// and "" (the store's default prefix, which chime server uses).
	url, tables string
	dir         string
	st          *sqlstore.Store
	nodes       []*node
	// executors are the executor processes, with a workload that has
	// them; adminToken is the session of the first admin, whose password
	// is adminPassword, once the executors started.
	executors     []*node
	adminToken    string
	adminPassword string
	// killedNode names the node a workload with executors killed.
	killedNode string
}

// node is one node or executor process and its fire log.
type node struct {
	id     string
	out    string
	log    string
	proc   *nodeproc.Process
	follow *firelog.Follower
	killed bool
	// addr and url are a server node's API address and URL; via is the
	// node an executor connects to.
	addr, url string
	via       *node
}

func (r *run) run(ctx context.Context) (rep *Report, err error) {
	w := r.o.Workload
	r.url, r.tables = r.o.DatabaseURL, r.prefix
	if r.o.Via == ViaServer {
		var drop func(context.Context) error
		r.url, drop, err = newNamespace(ctx, r.o.DatabaseURL, strings.TrimSuffix(r.prefix, "_"), r.dir)
		if err != nil {
			return nil, err
		}
		r.tables = ""
		defer func() {
			// The namespace goes even when the run was cancelled.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			err = errors.Join(err, drop(dctx))
		}()
	}
	r.st, err = sqlstore.Open(ctx, r.url, &sqlstore.Options{TablePrefix: r.tables, Logger: r.log, MaxOpenConns: r.poolSize()})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer func() {
		// The tables go even when the run was cancelled.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if r.tables != "" {
			err = errors.Join(err, dropTables(dctx, r.st.DB(), r.st.Dialect(), r.tables))
		}
		err = errors.Join(err, r.st.Close())
	}()
	seedScheduler, err := chime.New(chime.Config{Store: r.st, NodeID: "bench-seeder", Logger: r.log})
	if err != nil {
		return nil, err
	}
	// Never started, it has nothing to wait for.
	defer func() { _ = seedScheduler.Stop(context.WithoutCancel(ctx)) }()
	sd := &seeder{s: seedScheduler, parallelism: r.poolSize(), batch: 1}
	if r.o.Seed == SeedBatch {
		sd.batch = SeedBatchSize
	}
	dbNames := dbServerNames(r.url)

	// The triggers are seeded for a T0 a day away, and moved to their T0
	// once they are all stored and every node and executor is ready: how
	// long seeding and starting take on a busy machine cannot be told in
	// advance. A started node looks at the store at least every second
	// (the engine's IdleWait), so it sees the moved triggers well before
	// T0.
	total := w.Triggers()
	seedT0 := time.Now().Add(24 * time.Hour).Truncate(time.Millisecond)
	r.log.Info("seeding", "workload", w.Name, "triggers", total)
	seedCPUBefore, seedCPUBeforeOK := dbServerCPU(dbNames...)
	began := time.Now()
	for _, s := range w.Series {
		if err := sd.seedSeries(ctx, s, seedT0); err != nil {
			return nil, err
		}
	}
	rep = &Report{Seeded: time.Since(began), SQL: NewSQLCounts()}
	seedCPUAfter, seedCPUAfterOK := dbServerCPU(dbNames...)
	if r.o.Dir != "" {
		rep.Dir = r.dir
	}
	r.log.Info("seeded", "triggers", total, "took", rep.Seeded.Round(time.Millisecond))

	rep.LoadBefore = loadAverage()
	defer r.killAll()
	if err := r.startNodes(ctx); err != nil {
		return nil, err
	}
	if r.o.Workload.Executors > 0 {
		if err := r.startExecutors(ctx); err != nil {
			return nil, err
		}
	}
	// moveAllowance is the time planned for moving the triggers.
	const moveAllowance = time.Second
	t0 := time.Now().Add(moveAllowance + r.o.WarmUp).Truncate(time.Millisecond)
	if err := moveTriggers(ctx, r.st.DB(), r.st.Dialect(), r.st.TablePrefix(), t0.Sub(seedT0)); err != nil {
		return nil, err
	}
	rep.Gap = time.Until(t0)
	r.log.Info("nodes ready, triggers moved", "nodes", len(r.nodes), "first_fire_in", rep.Gap.Round(time.Millisecond), "load", rep.LoadBefore)
	if rep.Gap < r.o.WarmUp/2 {
		return nil, fmt.Errorf("bench: moving the triggers to their fire times left only %s before the first fire time; want %s", rep.Gap.Round(time.Millisecond), r.o.WarmUp)
	}

	sampleCtx, stopSampling := context.WithCancel(ctx)
	waits := make(chan map[string]int, 1)
	go func() { waits <- r.sampleWaits(sampleCtx, t0) }()
	if err := sleepUntil(ctx, t0); err != nil {
		stopSampling()
		<-waits
		return nil, err
	}
	cpuBefore, cpuBeforeOK := dbServerCPU(dbNames...)
	records, k, err := r.watch(ctx, t0)
	cpuAfter, cpuAfterOK := dbServerCPU(dbNames...)
	stopSampling()
	rep.Waits = <-waits
	if err != nil {
		return nil, err
	}
	rep.LoadAfter = loadAverage()
	if r.o.CheckHistory && r.adminToken != "" {
		if rep.History, err = r.checkHistory(ctx, t0); err != nil {
			return nil, err
		}
	}
	if err := r.stopNodes(rep.SQL); err != nil {
		return nil, err
	}
	for _, n := range r.all() {
		more, err := n.follow.Next()
		if err != nil {
			return nil, err
		}
		records = append(records, more...)
	}
	rep.Result = summarize(w, len(r.nodes), t0, records, k)
	if len(r.executors) > 0 {
		rep.Result.Split = split(w, t0, r.executors, records)
		rep.Result.KilledNode = r.killedNode
	}
	if cpuBeforeOK && cpuAfterOK {
		rep.Result.DBCPU, rep.Result.DBCPUMeasured = cpuAfter-cpuBefore, true
	}
	rep.Result.Seed, rep.Result.Created, rep.Result.CreateTime = r.o.Seed, total, rep.Seeded
	if seedCPUBeforeOK && seedCPUAfterOK {
		rep.Result.CreateCPU, rep.Result.CreateCPUMeasured = seedCPUAfter-seedCPUBefore, true
	}
	r.log.Info("done", "result", rep.Result.String(), "load", rep.LoadAfter)
	return rep, nil
}

// poolSize is the size of the run's own pool, and how many goroutines
// seed: one writer for SQLite, several for the servers.
func (r *run) poolSize() int {
	if strings.HasPrefix(r.o.DatabaseURL, "postgres") || strings.HasPrefix(r.o.DatabaseURL, "mysql") {
		return 8
	}
	return 1
}

// readyTimeout bounds how long a node may take to start.
const readyTimeout = time.Minute

// startNodes starts the node processes and waits until all are ready.
func (r *run) startNodes(ctx context.Context) error {
	for i := range r.o.Nodes {
		id := "n" + strconv.Itoa(i+1)
		n := &node{
			id:  id,
			out: filepath.Join(r.dir, id+".fires"),
			log: filepath.Join(r.dir, id+".log"),
		}
		n.follow = firelog.Follow(n.out)
		if r.o.Via == ViaServer {
			var err error
			if n.addr, err = freeAddr(); err != nil {
				return err
			}
			n.url = "http://" + n.addr
		}
		var env []string
		if r.o.Via == ViaServer {
			env = []string{AdminPasswordEnv + "=" + r.adminPassword}
		}
		if err := r.start(n, r.nodeArgs(n), env); err != nil {
			return err
		}
		r.nodes = append(r.nodes, n)
	}
	return waitReady(ctx, r.nodes)
}

// start starts n's process, this program with args and the environment
// plus env, its standard error going to n's log.
func (r *run) start(n *node, args, env []string) error {
	logFile, err := os.Create(n.log)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	cmd := exec.Command(r.o.Executable, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logFile
	n.proc, err = nodeproc.Start(cmd)
	_ = logFile.Close() // the child has its own descriptor
	if err != nil {
		return fmt.Errorf("bench: %s: %w", n.id, err)
	}
	return nil
}

// waitReady waits until every process of nodes is ready, at most
// readyTimeout.
func waitReady(ctx context.Context, nodes []*node) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for _, n := range nodes {
		if err := n.proc.WaitReady(ctx); err != nil {
			return fmt.Errorf("bench: %s not ready: %w\n%s", n.id, err, nodeproc.Tail(n.log, 20))
		}
	}
	return nil
}

// nodeArgs returns the arguments of a node process: cmd/chime-bench's
// hidden subcommand and its flags, which RunNode's and RunServerNode's
// configurations mirror.
func (r *run) nodeArgs(n *node) []string {
	command := NodeCommand
	if r.o.Via == ViaServer {
		command = ServerNodeCommand
	}
	args := []string{
		command,
		"--database-url", r.nodeURL(n.id),
		"--node-id", n.id,
		"--out", n.out,
		"--workers", strconv.Itoa(r.o.Workers),
	}
	if r.o.CheckIn > 0 {
		args = append(args, "--check-in", r.o.CheckIn.String())
	}
	if r.o.DeadAfter > 0 {
		args = append(args, "--dead-after", r.o.DeadAfter.String())
	}
	if r.o.CPUProfile {
		args = append(args, "--cpu-profile", filepath.Join(r.dir, n.id+".pprof"))
	}
	if r.o.Via == ViaServer {
		args = append(args, "--listen", n.addr)
		if r.o.ExecutorLease > 0 {
			args = append(args, "--executor-lease", r.o.ExecutorLease.String())
		}
		return args
	}
	args = append(args, "--table-prefix", r.prefix)
	if r.o.CountSQL {
		args = append(args, "--count-sql")
	}
	return args
}

// nodeURL returns the database URL of a node: on PostgreSQL, with an
// application_name that names the run and the node, so that the nodes'
// sessions can be told apart in pg_stat_activity.
func (r *run) nodeURL(id string) string {
	if !strings.HasPrefix(r.url, "postgres") {
		return r.url
	}
	u, err := url.Parse(r.url)
	if err != nil {
		return r.url
	}
	q := u.Query()
	q.Set("application_name", r.prefix+id)
	u.RawQuery = q.Encode()
	return u.String()
}

// pollInterval is how often the run reads the fire logs.
const pollInterval = 200 * time.Millisecond

// watch reads the nodes' fire logs until every measured firing ran and the
// last fire time passed, or the workload's grace after it did. A failover
// workload kills the busiest node at KillAt on the way, and then also
// waits for the re-runs of its interrupted jobs.
func (r *run) watch(ctx context.Context, t0 time.Time) ([]firelog.Record, *kill, error) {
	w := r.o.Workload
	expected := w.Expected(t0)
	last := w.Last(t0)
	deadline := last.Add(w.Grace)
	seen := make(map[firelog.FireKey]bool, len(expected))
	var (
		records []firelog.Record
		k       *kill
		// nodeKilled is set once a workload with executors killed a
		// node: its recovery is measured on the killed executor.
		nodeKilled bool
	)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		for _, n := range r.all() {
			recs, err := n.follow.Next()
			if err != nil {
				return nil, nil, err
			}
			for _, rec := range recs {
				if key := (firelog.FireKey{Trigger: rec.Trigger, ScheduledMs: rec.Scheduled.UnixMilli()}); rec.IsFire() && expected[key] {
					seen[key] = true
				}
			}
			records = append(records, recs...)
			if !n.killed && exited(n.proc) {
				return nil, nil, fmt.Errorf("bench: node %s exited during the run: %v\n%s", n.id, n.proc.ExitErr(), nodeproc.Tail(n.log, 20))
			}
		}
		now := time.Now()
		switch {
		case w.KillAt > 0 && w.Executors > 0 && !nodeKilled && !now.Before(t0.Add(w.KillAt)):
			nk, err := r.killBusiest(records)
			if err != nil {
				return nil, nil, err
			}
			nodeKilled, r.killedNode = true, nk.node
		case w.KillAt > 0 && w.Executors == 0 && k == nil && !now.Before(t0.Add(w.KillAt)):
			var err error
			if k, err = r.killBusiest(records); err != nil {
				return nil, nil, err
			}
		case w.ExecutorKillAt > 0 && k == nil && !now.Before(t0.Add(w.ExecutorKillAt)):
			var err error
			if k, err = r.killBusiestExecutor(records); err != nil {
				return nil, nil, err
			}
		}
		done := len(seen) == len(expected) && now.After(last) && (w.ExecutorKillAt == 0 || k != nil)
		if done && k != nil {
			res := &Result{}
			res.recovery(records, k)
			done = res.Misses == 0
		}
		if done || now.After(deadline) {
			return records, k, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// killBusiest kills with SIGKILL the node running the most long jobs (then
// the one that fired most).
func (r *run) killBusiest(records []firelog.Record) (*kill, error) {
	running, fired := busy(records)
	busiest := r.nodes[0]
	for _, n := range r.nodes[1:] {
		if running[n.id] > running[busiest.id] || (running[n.id] == running[busiest.id] && fired[n.id] > fired[busiest.id]) {
			busiest = n
		}
	}
	busiest.killed = true
	if err := busiest.proc.Kill(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	k := &kill{node: busiest.id, at: time.Now()}
	r.log.Info("killed the busiest node", "node", k.node, "long_jobs_running", running[k.node])
	return k, nil
}

// stopTimeout bounds a node's graceful stop; the node itself waits up to
// 30 s for running jobs.
const stopTimeout = time.Minute

// stopNodes stops the live nodes with SIGTERM, all at once, and adds the
// statement counts they print to counts.
func (r *run) stopNodes(counts *SQLCounts) error {
	// The executors first, while the nodes take their last results.
	errs := stopAll(r.executors)
	errs = append(errs, stopAll(r.nodes)...)
	for _, n := range r.nodes {
		if err := counts.ParseSQLCounts(strings.NewReader(strings.Join(n.proc.Output(), "\n"))); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// stopAll stops the live processes of nodes with SIGTERM, all at once.
func stopAll(nodes []*node) []error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		if n.killed {
			continue
		}
		wg.Go(func() {
			if err := n.proc.Stop(stopTimeout); err != nil {
				errs[i] = fmt.Errorf("bench: %s: %w\n%s", n.id, err, nodeproc.Tail(n.log, 20))
			}
		})
	}
	wg.Wait()
	return errs
}

// all returns the nodes, then the executors.
func (r *run) all() []*node { return append(slices.Clone(r.nodes), r.executors...) }

// killAll kills the nodes and executors still running, after a failed
// run.
func (r *run) killAll() {
	for _, n := range r.all() {
		if !exited(n.proc) {
			_ = n.proc.Kill()
		}
	}
}

func exited(p *nodeproc.Process) bool {
	select {
	case <-p.Exited():
		return true
	default:
		return false
	}
}

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loadAverage returns the load averages of /proc/loadavg, or "unknown".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
