package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server"
)

// A team embeds the server in its own binary to add a Go job type, then
// manages jobs of that type like the built-in ones: here it declares one
// in code, runs it by hand with a parameter, and reads the history.
func Example_embedded() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "chime-server-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	srv, err := server.New(ctx, server.Config{
		DatabaseURL: "sqlite:" + filepath.Join(dir, "chime.db"),
		Listen:      "127.0.0.1:0",
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	type greeting struct {
		Name string `json:"name"`
	}
	err = srv.RegisterJobType("greet", chime.TypedJob(func(ctx context.Context, jc *chime.JobContext, g greeting) error {
		jc.Logger.Info("hello", "name", g.Name)
		return nil
	}))
	if err != nil {
		panic(err)
	}
	job := api.Job{Group: "demo", Name: "greeter", Type: "greet", Data: map[string]any{"name": "world"}}
	if _, _, err := srv.PutJob(ctx, "example", job, 0, nil); err != nil {
		panic(err)
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	acc, err := srv.RunJob(ctx, "example", "demo", "greeter", api.RunRequest{Params: map[string]any{"name": "chime"}})
	if err != nil {
		panic(err)
	}
	var run *api.Execution
	for run == nil || run.Outcome == "running" {
		time.Sleep(10 * time.Millisecond) // the run happens on the scheduler's worker
		run, _ = srv.GetExecution(ctx, acc.ExecutionIDs[0])
	}
	fmt.Println(run.Outcome, run.Logs[0].Message, run.Logs[0].Attrs["name"])
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output: succeeded hello chime
}
