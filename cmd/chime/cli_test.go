package main

import (
	"bytes"
	"context"
	"io"
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
	var out, errOut bytes.Buffer
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// trimLines joins lines with newlines, so that expected output reads as a
// block in the test.
func trimLines(lines ...string) string {
	return strings.Join(lines, "\n") + "\n"
}
