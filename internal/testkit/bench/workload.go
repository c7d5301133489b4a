package bench

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

// Series is a set of triggers of one shape, each with its own job of the
// same name. Trigger i fires Fires times, Interval apart, from
// T0 + Offset + Spread×i/Count.
type Series struct {
	// Group is the group of the triggers and of their jobs.
	Group string
	// Count is the number of triggers.
	Count int
	// Fires is how often each trigger fires: 1 for a one-shot trigger.
	Fires int
	// Interval separates the fires of one trigger.
	Interval time.Duration
	// Offset is the first trigger's first fire time after T0.
	Offset time.Duration
	// Spread spreads the first fire times evenly over [Offset,
	// Offset+Spread).
	Spread time.Duration
	// Run is how long each job runs; zero for a job that only records its
	// firing.
	Run time.Duration
	// RequestsRecovery marks the jobs as re-run on a live node when their
	// node dies.
	RequestsRecovery bool
	// OnExecutors makes the jobs of type executor, routed round robin to
	// the run's executor processes (group ExecutorGroup), whose handlers
	// write the fire log instead of the nodes' jobs.
	OnExecutors bool
}

// name returns the name of trigger i and of its job.
func (s Series) name(i int) string { return fmt.Sprintf("t%06d", i) }

// key returns the key "group.name" of trigger i, as the fire log records it.
func (s Series) key(i int) string { return s.Group + "." + s.name(i) }

// first returns the first fire time of trigger i.
func (s Series) first(t0 time.Time, i int) time.Time {
	var spread time.Duration
	if s.Count > 0 {
		spread = time.Duration(int64(s.Spread) * int64(i) / int64(s.Count))
	}
	return t0.Add(s.Offset + spread).Truncate(time.Millisecond)
}

// last returns the latest fire time of the series.
func (s Series) last(t0 time.Time) time.Time {
	return s.first(t0, s.Count-1).Add(time.Duration(s.Fires-1) * s.Interval)
}

// Workload is one benchmark: the triggers seeded before the nodes start,
// the part of the run that is measured, and an optional kill.
type Workload struct {
	// Name names the workload in the result line ("W1a").
	Name string
	// Series are the triggers.
	Series []Series
	// From and To bound the measured scheduled fire times to [T0+From,
	// T0+To); a zero To measures every firing.
	From, To time.Duration
	// Grace is how long after the last scheduled fire time a firing may
	// still come before it counts as missed.
	Grace time.Duration
	// Nodes, when not zero, is the node count the workload requires.
	Nodes int
	// KillAt, when not zero, is when (after T0) the busiest node is
	// killed with SIGKILL; the result then reports the recovery time.
	KillAt time.Duration
	// Executors, when not zero, is how many executor processes
	// (`chime-bench executor`, see RunExecutor) the run starts, connected
	// to the nodes in turn, for the series that run OnExecutors. Such a
	// workload runs on server nodes (ViaServer).
	Executors int
	// ExecutorKillAt, when not zero, is when (after T0) the executor
	// running the most long jobs is killed with SIGKILL; the result then
	// reports the recovery time of its runs.
	ExecutorKillAt time.Duration
	// Workers, when not zero, is each node's worker count unless the run
	// sets one: a node holds a worker while an executor runs its run.
	Workers int
}

// W2Duration is how long W2's triggers fire; its first and last 10 s are
// not measured.
const W2Duration = 60 * time.Second

// missAfter is how late a firing may come before it counts as missed.
const missAfter = 120 * time.Second

// Names lists the workloads Lookup knows.
var Names = []string{"W1a", "W1b", "W1c", "W2a", "W2b", "W3", "E1"}

// Lookup returns a workload by name, with its trigger counts (K or R)
// multiplied by scale. For W2 and E1, a rate above zero replaces R (1,000
// for W2a, 5,000 for W2b, 2,000 for E1) before scaling.
func Lookup(name string, scale float64, rate int) (Workload, error) {
	if scale <= 0 || math.IsInf(scale, 0) || math.IsNaN(scale) {
		return Workload{}, fmt.Errorf("bench: scale %v: want a number above 0", scale)
	}
	if rate < 0 {
		return Workload{}, fmt.Errorf("bench: rate %d: want a number above 0", rate)
	}
	n := func(count int) int { return max(1, int(math.Round(float64(count)*scale))) }
	r := func(def int) int {
		if rate > 0 {
			return n(rate)
		}
		return n(def)
	}
	i := indexFold(Names, name)
	if i < 0 {
		return Workload{}, fmt.Errorf("bench: unknown workload %q (known: %s)", name, strings.Join(Names, ", "))
	}
	name = Names[i]
	if rate > 0 && !strings.HasPrefix(name, "W2") && name != "E1" {
		return Workload{}, fmt.Errorf("bench: --rate applies to W2a, W2b and E1 only, not %s", name)
	}
	switch name {
	case "W1a":
		return Burst(name, n(20_000), 10*time.Second), nil
	case "W1b":
		return Burst(name, n(50_000), 5*time.Second), nil
	case "W1c":
		return Burst(name, n(100_000), time.Second), nil
	case "W2a":
		return Steady(name, r(1_000), W2Duration, 10*time.Second), nil
	case "W2b":
		return Steady(name, r(5_000), W2Duration, 10*time.Second), nil
	case "E1":
		return Executors(r(2_000), E1Executors, W2Duration, 10*time.Second), nil
	default:
		return Failover(n(200), 20, 40*time.Second, 20*time.Second, 5*time.Second), nil
	}
}

