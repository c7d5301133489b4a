// Command embedded-server is a team's own scheduler service: chime server
// embedded in a binary that adds a Go job type, "invoice", next to the
// built-in http and shell types. It declares one job in code at every
// start (an upsert by key, so a restart, another node or an edit through
// the API reconcile with it), then serves the API until interrupted.
//
//	go run ./examples/embedded-server
//	go run ./examples/embedded-server -db postgres://chime@localhost/chime -listen :8081
//
// On the first start it prints the password of the "admin" user; with it,
// the API (and the chime CLI) can run the job by hand:
//
//	curl -X POST -H "Authorization: Bearer $TOKEN" \
//	    -d '{"params":{"customer":"acme"}}' localhost:8080/api/v1/jobs/billing/invoices/run
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server"
)

func main() {
	db := flag.String("db", "sqlite:"+filepath.Join(os.TempDir(), "chime-embedded.db"), "database URL: sqlite:PATH, postgres://… or mysql://…")
	listen := flag.String("listen", server.DefaultListen, "address of the HTTP API")
	runFor := flag.Duration("for", 0, "stop after this long (default: until interrupted)")
	flag.Parse()
	if err := run(*db, *listen, *runFor); err != nil {
		fmt.Fprintln(os.Stderr, "embedded-server:", err)
		os.Exit(1)
	}
}

// invoiceParams are what an invoice run reads from its job's data and the
// parameters of a run by hand.
type invoiceParams struct {
	Customer string `json:"customer"`
	Currency string `json:"currency"`
}

// sendInvoices is the team's own code. Its log lines are kept with each
// execution in the server's history; a returned error fails the
// execution, which the job's retry policy then retries.
func sendInvoices(ctx context.Context, jc *chime.JobContext, p invoiceParams) error {
	if p.Customer == "" {
		return errors.New("no customer to invoice")
	}
	jc.Logger.Info("invoicing", "customer", p.Customer, "currency", p.Currency, "for", jc.ScheduledFireTime)
	select {
	case <-time.After(100 * time.Millisecond): // the work
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	jc.Logger.Info("invoice sent", "customer", p.Customer)
	return nil
}

func run(db, listen string, runFor time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if runFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, runFor)
		defer cancel()
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))

	// Listen first: with the port taken, stop before touching the
	// database (and before creating an admin whose password nobody sees).
	ln, err := server.Listen(listen)
	if err != nil {
		return err
	}
	defer ln.Close() // Serve closes it; this is for the returns before
	srv, err := server.New(ctx, server.Config{DatabaseURL: db, Logger: logger})
	if err != nil {
		return err
	}
	if err := srv.RegisterJobType("invoice", chime.TypedJob(sendInvoices)); err != nil {
		_ = srv.Close()
		return err
	}

	// The job, declared in code. PutJob is an upsert by key: run twice, it
	// changes nothing; its triggers keep their state.
	job := api.Job{
		Group:       "billing",
		Name:        "invoices",
		Description: "send the month's invoices",
		Type:        "invoice",
		Data:        map[string]any{"customer": "everyone", "currency": "EUR"},
		Triggers: []api.Trigger{{
			Schedule: json.RawMessage(`{"kind":"cron","expression":"0 0 6 1 * ?","time_zone":"Europe/Berlin"}`),
		}},
		Timeout: "10m",
		Retry:   &api.RetryPolicy{MaxAttempts: 3, Delay: "1m"},
		Overlap: api.OverlapSkip,
	}
	stored, created, err := srv.PutJob(ctx, "embedded-server", job, 0, nil)
	if err != nil {
		_ = srv.Close()
		return err
	}
	fmt.Printf("job %s/%s: version %d (created: %v), next run %s\n",
		stored.Group, stored.Name, stored.Version, created, stored.Status.NextFireTime.Format(time.RFC3339))

	password, first, err := srv.BootstrapAdmin(ctx)
	if err != nil {
		_ = srv.Close()
		return err
	}
	if first {
		fmt.Printf("first start: user \"admin\", password %s (shown once)\n", password)
	}
	return srv.Serve(ctx, ln)
}
