package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/clustertest"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
)

// Cluster timing of the nodes: short, so that a fault is noticed within
// seconds, yet long enough that two loaded cores do not declare healthy
// nodes dead.
const (
	checkIn   = time.Second
	deadAfter = 3 * time.Second
)

// adminPassword is the first admin's password on every test database.
const adminPassword = "chaos-Admin-password-1"

// node is one `chime server` process of the cluster, restartable under
// the same ID, port and log file.
type node struct {
	id     string
	bin    string
	listen string // 127.0.0.1:port
	dbURL  string // through proxy when it is set
	log    string // the process's standard error, appended to by every incarnation
	proxy  *clustertest.Proxy

	mu      sync.Mutex
	proc    *nodeproc.Process
	stopped bool // SIGSTOP sent and no SIGCONT yet
}

// newNode prepares a node on a free loopback port; it does not start it.
// A non-empty proxyTarget (host:port of the database server) puts a proxy
// between the node and the database.
func newNode(t *testing.T, bin, id, dir, dbURL, proxyTarget string) *node {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	n := &node{id: id, bin: bin, listen: "127.0.0.1:" + strconv.Itoa(port), dbURL: dbURL, log: filepath.Join(dir, id+".log")}
	if proxyTarget != "" {
		p, err := clustertest.NewProxy(proxyTarget)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		n.proxy = p
		if n.dbURL, err = clustertest.RewriteHost(dbURL, p.Addr()); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// args are the node's command line.
func (n *node) args() []string {
	return []string{
		"server",
		"--node-id", n.id,
		"--listen", n.listen,
		"--database-url", n.dbURL,
		"--check-in-interval", checkIn.String(),
		"--dead-after", deadAfter.String(),
		"--shutdown-timeout", "10s",
		"--retention-max-per-job", "-1",
		"--log-level", "info",
		// The recording target listens on loopback, which the egress
		// policy refuses by default.
		"--egress-allow", "127.0.0.0/8",
	}
}

// baseURL is the node's API address.
func (n *node) baseURL() string { return "http://" + n.listen }

// start starts a new incarnation of the node; it does not wait until it
// is ready.
func (n *node) start() error {
	logFile, err := os.OpenFile(n.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child holds its own descriptor
	cmd := exec.Command(n.bin, n.args()...)
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), "CHIME_ADMIN_PASSWORD="+adminPassword)
	p, err := nodeproc.Start(cmd)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.proc = p
	n.stopped = false
	n.mu.Unlock()
	return nil
}

// process returns the current incarnation.
func (n *node) process() *nodeproc.Process {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc
}

// waitReady polls /readyz until the node answers 200 (it holds a lease
// and reaches the database), or fails when the process exits or ctx ends.
func (n *node) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		p := n.process()
		select {
		case <-p.Exited():
			return fmt.Errorf("node %s exited before it was ready: %v\n%s", n.id, p.ExitErr(), nodeproc.Tail(n.log, 20))
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.baseURL()+"/readyz", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not ready: %w\n%s", n.id, ctx.Err(), nodeproc.Tail(n.log, 20))
		// Polling: readiness is a state of another process, which
		// signals nothing.
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// kill9 kills the node with SIGKILL and waits until it was reaped.
func (n *node) kill9() error {
	p := n.process()
	if err := p.Kill(); err != nil {
		return err
	}
	n.mu.Lock()
	n.stopped = false
	n.mu.Unlock()
	return nil
}

// signal sends sig to the node and records whether it is stopped.
func (n *node) signal(sig syscall.Signal) error {
	p := n.process()
	if err := syscall.Kill(p.PID(), sig); err != nil {
		return fmt.Errorf("node %s: %s: %w", n.id, sig, err)
	}
	n.mu.Lock()
	n.stopped = sig == syscall.SIGSTOP
	n.mu.Unlock()
	return nil
}

// stop continues the node if it is stopped, then stops it with SIGTERM.
func (n *node) stop() error {
	p := n.process()
	if p == nil {
		return nil
	}
	n.mu.Lock()
	stopped := n.stopped
	n.mu.Unlock()
	if stopped {
		if err := n.signal(syscall.SIGCONT); err != nil {
			return err
		}
	}
	err := p.Stop(30 * time.Second)
	if errors.Is(err, nodeproc.ErrExited) {
		return nil // killed by a fault, or exited on its own: the audit says what it left
	}
	return err
}
