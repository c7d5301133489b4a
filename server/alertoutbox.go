package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/jobs/egress"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/outbox"
)

// alertOutbox makes the server's alerts durable: an alert decided on a
// node is written to the outbox (package outbox), one message per
// recipient under one delivery key, and every node's delivery loop claims
// due messages under a lease and sends them. A node that dies holding an
// alert leaves it to another once its lease lapses; an alert decided
// while the database is down waits in the write queue (see writeQueue)
// until it is back.
type alertOutbox struct {
	box    *outbox.Outbox
	writes *writeQueue
	log    *slog.Logger
	opts   outbox.DeliverOptions

	mu      sync.Mutex
	stopped bool
	writing sync.WaitGroup // alerts being written to the outbox
	cancel  context.CancelFunc
	done    chan struct{} // closed when the delivery loop returns
}

// newAlertOutbox returns the outbox of alerts for the node owner, sent
// with cfg's timeout, attempts and backoff.
func newAlertOutbox(box *outbox.Outbox, writes *writeQueue, owner string, lease time.Duration, cfg alert.Config, log *slog.Logger) *alertOutbox {
	cfg = cfg.WithDefaults()
	return &alertOutbox{
		box: box, writes: writes, log: log,
		opts: outbox.DeliverOptions{
			Owner: owner, Lease: lease, SendTimeout: cfg.Timeout, Attempts: cfg.Attempts, Backoff: cfg.RetryBackoff,
			Logger: log,
			Permanent: func(err error) bool {
				_, refused := errors.AsType[*egress.RefusedError](err)
				return refused || errors.Is(err, alert.ErrPermanent)
			},
		},
	}
}

// add writes the deliveries of one alert to the outbox, in the
// background and until the database takes them (or the server stops
// waiting). It reports false, writing nothing, once the outbox stopped.
func (o *alertOutbox) add(ctx context.Context, ds []alert.Delivery) bool {
	msgs := make([]outbox.Message, 0, len(ds))
	for i, d := range ds {
		payload, err := json.Marshal(d)
		if err != nil { // only for times JSON cannot hold, such as year 10000
			o.log.Warn("alert dropped: it cannot be encoded", "alert_kind", string(d.Event.Kind), "error", err)
			return false
		}
		msgs = append(msgs, outbox.Message{ID: fmt.Sprintf("%s/%d", d.Key, i), Key: d.Key, Payload: payload})
	}
	if len(msgs) == 0 {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		o.log.Warn("alert dropped: the server is stopping", "alert_kind", string(ds[0].Event.Kind), "job_key", ds[0].Event.JobKey().String())
		return false
	}
	o.writing.Go(func() {
		_ = o.writes.persist(ctx, o.log, "an alert", func(ctx context.Context) error {
			return o.box.Add(ctx, msgs)
		})
	})
	return true
}

// start runs the delivery loop, sending each message with send, until
// stop.
func (o *alertOutbox) start(ctx context.Context, send func(context.Context, alert.Delivery) error) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o.mu.Lock()
	o.cancel, o.done = cancel, make(chan struct{})
	done := o.done
	o.mu.Unlock()
	go func() {
		defer close(done)
		if err := o.box.Deliver(ctx, o.opts, func(ctx context.Context, c outbox.Claim) error {
			return sendClaim(ctx, c, send)
		}); err != nil {
			o.log.Error("the alert outbox cannot deliver", "error", err)
		}
	}()
}

// sendClaim decodes c's delivery and sends it.
func sendClaim(ctx context.Context, c outbox.Claim, send func(context.Context, alert.Delivery) error) error {
	var d alert.Delivery
	if err := json.Unmarshal(c.Payload, &d); err != nil {
		return fmt.Errorf("%w: the outbox message does not decode: %w", alert.ErrPermanent, err)
	}
	return send(ctx, d)
}

// stop refuses new alerts, waits for the ones being written, stops the
// delivery loop, and sends what is due until nothing is or ctx ends:
// what is left waits in the outbox for another node, or this one's next
// run.
func (o *alertOutbox) stop(ctx context.Context, send func(context.Context, alert.Delivery) error) {
	o.mu.Lock()
	o.stopped = true
	cancel, done := o.cancel, o.done
	o.mu.Unlock()
	o.writing.Wait()
	if cancel != nil {
		cancel()
		<-done
	}
	for ctx.Err() == nil {
		n, err := o.box.DeliverDue(ctx, o.opts, func(ctx context.Context, c outbox.Claim) error {
			return sendClaim(ctx, c, send)
		})
		if err != nil {
			if ctx.Err() == nil {
				o.log.Warn("cannot deliver the last alerts; they wait in the outbox", "error", err)
			}
			return
		}
		if n == 0 {
			return
		}
	}
}

// useOutbox makes a send its alerts through box. It is called before
// start.
func (a *alerter) useOutbox(box *alertOutbox) {
	box.opts.GaveUp = func(outbox.Claim, error) { a.current().GaveUp() }
	a.box = box
}

// current returns the notifier in use.
func (a *alerter) current() *alert.Notifier {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// enqueue hands the alert for ev to the outbox, unless n's rate limit
// suppresses it.
func (a *alerter) enqueue(ctx context.Context, n *alert.Notifier, ev alert.Event) {
	suppressed, ok := n.Admit(ev)
	if !ok {
		return
	}
	if !a.box.add(ctx, n.Deliveries(ev, suppressed, alertKey(ev))) {
		a.dropped.Add(1) // add logged why
	}
}

// alertKey names the alert of ev. An alert about one execution is raised
// once for it, so its key is named by the execution and the kind: raised
// again (by a node that does what a dead node may not have got to do), it
// meets the first in the outbox, or reaches the receivers with the key
// they saw already. Other alerts get a new key each.
func alertKey(ev alert.Event) string {
	if ev.ExecutionID == "" {
		return newID()
	}
	return derivedID("alert", string(ev.Kind), ev.ExecutionID)
}

// deliver sends one delivery of the outbox.
func (a *alerter) deliver(ctx context.Context, d alert.Delivery) error {
	return a.current().Send(ctx, d)
}
