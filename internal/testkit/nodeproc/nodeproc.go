// Package nodeproc runs the node processes of chime's multi-process tests
// and benchmarks: a child process that prints "ready" on its standard
// output once it serves, stops on SIGTERM and may be killed with SIGKILL.
//
// A Process owns one goroutine, which reads the child's standard output to
// its end and then reaps the child; it ends when the child exits. Lines
// other than "ready" are kept and returned by Output.
package nodeproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ReadyLine is the line a node prints on its standard output once it
// serves.
const ReadyLine = "ready"

// ErrExited is returned by Wait and Stop when the process had exited
// before it was asked to.
var ErrExited = errors.New("nodeproc: process exited")

// Process is a running node process.
type Process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	ready  chan struct{}
	exited chan struct{}

	mu      sync.Mutex
	output  []string // standard output lines other than ReadyLine
	exitErr error    // set before exited is closed
}

// Start starts cmd, whose Stdout must be unset. Its standard input is a
// pipe that Send writes to and Close closes. Start does not wait for the
// process to be ready; WaitReady does.
func Start(cmd *exec.Cmd) (*Process, error) {
	p := &Process{cmd: cmd, ready: make(chan struct{}), exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("nodeproc: %w", err)
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("nodeproc: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("nodeproc: start %s: %w", cmd.Path, err)
	}
	go p.own(stdout)
	return p, nil
}

// own reads the standard output to its end, then reaps the process.
func (p *Process) own(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		if line == ReadyLine && !signalled {
			signalled = true
			close(p.ready)
			continue
		}
		p.mu.Lock()
		p.output = append(p.output, line)
		p.mu.Unlock()
	}
	err := p.cmd.Wait()
	p.mu.Lock()
	p.exitErr = err
	p.mu.Unlock()
	close(p.exited)
}

// PID returns the process ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// WaitReady waits until the process printed ReadyLine. It fails when the
// process exits first (ErrExited) or ctx ends.
func (p *Process) WaitReady(ctx context.Context) error {
	select {
	case <-p.ready:
		return nil
	case <-p.exited:
		return fmt.Errorf("%w before it was ready: %v", ErrExited, p.ExitErr())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Send writes one line to the process's standard input.
func (p *Process) Send(line string) error {
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		return fmt.Errorf("nodeproc: write to process %d: %w", p.PID(), err)
	}
	return nil
}

// Exited returns a channel closed once the process has exited and was
// reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitErr returns how the process exited: nil for status 0. It is nil
// while the process runs.
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitErr
}

// Output returns the lines the process printed on its standard output,
// ReadyLine excepted.
func (p *Process) Output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.output...)
}

// Stop sends SIGTERM and waits until the process exits, killing it when
// timeout passes first. It returns the exit error, an error saying it was
// killed, or ErrExited when the process was gone already.
func (p *Process) Stop(timeout time.Duration) error {
	select {
	case <-p.exited:
		return fmt.Errorf("%w before it was stopped: %v", ErrExited, p.ExitErr())
	default:
	}
	if err := p.signalAndWait(syscall.SIGTERM, "SIGTERM", timeout); err != nil {
		return err
	}
	return p.ExitErr()
}

// Quit sends SIGQUIT, on which a Go program writes the stacks of all its
// goroutines to its standard error and exits, and waits until it exited,
// killing it when timeout passes first. It is for a test that failed with
// the process still running: its log then says where each goroutine was.
func (p *Process) Quit(timeout time.Duration) error {
	return p.signalAndWait(syscall.SIGQUIT, "SIGQUIT", timeout)
}

// signalAndWait sends sig, called name in errors, and waits until the
// process exits, killing it when timeout passes first, which it reports as
// an error.
func (p *Process) signalAndWait(sig syscall.Signal, name string, timeout time.Duration) error {
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("nodeproc: %s process %d: %w", name, p.PID(), err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
		_ = p.Kill()
		return fmt.Errorf("nodeproc: process %d did not exit within %s of %s; killed it", p.PID(), timeout, name)
	}
}

// Kill kills the process with SIGKILL and waits until it was reaped.
func (p *Process) Kill() error {
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("nodeproc: kill process %d: %w", p.PID(), err)
	}
	<-p.exited
	return nil
}

// KeepLog copies a node's log, whole, to
// $CHIME_TEST_OUTPUT_DIR/<dir>/<test>/<node>.log, where it outlives the
// test's temporary directory, and logs where; without the variable it
// does nothing. A test calls it for each node when it failed.
func KeepLog(t testing.TB, dir, node, path string) {
	base := os.Getenv("CHIME_TEST_OUTPUT_DIR")
	if base == "" {
		return
	}
	data, err := os.ReadFile(path)
	if err == nil {
		dir = filepath.Join(base, dir, strings.ReplaceAll(t.Name(), "/", "_"))
		path = filepath.Join(dir, node+".log")
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
	}
	if err != nil {
		t.Logf("node %s: keeping its log: %v", node, err)
		return
	}
	t.Logf("node %s: its whole log is in %s", node, path)
}

// Tail returns the last n lines of a file, indented, for error messages
// about a node whose log is the file.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    ")
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}
