package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// ErrLeaseLost is returned when a claim is settled after its lease lapsed
// and another node claimed the message, or after the message was settled:
// the call changed nothing.
var ErrLeaseLost = errors.New("outbox: the claim's lease was lost")

// ErrInvalid is wrapped by the errors about options or messages that
// cannot be used; the message names the field.
var ErrInvalid = errors.New("outbox: invalid")

// Message is one thing to send.
type Message struct {
	// ID identifies the message; adding an ID twice adds it once.
	ID string
	// Key is the delivery key the receiver de-duplicates by; several
	// messages (one per recipient of an alert) may share it.
	Key string
	// Payload is what to send, opaque to the outbox.
	Payload []byte
}

// Claim is a message a node holds under a lease.
type Claim struct {
	Message
	// Attempt is how many times the message was claimed, this claim
	// included: 1 for the first try. It fences the claim's settlement.
	Attempt int
	// Owner is the node that holds the claim.
	Owner string
}

// Outbox is the table of messages waiting to be sent. It is safe for
// concurrent use.
type Outbox struct {
	db    *sql.DB
	st    *sqlstore.Store
	sched string
	wake  chan struct{} // capacity 1: a message was added on this node
	q     struct {
		insert, due, claim, get, remove, retry, count string
	}
}

// New migrates the package's table on st's database and returns its
// Outbox.
func New(ctx context.Context, st *sqlstore.Store) (*Outbox, error) {
	if err := st.MigrateComponent(ctx, component, migrations()); err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	o := &Outbox{db: st.DB(), st: st, sched: st.SchedulerName(), wake: make(chan struct{}, 1)}
	r := st.SQL
	o.q.insert = r("INSERT INTO {p}outbox_messages (sched_name, id, delivery_key, payload, created, attempts, owner, due) " +
		"VALUES (?, ?, ?, ?, {now}, 0, '', {now})")
	o.q.due = r("SELECT id, attempts, due FROM {p}outbox_messages WHERE sched_name = ? AND due <= {now} ORDER BY due, id LIMIT ?")
	o.q.claim = r("UPDATE {p}outbox_messages SET owner = ?, attempts = attempts + 1, due = {now} + ? " +
		"WHERE sched_name = ? AND id = ? AND attempts = ? AND due = ? AND due <= {now}")
	o.q.get = r("SELECT delivery_key, payload FROM {p}outbox_messages WHERE sched_name = ? AND id = ? AND owner = ? AND attempts = ?")
	o.q.remove = r("DELETE FROM {p}outbox_messages WHERE sched_name = ? AND id = ? AND owner = ? AND attempts = ?")
	o.q.retry = r("UPDATE {p}outbox_messages SET owner = '', due = {now} + ? " +
		"WHERE sched_name = ? AND id = ? AND owner = ? AND attempts = ?")
	o.q.count = r("SELECT COUNT(*) FROM {p}outbox_messages WHERE sched_name = ?")
	return o, nil
}

