package server

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/executor"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
)

// syncBuffer is a bytes.Buffer safe for a process's writes and a test's
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// executorProcess is examples/executor running as a child process.
type executorProcess struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
}

// startExecutorProcess starts the example executor of group billing,
// killed when the test ends, and returns it once it registered.
func (f *executorFixture) startExecutorProcess(t *testing.T, bin *nodeproc.Binary, instance string) *executorProcess {
	t.Helper()
	path, err := bin.Path(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := &executorProcess{stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(path, "-server", f.url, "-group", "billing", "-instance", instance, "-labels", "region=eu,proc=yes")
	p.cmd.Env = append(p.cmd.Environ(), "CHIME_TOKEN="+f.token)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	waitFor(t, "executor process "+instance+" to register", func() bool {
		return strings.Contains(p.stderr.String(), "executor registered")
	})
	return p
}

// executorIDOf returns the ID of the live executor named instance.
func (f *executorFixture) executorIDOf(t *testing.T, instance string) string {
	t.Helper()
	list, err := f.s.ListExecutors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.Instance == instance && e.Live {
			return e.ID
		}
	}
	t.Fatalf("no live executor %s in %+v", instance, list)
	return ""
}

// TestExecutorProcess runs examples/executor as a real process. SIGSTOPped
// past its lease while it runs a job that requests recovery, it loses the
// run to another executor; after SIGCONT its late result is refused and
// the history shows one outcome per attempt. Killed with SIGKILL while it
// runs a job that does not request recovery, its run is recorded
// executor_lost once its lease lapses.
func TestExecutorProcess(t *testing.T) {
	t.Parallel()
	bin := nodeproc.NewBinary("github.com/chime-scheduler/chime/examples/executor", t.TempDir())
	forEachDB(t, func(t *testing.T, url string) {
		f := newExecutorFixture(t, url, func(c *Config) { c.ExecutorLease = time.Second })
		// The process registers first, so that routing "first" picks it.
		proc := f.startExecutorProcess(t, bin, "proc")
		procID := f.executorIDOf(t, "proc")
		recovered := make(chan *executor.Run, 1)
		f.startExecutor(t, "in-process", map[string]executor.HandlerFunc{
			"sleep": func(_ context.Context, r *executor.Run) error { recovered <- r; return nil },
		})

		// SIGSTOP past the lease, then SIGCONT.
		id := f.runOnce(t, executorJob("stop", "sleep", true), map[string]any{"seconds": 3})
		first := running(t, f.s, "billing", "stop")
		if first.ID != id || first.ExecutorID != procID {
			t.Fatalf("running %+v, want %s on the process %s", first, id, procID)
		}
		waitFor(t, "the process to start the handler", func() bool { return strings.Contains(proc.stderr.String(), "sleeping") })
		if err := proc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		r := receive(t, "the re-run", recovered)
		if !r.Recovering || r.Attempt != 2 {
			t.Errorf("re-run %+v, want attempt 2, recovering", r)
		}
		var attempts []api.Execution
		waitFor(t, "the second attempt to finish", func() bool {
			var err error
			attempts, err = f.s.Attempts(t.Context(), id)
			return err == nil && len(attempts) == 2 && attempts[1].Outcome != "running"
		})
		if err := proc.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the process's late result to be refused", func() bool {
			return strings.Contains(proc.stderr.String(), "the server refused the result")
		})
		waitFor(t, "the process to register again", func() bool {
			return strings.Count(proc.stderr.String(), "executor registered") == 2
		})
		after, err := f.s.Attempts(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != 2 || after[0].Outcome != "executor_lost" || after[0].ExecutorID != procID ||
			after[1].Outcome != "succeeded" || after[1].ExecutorInstance != "in-process" {
			t.Errorf("attempts %+v, want executor_lost on the process then succeeded in process", after)
		}

		// SIGKILL: the run is lost within the lease.
		procID = f.executorIDOf(t, "proc")
		// Only the process has label proc: the in-process executor now
		// registered before its new registration.
		id = f.runOnce(t, executorJob("kill9", "sleep", false, func(j *api.Job) { j.Executor.Labels = map[string]string{"proc": "yes"} }),
			map[string]any{"seconds": 30})
		if e := running(t, f.s, "billing", "kill9"); e.ExecutorID != procID {
			t.Fatalf("running %+v, want on the process %s", e, procID)
		}
		if err := proc.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		e := waitExecution(t, f.s, id)
		if e.Outcome != "executor_lost" || e.ExecutorID != procID {
			t.Errorf("execution %+v, want executor_lost on %s", e, procID)
		}
	})
}
