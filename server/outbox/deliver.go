package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Defaults of DeliverOptions.
const (
	DefaultLease    = time.Minute
	DefaultPoll     = time.Second
	DefaultAttempts = 5
	DefaultBackoff  = 2 * time.Second
)

// DeliverOptions configure Deliver. Owner is required.
type DeliverOptions struct {
	// Owner names the node that claims messages, such as its node ID.
	Owner string
	// Lease is how long a claim holds a message before another node may
	// take it. Defaults to DefaultLease.
	Lease time.Duration
	// SendTimeout bounds one send; the batch claimed at once is what fits
	// in half a lease at that pace. Defaults to Lease / 4.
	SendTimeout time.Duration
	// Poll is how often Deliver looks for due messages when not woken.
	// Defaults to DefaultPoll.
	Poll time.Duration
	// Attempts is how many tries a message gets before it is dropped.
	// Defaults to DefaultAttempts.
	Attempts int
	// Backoff is the wait after the first failed try, doubled after each
	// further one. Defaults to DefaultBackoff.
	Backoff time.Duration
	// Permanent reports whether a send's error will recur, so that the
	// message is dropped at once. Defaults to never.
	Permanent func(error) bool
	// GaveUp is called for each message dropped, with the last error.
	// Defaults to nothing.
	GaveUp func(Claim, error)
	// Logger receives the failures. Defaults to slog.Default().
	Logger *slog.Logger
}

// withDefaults returns o with its defaults, or an error naming the field
// it cannot use.
func (o DeliverOptions) withDefaults() (DeliverOptions, error) {
	if o.Owner == "" {
		return o, fmt.Errorf("%w: DeliverOptions.Owner is empty", ErrInvalid)
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"Lease", &o.Lease, DefaultLease}, {"Poll", &o.Poll, DefaultPoll}, {"Backoff", &o.Backoff, DefaultBackoff}, {"SendTimeout", &o.SendTimeout, 0}} {
		if *f.v < 0 {
			return o, fmt.Errorf("%w: DeliverOptions.%s %s is negative", ErrInvalid, f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if o.SendTimeout == 0 {
		o.SendTimeout = o.Lease / 4
	}
	if o.SendTimeout >= o.Lease {
		return o, fmt.Errorf("%w: DeliverOptions.SendTimeout %s is not shorter than the lease %s", ErrInvalid, o.SendTimeout, o.Lease)
	}
	switch {
	case o.Attempts < 0:
		return o, fmt.Errorf("%w: DeliverOptions.Attempts %d is negative", ErrInvalid, o.Attempts)
	case o.Attempts == 0:
		o.Attempts = DefaultAttempts
	}
	if o.Permanent == nil {
		o.Permanent = func(error) bool { return false }
	}
	if o.GaveUp == nil {
		o.GaveUp = func(Claim, error) {}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

// Deliver claims due messages and sends each with send, until ctx ends:
// at once when a message is added on this node, and every Poll. A message
// sent is deleted; one whose send failed is tried again after the backoff,
// and dropped after Attempts tries or a permanent error. send gets a
// context bounded by SendTimeout. When ctx ends, the messages claimed and
// not sent yet are given back. It returns an error only for options it
// cannot use.
func (o *Outbox) Deliver(ctx context.Context, opts DeliverOptions, send func(context.Context, Claim) error) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-o.wake:
		}
		for {
			n, err := o.DeliverDue(ctx, opts, send)
			if err != nil && ctx.Err() == nil {
				opts.Logger.Warn("cannot deliver from the outbox", "error", err)
			}
			if err != nil || n == 0 {
				break
			}
		}
		t.Reset(opts.Poll)
	}
}

// DeliverDue makes one pass of Deliver: it claims one batch of due
// messages and sends them, and returns how many it claimed.
func (o *Outbox) DeliverDue(ctx context.Context, opts DeliverOptions, send func(context.Context, Claim) error) (int, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return 0, err
	}
	batch := max(1, int(opts.Lease/2/opts.SendTimeout))
	claims, err := o.Claim(ctx, opts.Owner, opts.Lease, batch)
	for i, c := range claims {
		if ctx.Err() != nil {
			o.giveBack(ctx, opts, claims[i:])
			break
		}
		o.sendOne(ctx, opts, c, send)
	}
	return len(claims), err
}

// sendOne sends c and settles it.
func (o *Outbox) sendOne(ctx context.Context, opts DeliverOptions, c Claim, send func(context.Context, Claim) error) {
	log := opts.Logger.With("message_id", c.ID, "delivery_key", c.Key, "attempt", c.Attempt)
	sendCtx, cancel := context.WithTimeout(ctx, opts.SendTimeout)
	sendErr := send(sendCtx, c)
	cancel()
	// Settling must not be lost to a stop that came during the send.
	rec, cancelRec := context.WithTimeout(context.WithoutCancel(ctx), opts.SendTimeout)
	defer cancelRec()
	var err error
	switch {
	case sendErr == nil:
		err = o.Done(rec, c)
	case c.Attempt >= opts.Attempts || opts.Permanent(sendErr):
		log.Warn("outbox message given up", "attempts", c.Attempt, "error", sendErr)
		opts.GaveUp(c, sendErr)
		err = o.Drop(rec, c)
	default:
		wait := opts.Backoff << min(c.Attempt-1, 20)
		log.Debug("outbox send failed; trying again later", "retry_in", wait, "error", sendErr)
		err = o.Retry(rec, c, wait)
	}
	switch {
	case errors.Is(err, ErrLeaseLost):
		log.Warn("outbox lease lapsed during the send; another node may send the message again under the same key")
	case err != nil:
		// Its lease lapses and another node tries it.
		log.Warn("cannot settle an outbox message", "error", err)
	}
}

// giveBack releases claims not sent, due at once, so that a stopping node
// does not make them wait for their lease.
func (o *Outbox) giveBack(ctx context.Context, opts DeliverOptions, claims []Claim) {
	rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.SendTimeout)
	defer cancel()
	for _, c := range claims {
		if err := o.Retry(rec, c, 0); err != nil && !errors.Is(err, ErrLeaseLost) {
			opts.Logger.Warn("cannot give an outbox message back; it waits for its lease", "message_id", c.ID, "error", err)
		}
	}
}
