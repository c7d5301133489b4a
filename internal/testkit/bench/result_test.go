package bench

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

func TestLookupScalesAndRefusesBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, workload string
		scale          float64
		rate           int
		want           string // "group count fires interval spread" of the first series, or the error
	}{
		{"W1a", "W1a", 1, 0, "burst 20000 1 0s 10s"},
		{"W1b scaled", "w1b", 0.1, 0, "burst 5000 1 0s 5s"},
		{"W1c", "W1c", 1, 0, "burst 100000 1 0s 1s"},
		{"W2a", "W2a", 1, 0, "steady 1000 60 1s 1s"},
		{"W2b", "W2b", 0.5, 0, "steady 2500 60 1s 1s"},
		{"W2 rate", "W2a", 1, 2000, "steady 2000 60 1s 1s"},
		{"W3", "W3", 1, 0, "steady 200 40 1s 1s"},
		{"E1", "e1", 1, 0, "steady 2000 60 1s 1s"},
		{"E1 rate", "E1", 0.5, 400, "steady 200 60 1s 1s"},
		{"unknown", "W9", 1, 0, `unknown workload "W9"`},
		{"zero scale", "W1a", 0, 0, "scale 0"},
		{"rate on W1", "W1a", 1, 10, "--rate applies to W2a, W2b and E1 only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, err := Lookup(tt.workload, tt.scale, tt.rate)
			var got string
			if err != nil {
				got = err.Error()
			} else {
				s := w.Series[0]
				got = strings.Join([]string{s.Group, strconv.Itoa(s.Count), strconv.Itoa(s.Fires), s.Interval.String(), s.Spread.String()}, " ")
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("Lookup(%q, %v, %d) = %q, want %q", tt.workload, tt.scale, tt.rate, got, tt.want)
			}
		})
	}
}

// TestE1RunsOnExecutors checks that E1's jobs run on its 20 executors,
// and that a run of it refuses library nodes.
func TestE1RunsOnExecutors(t *testing.T) {
	t.Parallel()
	w, err := Lookup("E1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Executors != E1Executors || !w.Series[0].OnExecutors || w.Workers < 1000 {
		t.Errorf("E1 = %+v, want its series on %d executors and a worker per run in flight", w, E1Executors)
	}
	_, err = Options{Workload: w, DatabaseURL: "sqlite:x", Executable: "x", Via: ViaLibrary}.withDefaults()
	if err == nil || !strings.Contains(err.Error(), "need server nodes") {
		t.Errorf("E1 via library: %v, want a refusal", err)
	}
	if o, err := (Options{Workload: w, DatabaseURL: "sqlite:x", Executable: "x"}).withDefaults(); err != nil || o.Via != ViaServer {
		t.Errorf("E1 by default: via %q, %v; want server nodes", o.Via, err)
	}
}

func TestSummarizeCountsWithinTheMeasuredWindow(t *testing.T) {
	t.Parallel()
	t0 := time.UnixMilli(1_700_000_000_000)
	w := Steady("W2", 2, 4*time.Second, time.Second) // trigger 0 at +0s…+3s, trigger 1 at +0.5s…+3.5s
	rec := func(trigger string, scheduled, lag time.Duration, node string) firelog.Record {
		return firelog.Record{Trigger: trigger, Scheduled: t0.Add(scheduled), Actual: t0.Add(scheduled + lag), Node: node, Event: firelog.EventFire}
	}
	records := []firelog.Record{
		rec("steady.t000000", 0, 500*time.Millisecond, "n1"), // before the window
		rec("steady.t000000", time.Second, 10*time.Millisecond, "n1"),
		rec("steady.t000000", 2*time.Second, 20*time.Millisecond, "n2"),
		rec("steady.t000000", 2*time.Second, 25*time.Millisecond, "n1"), // a duplicate
		rec("steady.t000001", 1500*time.Millisecond, 30*time.Millisecond, "n2"),
		// steady.t000001 at +2.5s is missing
		rec("steady.t000001", 3500*time.Millisecond, time.Second, "n2"), // after the window
	}
	r := summarize(w, 2, t0, records, nil)
	got := r.String()
	want := "chime W2 nodes=2 fires=4 thr=4/s p50=20ms p95=30ms p99=30ms max=30ms dup=1 miss=1"
	if got != want {
		t.Errorf("summarize:\n got %s\nwant %s", got, want)
	}
}

