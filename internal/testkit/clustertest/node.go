package clustertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/firelog"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
)

// testnodePackage is the import path of the node binary, which
// nodeproc.Binary builds once per test run, without -race.
const testnodePackage = "github.com/chime-scheduler/chime/internal/testkit/clustertest/testnode"

// stoppingLine is what a testnode prints before it stops itself (testnode's
// StoppingLine).
const stoppingLine = "stopping"

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
	// StopOnFire names a trigger (GROUP.NAME) whose first firing on the
	// node stops it with SIGSTOP before the job starts.
	StopOnFire string
}

func (c NodeConfig) args(out string) []string {
	args := []string{"-database-url", c.DatabaseURL, "-node-id", c.ID, "-out", out}
	if c.Workers > 0 {
		args = append(args, "-workers", strconv.Itoa(c.Workers))
	}
	if c.StopOnFire != "" {
		args = append(args, "-stop-on-fire", c.StopOnFire)
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

	proc *nodeproc.Process
}

// StartNode starts a testnode process with its files in dir and waits until
// it reports ready.
func StartNode(t testing.TB, bin, dir string, cfg NodeConfig) *Node {
	t.Helper()
	n := &Node{
		ID:  cfg.ID,
		Out: filepath.Join(dir, cfg.ID+".fires"),
		Log: filepath.Join(dir, cfg.ID+".log"),
	}
	logFile, err := os.OpenFile(n.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("node %s: %v", cfg.ID, err)
	}
	cmd := exec.Command(bin, cfg.args(n.Out)...)
	cmd.Stderr = logFile
	n.proc, err = nodeproc.Start(cmd)
	_ = logFile.Close() // the child has its own descriptor
	if err != nil {
		t.Fatalf("node %s: %v", cfg.ID, err)
	}
	t.Cleanup(func() {
		if !n.Exited() {
			if t.Failed() {
				// The stacks of a node still running when the test
				// failed say where it stood, a stalled node's above all.
				if err := n.proc.Quit(10 * time.Second); err != nil {
					t.Logf("node %s: %v", n.ID, err)
				}
			}
			_ = n.proc.Kill()
		}
		if t.Failed() {
			t.Logf("node %s: last lines of its log %s:\n%s", n.ID, n.Log, nodeproc.Tail(n.Log, 40))
			nodeproc.KeepLog(t, "clustertest", n.ID, n.Log)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := n.proc.WaitReady(ctx); err != nil {
		t.Fatalf("node %s not ready (%v):\n%s", n.ID, err, nodeproc.Tail(n.Log, 40))
	}
	return n
}

// LogLines counts how often substr occurs in the node's log: the lines that
// hold it, for a message that fits on one line.
func (n *Node) LogLines(substr string) int {
	data, err := os.ReadFile(n.Log)
	if err != nil {
		return 0
	}
	return strings.Count(string(data), substr)
}

// Exited reports whether the process has exited.
func (n *Node) Exited() bool {
	select {
	case <-n.proc.Exited():
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
	if err := n.proc.Stop(stopTimeout); err != nil {
		t.Errorf("node %s: %v:\n%s", n.ID, err, nodeproc.Tail(n.Log, 40))
	}
}

// Kill kills the node with SIGKILL and waits until it is gone.
func (n *Node) Kill(t testing.TB) {
	t.Helper()
	if err := n.proc.Kill(); err != nil {
		t.Fatalf("node %s: %v", n.ID, err)
	}
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

// Stopped reports whether the node printed that it stops itself
// (NodeConfig.StopOnFire).
func (n *Node) Stopped() bool {
	return slices.Contains(n.proc.Output(), stoppingLine)
}

// Continue resumes a node stopped with SIGSTOP.
func (n *Node) Continue(t testing.TB) {
	t.Helper()
	if err := syscall.Kill(n.proc.PID(), syscall.SIGCONT); err != nil {
		t.Fatalf("node %s: SIGCONT: %v", n.ID, err)
	}
}
