//go:build unix

package shelljob_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/jobs/shelljob"
)

func vars() jobs.Vars {
	return jobs.Vars{
		JobGroup:      "ops",
		JobName:       "backup",
		TriggerGroup:  "ops",
		TriggerName:   "backup-0",
		ExecutionID:   "exec-9",
		NodeID:        "node-b",
		ScheduledTime: time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC),
		FireTime:      time.Date(2025, 6, 1, 2, 0, 0, 250_000_000, time.UTC),
		Attempt:       1,
		Params:        map[string]any{"region": "eu west", "bucket": "b-1"},
	}
}

// run runs spec and returns its result, captured output and error.
func run(t *testing.T, r *shelljob.Runner, ctx context.Context, spec shelljob.Spec) (*shelljob.Result, string, error) {
	t.Helper()
	out := jobs.NewCapture(1 << 20)
	res, err := r.Run(ctx, spec, vars(), out)
	return res, out.String(), err
}

func TestRunOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec shelljob.Spec
		want string
	}{
		{"argv without a shell", shelljob.Spec{Argv: []string{"echo", "{{.JobName}}", "{{.Params.region}}", "$HOME", "*"}},
			"backup eu west $HOME *\n"},
		{"absolute program", shelljob.Spec{Argv: []string{"/bin/sh", "-c", `echo "$0 $1"`, "{{.ExecutionID}}", "x"}},
			"exec-9 x\n"},
		{"shell script", shelljob.Spec{Shell: `echo "$CHIME_JOB_NAME" | tr a-z A-Z`}, "BACKUP\n"},
		{"stdout and stderr interleaved", shelljob.Spec{Shell: "echo out1; echo err1 >&2; echo out2; echo err2 >&2"},
			"out1\nerr1\nout2\nerr2\n"},
		{"stdin is empty", shelljob.Spec{Shell: "cat; echo end"}, "end\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, out, err := run(t, &shelljob.Runner{}, t.Context(), tt.spec)
			if err != nil {
				t.Fatalf("Run() error = %v (output %q)", err, out)
			}
			if out != tt.want || res.ExitCode != 0 {
				t.Errorf("Run() wrote %q, exit code %d; want %q, 0", out, res.ExitCode, tt.want)
			}
		})
	}
}

func TestRunEnvironment(t *testing.T) {
	t.Parallel()
	fire := []string{
		"CHIME_ATTEMPT=1",
		"CHIME_EXECUTION_ID=exec-9",
		"CHIME_FIRE_TIME=2025-06-01T02:00:00.25Z",
		"CHIME_JOB_GROUP=ops",
		"CHIME_JOB_NAME=backup",
		"CHIME_NODE_ID=node-b",
		`CHIME_PARAMS={"bucket":"b-1","region":"eu west"}`,
		"CHIME_SCHEDULED_TIME=2025-06-01T02:00:00Z",
		"CHIME_TRIGGER_GROUP=ops",
		"CHIME_TRIGGER_NAME=backup-0",
	}
	env := map[string]string{"BUCKET": "s3://{{.Params.bucket}}", "PATH": "/usr/bin:/bin"}

	t.Run("own", func(t *testing.T) {
		t.Parallel()
		_, out, err := run(t, &shelljob.Runner{}, t.Context(), shelljob.Spec{Argv: []string{"env"}, Env: env})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		slices.Sort(got)
		want := append([]string{"BUCKET=s3://b-1", "PATH=/usr/bin:/bin"}, fire...)
		slices.Sort(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("environment\n %q\nwant\n %q", got, want)
		}
	})
	t.Run("inherited", func(t *testing.T) {
		t.Parallel()
		// Only the variables named are passed on; one the server lacks is
		// left out.
		home, ok := os.LookupEnv("HOME")
		if !ok {
			t.Skip("the test process has no HOME to pass on")
		}
		spec := shelljob.Spec{Argv: []string{"env"}, Env: env, InheritEnv: []string{"HOME", "CHIME_TEST_NO_SUCH_VARIABLE"}}
		_, out, err := run(t, &shelljob.Runner{}, t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		slices.Sort(got)
		want := append([]string{"BUCKET=s3://b-1", "PATH=/usr/bin:/bin", "HOME=" + home}, fire...)
		slices.Sort(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("environment\n %q\nwant\n %q", got, want)
		}
	})
	t.Run("without params", func(t *testing.T) {
		t.Parallel()
		var out bytes.Buffer
		_, err := new(shelljob.Runner).Run(t.Context(), shelljob.Spec{Shell: `echo "$CHIME_PARAMS|$CHIME_FIRE_TIME|"`}, jobs.Vars{}, &out)
		if err != nil || out.String() != "{}||\n" {
			t.Errorf("Run() wrote %q, %v; want empty params as {} and no fire time", out.String(), err)
		}
	})
}

func TestRunDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, out, err := run(t, &shelljob.Runner{}, t.Context(), shelljob.Spec{Shell: "pwd -P", Dir: dir})
	if err != nil || out != want+"\n" {
		t.Errorf("Run() in %s wrote %q, %v; want %q", dir, out, err, want+"\n")
	}
	missing := filepath.Join(dir, "missing")
	for bad, msg := range map[string]string{
		missing: "shell.dir: no such directory " + strconv.Quote(missing),
		file:    "shell.dir: not a directory: " + strconv.Quote(file),
	} {
		res, _, err := run(t, &shelljob.Runner{}, t.Context(), shelljob.Spec{Shell: "true", Dir: bad})
		if res != nil {
			t.Errorf("Run() in %s = %+v, want no result", bad, res)
		}
		wantFieldError(t, err, "shell.dir", msg)
	}
}

