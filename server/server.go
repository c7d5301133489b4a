package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/jobs/egress"
	"github.com/chime-scheduler/chime/jobs/httpjob"
	"github.com/chime-scheduler/chime/jobs/shelljob"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/auth"
	"github.com/chime-scheduler/chime/server/console"
	"github.com/chime-scheduler/chime/server/dispatch"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/server/httpapi"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/jobversion"
	"github.com/chime-scheduler/chime/server/livelog"
	"github.com/chime-scheduler/chime/server/outbox"
	"github.com/chime-scheduler/chime/server/pool"
	"github.com/chime-scheduler/chime/server/secret"
	"github.com/chime-scheduler/chime/server/shard"
	"github.com/chime-scheduler/chime/server/sso"
	"github.com/chime-scheduler/chime/server/workflow"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Errors of the Server's lifecycle.
var (
	// ErrStarted is returned by RegisterJobType after Run started, and by
	// a second Run.
	ErrStarted = errors.New("server: already started")
	// ErrReservedType is returned by RegisterJobType for "http" and
	// "shell", the built-in types.
	ErrReservedType = errors.New("server: job type name is reserved")
)

// Server is one node of chime server: a scheduler on the database, the
// runner that records and retries every execution, alerts, and the HTTP
// API. Create it with New, register Go job types, then Run it once.
// Its methods are safe for concurrent use; the service methods (ListJobs,
// PutJob, …) are what the HTTP API calls, and work before Run too.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   *sqlstore.Store
	sched   *chime.Scheduler
	history *history.History
	// versions keeps the versions of the jobs; see versions.go.
	versions *jobversion.Versions
	pruner   *history.Pruner
	auth     *auth.Service
	secrets  *secret.Service
	alerts   *alerter
	metrics  *metrics
	state    *stateStore
	// dispatch hands executor jobs' runs to executors.
	dispatch *dispatch.Service
	shards   *shard.Store // sharded firings; see shards.go
	handler  http.Handler
	http     *httpjob.Runner
	egress   *egress.Policy
	shell    *shelljob.Runner
	local    *localRuns
	writes   *writeQueue
	// recorder writes the starts and ends of executions in batches.
	recorder *historyWriter
	deadMan  *alert.DeadManChecker
	// alertState is the alert state the nodes share: dead-man records,
	// failing jobs and claimed alerts.
	alertState *alertState
	version    string // of chime, as buildVersion reads it

	// live holds the log lines of running executions, which liveBuf
	// appends for this node's (see livelogs.go). stopping is closed when
	// the HTTP server shuts down, which ends the long-lived responses (log
	// streams) that Shutdown would wait for.
	live         *livelog.Log
	liveBuf      *livelog.Buffer
	stopping     chan struct{}
	stoppingOnce sync.Once

	mu        sync.Mutex
	goTypes   map[string]chime.Job
	started   bool
	closeOnce sync.Once
	// listBatch and listMaxScan are listScanBatch and maxListScan, which
	// tests lower.
	listBatch, listMaxScan int
	// swept remembers the dead node incarnations (ID and epoch) whose
	// unrecorded firings this node looked for, so that it looks once.
	swept map[lostKey]bool
	// lostSweeps are the looks for unrecorded lost firings that a
	// recovery asked for and watchNodes has not yet made; sweepNow wakes
	// it for them (see queueLostSweep).
	lostSweeps []lostSweep
	sweepNow   chan struct{}
	// pools keeps the concurrency pools and their slots (see pools.go).
	pools *pool.Service

	// workflows keeps the workflows and their instances; see workflows.go.
	workflows *workflow.Store
	// taskStarts gathers the starts of workflow tasks recorded at once
	// into one transaction; see workflowstart.go.
	taskStarts taskStartBatcher
}

type lostKey struct {
	node  string
	epoch int64
}

// New opens the database (migrating its schema), and returns a server
// ready to register job types and run. A server that is never run must be
// closed with Close.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	policy, err := newEgressPolicy(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Alert.Egress == nil {
		cfg.Alert.Egress = policy
	}
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		goTypes:  make(map[string]chime.Job),
		local:    newLocalRuns(),
		writes:   newWriteQueue(),
		http:     &httpjob.Runner{Egress: policy},
		egress:   policy,
		shell:    &shelljob.Runner{},
		swept:    make(map[lostKey]bool),
		sweepNow: make(chan struct{}, 1),

		stopping: make(chan struct{}),

		listBatch:   listScanBatch,
		listMaxScan: maxListScan,
	}
	if cfg.EnableShellJobs {
		// withDefaults checked the list.
		if s.shell.Allow, err = shelljob.NewAllowList(cfg.ShellAllow); err != nil {
			return nil, fmt.Errorf("%w: ShellAllow: %w", ErrInvalidConfig, err)
		}
	}
	st, err := sqlstore.Open(ctx, cfg.DatabaseURL, &sqlstore.Options{Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("server: opening the database: %w", err)
	}
	s.store = st
	if err := s.init(ctx); err != nil {
		_ = st.Close()
		return nil, err
	}
	return s, nil
}

