package alert

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"text/template"
	"time"

	"github.com/chime-scheduler/chime/jobs/egress"
)

// ErrStarted is returned by Start on a Notifier that was started before.
var ErrStarted = errors.New("alert: notifier already started")

// ErrStopped is returned by Start on a Notifier that was stopped.
var ErrStopped = errors.New("alert: notifier stopped")

// Notifier sends alerts by e-mail, webhook, Slack, Teams and PagerDuty. Notify queues an alert
// without blocking; one goroutine, run from Start to Stop, delivers the
// queue in order. A Notifier is safe for concurrent use.
type Notifier struct {
	cfg       Config
	log       *slog.Logger
	templates *templates
	queue     chan queued

	mu      sync.Mutex
	limiter *limiter
	started bool
	stopped bool
	stats   Stats

	stopping chan struct{} // closed by Stop: drain the queue and return
	done     chan struct{} // closed when the delivery goroutine returns
	cancel   context.CancelFunc
}

// queued is an alert waiting for delivery.
type queued struct {
	ev         Event
	suppressed int
}

// Stats counts what a Notifier did since New.
type Stats struct {
	// Delivered counts e-mails and webhook requests that succeeded.
	Delivered uint64
	// Failed counts e-mails and webhook requests given up after
	// Config.Attempts tries.
	Failed uint64
	// Suppressed counts alerts the rate limit held back.
	Suppressed uint64
	// Dropped counts alerts lost because the queue was full or the
	// notifier was stopped.
	Dropped uint64
}

// New returns a Notifier for cfg, or an error wrapping ErrInvalidConfig
// that names each field it cannot use.
func New(cfg Config) (*Notifier, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t, err := newTemplates(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Egress != nil {
		if cfg.HTTPClient, err = cfg.Egress.Client(cfg.HTTPClient); err != nil {
			return nil, fmt.Errorf("%w: HTTPClient: %w", ErrInvalidConfig, err)
		}
	}
	return &Notifier{
		cfg:       cfg,
		log:       cfg.Logger,
		templates: t,
		queue:     make(chan queued, cfg.QueueSize),
		limiter:   newLimiter(cfg.RateLimit),
		stopping:  make(chan struct{}),
		done:      make(chan struct{}),
	}, nil
}

// Start runs the delivery goroutine until Stop. Deliveries carry ctx's
// values but not its cancellation: cancelling ctx does not stop the
// Notifier, Stop does. Alerts queued before Start are delivered then.
func (n *Notifier) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.stopped:
		return ErrStopped
	case n.started:
		return ErrStarted
	}
	n.started = true
	ctx, n.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go n.run(ctx)
	return nil
}

// Stop refuses new alerts, delivers the ones already queued, and returns
// when the delivery goroutine has. When ctx ends first, Stop cancels the
// delivery under way, drops what is still queued (logged at Warn) and
// returns ctx's error. Stopping a Notifier that never started drops its
// queue. Stop may be called more than once.
func (n *Notifier) Stop(ctx context.Context) error {
	n.mu.Lock()
	first := !n.stopped
	n.stopped = true
	started := n.started
	n.mu.Unlock()
	if !started {
		if first {
			n.dropQueued("notifier stopped before it started")
		}
		return nil
	}
	if first {
		close(n.stopping)
	}
	select {
	case <-n.done:
		return nil
	case <-ctx.Done():
		n.cancel()
		<-n.done
		return fmt.Errorf("alert: stop: %w", ctx.Err())
	}
}

// Notify queues an alert for ev and returns at once. The alert is
// suppressed when its job and kind are over the rate limit, and dropped
// (logged at Warn) when the queue is full or the Notifier stopped. When
// ev.At is zero it is set to Config.Now().
func (n *Notifier) Notify(ev Event) {
	now := n.cfg.Now()
	if ev.At.IsZero() {
		ev.At = now
	}
	key := limitKeyOf(ev)

	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		n.stats.Dropped++
		n.log.Warn("alert dropped: notifier stopped", eventAttrs(ev)...)
		return
	}
	ok, suppressed := n.limiter.allow(key, now)
	if !ok {
		n.stats.Suppressed++
		n.log.Debug("alert suppressed by rate limit", eventAttrs(ev)...)
		return
	}
	select {
	case n.queue <- queued{ev: ev, suppressed: suppressed}:
	default:
		n.limiter.giveBack(key, suppressed)
		n.stats.Dropped++
		n.log.Warn("alert dropped: queue full", append(eventAttrs(ev), "queue_size", cap(n.queue))...)
	}
}

