package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// Config configures an Executor.
type Config struct {
	// Server is the chime server's URL, such as "http://chime:8080".
	// Required.
	Server string
	// Token is an API token of role executor that serves Group
	// (`chime tokens create --role executor --group billing`). Required.
	Token string
	// Group is the executor group the executor serves. Required.
	Group string
	// Instance names this process for people. Defaults to the host name
	// and the process ID.
	Instance string
	// Version is the service's version, shown to people. Defaults to
	// none.
	Version string
	// Labels are what jobs can require of this executor, such as
	// {"region": "eu"}. Defaults to none.
	Labels map[string]string
	// Concurrency bounds the runs the executor runs at once. Defaults
	// to 10.
	Concurrency int
	// PollWait is how long each poll may wait on the server for work, at
	// most 30s. Defaults to 20s.
	PollWait time.Duration
	// ShutdownTimeout bounds how long Run lets running handlers finish
	// once its context ends, before it cancels them. Defaults to 30s.
	ShutdownTimeout time.Duration
	// MaxOutputBytes bounds what a run's Output keeps. Defaults to 64 KiB.
	MaxOutputBytes int
	// LogInterval is how often a run's new log lines are sent to the
	// server while it runs, for its live log. Defaults to 400ms.
	LogInterval time.Duration
	// HTTPClient sends the requests; its timeout must exceed PollWait.
	// Defaults to a client with a timeout of PollWait + 15s that keeps
	// an idle connection for each request the executor may send at once.
	HTTPClient *http.Client
	// Logger receives the executor's own logs and, with the run's keys,
	// every handler's log lines. Defaults to slog.Default().
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultConcurrency     = 10
	DefaultPollWait        = 20 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
	DefaultMaxOutputBytes  = 64 << 10
	DefaultLogInterval     = 400 * time.Millisecond
	maxPollWait            = 30 * time.Second
)

// ErrLeaseLost is the context cause of the runs of an executor that lost
// its lease: the server no longer counts on their results.
var ErrLeaseLost = errors.New("executor: the lease on the run was lost")

// ErrKilled is the context cause of a run the server asked to stop: it
// was killed, or its job's timeout passed.
var ErrKilled = errors.New("executor: the server asked to stop the run (killed or timed out)")

// ErrStopped is the context cause of the runs still running when Run's
// shutdown grace ended.
var ErrStopped = errors.New("executor: stopped")

// HandlerFunc runs one run. Its error fails the run; nil succeeds it.
type HandlerFunc func(ctx context.Context, r *Run) error

// Executor runs the handlers of one executor process. Create it with
// New, register handlers with Handle, then call Run once.
type Executor struct {
	cfg    Config
	client *apiclient.Client
	log    *slog.Logger

	mu       sync.Mutex
	handlers map[string]HandlerFunc
	started  bool
	id       string
	// running are the runs in progress, by run ID.
	running map[string]*active
	// freed has room for one signal: a run ended, so that a poll for
	// cancel requests only, sent while every slot was taken, gives way
	// to one that takes runs.
	freed chan struct{}
	// pending are the results of ended runs waiting for a poll to send
	// them (see deliverQueued).
	pending []*pendingResult
}

// active is a run in progress.
type active struct {
	ref    api.ExecutorRunRef
	cancel context.CancelCauseFunc
}