// Add stores msgs, due at once, in one transaction, and wakes this node's
// Deliver. A message whose ID is stored already is left as it is, so a
// caller may add again what it is not sure was added.
func (o *Outbox) Add(ctx context.Context, msgs []Message) error {
	for i, m := range msgs {
		if m.ID == "" {
			return fmt.Errorf("%w: msgs[%d].ID is empty", ErrInvalid, i)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	tx, err := o.st.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("outbox: adding messages: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, m := range msgs {
		_, err := tx.ExecContext(ctx, o.q.insert, o.sched, m.ID, m.Key, string(m.Payload))
		if o.st.IsUniqueViolation(err) {
			// Added by an earlier try whose answer was lost: all of
			// them were, in its transaction.
			_ = tx.Rollback()
			o.Wake()
			return nil
		}
		if err != nil {
			return fmt.Errorf("outbox: adding message %s: %w", m.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("outbox: adding messages: %w", err)
	}
	o.Wake()
	return nil
}

// Wake makes this node's Deliver look for due messages at once.
func (o *Outbox) Wake() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Claim claims up to limit due messages for owner, each for lease on the
// database's clock, oldest due first. Messages other nodes claim meanwhile
// are passed over.
func (o *Outbox) Claim(ctx context.Context, owner string, lease time.Duration, limit int) ([]Claim, error) {
	switch {
	case owner == "":
		return nil, fmt.Errorf("%w: owner is empty", ErrInvalid)
	case lease <= 0:
		return nil, fmt.Errorf("%w: lease %s is not positive", ErrInvalid, lease)
	case limit <= 0:
		return nil, fmt.Errorf("%w: limit %d is not positive", ErrInvalid, limit)
	}
	type candidate struct {
		id       string
		attempts int
		due      int64
	}
	rows, err := o.db.QueryContext(ctx, o.q.due, o.sched, limit)
	if err != nil {
		return nil, fmt.Errorf("outbox: listing due messages: %w", err)
	}
	var due []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.id, &c.attempts, &c.due); err != nil {
			rows.Close()
			return nil, fmt.Errorf("outbox: listing due messages: %w", err)
		}
		due = append(due, c)
	}
	if err := errors.Join(rows.Close(), rows.Err()); err != nil {
		return nil, fmt.Errorf("outbox: listing due messages: %w", err)
	}
	var out []Claim
	for _, c := range due {
		res, err := o.db.ExecContext(ctx, o.q.claim, owner, lease.Nanoseconds(), o.sched, c.id, c.attempts, c.due)
		if err != nil {
			return out, fmt.Errorf("outbox: claiming message %s: %w", c.id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return out, fmt.Errorf("outbox: claiming message %s: %w", c.id, err)
		} else if n != 1 {
			continue // another node was first
		}
		cl := Claim{Message: Message{ID: c.id}, Attempt: c.attempts + 1, Owner: owner}
		var payload string
		err = o.db.QueryRowContext(ctx, o.q.get, o.sched, c.id, owner, cl.Attempt).Scan(&cl.Key, &payload)
		if errors.Is(err, sql.ErrNoRows) {
			continue // the lease lapsed already and another node took it
		}
		if err != nil {
			return out, fmt.Errorf("outbox: reading message %s: %w", c.id, err)
		}
		cl.Payload = []byte(payload)
		out = append(out, cl)
	}
	return out, nil
}

// Done deletes the message of c, which was sent.
func (o *Outbox) Done(ctx context.Context, c Claim) error {
	return o.settle(ctx, "settling", o.q.remove, o.sched, c.ID, c.Owner, c.Attempt)
}

// Drop deletes the message of c, which is given up on.
func (o *Outbox) Drop(ctx context.Context, c Claim) error {
	return o.settle(ctx, "dropping", o.q.remove, o.sched, c.ID, c.Owner, c.Attempt)
}

// Retry gives the message of c back, due after wait.
func (o *Outbox) Retry(ctx context.Context, c Claim, wait time.Duration) error {
	return o.settle(ctx, "releasing", o.q.retry, max(wait, 0).Nanoseconds(), o.sched, c.ID, c.Owner, c.Attempt)
}

// settle runs a statement conditional on a claim, and returns
// ErrLeaseLost when it changed nothing.
func (o *Outbox) settle(ctx context.Context, doing, q string, args ...any) error {
	res, err := o.db.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("outbox: %s a message: %w", doing, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("outbox: %s a message: %w", doing, err)
	}
	if n != 1 {
		return ErrLeaseLost
	}
	return nil
}

// Len returns how many messages wait, held or not.
func (o *Outbox) Len(ctx context.Context) (int, error) {
	var n int
	if err := o.db.QueryRowContext(ctx, o.q.count, o.sched).Scan(&n); err != nil {
		return 0, fmt.Errorf("outbox: counting messages: %w", err)
	}
	return n, nil
}
