package clustertest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

// FireKey identifies one scheduled firing; see [firelog.FireKey].
type FireKey = firelog.FireKey

// CheckOptions adjust Check; see [firelog.CheckOptions].
type CheckOptions = firelog.CheckOptions

// Result is what Check found; see [firelog.Result].
type Result = firelog.Result

// Check compares the executions of the triggers of group in records with
// the expected firings; see [firelog.Check].
func Check(records []firelog.Record, expected map[FireKey]bool, group string, opts CheckOptions) Result {
	return firelog.Check(records, expected, group, opts)
}

// assertExactlyOnce fails the test for every duplicate, miss and
// unexpected firing of r.
func assertExactlyOnce(t testing.TB, r Result) {
	t.Helper()
	if r.Duplicates == 0 && r.Misses == 0 && r.Unexpected == 0 {
		return
	}
	t.Errorf("%d duplicates, %d misses, %d unexpected firings among %d executions; first problems:\n  %s",
		r.Duplicates, r.Misses, r.Unexpected, r.Fires, strings.Join(r.Problems, "\n  "))
}

// Figures are the numbers a scenario reports.
type Figures struct {
	Dialect  string
	Scenario string
	Nodes    int
	Triggers int
	Result   Result
	// Recovery, when not zero, is how long recovering a lost node's work
	// took.
	Recovery time.Duration
	// Overlap, when not zero, is how long a lost node's execution and its
	// recovered re-run ran at the same time.
	Overlap time.Duration
}

// String formats the figures as one "cluster:" line.
func (f Figures) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster: dialect=%s scenario=%s nodes=%d triggers=%d fires=%d duplicates=%d misses=%d",
		f.Dialect, f.Scenario, f.Nodes, f.Triggers, f.Result.Fires, f.Result.Duplicates, f.Result.Misses)
	if f.Result.Unexpected > 0 {
		fmt.Fprintf(&b, " unexpected=%d", f.Result.Unexpected)
	}
	if f.Result.Reruns > 0 {
		fmt.Fprintf(&b, " reruns=%d", f.Result.Reruns)
	}
	if f.Recovery > 0 {
		fmt.Fprintf(&b, " recovery=%s", f.Recovery.Round(time.Millisecond))
	}
	if f.Overlap > 0 {
		fmt.Fprintf(&b, " overlap=%s", f.Overlap.Round(time.Millisecond))
	}
	if len(f.Result.Lags) > 0 {
		r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
		fmt.Fprintf(&b, " lag_p50=%s lag_p99=%s lag_max=%s",
			r(f.Result.Percentile(50)), r(f.Result.Percentile(99)), r(f.Result.MaxLag()))
	}
	return b.String()
}

// FiguresFileEnv names the environment variable holding the file that
// Report appends figures to.
const FiguresFileEnv = "CHIME_FIGURES_FILE"

// Report logs the figures and appends them to the file named by
// CHIME_FIGURES_FILE, when set.
func Report(t testing.TB, f Figures) {
	t.Helper()
	line := f.String()
	t.Log(line)
	path := os.Getenv(FiguresFileEnv)
	if path == "" {
		return
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Errorf("%s: %v", FiguresFileEnv, err)
		return
	}
	if _, err := file.WriteString(line + "\n"); err != nil {
		t.Errorf("%s: %v", FiguresFileEnv, err)
	}
	if err := file.Close(); err != nil {
		t.Errorf("%s: %v", FiguresFileEnv, err)
	}
}
