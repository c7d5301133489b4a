package executor_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/executor"
	"github.com/chime-scheduler/chime/server"
)

// Example runs a chime server in process, creates a token of role
// executor for group billing and a job routed to that group, and serves
// the job's runs with an Executor.
func Example() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	dir, err := os.MkdirTemp("", "chime-executor-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler)
	srv, err := server.New(ctx, server.Config{DatabaseURL: "sqlite:" + filepath.Join(dir, "chime.db"), Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	password, _, err := srv.BootstrapAdmin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	serverDone := make(chan error, 1)
	go func() { serverDone <- srv.Serve(ctx, ln) }()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	// As an admin: a token for the executors of group billing.
	admin, err := apiclient.New(hs.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	session, err := admin.Login(ctx, "admin", password)
	if err != nil {
		log.Fatal(err)
	}
	admin = admin.WithToken(session.Token)
	token, err := admin.CreateToken(ctx, api.Token{Name: "billing-executor", Role: api.RoleExecutor, Groups: []string{"billing"}})
	if err != nil {
		log.Fatal(err)
	}

	// The executor, as a team's service runs it.
	ex, err := executor.New(executor.Config{Server: hs.URL, Token: token.Secret, Group: "billing", Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	ex.Handle("invoice.close", func(ctx context.Context, r *executor.Run) error {
		r.Logger.Info("closing the month", "customer", r.Params["customer"])
		_, err := fmt.Fprintf(r.Output, "closed %v for %v", r.Params["customer"], r.Params["month"])
		return err
	})
	exCtx, stopExecutor := context.WithCancel(ctx)
	exDone := make(chan error, 1)
	go func() { exDone <- ex.Run(exCtx) }()
	// Runs are handed only to registered executors.
	for ex.ID() == "" {
		time.Sleep(10 * time.Millisecond) // Run registers in its own goroutine
	}

	// A job that runs there: saved once an executor of the group has
	// advertised its handler (or with executor.allow_unregistered).
	if _, err := admin.CreateJob(ctx, api.Job{
		Group: "billing", Name: "close-month", Type: "executor",
		Executor: &api.ExecutorTarget{Group: "billing", Handler: "invoice.close"},
		Data:     map[string]any{"customer": "acme"},
	}); err != nil {
		log.Fatal(err)
	}

	acc, err := admin.RunJob(ctx, "billing", "close-month", api.RunRequest{Params: map[string]any{"month": "2030-01"}})
	if err != nil {
		log.Fatal(err)
	}
	e, err := waitFinished(ctx, admin, acc.ExecutionIDs[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Outcome, "on executor", e.ExecutorID == ex.ID())
	fmt.Println(e.Output)

	stopExecutor()
	if err := <-exDone; err != nil {
		log.Fatal(err)
	}
	stop()
	if err := <-serverDone; err != nil {
		log.Fatal(err)
	}
	// Output:
	// succeeded on executor true
	// closed acme for 2030-01
}

// waitFinished polls the execution until it finished.
func waitFinished(ctx context.Context, c *apiclient.Client, id string) (*api.Execution, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		e, err := c.GetExecution(ctx, id)
		if err == nil && e.Outcome != "running" {
			return e, nil
		}
		time.Sleep(50 * time.Millisecond) // the API has no wait for an execution's end
	}
	return nil, errors.New("the execution did not finish within 30s")
}
