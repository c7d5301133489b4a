package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

// Result is what a run measured. String formats it as the one line
// chime-bench prints.
type Result struct {
	Workload string
	Nodes    int
	// Fires counts the measured firings that ran (original executions,
	// not recovery re-runs).
	Fires int
	// Throughput is Fires divided by the time from the first measured
	// scheduled fire time to the last measured execution, per second.
	Throughput float64
	// Lag percentiles and maximum: actual minus scheduled fire time, over
	// the measured firings that ran.
	P50, P95, P99, Max time.Duration
	// Duplicates counts the measured firings that ran more than once (a
	// single recovery re-run of a firing whose node was killed excepted).
	Duplicates int
	// Misses counts the measured firings that did not run within the
	// workload's grace (120 s) of their scheduled time, and the executions
	// of a killed node that requested recovery and were never re-run.
	Misses int
	// Unexpected counts executions for a scheduled time the workload does
	// not have: always a bug.
	Unexpected int
	// Reruns counts recovery re-runs.
	Reruns int
	// Killed names the node a failover workload killed; Recovery is the
	// time from the kill until a survivor had started re-running the last
	// of its interrupted jobs, and Interrupted how many there were.
	Killed      string
	Recovery    time.Duration
	Interrupted int
	// Problems lists the first duplicates, misses and unexpected firings.
	Problems []string
	// Split counts, in a workload with executors, the measured executions
	// each executor began, in the executors' order (x01, x02…); the lag
	// percentiles are then the dispatch lag, from the scheduled time to
	// the handler's start on its executor. KilledNode names the server
	// node killed; Killed is then the executor killed.
	Split      []int
	KilledNode string
	// DBCPU is the CPU the database server's processes used from the
	// first scheduled fire time to the end of the run, when the server
	// runs on this machine (DBCPUMeasured). Divided by Ran, the firings
	// that ran in that time (the measured ones and, in W2 and E1, those
	// before and after the measured window), it is the cost of a
	// firing, the figure a noisy machine disturbs least.
	DBCPU         time.Duration
	DBCPUMeasured bool
	Ran           int
	// Seed is how the jobs were created before the run (SeedBatch or
	// SeedSingle), Created how many (one per trigger), and CreateTime how
	// long that took. CreateCPU is the CPU the database server's
	// processes used meanwhile, when measured (CreateCPUMeasured, as for
	// DBCPU).
	Seed              string
	Created           int
	CreateTime        time.Duration
	CreateCPU         time.Duration
	CreateCPUMeasured bool
}

// OK reports whether every firing ran exactly once.
func (r *Result) OK() bool { return r.Duplicates == 0 && r.Misses == 0 && r.Unexpected == 0 }

// String returns the result line:
//
//	chime W1a nodes=2 fires=20000 thr=1234/s p50=12ms p95=30ms p99=45ms max=80ms dup=0 miss=0 dbcpu=0.412ms/fire seed=batch create=25000/s createcpu=0.081ms/job
//
// dbcpu, the database server's CPU per firing, is there when it was
// measured. seed and create, the jobs created per second before the run,
// are there when jobs were created; createcpu, the database server's CPU
// per created job, when it was measured. A workload with executors adds
// executors=N and split=…, the executions each executor began (its lag
// figures are the dispatch lag, scheduled time to handler start), and
// with kills killed=NODE,EXECUTOR. A failover workload adds
// recovery=…ms; unexpected=N is added when not zero.
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chime %s nodes=%d fires=%d thr=%d/s p50=%s p95=%s p99=%s max=%s dup=%d miss=%d",
		r.Workload, r.Nodes, r.Fires, int(math.Round(r.Throughput)),
		ms(r.P50), ms(r.P95), ms(r.P99), ms(r.Max), r.Duplicates, r.Misses)
	if r.DBCPUMeasured {
		fmt.Fprintf(&b, " dbcpu=%s", formatPerFire(r.DBCPU, max(r.Ran, r.Fires)))
	}
	if r.Created > 0 {
		fmt.Fprintf(&b, " seed=%s create=%d/s", r.Seed, int(math.Round(float64(r.Created)/max(r.CreateTime.Seconds(), 1e-9))))
		if r.CreateCPUMeasured {
			fmt.Fprintf(&b, " createcpu=%.3fms/job", float64(r.CreateCPU)/float64(time.Millisecond)/float64(r.Created))
		}
	}
	if len(r.Split) > 0 {
		parts := make([]string, len(r.Split))
		for i, n := range r.Split {
			parts[i] = strconv.Itoa(n)
		}
		fmt.Fprintf(&b, " executors=%d split=%s", len(r.Split), strings.Join(parts, ","))
	}
	if r.KilledNode != "" {
		fmt.Fprintf(&b, " killed=%s", r.KilledNode)
		if r.Killed != "" {
			fmt.Fprintf(&b, ",%s", r.Killed)
		}
	}
	if r.Killed != "" {
		fmt.Fprintf(&b, " recovery=%s", ms(r.Recovery))
	}
	if r.Unexpected > 0 {
		fmt.Fprintf(&b, " unexpected=%d", r.Unexpected)
	}
	return b.String()
}

