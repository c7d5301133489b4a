// Package servertest runs a real chime server inside a test, the way
// net/http/httptest runs an HTTP server: a whole node (scheduler, runner,
// history, auth and HTTP API) on a fresh database, serving its API on a
// loopback port, with its first admin created and logged in. It stops when
// the test ends.
//
//	srv := servertest.Start(t, nil) // SQLite in t.TempDir()
//	job, err := srv.Client.CreateJob(ctx, api.Job{…})
//
// Tests of other databases pass a URL, such as one from a test database
// helper, in Options.Config.DatabaseURL.
package servertest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server"
)

// AdminName is the name of the admin user every server starts with.
const AdminName = "admin"

// Options configure Start. A nil *Options means the defaults.
type Options struct {
	// Config is the server's configuration. Start sets, where they are
	// empty: DatabaseURL to a new SQLite file in the test's temporary
	// directory; Listen to "127.0.0.1:0"; Logger to one that discards;
	// Auth.BcryptCost to bcrypt.MinCost, so that logins stay quick under
	// the race detector; ShutdownTimeout to 5s; with EnableShellJobs,
	// ShellAllow to "*" (any program); and, when Egress.Allow and
	// Egress.Deny are both empty, Egress.Allow to loopback (127.0.0.0/8
	// and ::1), where the endpoints of net/http/httptest listen, so that
	// HTTP jobs and webhooks may reach them. Other fields default as in
	// server.Config. With EnableShellJobs the admin gets the shell
	// capability too, so that Client may write shell jobs.
	Config server.Config
	// JobTypes are Go job types registered on the server, by name, before
	// it runs. Defaults to none.
	JobTypes map[string]chime.Job
	// Listener, when set, is where the test's HTTP server listens, so
	// that a test can put the server's URL in its Config before it starts
	// (a single sign-on redirect URL). Start closes it with the server.
	// Defaults to a new listener on 127.0.0.1.
	Listener net.Listener
}

// jobTypes returns o's JobTypes; none for a nil o.
func (o *Options) jobTypes() map[string]chime.Job {
	if o == nil {
		return nil
	}
	return o.JobTypes
}

// Server is a running chime server and a client of its API.
type Server struct {
	// Server is the node itself, for calling its service methods directly
	// or reading its NodeID.
	Server *server.Server
	// URL is the base URL of the node's API, such as
	// "http://127.0.0.1:41234".
	URL string
	// AdminPassword is the password of the user AdminName, created on the
	// first start.
	AdminPassword string
	// AdminToken is the session token of AdminName's login.
	AdminToken string
	// Client is a client of the API logged in as AdminName.
	Client *apiclient.Client
}

// readyTimeout bounds how long Start waits for the node to join its
// cluster.
const readyTimeout = 30 * time.Second

// Start creates a server on a fresh database, creates its admin, runs it,
// logs in, and waits until the node is ready (it holds its lease and fires
// jobs). The server stops when the test ends; a Run that fails to stop
// cleanly fails the test. Start fails the test if any step fails.
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	var cfg server.Config
	if opts != nil {
		cfg = opts.Config
	}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = "sqlite:" + filepath.Join(t.TempDir(), "chime.db")
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Auth.BcryptCost == 0 {
		cfg.Auth.BcryptCost = bcrypt.MinCost
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 5 * time.Second
	}
	if cfg.EnableShellJobs && len(cfg.ShellAllow) == 0 {
		cfg.ShellAllow = []string{"*"}
	}
	if len(cfg.Egress.Allow) == 0 && len(cfg.Egress.Deny) == 0 {
		cfg.Egress.Allow = []string{"127.0.0.0/8", "::1"}
	}

	ctx := context.Background()
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatalf("servertest: server.New: %v", err)
	}
	for name, job := range opts.jobTypes() {
		if err := srv.RegisterJobType(name, job); err != nil {
			_ = srv.Close()
			t.Fatalf("servertest: RegisterJobType(%q): %v", name, err)
		}
	}
	password, created, err := srv.BootstrapAdmin(ctx)
	if err != nil || !created {
		_ = srv.Close()
		t.Fatalf("servertest: BootstrapAdmin: created %v, %v", created, err)
	}
	if cfg.AdminPassword != "" {
		password = cfg.AdminPassword // BootstrapAdmin returns only a password it made
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	// Run serves the API on Config.Listen, whose port the test cannot
	// learn; the same handler served here has an address it can.
	hs := httptest.NewUnstartedServer(srv.Handler())
	if opts != nil && opts.Listener != nil {
		_ = hs.Listener.Close()
		hs.Listener = opts.Listener
	}
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		stop()
		if err := <-done; err != nil {
			t.Errorf("servertest: server Run: %v", err)
		}
	})

	c, err := apiclient.New(hs.URL, nil)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	session, err := c.Login(ctx, AdminName, password)
	if err != nil {
		t.Fatalf("servertest: logging in as %s: %v", AdminName, err)
	}
	if cfg.EnableShellJobs {
		yes := true
		if _, err := c.WithToken(session.Token).UpdateUser(ctx, api.User{Name: AdminName, Shell: &yes}); err != nil {
			t.Fatalf("servertest: granting %s the shell capability: %v", AdminName, err)
		}
	}
	s := &Server{
		Server:        srv,
		URL:           hs.URL,
		AdminPassword: password,
		AdminToken:    session.Token,
		Client:        c.WithToken(session.Token),
	}
	s.waitReady(t)
	return s
}

// waitReady polls the node until it is ready or readyTimeout passes.
func (s *Server) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	for {
		err := s.Server.Ready(context.Background())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("servertest: the server is not ready after %v: %v", readyTimeout, err)
		}
		time.Sleep(20 * time.Millisecond) // the node joins its cluster in the background
	}
}

// StepJob is a Go job type for tests of live logs: it logs "first", waits
// for a Step, logs "second", waits for another Step and returns (or
// returns the cause when its run is cancelled first).
type StepJob struct{ step chan struct{} }

// NewStepJob returns a StepJob to register under Options.JobTypes.
func NewStepJob() *StepJob { return &StepJob{step: make(chan struct{})} }

// Step lets the running execution go on past its current line; it waits
// until the execution takes it.
func (s *StepJob) Step() { s.step <- struct{}{} }

// Execute logs the two lines, waiting for a Step after each.
func (s *StepJob) Execute(ctx context.Context, jc *chime.JobContext) error {
	for i, msg := range []string{"first", "second"} {
		jc.Logger.Info(msg, "n", i+1)
		select {
		case <-s.step:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}
