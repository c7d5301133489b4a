package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/mailtest"
	"github.com/chime-scheduler/chime/server/alert"
)

// holdingHook is an alert webhook that holds the first test alert it
// receives until the test releases it, then answers 503 (its sender is
// dead by then), and takes the others.
type holdingHook struct {
	*httptest.Server
	held    chan struct{} // closed when the first request arrived
	release chan struct{} // closed by the test

	mu   sync.Mutex
	keys []string // the delivery keys of the test alerts received, held one included
	ok   int      // the test alerts answered 2xx
}

func newHoldingHook(t *testing.T) *holdingHook {
	t.Helper()
	h := &holdingHook{held: make(chan struct{}), release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p alert.WebhookPayload
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if p.Kind != testAlertKind {
			return // the killed node's node_lost alert
		}
		h.mu.Lock()
		h.keys = append(h.keys, p.DeliveryKey)
		first := len(h.keys) == 1
		if !first {
			h.ok++
		}
		h.mu.Unlock()
		if first {
			close(h.held)
			select {
			case <-h.release:
			case <-r.Context().Done():
			}
			http.Error(w, "the sender died", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		h.Close()
	})
	return h
}

// TestAlertOfANodeThatDiesWhileSendingIsSentByAnother: of two nodes, the
// one that claims an alert's webhook delivery from the outbox dies while
// sending it (its database connections close, so it records nothing
// again); the other sends it once the lease lapses, under the same
// delivery key. The e-mail of the same alert goes out once.
func TestAlertOfANodeThatDiesWhileSendingIsSentByAnother(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ms := mailtest.Start(t, nil)
		hook := newHoldingHook(t)
		var nodes []*Server
		for _, id := range []string{"node-a", "node-b"} {
			s := newServer(t, url, func(c *Config) {
				c.NodeID = id
				c.AlertLease = 3 * time.Second
				c.Alert.Timeout = time.Second
				c.Alert.SMTP = alert.SMTPConfig{Host: ms.Host, Port: ms.Port, From: "chime@example.com", TLS: alert.TLSNone}
			})
			start(t, s)
			nodes = append(nodes, s)
		}
		ctx := t.Context()
		if err := nodes[0].PutAlertSettings(ctx, "alice", api.AlertSettings{
			DefaultEmails: []string{"ops@example.com"}, DefaultWebhooks: []string{hook.URL + "/hook"},
		}); err != nil {
			t.Fatalf("PutAlertSettings: %v", err)
		}
		if err := nodes[0].TestAlert(ctx, "alice"); err != nil {
			t.Fatalf("TestAlert: %v", err)
		}
		select {
		case <-hook.held:
		case <-time.After(waitTimeout):
			t.Fatal("the webhook got no alert")
		}
		// The e-mail's delivery is settled first: a node that dies after
		// sending a message and before recording it sent has it sent
		// again, by design (the receiver de-duplicates by its key).
		waitFor(t, "the e-mail's delivery to be settled", func() bool {
			n, err := nodes[0].alerts.box.box.Len(ctx)
			return err == nil && n == 1
		})
		// The node that holds the webhook's delivery dies mid-send.
		var owner string
		q := nodes[0].store.SQL("SELECT owner FROM {p}outbox_messages WHERE sched_name = ? AND owner <> ''")
		if err := nodes[0].store.DB().QueryRowContext(ctx, q, nodes[0].store.SchedulerName()).Scan(&owner); err != nil {
			t.Fatalf("reading the holder of the delivery: %v", err)
		}
		dead, survivor := nodes[0], nodes[1]
		if owner == nodes[1].NodeID() {
			dead, survivor = nodes[1], nodes[0]
		}
		if err := dead.store.Close(); err != nil {
			t.Fatalf("closing the dying node's store: %v", err)
		}
		close(hook.release)

		waitFor(t, "the surviving node to send the alert", func() bool {
			hook.mu.Lock()
			defer hook.mu.Unlock()
			return hook.ok > 0
		})
		waitFor(t, "the outbox to be empty", func() bool {
			n, err := survivor.alerts.box.box.Len(ctx)
			return err == nil && n == 0
		})
		hook.mu.Lock()
		keys, ok := append([]string(nil), hook.keys...), hook.ok
		hook.mu.Unlock()
		if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] || ok != 1 {
			t.Errorf("webhook got keys %q, %d answered 2xx; want the held try and one more under the same key", keys, ok)
		}
		var mails []string
		for _, m := range ms.Messages() {
			if strings.Contains(m.Subject, "alert-test") { // not the dead node's node_lost alert
				mails = append(mails, m.Header.Get(alert.DeliveryKeyHeader))
			}
		}
		if len(mails) != 1 || len(keys) == 0 || mails[0] != keys[0] {
			t.Errorf("e-mails with keys %q, want one, with the webhook's key", mails)
		}
	})
}

// TestAlertDecidedWhileTheDatabaseIsDownIsSentWhenItIsBack: an alert
// decided while the node cannot reach its database waits in the node's
// write queue, and reaches the outbox, then its webhook, once the
// database is back.
func TestAlertDecidedWhileTheDatabaseIsDownIsSentWhenItIsBack(t *testing.T) {
	t.Parallel()
	for _, db := range []testDB{{"Postgres", dbtest.PostgresURL}, {"MySQL", dbtest.MySQLURL}} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			url := db.url(t)
			proxy, viaProxy := dbProxy(t, url)
			hook := newWebhook(t)
			s := newServer(t, viaProxy)
			start(t, s)
			ctx := t.Context()
			if err := s.PutAlertSettings(ctx, "alice", api.AlertSettings{DefaultWebhooks: []string{hook.URL}}); err != nil {
				t.Fatalf("PutAlertSettings: %v", err)
			}
			if _, err := s.alerts.settings(ctx); err != nil { // cached for the outage
				t.Fatal(err)
			}

			proxy.Cut()
			s.alerts.notify(ctx, nil, alert.Event{Kind: alert.KindMisfire, JobGroup: "g", JobName: "during-outage", Detail: "decided while the database was down"})
			// Nothing can change while the database is away; the wait
			// only gives the write queue a few failed tries.
			time.Sleep(time.Second)
			select {
			case p := <-hook.alerts:
				t.Fatalf("an alert arrived while the database was down: %+v", p)
			default:
			}
			proxy.Restore()

			p := hook.next(t, alert.KindMisfire)
			if p.Job.Name != "during-outage" || p.DeliveryKey == "" {
				t.Errorf("alert after the outage = %+v, want the one decided during it, with a delivery key", p)
			}
		})
	}
}

// TestAlertDecidedAfterStopIsCountedDropped: an alert decided once the
// server stopped cannot reach the outbox; chime_alerts_dropped_total
// counts it, so that a lost alert shows on the metrics, not only in the
// log.
func TestAlertDecidedAfterStopIsCountedDropped(t *testing.T) {
	t.Parallel()
	hook := newWebhook(t)
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", func(c *Config) {
		c.Alert.DefaultWebhooks = []string{hook.URL}
	})
	stop := start(t, s)
	if got := s.alerts.stats().Dropped; got != 0 {
		t.Fatalf("dropped before anything was = %d", got)
	}
	if err := stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	s.alerts.notify(context.Background(), nil, alert.Event{Kind: alert.KindNodeLost, NodeID: "gone", At: time.Now()})
	if got := s.alerts.stats().Dropped; got != 1 {
		t.Errorf("dropped after an alert decided past the stop = %d, want 1", got)
	}
}