// New checks cfg and returns an Executor.
func New(cfg Config) (*Executor, error) {
	switch {
	case cfg.Server == "":
		return nil, errors.New("executor: Config.Server is required")
	case cfg.Token == "":
		return nil, errors.New("executor: Config.Token is required")
	case cfg.Group == "":
		return nil, errors.New("executor: Config.Group is required")
	case cfg.Concurrency < 0:
		return nil, fmt.Errorf("executor: Config.Concurrency %d is negative", cfg.Concurrency)
	case cfg.PollWait < 0 || cfg.PollWait > maxPollWait:
		return nil, fmt.Errorf("executor: Config.PollWait %s: want 0 to %s", cfg.PollWait, maxPollWait)
	case cfg.ShutdownTimeout < 0:
		return nil, fmt.Errorf("executor: Config.ShutdownTimeout %s is negative", cfg.ShutdownTimeout)
	case cfg.MaxOutputBytes < 0:
		return nil, fmt.Errorf("executor: Config.MaxOutputBytes %d is negative", cfg.MaxOutputBytes)
	case cfg.LogInterval < 0:
		return nil, fmt.Errorf("executor: Config.LogInterval %s is negative", cfg.LogInterval)
	}
	if cfg.Instance == "" {
		host, _ := os.Hostname()
		cfg.Instance = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.PollWait == 0 {
		cfg.PollWait = DefaultPollWait
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.MaxOutputBytes == 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if cfg.LogInterval == 0 {
		cfg.LogInterval = DefaultLogInterval
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: cfg.PollWait + 15*time.Second, Transport: transport(cfg.Concurrency)}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Labels = maps.Clone(cfg.Labels)
	client, err := apiclient.New(cfg.Server, &apiclient.Options{Token: cfg.Token, HTTPClient: cfg.HTTPClient, UserAgent: "chime-executor"})
	if err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	return &Executor{
		cfg: cfg, client: client, log: cfg.Logger.With("group", cfg.Group, "instance", cfg.Instance),
		handlers: make(map[string]HandlerFunc), running: make(map[string]*active),
		freed: make(chan struct{}, 1),
	}, nil
}

// transport returns the default HTTP transport, keeping up to as many
// idle connections to the server as the executor sends requests at once:
// one result per run it runs, its poll, its heartbeat and the log lines
// of its runs. http.DefaultTransport keeps 2, so a busy executor would
// close and open a connection for most of its results. A program that
// replaced http.DefaultTransport with another kind of RoundTripper gets
// its own (nil: the client uses it).
func transport(concurrency int) http.RoundTripper {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil
	}
	t := base.Clone()
	t.MaxIdleConnsPerHost = 2*concurrency + 2
	return t
}

// Handle registers the handler of the runs of handler name, the name a
// job's "executor.handler" gives. It panics if name is empty, h is nil,
// name has a handler already, or Run started: all programming errors.
func (e *Executor) Handle(name string, h HandlerFunc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case name == "" || h == nil:
		panic("executor: Handle needs a name and a handler")
	case e.handlers[name] != nil:
		panic("executor: a handler is already registered under " + name)
	case e.started:
		panic("executor: Handle after Run")
	}
	e.handlers[name] = h
}

// ID returns the executor's ID on the server, empty before it registered.
// It changes when the executor registers again after losing its lease.
func (e *Executor) ID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.id
}

// Run registers the executor and runs what the server hands it until ctx
// ends. Then it stops gracefully: it takes no new run, lets the running
// handlers finish for Config.ShutdownTimeout while its heartbeats keep
// their lease, cancels those still running (cause ErrStopped), reports
// every result, and returns nil. It returns an error at once when the
// server refuses the registration (a bad token, a group the token does
// not serve, a handler name it refuses). An executor runs once.
func (e *Executor) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return errors.New("executor: Run called twice")
	}
	e.started = true
	handlers := make([]string, 0, len(e.handlers))
	for name := range e.handlers {
		handlers = append(handlers, name)
	}
	e.mu.Unlock()
	if len(handlers) == 0 {
		return errors.New("executor: no handler registered; call Handle before Run")
	}
	sort.Strings(handlers)

	// runs owns the handlers' goroutines, which outlive a session that
	// lost its lease only by the time their cancellation takes.
	var runs sync.WaitGroup
	defer runs.Wait()
	for ctx.Err() == nil {
		reg, err := e.register(ctx, handlers)
		if err != nil {
			return err
		}
		if reg == nil {
			break // ctx ended
		}
		if lost := e.session(ctx, reg, &runs); !lost {
			break
		}
		e.log.Warn("the executor lost its lease; its runs were cancelled; registering again")
	}
	return nil
}

