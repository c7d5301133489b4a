package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// notifyChannel is the PostgreSQL channel of a scheduler's notifications
// of a topic ("triggers" for the triggers'): the table prefix, the topic,
// "_", and a hash of the schema and scheduler name, so that schedulers
// sharing a database (notifications are database-wide) do not wake each
// other. With a topic of at most 8 bytes, at most 57 bytes of a-z, 0-9
// and _, under PostgreSQL's 63-byte identifier limit.
func notifyChannel(prefix, topic, schema, sched string) string {
	h := sha256.Sum256([]byte(schema + "\x00" + sched))
	return prefix + topic + "_" + hex.EncodeToString(h[:8])
}

// maxTopicBytes bounds a topic of Listen.
const maxTopicBytes = 8

// sqlNotify sends the earliest next fire time (Unix milliseconds) of the
// triggers a transaction left WAITING. PostgreSQL delivers it at commit,
// and not at all on rollback.
const sqlNotify = `SELECT pg_notify(?, ?)`

// notify runs sqlNotify when the transaction woke a trigger.
func (t *txn) notify() error {
	if t.wake == 0 || t.s.d.name != Postgres {
		return nil
	}
	ms := time.Unix(0, t.wake).UnixMilli()
	_, err := t.exec(sqlNotify, t.s.channel, strconv.FormatInt(ms, 10))
	return err
}

// watchBuffer is the capacity of a watch channel; deliveries beyond it are
// dropped (the engine only needs to know that something is due soon).
const watchBuffer = 64

// Backoff between reconnections of a watch.
const (
	watchMinBackoff = 100 * time.Millisecond
	watchMaxBackoff = 5 * time.Second
)

// WatchTriggers delivers the next fire time of every trigger that any node
// of this scheduler inserts, resumes, releases, fires into WAITING or
// unblocks, until ctx ends or the store closes; then the channel is closed.
// Deliveries are dropped while the channel is full. See
// [store.TriggerWatcher].
//
// Only PostgreSQL can push (LISTEN/NOTIFY). On SQLite and MySQL,
// WatchTriggers returns a nil channel and an error wrapping
// [errors.ErrUnsupported]: the caller polls only.
//
// The watch holds one dedicated connection doing LISTEN: a new connection
// from the URL for a store made by Open, one connection of the caller's
// pool for a store made by OpenDB. When the connection breaks it
// reconnects with backoff, logging at Warn once per outage and at Info when
// it is back; notifications sent meanwhile are lost, which only costs
// latency while the engine polls.
func (s *Store) WatchTriggers(ctx context.Context) (<-chan time.Time, error) {
	ch := make(chan time.Time, watchBuffer)
	err := s.watchChannel(ctx, s.channel, func(payload string) {
		ms, err := strconv.ParseInt(payload, 10, 64)
		if err != nil {
			return // not ours
		}
		select {
		case ch <- time.UnixMilli(ms).UTC():
		default: // the receiver is behind; it polls anyway
		}
	}, nil, func() { close(ch) })
	if err != nil {
		return nil, fmt.Errorf("sqlstore: watching triggers: %w", err)
	}
	return ch, nil
}

// Listen delivers the payloads of the notifications of topic (a-z, at
// most 8 bytes) that any node of this scheduler sends, as
// [Store.NotifyChannel] names it, until ctx ends or the store closes;
// then the channel is closed. It listens as WatchTriggers does, on a
// connection of its own. gap, when not nil, is called on the listener's
// goroutine whenever notifications may have been missed or may be
// missed from then on: with true once listening (at first, and again
// after a reconnection), with false when the connection is lost, and
// with true after a payload was dropped because the channel was full.
// On SQLite and MySQL it returns a nil channel and an error wrapping
// [errors.ErrUnsupported].
func (s *Store) Listen(ctx context.Context, topic string, buffer int, gap func(listening bool)) (<-chan string, error) {
	channel, err := s.NotifyChannel(topic)
	if err != nil {
		return nil, err
	}
	if gap == nil {
		gap = func(bool) {}
	}
	ch := make(chan string, buffer)
	err = s.watchChannel(ctx, channel, func(payload string) {
		select {
		case ch <- payload:
		default:
			gap(true)
		}
	}, gap, func() { close(ch) })
	if err != nil {
		return nil, fmt.Errorf("sqlstore: listening to %s: %w", topic, err)
	}
	return ch, nil
}

