package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/jobs/egress"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/auth"
	"golang.org/x/crypto/bcrypt"
)

// quietLogger drops the server's logs; a failing test shows its own.
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// testDB is a database the service tests run on.
type testDB struct {
	name string
	url  func(testing.TB) string
}

// testDBs are the databases of the service tests: SQLite, PostgreSQL and
// MySQL (or MariaDB).
func testDBs() []testDB {
	return []testDB{{"SQLite", dbtest.SQLiteURL}, {"Postgres", dbtest.PostgresURL}, {"MySQL", dbtest.MySQLURL}}
}

// forEachDB runs test on each database, in parallel.
func forEachDB(t *testing.T, test func(t *testing.T, url string)) {
	t.Helper()
	for _, db := range testDBs() {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			test(t, db.url(t))
		})
	}
}

// newServer returns a server on the database url with fast cluster timings,
// closed when the test ends.
func newServer(t testing.TB, url string, mods ...func(*Config)) *Server {
	t.Helper()
	cfg := Config{
		DatabaseURL:     url,
		Listen:          "127.0.0.1:0",
		CheckInInterval: 100 * time.Millisecond,
		DeadAfter:       time.Second,
		ShutdownTimeout: 5 * time.Second,
		Logger:          quietLogger,
		Auth:            auth.Options{BcryptCost: bcrypt.MinCost},
		Alert:           alert.Config{RateLimit: alert.RateLimit{Alerts: -1}, RetryBackoff: 10 * time.Millisecond},
		// The endpoints and webhooks of these tests listen on loopback.
		Egress: egress.Config{Allow: []string{"127.0.0.0/8", "::1"}},
	}
	for _, m := range mods {
		m(&cfg)
	}
	s, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// start runs s until the test ends, and waits until it is ready.
func start(t *testing.T, s *Server) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(30 * time.Second):
				runErr = errors.New("Run did not return within 30s of its context's end")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	waitFor(t, "the server to be ready", func() bool { return s.Ready(t.Context()) == nil })
	return stop
}

// waitTimeout bounds every wait of the tests.
const waitTimeout = 20 * time.Second

// waitFor polls cond until it holds, failing the test after waitTimeout.
// Polling is how a test observes another goroutine's (or node's) work
// through the database; the interval only bounds how soon it notices.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitExecution waits until execution id is recorded and finished, and
// returns it.
func waitExecution(t *testing.T, s *Server, id string) *api.Execution {
	t.Helper()
	var e *api.Execution
	waitFor(t, "execution "+id+" to finish", func() bool {
		got, err := s.GetExecution(t.Context(), id)
		if err != nil {
			return false
		}
		e = got
		return got.Outcome != "running"
	})
	return e
}

// httpSpec returns the JSON of an http job's spec.
func httpSpec(t *testing.T, spec map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cronSchedule returns the JSON of a cron schedule in UTC.
func cronSchedule(expr string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"kind": "cron", "expression": expr, "time_zone": "UTC"})
	return b
}

// endpoint is an HTTP endpoint for http jobs that records its requests
// and answers with status.
type endpoint struct {
	*httptest.Server
	mu       sync.Mutex
	status   int
	requests []*http.Request
	bodies   []string
}

func newEndpoint(t *testing.T, status int) *endpoint {
	t.Helper()
	e := &endpoint{status: status}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.requests = append(e.requests, r)
		e.bodies = append(e.bodies, string(body))
		status := e.status
		e.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "hello from the endpoint")
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *endpoint) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.requests)
}

func (e *endpoint) request(i int) *http.Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.requests[i]
}

// webhook is an alert webhook that collects the alerts it receives.
type webhook struct {
	*httptest.Server
	alerts chan alert.WebhookPayload
}

func newWebhook(t *testing.T) *webhook {
	t.Helper()
	w := &webhook{alerts: make(chan alert.WebhookPayload, 100)}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var p alert.WebhookPayload
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		w.alerts <- p
	}))
	t.Cleanup(w.Close)
	return w
}

// next returns the next alert of kind, skipping others, or fails the test.
func (w *webhook) next(t *testing.T, kind alert.Kind) alert.WebhookPayload {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		select {
		case p := <-w.alerts:
			if p.Kind == kind {
				return p
			}
		case <-timeout:
			t.Fatalf("no %s alert within %s", kind, waitTimeout)
		}
	}
}

// wantAPIError fails the test unless err is an *api.Error with code and
// field.
func wantAPIError(t *testing.T, err error, code api.ErrorCode, field string) {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v, want an *api.Error %s", err, code)
	}
	if ae.Code != code || ae.Field != field || ae.Message == "" {
		t.Fatalf("error = %+v, want code %s field %q and a message", ae, code, field)
	}
}

// blocker is a Go job type whose runs block until released or cancelled.
type blocker struct {
	started chan string // execution IDs, as runs start
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan string, 100), release: make(chan struct{})}
}

func (b *blocker) Execute(ctx context.Context, jc *chime.JobContext) error {
	jc.Logger.Info("block ran", "job_sees", jc.ExecutionID)
	if jc.Recovering {
		return nil
	}
	b.started <- jc.ExecutionID
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (b *blocker) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(waitTimeout):
		t.Fatal("the blocking job did not start")
	}
}
