// Command testreport runs go test and ends with one line that says how many
// tests were skipped and why.
//
// A plain go test prints "ok" for a package whose database or browser tests
// skipped themselves for want of a server, and the reason is lost. This
// command runs "go test -json" with the arguments it is given, prints what
// go test would print (a line per package, and the output of every failing
// test), and then one summary line grouping the skipped tests by their skip
// message:
//
//	go run ./internal/testkit/testreport -race ./...
//	go run ./internal/testkit/testreport -short ./...
//
// It exits with go test's exit status. With -v among the arguments every
// line of output is printed as it comes.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 || !hasPackage(args) {
		args = append(args, "./...")
	}
	cmd := exec.Command("go", append([]string{"test", "-json"}, args...)...)
	cmd.Stdin = os.Stdin
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	r := newReport(os.Stdout, slices.Contains(args, "-v"))
	if err := r.read(stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testreport: reading go test's output:", err)
	}
	waitErr := cmd.Wait()
	r.summary(time.Since(start))
	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		os.Exit(exit.ExitCode())
	case waitErr != nil:
		fmt.Fprintln(os.Stderr, "testreport:", waitErr)
		os.Exit(2)
	case r.failed > 0:
		os.Exit(1)
	}
}

// hasPackage reports whether args name a package (an argument that is not a
// flag and does not follow a flag that takes a value in the next argument).
func hasPackage(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return true
		}
		if !strings.Contains(a, "=") && flagTakesValue(strings.TrimLeft(a, "-")) {
			i++
		}
	}
	return false
}

// flagTakesValue reports whether a go test flag written without "=" takes
// the next argument as its value.
func flagTakesValue(name string) bool {
	switch name {
	case "run", "skip", "bench", "benchtime", "count", "timeout", "parallel", "cpu",
		"coverprofile", "covermode", "coverpkg", "p", "tags", "o", "exec", "list",
		"shuffle", "fuzz", "fuzztime", "blockprofile", "cpuprofile", "memprofile",
		"mutexprofile", "outputdir", "trace", "ldflags", "gcflags", "asmflags":
		return true
	}
	return false
}

// event is one record of go test -json (cmd/test2json's TestEvent, plus the
// build events of go 1.24 and later).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// testLog is what one test printed, kept until it ends.
type testLog struct {
	lines []string
}

// pkgState is what one package printed, kept until it ends.
type pkgState struct {
	order []string // tests in the order they started
	tests map[string]*testLog
	own   []string // output that belongs to no test
	fails []string // tests that failed
}

// report turns the event stream into go test's usual output and counts the
// skipped tests by reason.
type report struct {
	out      io.Writer
	verbose  bool
	pkgs     map[string]*pkgState
	skips    map[string]int
	skipped  int
	failed   int
	failPkgs []string
}

func newReport(out io.Writer, verbose bool) *report {
	return &report{out: out, verbose: verbose, pkgs: map[string]*pkgState{}, skips: map[string]int{}}
}

// read consumes the stream. A line that is not JSON is printed as it is.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(r.out, string(line))
			continue
		}
		r.handle(e)
	}
	return sc.Err()
}

func (r *report) pkg(name string) *pkgState {
	p := r.pkgs[name]
	if p == nil {
		p = &pkgState{tests: map[string]*testLog{}}
		r.pkgs[name] = p
	}
	return p
}

func (r *report) handle(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(r.out, e.Output)
		return
	case "build-fail":
		return
	}
	if r.verbose && e.Action == "output" {
		fmt.Fprint(r.out, e.Output)
	}
	p := r.pkg(e.Package)
	if e.Test == "" {
		switch e.Action {
		case "output":
			p.own = append(p.own, e.Output)
		case "pass", "skip", "fail":
			r.endPackage(e.Package, p, e.Action == "fail")
		}
		return
	}
	tl := p.tests[e.Test]
	if tl == nil {
		tl = &testLog{}
		p.tests[e.Test] = tl
		p.order = append(p.order, e.Test)
	}
	switch e.Action {
	case "output":
		tl.lines = append(tl.lines, e.Output)
	case "fail":
		p.fails = append(p.fails, e.Test)
	case "skip":
		r.skipped++
		r.skips[skipReason(tl.lines)]++
	}
}

// endPackage prints a finished package the way go test does without -v:
// the output of its failing tests, then its result line.
func (r *report) endPackage(name string, p *pkgState, failed bool) {
	defer delete(r.pkgs, name)
	if failed {
		r.failed++
		r.failPkgs = append(r.failPkgs, name)
	}
	if r.verbose {
		return
	}
	if failed {
		for _, test := range p.order {
			if !slices.Contains(p.fails, test) {
				continue
			}
			for _, l := range p.tests[test].lines {
				if !isProgress(l) {
					fmt.Fprint(r.out, l)
				}
			}
		}
		for _, l := range p.own {
			if !isProgress(l) {
				fmt.Fprint(r.out, l)
			}
		}
		return
	}
	for _, l := range p.own {
		if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "?") || strings.HasPrefix(l, "coverage:") {
			fmt.Fprint(r.out, l)
		}
	}
}

// isProgress reports whether a line is one of the test binary's verbose
// progress lines, which go test without -v does not show.
func isProgress(line string) bool {
	t := strings.TrimSpace(line)
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- SKIP", "PASS"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// logPrefix matches the "file.go:123: " that t.Skip and t.Log put first.
var logPrefix = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// skipReason returns the message a skipped test gave: the last line it
// logged before its "--- SKIP" line, without the file and line.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "===") {
			continue
		}
		return strings.TrimSpace(logPrefix.ReplaceAllString(lines[i], ""))
	}
	return "no reason given"
}

// summary prints the closing lines: failing packages, then how many tests
// were skipped and why, most frequent reason first.
func (r *report) summary(elapsed time.Duration) {
	if r.failed > 0 {
		fmt.Fprintf(r.out, "FAIL: %d package(s): %s\n", r.failed, strings.Join(r.failPkgs, ", "))
	}
	fmt.Fprintln(r.out, skipLine(r.skipped, r.skips, elapsed))
}

// maxReasons is how many skip reasons the summary names one by one.
const maxReasons = 4

// skipLine is the one summary line about skipped tests.
func skipLine(total int, byReason map[string]int, elapsed time.Duration) string {
	took := elapsed.Round(time.Second)
	if total == 0 {
		return fmt.Sprintf("testreport: no test skipped (%s)", took)
	}
	reasons := make([]string, 0, len(byReason))
	for reason := range byReason {
		reasons = append(reasons, reason)
	}
	slices.SortFunc(reasons, func(a, b string) int {
		if byReason[a] != byReason[b] {
			return byReason[b] - byReason[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	rest := 0
	for i, reason := range reasons {
		if i < maxReasons {
			parts = append(parts, fmt.Sprintf("%d: %s", byReason[reason], reason))
		} else {
			rest += byReason[reason]
		}
	}
	if rest > 0 {
		parts = append(parts, fmt.Sprintf("%d for other reasons (run with -v to see them)", rest))
	}
	return fmt.Sprintf("testreport: %d tests skipped (%s) — %s", total, took, strings.Join(parts, "; "))
}