func TestResultLineReportsCreatingJobs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    Result
		want string
	}{
		{"Measured", Result{Workload: "W1b", Nodes: 1, Fires: 50000, Seed: SeedBatch, Created: 50000,
			CreateTime: 2 * time.Second, CreateCPU: 4400 * time.Millisecond, CreateCPUMeasured: true},
			"seed=batch create=25000/s createcpu=0.088ms/job"},
		{"NoDatabaseCPU", Result{Workload: "W1b", Nodes: 1, Fires: 10, Seed: SeedSingle, Created: 10, CreateTime: 4 * time.Second},
			"seed=single create=3/s"},
		{"Executors", Result{Workload: "E1", Nodes: 2, Fires: 6, Split: []int{3, 2, 1}, KilledNode: "n1", Killed: "x02", Recovery: 1500 * time.Millisecond},
			"executors=3 split=3,2,1 killed=n1,x02 recovery=1500ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.r.String()
			if !strings.HasSuffix(got, " "+tc.want) {
				t.Errorf("String() = %q, want it to end in %q", got, tc.want)
			}
		})
	}
}

func TestRecoveryIsTheLastReRunOfAnInterruptedJob(t *testing.T) {
	t.Parallel()
	t0 := time.UnixMilli(1_700_000_000_000)
	killedAt := t0.Add(10 * time.Second)
	rec := func(trigger string, scheduled time.Duration, actual time.Time, node string, recovering bool, ev firelog.Event) firelog.Record {
		return firelog.Record{Trigger: trigger, Scheduled: t0.Add(scheduled), Actual: actual, Node: node, Recovering: recovering, Event: ev}
	}
	records := []firelog.Record{
		rec("long.a", 7*time.Second, t0.Add(7*time.Second), "n1", false, firelog.EventStart),
		rec("long.b", 8*time.Second, t0.Add(8*time.Second), "n1", false, firelog.EventStart),
		rec("long.c", 4*time.Second, t0.Add(4*time.Second), "n1", false, firelog.EventStart),
		rec("long.c", 4*time.Second, t0.Add(9*time.Second), "n1", false, firelog.EventEnd), // finished before the kill
		rec("long.a", 7*time.Second, killedAt.Add(2*time.Second), "n2", true, firelog.EventStart),
		rec("long.b", 8*time.Second, killedAt.Add(3*time.Second), "n2", true, firelog.EventStart),
	}
	var r Result
	r.recovery(records, &kill{node: "n1", at: killedAt})
	if r.Interrupted != 2 || r.Recovery != 3*time.Second || r.Misses != 0 {
		t.Errorf("interrupted %d, recovery %s, misses %d; want 2, 3s, 0", r.Interrupted, r.Recovery, r.Misses)
	}
	var missing Result
	missing.recovery(records[:4], &kill{node: "n1", at: killedAt})
	if missing.Misses != 2 {
		t.Errorf("%d misses without re-runs, want 2", missing.Misses)
	}
}

func TestSQLCountsRoundTrip(t *testing.T) {
	t.Parallel()
	c := NewSQLCounts()
	c.Add("SELECT 1\n  FROM t", 2, 3*time.Millisecond)
	c.Add("SELECT 1 FROM t", 1, time.Millisecond)
	c.Add("begin", 5, 40*time.Microsecond)
	var b strings.Builder
	c.Print(&b)
	d := NewSQLCounts()
	if err := d.ParseSQLCounts(strings.NewReader("ready\n" + b.String())); err != nil {
		t.Fatal(err)
	}
	want := []StatementCount{{"begin", 5, 40 * time.Microsecond}, {"SELECT 1 FROM t", 3, 4 * time.Millisecond}}
	if got := d.Top(5); !slices.Equal(got, want) || d.Total() != 8 || d.TotalTime() != 4040*time.Microsecond {
		t.Errorf("parsed %v (total %d, %s), want %v (total 8, 4.04ms)", got, d.Total(), d.TotalTime(), want)
	}
}
