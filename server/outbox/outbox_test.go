package outbox_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/mailtest"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/outbox"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestOutbox runs every behaviour on every dialect, each subtest under a
// scheduler name of its own.
func TestOutbox(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, open func() *outbox.Outbox)
	}{
		{"ClaimIsExclusiveAndFenced", testClaimExclusive},
		{"LapsedLeaseGoesToAnotherNode", testLapsedLease},
		{"AddIsIdempotent", testAddIdempotent},
		{"RetriesThenGivesUp", testGiveUp},
		{"AlertOfDeadNodeDeliveredOnce", testDeadNodeAlert},
		{"AlertSentTwiceCarriesOneKey", testSentTwice},
	}
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			urlFor := db.Shared(t)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					url := urlFor(t)
					sched := "test-" + rand.Text()
					tc.run(t, func() *outbox.Outbox { return open(t, url, sched) })
				})
			}
		})
	}
}

// open returns the outbox of scheduler sched on url, as one node sees it:
// each call opens a store of its own. It closes when the test ends.
func open(t *testing.T, url, sched string) *outbox.Outbox {
	t.Helper()
	o := &sqlstore.Options{SchedulerName: sched, Logger: slog.New(slog.DiscardHandler)}
	if !strings.HasPrefix(url, "sqlite:") {
		o.MaxOpenConns = 2
	}
	st, err := sqlstore.Open(t.Context(), url, o)
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ob, err := outbox.New(t.Context(), st)
	if err != nil {
		t.Fatalf("outbox.New: %v", err)
	}
	return ob
}

func add(t *testing.T, ob *outbox.Outbox, msgs ...outbox.Message) {
	t.Helper()
	if err := ob.Add(t.Context(), msgs); err != nil {
		t.Fatalf("Add: %v", err)
	}
}

func claim(t *testing.T, ob *outbox.Outbox, owner string, lease time.Duration) []outbox.Claim {
	t.Helper()
	got, err := ob.Claim(t.Context(), owner, lease, 10)
	if err != nil {
		t.Fatalf("Claim(%s): %v", owner, err)
	}
	return got
}

func wantLen(t *testing.T, ob *outbox.Outbox, want int) {
	t.Helper()
	n, err := ob.Len(t.Context())
	if err != nil {
		t.Fatalf("Len: %v", err)
	}
	if n != want {
		t.Errorf("outbox holds %d messages, want %d", n, want)
	}
}

// eventually polls cond until it holds, failing the test after a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a database: nothing to wait on
	}
}

func testClaimExclusive(t *testing.T, open func() *outbox.Outbox) {
	a, b := open(), open()
	add(t, a, outbox.Message{ID: "m1", Key: "k1", Payload: []byte("hello")})

	got := claim(t, a, "node-a", time.Hour)
	if len(got) != 1 || got[0].Key != "k1" || string(got[0].Payload) != "hello" || got[0].Attempt != 1 || got[0].Owner != "node-a" {
		t.Fatalf("node-a claimed %+v, want m1 at attempt 1", got)
	}
	if again := claim(t, b, "node-b", time.Hour); len(again) != 0 {
		t.Fatalf("node-b claimed %+v while node-a holds the lease, want nothing", again)
	}
	forged := got[0]
	forged.Owner = "node-b"
	if err := b.Done(t.Context(), forged); !errors.Is(err, outbox.ErrLeaseLost) {
		t.Errorf("Done by a node without the lease = %v, want ErrLeaseLost", err)
	}
	wantLen(t, a, 1)
	if err := a.Done(t.Context(), got[0]); err != nil {
		t.Fatalf("Done: %v", err)
	}
	wantLen(t, a, 0)
	if err := a.Done(t.Context(), got[0]); !errors.Is(err, outbox.ErrLeaseLost) {
		t.Errorf("Done twice = %v, want ErrLeaseLost", err)
	}
}

