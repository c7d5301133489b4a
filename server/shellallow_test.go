package server

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

// TestShellAllowListAppliesWhenAJobFires saves a shell job under one
// allow-list and fires it on a node restarted with a narrower one: the
// execution fails with the reason, and the program does not run.
func TestShellAllowListAppliesWhenAJobFires(t *testing.T) {
	t.Parallel()
	url := "sqlite:" + t.TempDir() + "/chime.db"
	marker := t.TempDir() + "/ran"
	wide := newServer(t, url, func(c *Config) { c.EnableShellJobs, c.ShellAllow = true, []string{"/usr/bin/touch", "/bin/echo"} })
	ctx := t.Context()
	j := api.Job{Group: "ops", Name: "touch", Type: "shell", Shell: []byte(`{"argv":["/usr/bin/touch","` + marker + `"]}`)}
	if _, err := wide.CreateJob(ctx, "alice", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if err := wide.Close(); err != nil {
		t.Fatal(err)
	}

	narrow := newServer(t, url, func(c *Config) { c.EnableShellJobs, c.ShellAllow = true, []string{"/bin/echo"} })
	start(t, narrow)
	acc, err := narrow.RunJob(ctx, "alice", "ops", "touch", api.RunRequest{})
	if err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	e := waitExecution(t, narrow, acc.ExecutionIDs[0])
	if e.Outcome != "failed" || !strings.Contains(e.Error, `"/usr/bin/touch" is not in this server's allow-list of commands (shell_allow)`) {
		t.Errorf("execution = %s (%s), want failed naming the allow-list", e.Outcome, e.Error)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused program ran: %v", err)
	}
}

func TestShellJobsNeedAnAllowList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		allow []string
		want  string
	}{
		{"none", nil, `server: invalid config: ShellAllow (required with EnableShellJobs): shelljob: the allow-list is empty: list the programs shell jobs may run, or "*" for any`},
		{"relative", []string{"backup"}, `server: invalid config: ShellAllow (required with EnableShellJobs): shelljob: allow-list entry 0 ("backup") is not an absolute path or glob`},
	} {
		_, err := New(t.Context(), Config{DatabaseURL: "sqlite:" + t.TempDir() + "/chime.db", EnableShellJobs: true, ShellAllow: tc.allow})
		if !errors.Is(err, ErrInvalidConfig) || err.Error() != tc.want {
			t.Errorf("%s: New = %v, want %s", tc.name, err, tc.want)
		}
	}
}