// init builds everything on top of the open store, in the order each
// part needs the others: the server's own tables, the scheduler, the
// secrets and alerts, then the HTTP handler.
func (s *Server) init(ctx context.Context) error {
	if err := s.initTables(ctx); err != nil {
		return err
	}
	if err := s.initScheduler(ctx); err != nil {
		return err
	}
	if err := s.initAlerts(ctx); err != nil {
		return err
	}
	return s.initHandler(ctx)
}

// initTables opens the server's own tables: the history, the job
// versions, live logs, state, executors, pools, workflows and shards.
func (s *Server) initTables(ctx context.Context) error {
	cfg := s.cfg
	h, err := history.New(ctx, s.store, &history.Options{MaxOutputBytes: cfg.MaxOutputBytes, Logger: cfg.Logger})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.history = h
	if s.versions, err = jobversion.New(ctx, s.store, &jobversion.Options{Keep: cfg.JobVersions}); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if s.live, err = livelog.New(ctx, s.store, &livelog.Options{MaxLines: maxLogLines}); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.liveBuf = livelog.NewBuffer(s.live, &livelog.BufferOptions{Logger: cfg.Logger})
	s.version = buildVersion()
	s.pruner, err = history.NewPruner(h, &history.PrunerOptions{
		MaxAge:     cfg.Retention.MaxAge,
		KeepPerJob: cfg.Retention.PerJob,
		MaxPerJob:  cfg.Retention.MaxPerJob, // NoRetentionCap is the pruner's -1 too
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if s.state, err = newStateStore(ctx, s.store); err != nil {
		return err
	}
	s.dispatch, err = dispatch.New(ctx, s.store, &dispatch.Options{
		Lease: cfg.ExecutorLease, Logger: cfg.Logger,
		// The scheduler's estimate of the database's clock, which costs
		// no round trip; s.sched is made below, before any hand-over.
		Clock: func() time.Time { return s.sched.StoreTime() },
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	// A dead node's slots are freed when it is found dead (markNodeLost);
	// their lease is the backstop, twice as long.
	s.pools, err = pool.New(ctx, s.store, &pool.Options{Lease: max(2*cfg.DeadAfter, 5*time.Second), Logger: cfg.Logger})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if s.workflows, err = workflow.New(ctx, s.store); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if s.shards, err = shard.New(ctx, s.store); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// initScheduler creates the scheduler on the store, with the server's
// job types and listeners, and the history writer of its runs.
func (s *Server) initScheduler(ctx context.Context) error {
	cfg := s.cfg
	s.alertState = newAlertState(s.state)
	s.deadMan = alert.NewDeadManChecker(s.history, s.alertState)
	s.metrics = newMetrics(!cfg.DisableJobMetrics)
	// A node without shell jobs still registers the type, so that it can
	// store and show such jobs, but never claims their firings: the nodes
	// of the cluster that run them do.
	var exclude []string
	if !cfg.EnableShellJobs {
		exclude = []string{typeShell}
	}
	schedCfg := chime.Config{
		ExcludeJobTypes:  exclude,
		Store:            s.store,
		Metrics:          s.metrics,
		NodeID:           cfg.NodeID,
		Workers:          cfg.Workers,
		MisfireThreshold: cfg.MisfireThreshold,
		CheckInInterval:  cfg.CheckInInterval,
		DeadAfter:        cfg.DeadAfter,
		MaxJobDataBytes:  cfg.MaxJobDataBytes,
		Logger:           cfg.Logger,
	}
	if cfg.configureScheduler != nil {
		cfg.configureScheduler(&schedCfg)
	}
	sched, err := chime.New(schedCfg)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.sched = sched
	s.log = cfg.Logger.With("node_id", sched.NodeID())
	s.recorder = newHistoryWriter(s.history, s.log, s.writes, s.metrics.historyWritten)
	s.metrics.watchScheduler(sched)
	if err := s.migrateLegacyForms(ctx, chime.MaxJobPageLimit); err != nil {
		return err
	}
	for _, typ := range []string{typeHTTP, typeShell, typeExecutor} {
		if err := sched.Register(typ, &runner{s: s, typ: typ}); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	// The job type that starts workflow instances; see workflows.go.
	if err := sched.Register(typeWorkflow, &runner{s: s, typ: typeWorkflow}); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.goTypes[typeWorkflow] = workflowStarter{s: s}
	sched.AddTriggerListener(chime.TriggerListener{Name: "chime-server", Misfired: s.misfired, VetoExecution: s.vetoPaused})
	sched.AddSchedulerListener("chime-server", s.schedulerEvent)
	return nil
}

// initAlerts opens the secrets, which webhooks read, and the alerter with
// its outbox.
func (s *Server) initAlerts(ctx context.Context) error {
	cfg := s.cfg
	var err error
	if s.secrets, err = s.newSecrets(ctx); err != nil {
		return err
	}
	alertCfg := cfg.Alert
	alertCfg.Expand = s.expandWebhook
	if s.alerts, err = newAlerter(alertCfg, s.state, cfg.Logger); err != nil {
		return err
	}
	box, err := outbox.New(ctx, s.store)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.alerts.useOutbox(newAlertOutbox(box, s.writes, s.NodeID(), cfg.AlertLease, alertCfg, s.log))
	s.metrics.watchAlerts(s.alerts)
	return nil
}

// initHandler builds the HTTP handler: the API, with authentication and
// single sign-on, and the console.
func (s *Server) initHandler(ctx context.Context) error {
	cfg := s.cfg
	authOpts := cfg.Auth
	authOpts.Audit, authOpts.Logger = auditRecorder{s.history}, cfg.Logger
	authSvc, err := auth.New(ctx, s.store, &authOpts)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.auth = authSvc
	apiOpts := &httpapi.Options{
		Logger:       cfg.Logger,
		MaxBodyBytes: cfg.MaxBodyBytes,
		Metrics:      s.metrics.handler(),
		Stopping:     s.stopping,
	}
	var ssoProvider *sso.Provider
	if cfg.SSO != nil {
		ssoCfg := *cfg.SSO
		ssoCfg.Logger = cfg.Logger
		if ssoProvider, err = sso.New(ssoCfg, authSvc); err != nil {
			return fmt.Errorf("%w: SSO: %w", ErrInvalidConfig, err)
		}
		if err := ssoProvider.EnableCLI(ctx, s.store); err != nil {
			return fmt.Errorf("server: %w", err)
		}
		apiOpts.SSO = ssoProvider.Info()
		s.log.Info("single sign-on is on", "sso", ssoCfg)
	}
	apiHandler := httpapi.New(s, authSvc, apiOpts)
	// The console answers "/" and its assets; the API's paths are more
	// specific, so they go to the API.
	mux := http.NewServeMux()
	for _, p := range []string{"/api/", "/healthz", "/readyz", "/metrics"} {
		mux.Handle(p, apiHandler)
	}
	if ssoProvider != nil {
		mux.Handle("/auth/oidc/", ssoProvider)
	}
	mux.Handle("/", console.Handler())
	s.handler = mux
	return nil
}

// newSecrets opens the secrets on the server's database, with its key.
func (s *Server) newSecrets(ctx context.Context) (*secret.Service, error) {
	opts := &secret.Options{Audit: auditRecorder{s.history}, Logger: s.cfg.Logger}
	if s.cfg.SecretKey != "" {
		key, err := secret.ParseKey(s.cfg.SecretKey)
		if err != nil {
			return nil, fmt.Errorf("%w: SecretKey: %w", ErrInvalidConfig, err)
		}
		opts.Key = key
		s.log.Info("secrets are encrypted with the configured key", "key_id", key.ID())
	} else {
		s.log.Info("no secret key is configured: secrets cannot be set or read")
	}
	svc, err := secret.New(ctx, s.store, opts)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return svc, nil
}

// RegisterJobType makes a Go job type available to the server's jobs under
// name, for teams that embed the server in their own binary. Jobs of the
// type get their data map (without the server's settings), their
// parameters merged over it, the execution's ID in the history as
// JobContext.ExecutionID, and a JobContext.Logger whose records are kept
// with the execution and carry that ID; the server records, times out, retries and
// alerts on them as on its built-in types. It must be called before Run.
func (s *Server) RegisterJobType(name string, job chime.Job) error {
	if name == typeHTTP || name == typeShell || name == typeExecutor {
		return fmt.Errorf("%w: %q is built in", ErrReservedType, name)
	}
	if err := checkName("name", name); err != nil {
		return fmt.Errorf("server: job type %q: %s", name, err.Message)
	}
	if job == nil {
		return errors.New("server: RegisterJobType: nil job")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrStarted
	}
	if err := s.sched.Register(name, &runner{s: s, typ: name}); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.goTypes[name] = job
	return nil
}

// isGoType reports whether name is a registered Go job type.
func (s *Server) isGoType(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.goTypes[name]
	return ok
}

// goType returns a registered Go job type.
func (s *Server) goType(name string) chime.Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.goTypes[name]
}

// Handler returns the HTTP API (every route of docs/api.md, /healthz,
// /readyz and /metrics) and the web console at "/". Run serves it on
// Config.Listen; an embedding program may serve it itself.
func (s *Server) Handler() http.Handler { return s.handler }

// NodeID returns this node's ID in the cluster.
func (s *Server) NodeID() string { return s.sched.NodeID() }

// Config returns the configuration the server runs with: the one New was
// given, with every default applied and NodeID set. It holds
// AdminPassword, SecretKey and the SMTP password: mask them before
// showing it.
func (s *Server) Config() Config {
	cfg := s.cfg
	cfg.NodeID = s.NodeID()
	return cfg
}

// BootstrapAdmin creates the first admin user, named "admin", when the
// database has no user at all. Its password is Config.AdminPassword when
// set; otherwise it is random, and BootstrapAdmin returns it: it is shown
// nowhere else, so the caller shows it once. The password returned is
// empty when Config.AdminPassword set it, and when users exist, in which
// case BootstrapAdmin does nothing and returns created false. Several
// nodes starting at once may all call it; one creates the admin.
func (s *Server) BootstrapAdmin(ctx context.Context) (password string, created bool, err error) {
	if s.cfg.AdminPassword != "" {
		created, err := s.auth.BootstrapWithPassword(ctx, s.cfg.AdminPassword)
		return "", created, err
	}
	return s.auth.Bootstrap(ctx)
}

// Run listens on Config.Listen and serves there as Serve does.
func (s *Server) Run(ctx context.Context) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.Close()
	ln, err := Listen(s.cfg.Listen)
	if err != nil {
		return err
	}
	return s.serve(ctx, ln)
}

// ErrListen is wrapped by the error of Listen and Run when the address
// cannot be listened on: taken, not this host's, or not allowed.
var ErrListen = errors.New("server: cannot listen")

// Listen listens on the TCP address addr (such as ":8080"), with an error
// wrapping ErrListen and naming the address when it cannot. A program can
// call it before New, so that a port already taken stops it before the
// database is touched, and pass the listener to Serve.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w on %s: %w", ErrListen, addr, err)
	}
	return ln, nil
}

// Serve starts the node and serves the HTTP API on ln until ctx ends: it
// joins the cluster and starts firing, and runs the alert outbox, the
// history pruner, the node-loss watch, the overlap canceller, the
// dead-man checks and the live log buffer. Its shutdown ends the log
// streams being served. When ctx ends it stops them gracefully, in this
// order:
//
//  1. the HTTP server, so no new request starts;
//  2. the scheduler: no new firing, running jobs get Config.ShutdownTimeout
//     to finish (their outcomes, retries and alerts are recorded), then are
//     cancelled, and the node leaves the cluster; the records of the runs
//     that the database has not taken yet (it is down) get another
//     Config.ShutdownTimeout, after which they are logged and abandoned;
//     then the history writer stops;
//  3. the background loops (pruner, node watch, canceller, dead-man,
//     live log pruner), then the live log buffer, which appends the lines
//     still pending;
//  4. the alert outbox's delivery loop, then what is due in the outbox is
//     sent until nothing is or Config.ShutdownTimeout passes (the rest
//     waits there for another node or this one's next run);
//  5. the database.
//
// Serve closes ln. It returns nil after a graceful stop, or the error that
// stopped it. A Server runs once: a second Run or Serve returns
// ErrStarted.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.begin(); err != nil {
		_ = ln.Close()
		return err
	}
	defer s.Close()
	return s.serve(ctx, ln)
}

