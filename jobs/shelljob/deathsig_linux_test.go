package shelljob_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/jobs/shelljob"
)

// nodeEnv makes the test binary act as a node running one shell job; see
// TestMain.
const nodeEnv = "CHIME_SHELLJOB_TEST_NODE"

// TestMain runs the test binary as a node when nodeEnv is set: it runs the
// script in the variable as a shell job, its output to stdout, and blocks.
func TestMain(m *testing.M) {
	if script := os.Getenv(nodeEnv); script != "" {
		_, err := new(shelljob.Runner).Run(context.Background(), shelljob.Spec{Shell: script}, vars(), os.Stdout)
		fmt.Fprintln(os.Stderr, "shell job ended:", err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// TestShellJobDiesWithItsNode starts a node process running a shell job,
// kills the node with SIGKILL, and checks that the job's command dies too.
func TestShellJobDiesWithItsNode(t *testing.T) {
	t.Parallel()
	node := exec.Command(os.Args[0], "-test.run=^$")
	node.Env = append(os.Environ(), nodeEnv+`=echo "pid $$"; exec sleep 60`)
	stdout, err := node.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Process.Kill(); _ = node.Wait() })
	lines := bufio.NewScanner(stdout)
	pid := 0
	for pid == 0 && lines.Scan() {
		if s, ok := strings.CutPrefix(lines.Text(), "pid "); ok {
			if pid, err = strconv.Atoi(s); err != nil {
				t.Fatalf("bad pid line %q", lines.Text())
			}
		}
	}
	if pid == 0 {
		t.Fatalf("the node printed no pid: %v", lines.Err())
	}
	// The shell has exec'd sleep once it is no longer sh; waiting for
	// that keeps the kill from racing the exec.
	deadline := time.Now().Add(10 * time.Second)
	for {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil && strings.TrimSpace(string(comm)) == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not become sleep: %q, %v", pid, comm, err)
		}
		time.Sleep(10 * time.Millisecond) // nothing to wait on but /proc
	}
	if err := node.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = node.Wait()
	wantDead(t, []int{pid})
}
