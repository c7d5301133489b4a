package nodeproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a node process instead of running
// the tests; its value names the behaviour.
const helperEnv = "NODEPROC_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

// helper is the child's behaviour: "serve" prints a line, then ReadyLine,
// echoes its standard input and exits 0 on SIGTERM; "fail" exits 3 at
// once.
func helper(mode string) int {
	switch mode {
	case "serve":
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		fmt.Println("hello")
		fmt.Println(ReadyLine)
		go func() {
			sc := bufio.NewScanner(os.Stdin)
			for sc.Scan() {
				fmt.Println("echo " + sc.Text())
			}
		}()
		<-term
		return 0
	default:
		return 3
	}
}

func start(t *testing.T, mode string) *Process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	p, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	return p
}

func waitReady(t *testing.T, p *Process) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return p.WaitReady(ctx)
}

func TestReadyNodeEchoesAndStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	p := start(t, "serve")
	if err := waitReady(t, p); err != nil {
		t.Fatal(err)
	}
	if err := p.Send("ping"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for !slices.Contains(p.Output(), "echo ping") {
		if time.Now().After(deadline) {
			t.Fatalf("no echo of the line sent; output %q", p.Output())
		}
		// Polling: the child answers on a pipe that signals nothing.
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Stop(time.Minute); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if got, want := p.Output(), []string{"hello", "echo ping"}; !slices.Equal(got, want) {
		t.Errorf("Output() = %q, want %q", got, want)
	}
	if err := p.Stop(time.Minute); !errors.Is(err, ErrExited) {
		t.Errorf("second Stop = %v, want ErrExited", err)
	}
}

func TestProcessThatExitsBeforeReadyIsReported(t *testing.T) {
	t.Parallel()
	p := start(t, "fail")
	err := waitReady(t, p)
	if !errors.Is(err, ErrExited) {
		t.Fatalf("WaitReady = %v, want ErrExited", err)
	}
	var exit *exec.ExitError
	if !errors.As(p.ExitErr(), &exit) || exit.ExitCode() != 3 {
		t.Errorf("ExitErr() = %v, want exit status 3", p.ExitErr())
	}
}

func TestKillEndsAProcessAtOnce(t *testing.T) {
	t.Parallel()
	p := start(t, "serve")
	if err := waitReady(t, p); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if !errors.As(p.ExitErr(), &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("ExitErr() = %v, want killed by SIGKILL", p.ExitErr())
	}
}

// Quit ends a running Go program with SIGQUIT, on which it writes its
// goroutines' stacks to its standard error.
func TestQuitWritesTheStacks(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=serve")
	stderr, err := os.Create(t.TempDir() + "/stderr")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	p, err := Start(cmd)
	_ = stderr.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	if err := waitReady(t, p); err != nil {
		t.Fatal(err)
	}
	if err := p.Quit(time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := Tail(stderr.Name(), 1000); !strings.Contains(got, "SIGQUIT") || !strings.Contains(got, "goroutine ") {
		t.Errorf("standard error after Quit:\n%s\nwant the SIGQUIT and the goroutines' stacks", got)
	}
}

func TestTailReturnsTheLastLines(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/log"
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := Tail(path, 2), "    b\n    c\n"; got != want {
		t.Errorf("Tail = %q, want %q", got, want)
	}
}

// KeepLog copies a node's log under $CHIME_TEST_OUTPUT_DIR, named after
// the test and the node.
func TestKeepLogCopiesTheLog(t *testing.T) {
	out := t.TempDir()
	t.Setenv("CHIME_TEST_OUTPUT_DIR", out)
	log := t.TempDir() + "/a.log"
	if err := os.WriteFile(log, []byte("line 1\nline 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	KeepLog(t, "suite", "a", log)
	got, err := os.ReadFile(out + "/suite/TestKeepLogCopiesTheLog/a.log")
	if err != nil || string(got) != "line 1\nline 2\n" {
		t.Errorf("kept log = %q, %v; want the node's whole log", got, err)
	}
}