// begin marks the server started, or returns ErrStarted if it was.
func (s *Server) begin() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrStarted
	}
	s.started = true
	return nil
}

// serve is Serve once the server is marked started.
func (s *Server) serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// Shutdown waits for active requests; a log stream ends when told.
	srv.RegisterOnShutdown(s.stopStreams)
	// A previous incarnation of this node ID left its running executions
	// behind: they are lost.
	s.markNodeLost(ctx, s.NodeID(), s.now())
	if err := s.alerts.start(ctx); err != nil {
		_ = ln.Close()
		return err
	}
	s.recorder.run()
	if err := s.sched.Start(ctx); err != nil {
		_ = ln.Close()
		s.recorder.stop()
		s.alerts.stop(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
		return fmt.Errorf("server: %w", err)
	}
	// Registering again recorded the executions that incarnation had
	// fired as lost; those it had not recorded get their history.
	if err := s.recordLostFirings(ctx, s.NodeID(), true); err != nil {
		s.log.Warn("cannot look for the firings this node's previous run did not record", "error", err)
	}
	if err := s.pruner.Start(); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.liveBuf.Start()
	loopCtx, stopLoops := context.WithCancel(context.WithoutCancel(ctx))
	var loops sync.WaitGroup
	watchRuns := func(ctx context.Context) { s.dispatch.Watch(ctx, s.NodeID()) }
	servePools := func(ctx context.Context) { s.pools.Run(ctx, s.NodeID()) }
	for _, loop := range []func(context.Context){s.watchNodes, s.watchCancels, s.checkDeadMen, s.pruneLiveLogs, watchRuns, servePools, s.sweepWorkflows, s.watchShards} {
		loops.Go(func() { loop(loopCtx) })
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	s.log.Info("chime server started", "listen", ln.Addr().String(), "workers", s.cfg.Workers,
		"shell_jobs", s.cfg.EnableShellJobs)
	if s.shell.Allow.AllowsAny() {
		s.log.Warn("shell jobs may run any program on this host (shell_allow is \"*\"); list the programs they need instead")
	}

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("server: serving HTTP: %w", err)
	}
	s.log.Info("chime server stopping")
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	if err := srv.Shutdown(stopCtx); err != nil {
		errs = append(errs, fmt.Errorf("server: stopping HTTP: %w", err))
	}
	if err := s.sched.Stop(stopCtx); err != nil {
		errs = append(errs, fmt.Errorf("server: stopping the scheduler: %w", err))
	}
	if !s.writes.drain(s.cfg.ShutdownTimeout) {
		errs = append(errs, errors.New("server: stopped before the database took every record of the executions that ran; see the log"))
	}
	s.recorder.stop()
	stopLoops()
	loops.Wait()
	if err := s.liveBuf.Stop(context.WithoutCancel(ctx)); err != nil {
		errs = append(errs, fmt.Errorf("server: appending the last live log lines: %w", err))
	}
	if err := s.pruner.Stop(context.WithoutCancel(ctx)); err != nil {
		errs = append(errs, err)
	}
	s.alerts.stop(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	s.log.Info("chime server stopped")
	return errors.Join(append([]error{runErr}, errs...)...)
}

// stopStreams ends the log streams the API serves.
func (s *Server) stopStreams() {
	s.stoppingOnce.Do(func() { close(s.stopping) })
}

// Close releases the database. Run closes it when it returns; Close is
// for a Server that is never run, and may be called more than once.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.writes.abandon()
		s.recorder.stop()
		err = s.store.Close()
	})
	return err
}