// NotifyChannel returns the PostgreSQL channel of this scheduler's
// notifications of topic, for a statement's pg_notify. On SQLite and
// MySQL it returns an error wrapping [errors.ErrUnsupported].
func (s *Store) NotifyChannel(topic string) (string, error) {
	if s.d.name != Postgres {
		return "", fmt.Errorf("sqlstore: notifications on %s: %w", s.d.name, errors.ErrUnsupported)
	}
	if topic == "" || len(topic) > maxTopicBytes || strings.Trim(topic, "abcdefghijklmnopqrstuvwxyz") != "" {
		return "", fmt.Errorf("sqlstore: topic %q: want 1 to %d letters a-z", topic, maxTopicBytes)
	}
	return notifyChannel(s.prefix, topic, s.schema, s.sched), nil
}

// watchChannel listens to channel on a goroutine until ctx ends or the
// store closes, handing each payload to deliver, and calling state (when
// not nil) with true once listening and with false once the connection
// is lost; then it calls done.
func (s *Store) watchChannel(ctx context.Context, channel string, deliver func(string), state func(bool), done func()) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	if s.d.name != Postgres {
		return fmt.Errorf("%s: %w", s.d.name, errors.ErrUnsupported)
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.stop, cancel)
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		defer done()
		defer stop()
		defer cancel()
		s.watch(ctx, channel, deliver, state)
	}()
	return nil
}

// watch listens until ctx ends, reconnecting after failures.
func (s *Store) watch(ctx context.Context, channel string, deliver func(string), state func(bool)) {
	if state == nil {
		state = func(bool) {}
	}
	backoff := watchMinBackoff
	outage := false
	for ctx.Err() == nil {
		listening := false
		err := s.listen(ctx, channel, deliver, func() {
			listening = true
			backoff = watchMinBackoff
			if outage {
				outage = false
				s.log.Info("notification watch reconnected", "channel", channel)
			}
			state(true)
		})
		if listening {
			state(false)
		}
		if ctx.Err() != nil {
			return
		}
		if !outage {
			outage = true
			s.log.Warn("notification watch lost its connection; polling only until it is back",
				"channel", channel, "error", err)
		}
		if listening {
			backoff = watchMinBackoff
		}
		t := time.NewTimer(backoff + rand.N(backoff/2))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, watchMaxBackoff)
	}
}

// listen runs LISTEN on one connection and delivers notifications until
// the connection fails or ctx ends. It calls up once listening.
func (s *Store) listen(ctx context.Context, channel string, deliver func(string), up func()) error {
	if s.pgConfig != nil {
		conn, err := pgx.ConnectConfig(ctx, s.pgConfig.Copy())
		if err != nil {
			return err
		}
		defer conn.Close(context.WithoutCancel(ctx))
		return listenOn(ctx, conn, channel, deliver, up)
	}
	// OpenDB: borrow a connection of the caller's pool for the whole watch.
	sc, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer sc.Close()
	return sc.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("pool connection is a %T, not a pgx stdlib connection", dc)
		}
		err := listenOn(ctx, c.Conn(), channel, deliver, up)
		// Stop listening before the connection goes back to the pool;
		// when that fails, have the pool discard it.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, uerr := c.Conn().Exec(uctx, "UNLISTEN *"); uerr != nil {
			return errors.Join(err, driver.ErrBadConn)
		}
		return err
	})
}

func listenOn(ctx context.Context, conn *pgx.Conn, channel string, deliver func(string), up func()) error {
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	up()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		deliver(n.Payload)
	}
}