func TestRunExit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		shell      string
		wantCode   int
		wantSignal os.Signal
		wantMsg    string
	}{
		{"success", "exit 0", 0, nil, ""},
		{"failure", "echo failing; exit 3", 3, nil, "shelljob: command exited with status 3"},
		{"high status", "exit 255", 255, nil, ""},
		{"killed by a signal", "kill -KILL $$", -1, syscall.SIGKILL, "shelljob: command killed by a signal: killed"},
		{"crashed", "kill -SEGV $$", -1, syscall.SIGSEGV, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, _, err := run(t, &shelljob.Runner{}, t.Context(), shelljob.Spec{Shell: tt.shell})
			if res == nil || res.ExitCode != tt.wantCode {
				t.Fatalf("Run() = %+v, %v; want exit code %d", res, err, tt.wantCode)
			}
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("Run() error = %v, want nil", err)
				}
				return
			}
			var ee *shelljob.ExitError
			if !errors.As(err, &ee) || ee.Code != tt.wantCode || ee.Signal != tt.wantSignal {
				t.Fatalf("Run() error = %#v, want an *ExitError{Code: %d, Signal: %v}", err, tt.wantCode, tt.wantSignal)
			}
			if tt.wantMsg != "" && err.Error() != tt.wantMsg {
				t.Errorf("error = %q, want %q", err, tt.wantMsg)
			}
		})
	}
}

// TestRunRefusesBeforeRunning checks that a spec that cannot run as meant
// runs nothing.
func TestRunRefusesBeforeRunning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		spec  func(marker string) shelljob.Spec
		field string // "" for an error that is not a *jobs.FieldError
	}{
		{"missing param in argv", func(m string) shelljob.Spec {
			return shelljob.Spec{Argv: []string{"touch", m, "{{.Params.nope}}"}}
		}, "shell.argv[2]"},
		{"missing param in env", func(m string) shelljob.Spec {
			return shelljob.Spec{Argv: []string{"touch", m}, Env: map[string]string{"X": "{{.Params.nope}}"}}
		}, "shell.env.X"},
		{"invalid spec", func(m string) shelljob.Spec {
			return shelljob.Spec{Argv: []string{"touch", m}, Shell: "touch " + m}
		}, "shell.shell"},
		{"no such program", func(m string) shelljob.Spec {
			return shelljob.Spec{Argv: []string{"chime-no-such-program", m}}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(t.TempDir(), "ran")
			res, _, err := run(t, &shelljob.Runner{}, t.Context(), tt.spec(marker))
			if res != nil || err == nil {
				t.Fatalf("Run() = %+v, %v; want no result and an error", res, err)
			}
			if tt.field != "" {
				wantFieldError(t, err, tt.field, "")
			}
			if _, statErr := os.Stat(marker); statErr == nil {
				t.Errorf("the command ran")
			}
		})
	}
}

