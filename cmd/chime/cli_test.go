package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// execChime runs the chime command tree in-process with args, stdin as its
// standard input, and returns what it wrote to standard output and error.
func execChime(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return execChimeIn(t, strings.NewReader(stdin), args...)
}

// execChimeIn is execChime reading standard input from stdin.
func execChimeIn(t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return execChimeEnv(t, os.Getenv, stdin, args...)
}

// execChimeEnv is execChimeIn with the client commands reading the
// environment with getenv, such as one from testEnv.
func execChimeEnv(t *testing.T, getenv func(string) string, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmdEnv(getenv)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// testEnv returns a getenv that answers from env alone, so that a test
// has its own credentials directory and sees no CHIME_TOKEN of the
// machine's.
func testEnv(env map[string]string) func(string) string {
	return func(key string) string { return env[key] }
}

// trimLines joins lines with newlines, so that expected output reads as a
// block in the test.
func trimLines(lines ...string) string {
	return strings.Join(lines, "\n") + "\n"
}
