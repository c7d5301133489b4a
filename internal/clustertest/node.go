package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/clustertest/firelog"
)

// testnodePackage is the import path of the node binary.
const testnodePackage = "github.com/chime-scheduler/chime/internal/clustertest/testnode"

// Binary builds the testnode binary once, on first use, into a directory
// its owner removes.
//
// The binary is built without -race even when the tests run with it: the
// race detector would slow every node several times over and change the
// timing the scenarios exercise, and the code it would check (the
// scheduler, the store) is race-tested by the in-process scenario and by
// its own packages' tests.
type Binary struct {
	dir  string
	once sync.Once
	path string
	err  error
}

// NewBinary returns a Binary that builds into dir.
func NewBinary(dir string) *Binary { return &Binary{dir: dir} }

// Path returns the built binary, building it on the first call.
func (b *Binary) Path(ctx context.Context) (string, error) {
	b.once.Do(func() {
		path := filepath.Join(b.dir, "testnode")
		cmd := exec.CommandContext(ctx, goCommand(), "build", "-o", path, testnodePackage)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %w\n%s", testnodePackage, err, out)
			return
		}
		b.path = path
	})
	return b.path, b.err
}

// goCommand returns the go command of the toolchain running the tests.
func goCommand() string {
	// The toolchain that built the running test binary; go test also puts
	// its bin directory first on PATH, hence the fallback.
	path := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	return "go"
}

// NodeConfig configures a testnode process; zero durations leave the
// scheduler's defaults.
type NodeConfig struct {
	ID               string
	DatabaseURL      string
	Workers          int
	ClockSkew        time.Duration
	CheckIn          time.Duration
	DeadAfter        time.Duration
	LookAhead        time.Duration
	IdleWait         time.Duration
	MisfireThreshold time.Duration
	JobDuration      time.Duration
}

func (c NodeConfig) args(out string) []string {
	args := []string{"-database-url", c.DatabaseURL, "-node-id", c.ID, "-out", out}
	if c.Workers > 0 {
		args = append(args, "-workers", strconv.Itoa(c.Workers))
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"-clock-skew", c.ClockSkew},
		{"-check-in", c.CheckIn},
		{"-dead-after", c.DeadAfter},
		{"-look-ahead", c.LookAhead},
		{"-idle-wait", c.IdleWait},
		{"-misfire-threshold", c.MisfireThreshold},
		{"-job-duration", c.JobDuration},
	} {
		if d.v != 0 {
			args = append(args, d.flag, d.v.String())
		}
	}
	return args
}

// readyTimeout bounds how long a node may take to open its store, migrate
// it and start.
const readyTimeout = 60 * time.Second

// Node is a running testnode process. The test's cleanup kills it if the
// test did not stop it.
type Node struct {
	ID string
	// Out is the node's fire log.
	Out string
	// Log is the node's standard error: its scheduler's logs.
	Log string

	cmd     *exec.Cmd
	exited  chan struct{}
	exitErr error // set before exited is closed
}

// StartNode starts a testnode process with its files in dir and waits until
// it reports ready.
func StartNode(t testing.TB, bin, dir string, cfg NodeConfig) *Node {
	t.Helper()
	n := &Node{
		ID:     cfg.ID,
		Out:    filepath.Join(dir, cfg.ID+".fires"),
		Log:    filepath.Join(dir, cfg.ID+".log"),
		exited: make(chan struct{}),
	}
	logFile, err := os.OpenFile(n.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("node %s: %v", cfg.ID, err)
	}
	n.cmd = exec.Command(bin, cfg.args(n.Out)...)
	n.cmd.Stderr = logFile
	stdout, err := n.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("node %s: %v", cfg.ID, err)
	}
	if err := n.cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("node %s: start: %v", cfg.ID, err)
	}
	logFile.Close() // the child has its own descriptor
	ready := make(chan struct{})
	// This goroutine owns the process: it reads its standard output to the
	// end, then reaps it. It ends when the process exits.
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			if sc.Text() == "ready" && !signalled {
				signalled = true
				close(ready)
			}
		}
		n.exitErr = n.cmd.Wait()
		close(n.exited)
	}()
	t.Cleanup(func() {
		if !n.Exited() {
			_ = n.cmd.Process.Kill()
			<-n.exited
		}
		if t.Failed() {
			t.Logf("node %s: last lines of its log %s:\n%s", n.ID, n.Log, tail(n.Log, 40))
		}
	})
	select {
	case <-ready:
	case <-n.exited:
		t.Fatalf("node %s exited before it was ready (%v):\n%s", n.ID, n.exitErr, tail(n.Log, 40))
	case <-time.After(readyTimeout):
		t.Fatalf("node %s not ready after %s:\n%s", n.ID, readyTimeout, tail(n.Log, 40))
	}
	return n
}

// Exited reports whether the process has exited.
func (n *Node) Exited() bool {
	select {
	case <-n.exited:
		return true
	default:
		return false
	}
}

// stopTimeout bounds a graceful stop; the node's own bound on waiting for
// running jobs is 30s.
const stopTimeout = 60 * time.Second

// Stop sends SIGTERM and waits for the node to exit; it fails the test
// unless the node exits with status 0.
func (n *Node) Stop(t testing.TB) {
	t.Helper()
	if n.Exited() {
		t.Errorf("node %s had exited already (%v):\n%s", n.ID, n.exitErr, tail(n.Log, 40))
		return
	}
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("node %s: SIGTERM: %v", n.ID, err)
	}
	select {
	case <-n.exited:
	case <-time.After(stopTimeout):
		_ = n.cmd.Process.Kill()
		<-n.exited
		t.Errorf("node %s did not stop within %s of SIGTERM; killed it", n.ID, stopTimeout)
		return
	}
	if n.exitErr != nil {
		t.Errorf("node %s exited with %v:\n%s", n.ID, n.exitErr, tail(n.Log, 40))
	}
}

// Kill kills the node with SIGKILL and waits until it is gone.
func (n *Node) Kill(t testing.TB) {
	t.Helper()
	if err := n.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("node %s: kill: %v", n.ID, err)
	}
	<-n.exited
}

// Records returns the node's fire log.
func (n *Node) Records() ([]firelog.Record, error) { return firelog.Read(n.Out) }

// Records returns the fire logs of the nodes, merged in node order.
func Records(nodes ...*Node) ([]firelog.Record, error) {
	var out []firelog.Record
	for _, n := range nodes {
		recs, err := n.Records()
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// tail returns the last n lines of a file, for failure messages.
func tail(path string, n int) string {
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