// Stats returns what the Notifier did so far.
func (n *Notifier) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

// run delivers queued alerts until Stop, then delivers the rest of the
// queue unless ctx is cancelled.
func (n *Notifier) run(ctx context.Context) {
	defer close(n.done)
	for {
		// Stopping wins over a waiting alert, so that once Stop cancels
		// ctx nothing more is attempted.
		select {
		case <-n.stopping:
			n.drain(ctx)
			return
		default:
		}
		select {
		case q := <-n.queue:
			n.deliver(ctx, q)
		case <-n.stopping:
			n.drain(ctx)
			return
		}
	}
}

// drain delivers what is queued until the queue is empty or ctx is
// cancelled, and then drops the rest.
func (n *Notifier) drain(ctx context.Context) {
	for ctx.Err() == nil {
		select {
		case q := <-n.queue:
			n.deliver(ctx, q)
		default:
			return
		}
	}
	n.dropQueued("notifier stopped before they were delivered")
}

// dropQueued empties the queue, counting and logging what it drops.
func (n *Notifier) dropQueued(reason string) {
	dropped := 0
drain:
	for {
		select {
		case <-n.queue:
			dropped++
		default:
			break drain
		}
	}
	if dropped == 0 {
		return
	}
	n.mu.Lock()
	n.stats.Dropped += uint64(dropped)
	n.mu.Unlock()
	n.log.Warn("alerts dropped: "+reason, "alerts", dropped)
}

// deliver sends one alert to each of its recipients, under a key of its
// own.
func (n *Notifier) deliver(ctx context.Context, q queued) {
	for _, d := range n.Deliveries(q.ev, q.suppressed, rand.Text()) {
		n.try(ctx, d.Event, d.Channel, d.Target(), func(ctx context.Context) error {
			return n.send(ctx, d)
		})
	}
}

// or returns own, or def when own is empty.
func or[T any](own, def []T) []T {
	if len(own) == 0 {
		return def
	}
	return own
}

// render renders tmpl, falling back to def (logged at Warn) when tmpl
// fails on this event.
func (n *Notifier) render(tmpl, def *template.Template, data TemplateData) string {
	s, err := render(tmpl, def, data)
	if err != nil {
		n.log.Warn("alert template failed; the default was used", append(eventAttrs(data.Event), "error", err)...)
	}
	return s
}

// try makes up to Config.Attempts attempts at send, each bounded by
// Config.Timeout, waiting Config.RetryBackoff (doubled each time) between
// them, and counts and logs the outcome.
func (n *Notifier) try(ctx context.Context, ev Event, channel, target string, send func(context.Context) error) {
	backoff := n.cfg.RetryBackoff
	var err error
	for attempt := 1; ; attempt++ {
		attemptCtx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
		err = send(attemptCtx)
		cancel()
		if err == nil {
			n.mu.Lock()
			n.stats.Delivered++
			n.mu.Unlock()
			n.log.Debug("alert delivered", append(eventAttrs(ev), "channel", channel, "target", target, "attempts", attempt)...)
			return
		}
		_, refused := errors.AsType[*egress.RefusedError](err) // trying again would change nothing
		refused = refused || errors.Is(err, ErrPermanent)
		if attempt >= n.cfg.Attempts || ctx.Err() != nil || refused {
			n.mu.Lock()
			n.stats.Failed++
			n.mu.Unlock()
			n.log.Warn("alert delivery failed",
				append(eventAttrs(ev), "channel", channel, "target", target, "attempts", attempt, "error", err)...)
			return
		}
		n.log.Debug("alert delivery attempt failed; retrying",
			append(eventAttrs(ev), "channel", channel, "target", target, "attempt", attempt, "retry_in", backoff, "error", err)...)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		backoff *= 2
	}
}

// eventAttrs are the log attributes that identify ev.
func eventAttrs(ev Event) []any {
	attrs := []any{"alert_kind", string(ev.Kind)}
	if ev.JobGroup != "" || ev.JobName != "" {
		attrs = append(attrs, "job_key", ev.JobKey().String())
	}
	if ev.ExecutionID != "" {
		attrs = append(attrs, "execution_id", ev.ExecutionID)
	}
	if ev.NodeID != "" {
		attrs = append(attrs, "node_id", ev.NodeID)
	}
	return attrs
}