// register registers the executor, retrying while the server cannot be
// reached. It returns nil, nil when ctx ends first, and an error when the
// server refuses the registration.
func (e *Executor) register(ctx context.Context, handlers []string) (*api.ExecutorRegistration, error) {
	req := api.ExecutorRegister{Group: e.cfg.Group, Instance: e.cfg.Instance, Version: e.cfg.Version, Labels: e.cfg.Labels, Handlers: handlers}
	backoff := 500 * time.Millisecond
	for {
		reg, err := e.client.RegisterExecutor(ctx, req)
		if err == nil {
			e.mu.Lock()
			e.id = reg.ID
			e.mu.Unlock()
			e.log.Info("executor registered", "executor_id", reg.ID, "lease", reg.Lease, "handlers", handlers)
			return reg, nil
		}
		var apiErr *api.Error
		if errors.As(err, &apiErr) && apiErr.Code != api.CodeUnavailable && apiErr.Code != api.CodeInternal {
			return nil, fmt.Errorf("executor: registering: %w", err)
		}
		e.log.Warn("cannot register; trying again", "error", err, "in", backoff)
		if !sleep(ctx, backoff) {
			return nil, nil
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// sleep waits d, reporting false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// session serves one registration until ctx ends (it returns false after
// the graceful stop) or the lease is lost (it returns true once the runs
// are cancelled).
func (e *Executor) session(ctx context.Context, reg *api.ExecutorRegistration, runs *sync.WaitGroup) (lost bool) {
	lease, err := time.ParseDuration(reg.Lease)
	if err != nil || lease <= 0 {
		lease = 15 * time.Second
	}
	interval, err := time.ParseDuration(reg.HeartbeatInterval)
	if err != nil || interval <= 0 {
		interval = lease / 3
	}
	// beatCtx ends the heartbeats: when the lease is lost, or after the
	// graceful stop. pollCtx ends the polls: when ctx ends, or the lease
	// is lost.
	beatCtx, stopBeats := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBeats()
	pollCtx, stopPolls := context.WithCancel(ctx)
	defer stopPolls()
	leaseLost := make(chan struct{})
	var loops sync.WaitGroup
	loops.Go(func() {
		if e.heartbeats(beatCtx, reg.ID, lease, interval) {
			e.cancelAll(ErrLeaseLost)
			close(leaseLost)
			stopPolls()
		}
	})
	// sessionRuns counts this session's runs; the poll loop adds to it,
	// so it is waited for only once the loop ended.
	sessionRuns := &sync.WaitGroup{}
	pollDone := make(chan struct{})
	loops.Go(func() {
		defer close(pollDone)
		e.poll(pollCtx, reg.ID, runs, sessionRuns)
	})

	select {
	case <-leaseLost:
		loops.Wait()
		return true
	case <-ctx.Done():
	}
	// The graceful stop: the polls end, the handlers get their grace
	// while the heartbeats hold their lease, then are cancelled.
	stopPolls()
	<-pollDone
	done := make(chan struct{})
	go func() { sessionRuns.Wait(); close(done) }()
	t := time.NewTimer(e.cfg.ShutdownTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-leaseLost:
	case <-t.C:
		e.log.Warn("cancelling the runs still running after the shutdown grace", "grace", e.cfg.ShutdownTimeout)
		e.cancelAll(ErrStopped)
		<-done
	}
	stopBeats()
	loops.Wait()
	return false
}

// heartbeats sends a heartbeat every interval until ctx ends, cancelling
// the runs the server names. It returns true when the lease is lost: the
// server refused a heartbeat, or none got through for a lease.
func (e *Executor) heartbeats(ctx context.Context, id string, lease, interval time.Duration) bool {
	lastOK := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		reply, err := e.client.ExecutorHeartbeat(ctx, id, api.ExecutorHeartbeat{Running: e.runningRefs()})
		switch {
		case err == nil:
			lastOK = time.Now()
			e.cancelRefs(reply.Cancel)
			continue
		case apiclient.IsCode(err, api.CodeConflict), apiclient.IsCode(err, api.CodeNotFound):
			e.log.Warn("the server refused the heartbeat: the lease lapsed", "executor_id", id, "error", err)
			return true
		case ctx.Err() != nil:
			return false
		}
		e.log.Warn("heartbeat failed", "executor_id", id, "error", err)
		if time.Since(lastOK) >= lease {
			e.log.Warn("no heartbeat got through for a lease: the runs may be someone else's now", "executor_id", id, "lease", lease)
			return true
		}
	}
}

// poll takes work until ctx ends, starting each run in a goroutine that
// runs and sessionRuns count.
func (e *Executor) poll(ctx context.Context, id string, runs, sessionRuns *sync.WaitGroup) {
	backoff := 200 * time.Millisecond
	var last *batchEnd // the runs the last poll gave
	for ctx.Err() == nil {
		if last != nil && !e.lingerFor(ctx, last) {
			return
		}
		last = nil
		// A run that ends from here on signals freed anew.
		select {
		case <-e.freed:
		default:
		}
		free := e.cfg.Concurrency - e.runningCount()
		req := api.ExecutorPoll{Wait: e.cfg.PollWait.String(), Max: max(min(free, 100), 1), NoRuns: free <= 0}
		var results []*pendingResult
		if !req.NoRuns {
			// A poll for cancel requests only is given up when a run
			// ends, so it carries no result.
			results = e.takeResults(id)
			req.Results = pollResults(results)
		}
		work, err := e.pollWithResults(ctx, id, req, results)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errSlotFreed) {
				continue
			}
			e.log.Warn("poll failed", "executor_id", id, "error", err)
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 200 * time.Millisecond
		e.cancelRefs(work.Cancel)
		var batch *batchEnd
		if len(work.Runs) > 0 {
			batch = newBatchEnd(len(work.Runs))
			last = batch
		}
		for _, r := range work.Runs {
			runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
			e.mu.Lock()
			e.running[r.ID] = &active{ref: api.ExecutorRunRef{ID: r.ID, Token: r.Token}, cancel: cancel}
			e.mu.Unlock()
			runs.Add(1)
			sessionRuns.Add(1)
			go func() {
				defer runs.Done()
				defer sessionRuns.Done()
				defer cancel(nil)
				e.execute(runCtx, id, r, batch)
			}()
		}
	}
}

// lingerFor waits up to pollLinger for the runs of batch to end, so that
// the next poll carries their results. It reports false when ctx ended.
func (e *Executor) lingerFor(ctx context.Context, batch *batchEnd) bool {
	t := time.NewTimer(pollLinger)
	defer t.Stop()
	select {
	case <-batch.done:
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	return true
}

// pollWithResults sends req, which carries the results of taken, and
// tells their runs whether the server answered. Such a poll waits at most
// resultsPollWait on the server, and the graceful stop lets it end rather
// than cancel it: the runs that sent their results with it wait for its
// answer, and a cancelled poll's results would be sent again alone, and
// refused when it had recorded them. Runs it takes during the stop are
// run.
func (e *Executor) pollWithResults(ctx context.Context, id string, req api.ExecutorPoll, taken []*pendingResult) (*api.ExecutorWork, error) {
	if len(taken) == 0 {
		return e.pollOnce(ctx, id, req)
	}
	wait := min(e.cfg.PollWait, resultsPollWait)
	req.Wait = wait.String()
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait+15*time.Second)
	defer cancel()
	work, err := e.client.PollExecutor(callCtx, id, req)
	e.resultsAnswered(taken, work)
	return work, err
}

// errSlotFreed ends a poll for cancel requests only when a run ended.
var errSlotFreed = errors.New("executor: a run ended")

// pollOnce sends one poll. A poll for cancel requests only (every slot
// taken) is given up as soon as a run ends, so that the next poll takes
// runs at once rather than after the server's wait.
func (e *Executor) pollOnce(ctx context.Context, id string, req api.ExecutorPoll) (*api.ExecutorWork, error) {
	if !req.NoRuns {
		return e.client.PollExecutor(ctx, id, req)
	}
	pollCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-e.freed:
			cancel(errSlotFreed)
		case <-pollCtx.Done():
		}
	}()
	work, err := e.client.PollExecutor(pollCtx, id, req)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(pollCtx), errSlotFreed) {
		return nil, errSlotFreed
	}
	return work, err
}

