package apiclient_test

import (
	"context"
	"encoding/json"
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

// Every change of a job is kept as a version: this example changes a job,
// lists its versions, shows what the change did and rolls it back.
func ExampleClient_RollbackJob() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "chime-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := server.New(ctx, server.Config{DatabaseURL: "sqlite:" + filepath.Join(dir, "chime.db"), Logger: slog.New(slog.DiscardHandler)})
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
	c, err := apiclient.New(hs.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	session, err := c.Login(ctx, "admin", password)
	if err != nil {
		log.Fatal(err)
	}
	c = c.WithToken(session.Token)

	job := api.Job{Group: "reports", Name: "nightly", Type: "http", Timeout: "5m",
		HTTP: json.RawMessage(`{"url":"https://reports.example.com/run"}`)}
	if _, err := c.CreateJob(ctx, job); err != nil {
		log.Fatal(err)
	}
	job.Timeout = "1m"
	if _, _, err := c.PutJob(ctx, job, 0); err != nil {
		log.Fatal(err)
	}

	for v, err := range c.JobVersions(ctx, "reports", "nightly") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("version", v.Number, v.Kind, "by", v.Actor)
	}
	d, err := c.DiffJobVersions(ctx, "reports", "nightly", 0, 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(d.Diff)
	rolled, err := c.RollbackJob(ctx, "reports", "nightly", 1, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("timeout after the rollback:", rolled.Timeout)
	// Output:
	// version 2 updated by admin
	// version 1 created by admin
	// --- version 1
	// +++ version 2
	// @@ -4,6 +4,6 @@
	//      "url": "https://reports.example.com/run"
	//    },
	//    "name": "nightly",
	// -  "timeout": "5m0s",
	// +  "timeout": "1m0s",
	//    "type": "http"
	//  }
	// timeout after the rollback: 5m0s
}
