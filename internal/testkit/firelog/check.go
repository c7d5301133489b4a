package firelog

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// FireKey identifies one scheduled firing: a trigger and the fire time it
// was due at, in Unix milliseconds.
type FireKey struct {
	Trigger     string
	ScheduledMs int64
}

// String returns "trigger@scheduled" with the time in RFC 3339.
func (k FireKey) String() string {
	return k.Trigger + "@" + time.UnixMilli(k.ScheduledMs).UTC().Format("15:04:05.000")
}

// maxProblems bounds the problems a Result lists.
const maxProblems = 20

// CheckOptions adjust Check.
type CheckOptions struct {
	// AllowRecoveryReruns accepts, for one scheduled firing, one execution
	// marked recovering besides the original one: a job that requests
	// recovery is re-run when its node is lost, even if the lost node had
	// run it already. A second original or a second re-run is still a
	// duplicate.
	AllowRecoveryReruns bool
}

// Result is what Check found.
type Result struct {
	// Fires counts the executions that began (fire and start records).
	Fires int
	// Distinct counts the scheduled firings that executed at least once.
	Distinct int
	// Duplicates counts the scheduled firings executed more often than
	// allowed.
	Duplicates int
	// Misses counts the expected firings that never executed.
	Misses int
	// Unexpected counts executions of a firing that was not expected.
	Unexpected int
	// Reruns counts executions marked recovering.
	Reruns int
	// Lags are the lags of the original executions, ascending.
	Lags []time.Duration
	// Problems describes the first duplicates, misses and unexpected
	// firings.
	Problems []string
}

// Check compares the executions of the triggers of group ("" for every
// trigger) in records with the expected firings.
func Check(records []Record, expected map[FireKey]bool, group string, opts CheckOptions) Result {
	var r Result
	type count struct {
		original, rerun int
		nodes           []string
	}
	seen := make(map[FireKey]*count)
	for _, rec := range records {
		if !rec.IsFire() || (group != "" && !strings.HasPrefix(rec.Trigger, group+".")) {
			continue
		}
		r.Fires++
		k := FireKey{Trigger: rec.Trigger, ScheduledMs: rec.Scheduled.UnixMilli()}
		c := seen[k]
		if c == nil {
			c = &count{}
			seen[k] = c
		}
		node := rec.Node
		if rec.Recovering {
			c.rerun++
			r.Reruns++
			node += "(recovering)"
		} else {
			c.original++
			r.Lags = append(r.Lags, rec.Lag())
		}
		c.nodes = append(c.nodes, node)
	}
	slices.Sort(r.Lags)
	r.Distinct = len(seen)
	problem := func(format string, args ...any) {
		if len(r.Problems) < maxProblems {
			r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
		}
	}
	keys := make([]FireKey, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareFireKeys)
	for _, k := range keys {
		c := seen[k]
		if !expected[k] {
			r.Unexpected++
			problem("unexpected firing %s on %v", k, c.nodes)
		}
		dup := c.original+c.rerun > 1
		if opts.AllowRecoveryReruns {
			dup = c.original > 1 || c.rerun > 1
		}
		if dup {
			r.Duplicates++
			problem("duplicate firing %s on %v", k, c.nodes)
		}
	}
	missed := make([]FireKey, 0)
	for k := range expected {
		if seen[k] == nil {
			missed = append(missed, k)
		}
	}
	slices.SortFunc(missed, compareFireKeys)
	r.Misses = len(missed)
	for _, k := range missed {
		problem("missed firing %s", k)
	}
	return r
}

func compareFireKeys(a, b FireKey) int {
	if c := strings.Compare(a.Trigger, b.Trigger); c != 0 {
		return c
	}
	return cmp.Compare(a.ScheduledMs, b.ScheduledMs)
}

// Percentile returns the p-th percentile (0 < p ≤ 100) of the lags, or 0
// without lags.
func (r Result) Percentile(p float64) time.Duration {
	if len(r.Lags) == 0 {
		return 0
	}
	i := int(float64(len(r.Lags))*p/100+0.5) - 1
	return r.Lags[min(max(i, 0), len(r.Lags)-1)]
}

// MaxLag returns the largest lag, or 0 without lags.
func (r Result) MaxLag() time.Duration {
	if len(r.Lags) == 0 {
		return 0
	}
	return r.Lags[len(r.Lags)-1]
}

// MinLag returns the smallest lag (negative when an execution began
// early), or 0 without lags.
func (r Result) MinLag() time.Duration {
	if len(r.Lags) == 0 {
		return 0
	}
	return r.Lags[0]
}