func (e *Executor) runningRefs() []api.ExecutorRunRef {
	e.mu.Lock()
	defer e.mu.Unlock()
	refs := make([]api.ExecutorRunRef, 0, len(e.running))
	for _, a := range e.running {
		refs = append(refs, a.ref)
	}
	return refs
}

func (e *Executor) runningCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.running)
}

// cancelRefs cancels the runs the server names, under their tokens.
func (e *Executor) cancelRefs(refs []api.ExecutorRunRef) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ref := range refs {
		if a, ok := e.running[ref.ID]; ok && a.ref.Token == ref.Token {
			e.log.Info("the server asked to stop a run", "run_id", ref.ID)
			a.cancel(ErrKilled)
		}
	}
}

// cancelAll cancels every run in progress with cause.
func (e *Executor) cancelAll(cause error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, a := range e.running {
		a.cancel(cause)
	}
}

// execute runs one run of batch with its handler and reports its
// result. The run's slot is free once the handler returned: its result
// may then wait for the next poll.
func (e *Executor) execute(ctx context.Context, executorID string, r api.ExecutorRun, batch *batchEnd) {
	ended := sync.OnceFunc(func() {
		e.mu.Lock()
		delete(e.running, r.ID)
		e.mu.Unlock()
		select {
		case e.freed <- struct{}{}:
		default:
		}
		batch.end()
	})
	defer ended()
	logs := newLineRecorder(e.log.Handler(), maxLogLines)
	out := &boundedBuffer{max: e.cfg.MaxOutputBytes}
	run := &Run{
		ID: r.ID, ExecutionID: r.ExecutionID, Handler: r.Handler,
		JobKey: JobKey{Group: r.JobGroup, Name: r.JobName}, ScheduledTime: r.ScheduledTime,
		Attempt: r.Attempt, Params: r.Params, Recovering: r.Recovering,
		ShardIndex: r.ShardIndex, ShardTotal: r.ShardTotal,
		Logger: slog.New(logs).With("run_id", r.ID, "execution_id", r.ExecutionID, "job_key", r.JobGroup+"."+r.JobName),
		Output: out,
	}
	if run.Params == nil {
		run.Params = map[string]any{}
	}
	e.mu.Lock()
	h := e.handlers[r.Handler]
	e.mu.Unlock()
	var err error
	if h == nil {
		err = fmt.Errorf("executor %s registered no handler %q", e.cfg.Instance, r.Handler)
	} else {
		stopLogs := make(chan struct{})
		var sender sync.WaitGroup
		sender.Go(func() { e.sendLogs(stopLogs, executorID, r, logs) })
		err = runHandler(ctx, h, run)
		close(stopLogs)
		sender.Wait()
	}
	res := api.ExecutorResult{Token: r.Token, Outcome: "succeeded", Output: out.String(), Logs: logs.lines()}
	if err != nil {
		res.Outcome, res.Error = "failed", err.Error()
		if cause := context.Cause(ctx); ctx.Err() != nil {
			res.Outcome = "cancelled"
			if !errors.Is(err, cause) { // a handler that returns the cause says it once
				res.Error = fmt.Sprintf("%v: %v", cause, err)
			}
		}
	}
	p, queued := e.queueResult(executorID, r.ID, res)
	ended()
	if !queued {
		e.report(executorID, r.ID, res)
		return
	}
	e.deliverQueued(p)
}