func testLapsedLease(t *testing.T, open func() *outbox.Outbox) {
	a, b := open(), open()
	add(t, a, outbox.Message{ID: "m1", Key: "k1"})
	held := claim(t, a, "node-a", 500*time.Millisecond)
	if len(held) != 1 {
		t.Fatalf("node-a claimed %d messages, want 1", len(held))
	}
	var took []outbox.Claim
	eventually(t, "node-b claims the message once node-a's lease lapses", func() bool {
		took = claim(t, b, "node-b", time.Hour)
		return len(took) == 1
	})
	if took[0].Attempt != 2 {
		t.Errorf("node-b's claim is attempt %d, want 2", took[0].Attempt)
	}
	// node-a wakes up late: its claim is fenced off.
	if err := a.Retry(t.Context(), held[0], 0); !errors.Is(err, outbox.ErrLeaseLost) {
		t.Errorf("Retry by the node whose lease lapsed = %v, want ErrLeaseLost", err)
	}
	if err := a.Done(t.Context(), held[0]); !errors.Is(err, outbox.ErrLeaseLost) {
		t.Errorf("Done by the node whose lease lapsed = %v, want ErrLeaseLost", err)
	}
	wantLen(t, a, 1)
	if err := b.Done(t.Context(), took[0]); err != nil {
		t.Fatalf("Done by node-b: %v", err)
	}
	wantLen(t, a, 0)
}

func testAddIdempotent(t *testing.T, open func() *outbox.Outbox) {
	ob := open()
	msgs := []outbox.Message{{ID: "m1", Key: "k"}, {ID: "m2", Key: "k"}}
	add(t, ob, msgs...)
	add(t, ob, msgs...) // a try whose answer was lost
	wantLen(t, ob, 2)
	if err := ob.Add(t.Context(), []outbox.Message{{Key: "k"}}); !errors.Is(err, outbox.ErrInvalid) {
		t.Errorf("Add without an ID = %v, want ErrInvalid", err)
	}
	wantLen(t, ob, 2)
}

func testGiveUp(t *testing.T, open func() *outbox.Outbox) {
	ob := open()
	add(t, ob, outbox.Message{ID: "m1", Key: "k1"})
	var (
		mu    sync.Mutex
		tries []int
		gave  []error
	)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- ob.Deliver(ctx, outbox.DeliverOptions{
			Owner: "node-a", Lease: 10 * time.Second, Poll: 20 * time.Millisecond, Attempts: 3, Backoff: 10 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler),
			GaveUp: func(_ outbox.Claim, err error) { mu.Lock(); gave = append(gave, err); mu.Unlock() },
		}, func(_ context.Context, c outbox.Claim) error {
			mu.Lock()
			tries = append(tries, c.Attempt)
			mu.Unlock()
			return errors.New("receiver down")
		})
	}()
	eventually(t, "the message is given up", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(gave) > 0
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tries) != 3 || tries[0] != 1 || tries[2] != 3 || len(gave) != 1 {
		t.Errorf("tries %v, gave up %d times; want attempts 1, 2, 3 and one give-up", tries, len(gave))
	}
	wantLen(t, ob, 0)
}

// receivers are a real SMTP server and a real webhook receiver, and a
// notifier that sends to them.
type receivers struct {
	mail *mailtest.Server
	n    *alert.Notifier

	mu   sync.Mutex
	keys []string // the delivery_key of every webhook request, in order
}