// Ready reports whether the node can do its work: the scheduler runs, the
// database answers, and the node holds a live lease. /readyz calls it.
func (s *Server) Ready(ctx context.Context) error {
	if !s.sched.IsStarted() {
		return httpjson.Errorf(api.CodeUnavailable, "", "the scheduler is not running")
	}
	view, err := s.sched.Cluster(ctx)
	if err != nil {
		return httpjson.Errorf(api.CodeUnavailable, "", "the database does not answer")
	}
	if n, ok := view.Node(s.NodeID()); ok && n.Alive {
		return nil
	}
	return httpjson.Errorf(api.CodeUnavailable, "", "this node holds no live lease")
}

// now returns the database's time as this node estimates it.
func (s *Server) now() time.Time { return s.sched.StoreTime().UTC() }

// newID returns a new execution ID for a run the server asks for (a
// retry, a run by hand, a backfilled fire time, a recovery), in the
// scheduler's format for the executions it fires (chime.NewExecutionID:
// 32 lower-case hex digits, the time first). The history serves the IDs
// of other formats that older versions stored as they are.
func newID() string { return chime.NewExecutionID() }

// derivedID returns an ID in newID's format named by parts: the same parts
// give the same ID on every node. The server names so what follows one
// execution's end (its retry, its decisions, its alert), so that a node
// that does it again, for a node that died in the middle, finds what the
// dead node did get to do already there instead of doing it twice.
func derivedID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
