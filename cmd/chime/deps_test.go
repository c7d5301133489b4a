package main

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestBinaryHoldsNoTestOrBenchCode keeps the product binary the product:
// no package of its import graph, direct or transitive, is a test harness
// (internal/testkit/...) or benchmark code, which lives in cmd/chime-bench.
func TestBinaryHoldsNoTestOrBenchCode(t *testing.T) {
	t.Parallel()
	const mod = "github.com/chime-scheduler/chime"
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	// The list is the whole graph: it holds the command and the server
	// it runs, so an empty or partial answer cannot pass.
	for _, want := range []string{mod + "/cmd/chime", mod + "/server"} {
		if !slices.Contains(deps, want) {
			t.Fatalf("go list -deps ./cmd/chime lists no %s; got %d packages", want, len(deps))
		}
	}
	for _, pkg := range deps {
		rel, ours := strings.CutPrefix(pkg, mod+"/")
		if !ours {
			continue
		}
		if rel == "internal/testkit" || strings.HasPrefix(rel, "internal/testkit/") {
			t.Errorf("cmd/chime imports %s, a test harness", pkg)
		}
		if slices.ContainsFunc(strings.Split(rel, "/"), isBenchName) {
			t.Errorf("cmd/chime imports %s, benchmark code", pkg)
		}
	}
}

// TestCommandsHoldNoBench checks that no command or flag of chime, hidden
// ones included, is the benchmark's: `chime bench` and `chime server
// --bench-fire-log` moved to cmd/chime-bench.
func TestCommandsHoldNoBench(t *testing.T) {
	t.Parallel()
	var walk func(*cobra.Command)
	commands := 0
	walk = func(c *cobra.Command) {
		commands++
		if isBenchName(c.Name()) {
			t.Errorf("command %q is the benchmark's", c.CommandPath())
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if isBenchName(f.Name) {
				t.Errorf("%s has the flag --%s", c.CommandPath(), f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmdEnv(func(string) string { return "" }))
	if commands < 2 {
		t.Fatalf("walked %d commands: the tree was not read", commands)
	}
}

// isBenchName reports whether a package path element, command or flag
// name belongs to the benchmarks.
func isBenchName(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "bench")
}