func startReceivers(t *testing.T) *receivers {
	t.Helper()
	r := &receivers{mail: mailtest.Start(t, nil)}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var p alert.WebhookPayload
		if err := json.NewDecoder(req.Body).Decode(&p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.keys = append(r.keys, p.DeliveryKey)
		r.mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	n, err := alert.New(alert.Config{
		SMTP:            alert.SMTPConfig{Host: r.mail.Host, Port: r.mail.Port, From: "chime@example.com", TLS: alert.TLSNone},
		DefaultEmails:   []string{"ops@example.com"},
		DefaultWebhooks: []string{hook.URL + "/hook"},
		Logger:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("alert.New: %v", err)
	}
	r.n = n
	return r
}

// addAlert adds a failure alert to ob, one message per recipient, under
// key.
func (r *receivers) addAlert(t *testing.T, ob *outbox.Outbox, key string) {
	t.Helper()
	ev := alert.Event{Kind: alert.KindFailure, JobGroup: "billing", JobName: "invoice", ExecutionID: "exec-1", Error: "boom"}
	var msgs []outbox.Message
	for i, d := range r.n.Deliveries(ev, 0, key) {
		payload, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, outbox.Message{ID: key + "/" + string(rune('0'+i)), Key: key, Payload: payload})
	}
	if len(msgs) != 2 {
		t.Fatalf("the alert makes %d deliveries, want 2 (e-mail and webhook)", len(msgs))
	}
	add(t, ob, msgs...)
}

// send is the sender a node's Deliver uses.
func (r *receivers) send(ctx context.Context, c outbox.Claim) error {
	var d alert.Delivery
	if err := json.Unmarshal(c.Payload, &d); err != nil {
		return err
	}
	return r.n.Send(ctx, d)
}

// seen returns, per receiver, how many copies of the alert arrived and
// the distinct delivery keys they carried.
func (r *receivers) seen() (mails, hooks int, mailKeys, hookKeys map[string]bool) {
	mailKeys, hookKeys = map[string]bool{}, map[string]bool{}
	for _, m := range r.mail.Messages() {
		mailKeys[m.Header.Get(alert.DeliveryKeyHeader)] = true
		mails++
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.keys {
		hookKeys[k] = true
	}
	return mails, len(r.keys), mailKeys, hookKeys
}

// deliver runs ob.Deliver as node owner until the test ends.
func deliver(t *testing.T, ob *outbox.Outbox, owner string, lease time.Duration, send func(context.Context, outbox.Claim) error) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- ob.Deliver(ctx, outbox.DeliverOptions{Owner: owner, Lease: lease, Poll: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}, send)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Deliver: %v", err)
		}
	})
}

// testDeadNodeAlert: a node claims an alert's deliveries and dies before
// sending them; another node delivers them once the lease lapses, once.
func testDeadNodeAlert(t *testing.T, open func() *outbox.Outbox) {
	r := startReceivers(t)
	dead, live := open(), open()
	r.addAlert(t, dead, "alert-1")
	if got := claim(t, dead, "node-dead", time.Second); len(got) != 2 {
		t.Fatalf("the dying node claimed %d deliveries, want 2", len(got))
	}
	// node-dead stops here, holding both, without sending.
	deliver(t, live, "node-live", 10*time.Second, r.send)
	eventually(t, "the live node delivers the alert after the lease", func() bool {
		n, err := live.Len(t.Context())
		return err == nil && n == 0
	})
	mails, hooks, mailKeys, hookKeys := r.seen()
	if mails != 1 || hooks != 1 || !mailKeys["alert-1"] || !hookKeys["alert-1"] {
		t.Errorf("receivers got %d e-mails with keys %v and %d webhooks with keys %v; want one of each, key alert-1",
			mails, mailKeys, hooks, hookKeys)
	}
}

// testSentTwice: a node sends an alert and dies before recording it;
// another node sends it again after the lease, under the same key, so the
// receivers' de-duplication keeps one.
func testSentTwice(t *testing.T, open func() *outbox.Outbox) {
	r := startReceivers(t)
	dead, live := open(), open()
	r.addAlert(t, dead, "alert-2")
	claims := claim(t, dead, "node-dead", time.Second)
	for _, c := range claims {
		if err := r.send(t.Context(), c); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	// node-dead dies before Done.
	deliver(t, live, "node-live", 10*time.Second, r.send)
	eventually(t, "the live node delivers the alert again after the lease", func() bool {
		n, err := live.Len(t.Context())
		return err == nil && n == 0
	})
	mails, hooks, mailKeys, hookKeys := r.seen()
	if mails != 2 || hooks != 2 || len(mailKeys) != 1 || len(hookKeys) != 1 || !mailKeys["alert-2"] || !hookKeys["alert-2"] {
		t.Errorf("receivers got %d e-mails with keys %v and %d webhooks with keys %v; want two copies of each under the one key alert-2",
			mails, mailKeys, hooks, hookKeys)
	}
}