// sendLogs sends the run's new log lines every LogInterval until stop
// closes; the result carries them all, so the last ones are left to it.
// A refusal (the run is no longer leased under its token) ends the
// sending; a failure is retried with the next batch.
func (e *Executor) sendLogs(stop <-chan struct{}, executorID string, r api.ExecutorRun, logs *lineRecorder) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(e.cfg.LogInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lines := logs.unsent()
		if len(lines) == 0 {
			continue
		}
		lines = lines[:min(len(lines), maxLogLines)]
		err := e.client.AppendExecutorLogs(ctx, executorID, r.ID, api.ExecutorLogs{Token: r.Token, Lines: lines})
		switch {
		case err == nil:
			logs.markSent(lines[len(lines)-1].Seq)
		case ctx.Err() != nil:
			return
		case apiclient.IsCode(err, api.CodeConflict):
			e.log.Warn("the server refused the run's log lines: the run is no longer leased to this executor", "run_id", r.ID, "error", err)
			return
		default:
			e.log.Warn("cannot send the run's log lines; trying again", "run_id", r.ID, "error", err)
		}
	}
}

// runHandler runs h, turning a panic into an error.
func runHandler(ctx context.Context, h HandlerFunc, r *Run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.Logger.Error("handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return h(ctx, r)
}

// report sends a run's result, trying again for a minute while the
// server cannot be reached. A refusal (the run is no longer leased to
// this executor under that token) is logged and dropped.
func (e *Executor) report(executorID, runID string, res api.ExecutorResult) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	backoff := 200 * time.Millisecond
	for {
		err := e.client.ReportExecutorResult(ctx, executorID, runID, res)
		switch {
		case err == nil:
			return
		case apiclient.IsCode(err, api.CodeConflict):
			e.log.Warn("the server refused the result: the run is no longer leased to this executor", "run_id", runID, "error", err)
			return
		}
		var apiErr *api.Error
		if errors.As(err, &apiErr) && apiErr.Code != api.CodeUnavailable && apiErr.Code != api.CodeInternal {
			e.log.Error("the server refused the result", "run_id", runID, "error", err)
			return
		}
		if !sleep(ctx, backoff) {
			e.log.Error("cannot report the result; giving up", "run_id", runID, "error", err)
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// boundedBuffer keeps the first max bytes written to it.
type boundedBuffer struct {
	mu        sync.Mutex
	b         strings.Builder
	max       int
	truncated bool
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	room := w.max - w.b.Len()
	if len(p) > room {
		w.truncated = true
		w.b.Write(p[:max(room, 0)])
		return len(p), nil
	}
	w.b.Write(p)
	return len(p), nil
}

func (w *boundedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.truncated {
		return w.b.String() + "\n[output truncated by the executor]"
	}
	return w.b.String()
}

var _ io.Writer = (*boundedBuffer)(nil)