// ms formats a duration in whole milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Round(time.Millisecond).Milliseconds()) }

// kill records which node a failover workload killed, and when.
type kill struct {
	node string
	at   time.Time
}

// summarize computes the result of a run from the merged fire logs.
func summarize(w Workload, nodes int, t0 time.Time, records []firelog.Record, k *kill) *Result {
	measured := make([]firelog.Record, 0, len(records))
	for _, rec := range records {
		if w.measured(t0, rec.Scheduled) {
			measured = append(measured, rec)
		}
	}
	expected := w.Expected(t0)
	check := firelog.Check(measured, expected, "", firelog.CheckOptions{AllowRecoveryReruns: true})
	r := &Result{
		Workload:   w.Name,
		Nodes:      nodes,
		Fires:      len(check.Lags),
		P50:        check.Percentile(50),
		P95:        check.Percentile(95),
		P99:        check.Percentile(99),
		Max:        check.MaxLag(),
		Duplicates: check.Duplicates,
		Misses:     check.Misses,
		Unexpected: check.Unexpected,
		Reruns:     check.Reruns,
		Problems:   check.Problems,
	}
	for _, rec := range records {
		if rec.IsFire() && !rec.Recovering {
			r.Ran++
		}
	}
	for _, lag := range check.Lags {
		if lag > w.Grace {
			r.Misses++
		}
	}
	var first, last time.Time
	for key := range expected {
		if at := time.UnixMilli(key.ScheduledMs); first.IsZero() || at.Before(first) {
			first = at
		}
	}
	for _, rec := range measured {
		if rec.IsFire() && !rec.Recovering && rec.Actual.After(last) {
			last = rec.Actual
		}
	}
	if span := last.Sub(first); span > 0 {
		r.Throughput = float64(r.Fires) / span.Seconds()
	}
	if k != nil {
		r.recovery(records, k)
	}
	return r
}

// recovery finds the long jobs the killed node had started and not
// finished, and how long after the kill the last of them was re-run. An
// interrupted job never re-run is a miss.
func (r *Result) recovery(records []firelog.Record, k *kill) {
	r.Killed = k.node
	interrupted := make(map[firelog.FireKey]bool)
	for _, rec := range records {
		if rec.Node != k.node {
			continue
		}
		key := firelog.FireKey{Trigger: rec.Trigger, ScheduledMs: rec.Scheduled.UnixMilli()}
		switch rec.Event {
		case firelog.EventStart:
			interrupted[key] = true
		case firelog.EventEnd:
			delete(interrupted, key)
		}
	}
	r.Interrupted = len(interrupted)
	rerun := make(map[firelog.FireKey]time.Time)
	for _, rec := range records {
		key := firelog.FireKey{Trigger: rec.Trigger, ScheduledMs: rec.Scheduled.UnixMilli()}
		if rec.Event != firelog.EventStart || !rec.Recovering || rec.Node == k.node || !interrupted[key] {
			continue
		}
		if at, ok := rerun[key]; !ok || rec.Actual.Before(at) {
			rerun[key] = rec.Actual
		}
	}
	for key := range interrupted {
		at, ok := rerun[key]
		if !ok {
			r.Misses++
			if len(r.Problems) < 20 {
				r.Problems = append(r.Problems, fmt.Sprintf("interrupted job %s never re-run", key))
			}
			continue
		}
		r.Recovery = max(r.Recovery, at.Sub(k.at))
	}
}