// indexFold returns the index of name in names, ignoring case.
func indexFold(names []string, name string) int {
	for i, n := range names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

// Burst is W1: k one-shot triggers whose fire times spread evenly over
// spread. A firing counts as missed when it did not run within 120 s.
func Burst(name string, k int, spread time.Duration) Workload {
	return Workload{
		Name:   name,
		Series: []Series{{Group: "burst", Count: k, Fires: 1, Spread: spread}},
		Grace:  missAfter,
	}
}

// Steady is W2: r triggers firing every second for duration, their phases
// spread evenly over the second; the firings of the first and last margin
// are not measured.
func Steady(name string, r int, duration, margin time.Duration) Workload {
	return Workload{
		Name:   name,
		Series: []Series{{Group: "steady", Count: r, Fires: int(duration / time.Second), Interval: time.Second, Spread: time.Second}},
		From:   margin,
		To:     duration - margin,
		Grace:  missAfter,
	}
}

// Failover is W3 on two nodes: rate triggers firing every second for
// duration, plus long jobs that run for run and request recovery, each
// firing every longEvery with first fire times spread over longEvery; the
// busiest node is killed at duration/2. Every job requests recovery, so
// that a firing the killed node took but did not finish is re-run rather
// than lost.
func Failover(rate, long int, duration, longEvery, run time.Duration) Workload {
	return Workload{
		Name: "W3",
		Series: []Series{
			{Group: "steady", Count: rate, Fires: int(duration / time.Second), Interval: time.Second, Spread: time.Second, RequestsRecovery: true},
			{Group: "long", Count: long, Fires: int(duration / longEvery), Interval: longEvery, Spread: longEvery, Run: run, RequestsRecovery: true},
		},
		Grace:  missAfter,
		Nodes:  2,
		KillAt: duration / 2,
	}
}

// E1Executors is how many executor processes E1 runs.
const E1Executors = 20

// Executors is E1: r triggers firing every second for duration, phases
// spread over the second, each a job of type executor with a no-op
// handler, routed round robin over n executor processes of one group;
// the firings of the first and last margin are not measured. The lag is
// the dispatch lag: from the scheduled time to the handler's start on an
// executor.
func Executors(r, n int, duration, margin time.Duration) Workload {
	w := Steady("E1", r, duration, margin)
	w.Series[0].OnExecutors = true
	w.Executors = n
	// A node holds a worker while an executor runs its run: from the
	// hand-over to the result, a few hundred milliseconds at most.
	w.Workers = max(10, r/2)
	return w
}

// ExecutorFailover is the exactly-once workload of executors under
// kills, on two nodes: rate jobs firing every second and long jobs
// running run, firing every second, for duration, every job of type
// executor requesting recovery, over n executor processes connected to
// the nodes in turn. The busiest node is killed with SIGKILL at a third
// of the duration, and the executor running the most long jobs at half.
func ExecutorFailover(rate, long, n int, duration, run time.Duration) Workload {
	return Workload{
		Name: "E1-kill",
		Series: []Series{
			{Group: "steady", Count: rate, Fires: int(duration / time.Second), Interval: time.Second, Spread: time.Second,
				RequestsRecovery: true, OnExecutors: true},
			{Group: "long", Count: long, Fires: int(duration / time.Second), Interval: time.Second, Spread: time.Second,
				Run: run, RequestsRecovery: true, OnExecutors: true},
		},
		Grace:          missAfter,
		Nodes:          2,
		KillAt:         duration / 3,
		Executors:      n,
		ExecutorKillAt: duration / 2,
		Workers:        max(10, (rate+long)*int(run/time.Second+2)),
	}
}

// onExecutors reports whether any series runs on executors.
func (w Workload) onExecutors() bool {
	for _, s := range w.Series {
		if s.OnExecutors {
			return true
		}
	}
	return false
}

// Triggers returns the number of triggers of the workload.
func (w Workload) Triggers() int {
	n := 0
	for _, s := range w.Series {
		n += s.Count
	}
	return n
}

// Last returns the latest scheduled fire time.
func (w Workload) Last(t0 time.Time) time.Time {
	var last time.Time
	for _, s := range w.Series {
		if l := s.last(t0); l.After(last) {
			last = l
		}
	}
	return last
}

// measured reports whether a scheduled fire time is in the measured part.
func (w Workload) measured(t0, scheduled time.Time) bool {
	if w.To == 0 {
		return true
	}
	return !scheduled.Before(t0.Add(w.From)) && scheduled.Before(t0.Add(w.To))
}

// Expected returns every measured firing the workload must run.
func (w Workload) Expected(t0 time.Time) map[firelog.FireKey]bool {
	out := make(map[firelog.FireKey]bool)
	for _, s := range w.Series {
		for i := range s.Count {
			key := s.key(i)
			first := s.first(t0, i)
			for j := range s.Fires {
				at := first.Add(time.Duration(j) * s.Interval)
				if w.measured(t0, at) {
					out[firelog.FireKey{Trigger: key, ScheduledMs: at.UnixMilli()}] = true
				}
			}
		}
	}
	return out
}
