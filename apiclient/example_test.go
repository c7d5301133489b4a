package apiclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server"
)

// This example starts a chime server on a temporary SQLite database, logs
// in as the admin its first start creates, saves a job, and shows how a
// stale update is refused.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "chime-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := server.New(ctx, server.Config{
		DatabaseURL: "sqlite:" + filepath.Join(dir, "chime.db"),
		Logger:      slog.New(slog.DiscardHandler),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	password, _, err := srv.BootstrapAdmin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	// The client: log in, then use the session's token.
	c, err := apiclient.New(hs.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	session, err := c.Login(ctx, "admin", password)
	if err != nil {
		log.Fatal(err)
	}
	c = c.WithToken(session.Token)

	job := api.Job{
		Group: "reports", Name: "nightly", Type: "http",
		HTTP: json.RawMessage(`{"method":"POST","url":"https://reports.example.com/run"}`),
		Triggers: []api.Trigger{{
			Schedule: json.RawMessage(`{"kind":"cron","expression":"0 30 2 ? * MON-FRI","time_zone":"Europe/Berlin"}`),
		}},
	}
	saved, created, err := c.PutJob(ctx, job, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("created %v: %s/%s, trigger %s\n", created, saved.Group, saved.Name, saved.Triggers[0].Name)

	// Edit the job from the version read; an edit from an older version
	// is refused with version_mismatch.
	current, err := c.GetJob(ctx, "reports", "nightly")
	if err != nil {
		log.Fatal(err)
	}
	current.Description = "weekday reports"
	if _, _, err := c.PutJob(ctx, *current, current.Version); err != nil {
		log.Fatal(err)
	}
	_, _, err = c.PutJob(ctx, *current, current.Version)
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		fmt.Println("second edit from the same version:", apiErr.Code)
	}
	// Output:
	// created true: reports/nightly, trigger nightly-0
	// second edit from the same version: version_mismatch
}
