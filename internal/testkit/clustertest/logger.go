package clustertest

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
)

// FileLogger returns a logger for an in-process scheduler that writes to a
// file in dir; the test's cleanup closes it and, when the test failed,
// logs its last lines.
func FileLogger(t testing.TB, dir, name string) *slog.Logger {
	t.Helper()
	path := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("logger %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = f.Close()
		if t.Failed() {
			t.Logf("%s: last lines of %s:\n%s", name, path, nodeproc.Tail(path, 40))
		}
	})
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