func TestRunTruncatedOutput(t *testing.T) {
	t.Parallel()
	// Far more than a pipe holds, so a reader that stopped would block
	// the command.
	const size = 1 << 20
	out := jobs.NewCapture(1000)
	_, err := new(shelljob.Runner).Run(t.Context(), shelljob.Spec{Shell: "head -c " + strconv.Itoa(size) + " /dev/zero"}, vars(), out)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(out.Bytes()); got != 1000 || !out.Truncated() || out.Total() != size {
		t.Errorf("kept %d bytes of %d, truncated %v; want 1000 of %d, true", got, out.Total(), out.Truncated(), size)
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRunOutputWriterFails(t *testing.T) {
	t.Parallel()
	// The command must still run to its end, not block on a full pipe.
	res, err := new(shelljob.Runner).Run(t.Context(), shelljob.Spec{Shell: "head -c 1000000 /dev/zero; exit 4"}, vars(), failingWriter{})
	var ee *shelljob.ExitError
	if res == nil || res.ExitCode != 4 || !errors.As(err, &ee) {
		t.Fatalf("Run() = %+v, %v; want exit code 4", res, err)
	}
	res, err = new(shelljob.Runner).Run(t.Context(), shelljob.Spec{Shell: "echo hi"}, vars(), failingWriter{})
	if res == nil || res.ExitCode != 0 || err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Run() = %+v, %v; want exit code 0 and the writer's error", res, err)
	}
}

// family is a script that starts background work, a child and a
// grandchild, prints each one's pid and "ready", and waits for them.
const family = `sleep 60 & echo "pid $!"
sh -c 'sleep 60 & echo "pid $!"; wait' & echo "pid $!"
echo ready
wait`

// familyWriter is a Capture that closes ready once family has written its
// three pids and "ready", which may come in any order.
type familyWriter struct {
	*jobs.Capture
	once  sync.Once
	ready chan struct{}
}

func newFamilyWriter() *familyWriter {
	return &familyWriter{Capture: jobs.NewCapture(1 << 16), ready: make(chan struct{})}
}

func (w *familyWriter) Write(p []byte) (int, error) {
	n, err := w.Capture.Write(p)
	if out := w.String(); strings.Count(out, "pid ") == 3 && strings.Contains(out, "ready\n") {
		w.once.Do(func() { close(w.ready) })
	}
	return n, err
}

// withoutPids returns out without its "pid N" lines.
func withoutPids(out string) string {
	var b strings.Builder
	for line := range strings.Lines(out) {
		if !strings.HasPrefix(line, "pid ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// pids returns the pids a script printed as "pid N" lines.
func pids(t *testing.T, out string) []int {
	t.Helper()
	var list []int
	for line := range strings.Lines(out) {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "pid "); ok {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("bad pid line %q", line)
			}
			list = append(list, pid)
		}
	}
	return list
}

// wantDead asserts each process is gone. Run has killed them, but dying
// is not instant and they are not the test's children to wait for, so
// this polls; a zombie counts as dead.
func wantDead(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		deadline := time.Now().Add(10 * time.Second)
		for alive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d is still running", pid)
			}
			time.Sleep(10 * time.Millisecond) // Nothing to wait on: see above.
		}
	}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	// The state follows the parenthesised command name.
	_, rest, _ := bytes.Cut(stat, []byte(") "))
	return !bytes.HasPrefix(rest, []byte("Z")) && !bytes.HasPrefix(rest, []byte("X"))
}

func TestRunTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	out := newFamilyWriter()
	res, err := new(shelljob.Runner).Run(t.Context(), shelljob.Spec{Shell: family, Timeout: 500 * time.Millisecond}, vars(), out)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run() error = %v, want one wrapping context.DeadlineExceeded", err)
	}
	const msg = "shelljob: command ran longer than its 500ms timeout and was stopped: context deadline exceeded"
	if err.Error() != msg {
		t.Errorf("error = %q, want %q", err, msg)
	}
	if res == nil || res.ExitCode != -1 {
		t.Errorf("Run() result = %+v, want exit code -1", res)
	}
	list := pids(t, out.String())
	if len(list) != 3 || !strings.Contains(out.String(), "ready\n") {
		t.Fatalf("script wrote %q before its timeout; want three pids and ready", out.String())
	}
	wantDead(t, list)
}

func TestRunCancelKillsTheGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		// wantOut is what the script writes once stopped, if anything.
		wantOut  string
		wantCode int
	}{
		// Every process dies of SIGTERM.
		{"terminated", family, "", -1},
		// The script ignores SIGTERM, and so do the children it starts
		// after that: only SIGKILL, a grace period later, ends them.
		{"killed", "trap '' TERM\n" + family, "", -1},
		// The script handles SIGTERM and exits cleanly in its grace period.
		{"graceful", "trap 'echo stopping; exit 0' TERM\n" + family, "stopping\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			interrupted := errors.New("job interrupted")
			ctx, cancel := context.WithCancelCause(t.Context())
			out := newFamilyWriter()
			go func() {
				<-out.ready
				cancel(interrupted)
			}()
			r := &shelljob.Runner{GracePeriod: 200 * time.Millisecond}
			res, err := r.Run(ctx, shelljob.Spec{Shell: tt.script}, vars(), out)
			if !errors.Is(err, context.Canceled) || !errors.Is(err, interrupted) {
				t.Fatalf("Run() error = %v, want one wrapping context.Canceled and the cause", err)
			}
			const msg = "shelljob: command stopped (job interrupted): context canceled"
			if err.Error() != msg {
				t.Errorf("error = %q, want %q", err, msg)
			}
			if res == nil || res.ExitCode != tt.wantCode {
				t.Errorf("Run() result = %+v, want exit code %d", res, tt.wantCode)
			}
			if got, want := withoutPids(out.String()), "ready\n"+tt.wantOut; got != want {
				t.Errorf("besides pids the script wrote %q, want %q", got, want)
			}
			list := pids(t, out.String())
			if len(list) != 3 {
				t.Fatalf("script wrote %q; want three pids", out.String())
			}
			wantDead(t, list)
		})
	}
}

func TestRunAlreadyCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	marker := filepath.Join(t.TempDir(), "ran")
	res, err := new(shelljob.Runner).Run(ctx, shelljob.Spec{Argv: []string{"touch", marker}}, vars(), nil)
	if res != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Run() = %+v, %v; want no result and context.Canceled", res, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran")
	}
}

// TestRunKillsLeftovers checks that background processes a command leaves
// in its group when it exits do not outlive Run.
func TestRunKillsLeftovers(t *testing.T) {
	t.Parallel()
	res, out, err := run(t, &shelljob.Runner{}, t.Context(), shelljob.Spec{
		Shell: `sleep 60 & echo "pid $!"; sleep 60 >/dev/null 2>&1 & echo "pid $!"`,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run() = %+v, %v; want success", res, err)
	}
	list := pids(t, out)
	if len(list) != 2 {
		t.Fatalf("script wrote %q; want two pids", out)
	}
	wantDead(t, list)
}

// TestRunEscapedProcess checks that a process that left the command's
// group, and so is out of Run's reach, cannot hold Run up by keeping the
// output open: Run stops reading after the grace period.
func TestRunEscapedProcess(t *testing.T) {
	t.Parallel()
	r := &shelljob.Runner{GracePeriod: 100 * time.Millisecond}
	res, out, err := run(t, r, t.Context(), shelljob.Spec{Shell: `setsid sleep 60 & echo "pid $!"`})
	list := pids(t, out)
	for _, pid := range list {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run() = %+v, %v; want success", res, err)
	}
	if len(list) != 1 {
		t.Fatalf("script wrote %q; want a pid", out)
	}
}

func TestRunRefusesAProgramNotAllowed(t *testing.T) {
	t.Parallel()
	allow, err := shelljob.NewAllowList([]string{"/bin/echo"})
	if err != nil {
		t.Fatal(err)
	}
	r := &shelljob.Runner{Allow: allow}
	marker := filepath.Join(t.TempDir(), "ran")
	res, _, err := run(t, r, t.Context(), shelljob.Spec{Argv: []string{"/usr/bin/touch", marker}})
	wantFieldError(t, err, "shell.argv[0]", "")
	if res != nil {
		t.Errorf("Result = %+v, want nil: nothing started", res)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused command ran: %v", err)
	}
	if _, out, err := run(t, r, t.Context(), shelljob.Spec{Argv: []string{"/bin/echo", "hi"}}); err != nil || out != "hi\n" {
		t.Errorf("allowed command = %q, %v; want its output", out, err)
	}
}
