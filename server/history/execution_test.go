package history_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chime-scheduler/chime/server/history"
)

func testLifecycle(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	e := &history.Execution{
		ID: "e1", JobGroup: "reports", JobName: "nightly", TriggerGroup: "tg", TriggerName: "at-two",
		NodeID: "node-a", ScheduledTime: t0, StartedTime: t0.Add(1500 * time.Microsecond),
		Recovering: true, Manual: true,
		Params: map[string]any{"n": 9007199254740993, "s": "é", "list": []any{1, "two"}},
	}
	start(t, h, e)
	got, err := h.Get(ctx, "e1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	want := history.Execution{
		ID: "e1", FirstID: "e1", Attempt: 1, JobGroup: "reports", JobName: "nightly", TriggerGroup: "tg",
		TriggerName: "at-two", NodeID: "node-a", ScheduledTime: t0, StartedTime: t0.Add(1500 * time.Microsecond),
		Outcome: history.OutcomeRunning, Recovering: true, Manual: true,
		Params: map[string]any{"n": json.Number("9007199254740993"), "s": "é", "list": []any{json.Number("1"), "two"}},
	}
	equal(t, "running execution", *got, want)
	if e.FirstID != "" || e.Attempt != 0 {
		t.Errorf("Start modified its argument: FirstID %q, Attempt %d", e.FirstID, e.Attempt)
	}
	if err := h.Start(ctx, e); !errors.Is(err, history.ErrExists) {
		t.Errorf("second Start of e1: %v, want ErrExists", err)
	}

	logs := []history.LogLine{
		{Time: t0.Add(time.Second), Level: "INFO", Message: "started", Attrs: map[string]any{"rows": 3}},
		{Time: t0.Add(2 * time.Second), Level: "ERROR", Message: "lost a row"},
	}
	f := history.Finish{
		Outcome: history.OutcomeFailed, FinishedTime: t0.Add(3 * time.Second), Error: "exit status 1",
		Output: "line 1\nline 2\n", Logs: logs,
	}
	if err := h.Finish(ctx, "e1", f); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	got, err = h.Get(ctx, "e1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	want.Outcome, want.FinishedTime, want.Error, want.Output = history.OutcomeFailed, f.FinishedTime, f.Error, f.Output
	want.Logs = []history.LogLine{
		{Time: logs[0].Time, Level: "INFO", Message: "started", Attrs: map[string]any{"rows": json.Number("3")}},
		logs[1],
	}
	equal(t, "finished execution", *got, want)

	again := history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: t0.Add(time.Hour), Output: "other"}
	if err := h.Finish(ctx, "e1", again); !errors.Is(err, history.ErrNotRunning) {
		t.Errorf("second Finish: %v, want ErrNotRunning", err)
	}
	if got, err := h.Get(ctx, "e1"); err != nil || got.Outcome != history.OutcomeFailed || got.Output != f.Output {
		t.Errorf("after a refused second Finish: %+v, %v; want the first outcome kept", got, err)
	}
	if err := h.Finish(ctx, "missing", again); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("Finish(missing): %v, want ErrNotFound", err)
	}
	if _, err := h.Get(ctx, "missing"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("Get(missing): %v, want ErrNotFound", err)
	}

	start(t, h, execution("e2", "reports", "nightly", t0))
	for _, tc := range []struct {
		name string
		f    history.Finish
		want string
	}{
		{"NoOutcome", history.Finish{FinishedTime: t0}, "Outcome"},
		{"Running", history.Finish{Outcome: history.OutcomeRunning, FinishedTime: t0}, "Outcome"},
		{"Unknown", history.Finish{Outcome: "exploded", FinishedTime: t0}, "exploded"},
		{"NoTime", history.Finish{Outcome: history.OutcomeSucceeded}, "FinishedTime"},
	} {
		wantInvalid(t, "Finish "+tc.name, h.Finish(ctx, "e2", tc.f), tc.want)
	}
	if got, err := h.Get(ctx, "e2"); err != nil || got.Outcome != history.OutcomeRunning {
		t.Errorf("after refused Finishes: %+v, %v; want still running", got, err)
	}
}

func testStartInvalid(t *testing.T, open opener) {
	h := open(nil)
	long := strings.Repeat("x", 201)
	tests := []struct {
		name string
		edit func(e *history.Execution)
		want string
	}{
		{"NoID", func(e *history.Execution) { e.ID = "" }, "ID"},
		{"LongID", func(e *history.Execution) { e.ID = long }, "ID"},
		{"NoJobGroup", func(e *history.Execution) { e.JobGroup = "" }, "JobGroup"},
		{"NoJobName", func(e *history.Execution) { e.JobName = "" }, "JobName"},
		{"LongNode", func(e *history.Execution) { e.NodeID = long }, "NodeID"},
		{"NoStartedTime", func(e *history.Execution) { e.StartedTime = time.Time{} }, "StartedTime"},
		{"FarFuture", func(e *history.Execution) { e.ScheduledTime = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }, "ScheduledTime"},
		{"NegativeAttempt", func(e *history.Execution) { e.Attempt = -1 }, "Attempt"},
		{"FirstAttemptForeignFirstID", func(e *history.Execution) { e.FirstID = "other" }, "FirstID"},
		{"RetryOwnFirstID", func(e *history.Execution) { e.Attempt = 2 }, "FirstID"},
		{"Finished", func(e *history.Execution) { e.Outcome = history.OutcomeSucceeded }, "Outcome"},
		{"BadParams", func(e *history.Execution) { e.Params = map[string]any{"f": func() {}} }, "Params"},
	}
	for _, tc := range tests {
		e := execution("bad", "g", "job", t0)
		tc.edit(e)
		wantInvalid(t, tc.name, h.Start(t.Context(), e), tc.want)
	}
	wantInvalid(t, "nil", h.Start(t.Context(), nil), "nil")
	if p, err := h.List(t.Context(), nil); err != nil || len(p.Executions) != 0 {
		t.Errorf("after refused Starts: List = %v, %v; want nothing recorded", ids(p.Executions), err)
	}
}

func testTruncation(t *testing.T, open opener) {
	h := open(&history.Options{MaxOutputBytes: 100, MaxLogLines: 5})
	ctx := t.Context()
	output := strings.Repeat("é", 50) + strings.Repeat("-", 900) + strings.Repeat("ü", 50) // 1100 bytes
	var logs []history.LogLine
	for i := range 12 {
		logs = append(logs, history.LogLine{Time: t0.Add(time.Duration(i) * time.Second), Level: "INFO", Message: fmt.Sprint("line ", i)})
	}
	start(t, h, execution("long", "g", "job", t0), execution("short", "g", "job", t0), execution("capped", "g", "job", t0))
	if err := h.Finish(ctx, "long", history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: t0, Output: output, Logs: logs}); err != nil {
		t.Fatal(err)
	}
	got, err := h.Get(ctx, "long")
	if err != nil {
		t.Fatal(err)
	}
	if !got.OutputTruncated || len(got.Output) > 100 || !utf8.ValidString(got.Output) ||
		!strings.HasPrefix(got.Output, "éé") || !strings.HasSuffix(got.Output, "üü") || !strings.Contains(got.Output, "bytes omitted") {
		t.Errorf("long output kept as %q (%d bytes, truncated %v); want at most 100 bytes of valid UTF-8, its start and end and an omission line",
			got.Output, len(got.Output), got.OutputTruncated)
	}
	var msgs []string
	for _, l := range got.Logs {
		msgs = append(msgs, l.Message)
	}
	equal(t, "kept log lines", msgs, []string{"line 0", "line 1", "... 8 log lines omitted ...", "line 10", "line 11"})

	// Short output is kept whole; text the databases refuse is replaced.
	if err := h.Finish(ctx, "short", history.Finish{Outcome: history.OutcomeFailed, FinishedTime: t0,
		Output: "ok\x00\xff", Error: "bad \xfe byte"}); err != nil {
		t.Fatal(err)
	}
	got, err = h.Get(ctx, "short")
	if err != nil || got.OutputTruncated || got.Output != "ok\uFFFD\uFFFD" || got.Error != "bad \uFFFD byte" {
		t.Errorf("short output: %+v, %v; want cleaned, not truncated", got, err)
	}
	// A job that cut its output itself keeps the flag.
	if err := h.Finish(ctx, "capped", history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: t0, Output: "a", OutputTruncated: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := h.Get(ctx, "capped"); err != nil || !got.OutputTruncated {
		t.Errorf("job-truncated output: %+v, %v; want flagged", got, err)
	}
}

func testAttempts(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	first := execution("a1", "g", "job", t0)
	second := execution("a2", "g", "job", t0.Add(time.Minute))
	second.FirstID, second.Attempt = "a1", 2
	third := execution("a3", "g", "job", t0.Add(2*time.Minute))
	third.FirstID, third.Attempt, third.Recovering = "a1", 3, true
	start(t, h, third, first, second, execution("b1", "g", "job", t0))
	finish(t, h, "a1", history.OutcomeFailed, t0.Add(time.Second))
	finish(t, h, "a2", history.OutcomeTimedOut, t0.Add(time.Minute+time.Second))
	got, err := h.Attempts(ctx, "a1")
	if err != nil {
		t.Fatalf("Attempts: %v", err)
	}
	equal(t, "attempts of a1", ids(got), []string{"a1", "a2", "a3"})
	for i, e := range got {
		if e.FirstID != "a1" || e.Attempt != i+1 {
			t.Errorf("attempt %d: FirstID %q, Attempt %d", i+1, e.FirstID, e.Attempt)
		}
	}
	if got, err := h.Attempts(ctx, "b1"); err != nil || len(got) != 1 {
		t.Errorf("Attempts(b1) = %v, %v; want b1 alone", ids(got), err)
	}
	if _, err := h.Attempts(ctx, "a2"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("Attempts(a2), not a first attempt: %v, want ErrNotFound", err)
	}
}

// listFixture records 24 executions: jobs g1.a, g1.b and g2.a in turn, a
// minute apart, on nodes n1 and n2, with outcomes in turn; executions 10
// and 11 start at the same instant. It returns them newest first.
func listFixture(t *testing.T, h *history.History) []history.Execution {
	t.Helper()
	jobs := [][2]string{{"g1", "a"}, {"g1", "b"}, {"g2", "a"}}
	outcomes := []history.Outcome{history.OutcomeSucceeded, history.OutcomeFailed, history.OutcomeRunning, history.OutcomeTimedOut}
	var all []history.Execution
	for i := range 24 {
		at := t0.Add(time.Duration(i) * time.Minute)
		if i == 11 {
			at = t0.Add(10 * time.Minute)
		}
		e := execution(fmt.Sprintf("x%02d", i), jobs[i%3][0], jobs[i%3][1], at)
		e.NodeID = []string{"n1", "n2"}[i%2]
		start(t, h, e)
		e.FirstID, e.Attempt, e.Outcome = e.ID, 1, outcomes[i%4]
		if e.Outcome != history.OutcomeRunning {
			e.FinishedTime = at.Add(time.Second)
			finish(t, h, e.ID, e.Outcome, e.FinishedTime)
		}
		all = append(all, *e)
	}
	slices.Reverse(all) // x11 and x10 share a time; ID descending puts x11 first
	return all
}

func filter(es []history.Execution, keep func(e history.Execution) bool) []string {
	var out []string
	for _, e := range es {
		if keep(e) {
			out = append(out, e.ID)
		}
	}
	return out
}

func testListFilters(t *testing.T, open opener) {
	h := open(nil)
	all := listFixture(t, h)
	tests := []struct {
		name string
		q    history.Query
		want []string
	}{
		{"All", history.Query{}, ids(all)},
		{"Job", history.Query{JobGroup: "g1", JobName: "a"},
			filter(all, func(e history.Execution) bool { return e.JobGroup == "g1" && e.JobName == "a" })},
		{"Group", history.Query{JobGroup: "g1"}, filter(all, func(e history.Execution) bool { return e.JobGroup == "g1" })},
		{"Outcomes", history.Query{Outcome: []history.Outcome{history.OutcomeFailed, history.OutcomeTimedOut}},
			filter(all, func(e history.Execution) bool {
				return e.Outcome == history.OutcomeFailed || e.Outcome == history.OutcomeTimedOut
			})},
		{"Running", history.Query{Outcome: []history.Outcome{history.OutcomeRunning}},
			filter(all, func(e history.Execution) bool { return e.Outcome == history.OutcomeRunning })},
		{"Node", history.Query{NodeID: "n2"}, filter(all, func(e history.Execution) bool { return e.NodeID == "n2" })},
		{"Range", history.Query{From: t0.Add(5 * time.Minute), To: t0.Add(12 * time.Minute)},
			filter(all, func(e history.Execution) bool {
				return !e.StartedTime.Before(t0.Add(5*time.Minute)) && e.StartedTime.Before(t0.Add(12*time.Minute))
			})},
		{"Combined", history.Query{JobGroup: "g2", NodeID: "n1", From: t0.Add(3 * time.Minute)},
			filter(all, func(e history.Execution) bool {
				return e.JobGroup == "g2" && e.NodeID == "n1" && !e.StartedTime.Before(t0.Add(3*time.Minute))
			})},
		{"None", history.Query{JobGroup: "g3"}, nil},
	}
	for _, tc := range tests {
		q := tc.q
		q.Limit = history.MaxLimit
		p, err := h.List(t.Context(), &q)
		if err != nil {
			t.Errorf("%s: List: %v", tc.name, err)
			continue
		}
		equal(t, tc.name, ids(p.Executions), tc.want)
		if p.Next != "" {
			t.Errorf("%s: Next = %q on the only page", tc.name, p.Next)
		}
	}
	// Lists carry everything but output and logs, which Get returns.
	start(t, h, execution("out", "g9", "job", t0))
	f := history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: t0.Add(time.Second), Output: "printed",
		Logs: []history.LogLine{{Time: t0, Level: "INFO", Message: "logged"}}}
	if err := h.Finish(t.Context(), "out", f); err != nil {
		t.Fatal(err)
	}
	p, err := h.List(t.Context(), &history.Query{JobGroup: "g9"})
	if err != nil || len(p.Executions) != 1 {
		t.Fatalf("List(g9) = %+v, %v", p, err)
	}
	full, err := h.Get(t.Context(), "out")
	if err != nil {
		t.Fatal(err)
	}
	if full.Output != "printed" || len(full.Logs) != 1 {
		t.Errorf("Get: output %q, logs %v; want both", full.Output, full.Logs)
	}
	light := *full
	light.Output, light.Logs = "", nil
	equal(t, "listed execution", p.Executions[0], light)
}

func testListPaging(t *testing.T, open opener) {
	h := open(nil)
	all := listFixture(t, h)
	p, err := h.List(t.Context(), &history.Query{Limit: 5})
	if err != nil {
		t.Fatalf("List page 1: %v", err)
	}
	got := ids(p.Executions)
	pages := 1

	// Newer executions are recorded while the other pages are read: they
	// are newer than any cursor, so no later page shows them and none
	// shifts.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			e := execution(fmt.Sprintf("new%03d", i), "g1", "a", t0.Add(time.Hour+time.Duration(i)*time.Second))
			if err := h.Start(t.Context(), e); err != nil {
				t.Errorf("concurrent Start: %v", err)
				return
			}
		}
	})
	defer wg.Wait()
	defer close(stop)
	for p.Next != "" {
		if p, err = h.List(t.Context(), &history.Query{Limit: 5, Cursor: p.Next}); err != nil {
			t.Fatalf("List page %d: %v", pages+1, err)
		}
		pages++
		got = append(got, ids(p.Executions)...)
		if pages > 10 {
			t.Fatal("more pages than executions")
		}
	}
	equal(t, "paged executions", got, ids(all))
	if pages != 5 { // 24 executions, 5 a page
		t.Errorf("read %d pages, want 5", pages)
	}

	// A filtered list pages the same way; an exact multiple of the limit
	// ends with a full page and no Next.
	wantG2 := filter(all, func(e history.Execution) bool { return e.JobGroup == "g2" })
	p, err = h.List(t.Context(), &history.Query{Limit: 4, JobGroup: "g2"})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "first g2 page", ids(p.Executions), wantG2[:4])
	p, err = h.List(t.Context(), &history.Query{Limit: 4, JobGroup: "g2", Cursor: p.Next})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "second g2 page", ids(p.Executions), wantG2[4:])
	if p.Next != "" {
		t.Errorf("last g2 page: Next = %q, want none", p.Next)
	}
}

func testListInvalid(t *testing.T, open opener) {
	h := open(nil)
	tests := []struct {
		name string
		q    history.Query
		want string
	}{
		{"LimitTooLarge", history.Query{Limit: history.MaxLimit + 1}, "Limit"},
		{"NegativeLimit", history.Query{Limit: -1}, "Limit"},
		{"BadCursor", history.Query{Cursor: "not a cursor"}, "Cursor"},
		{"CursorWithoutID", history.Query{Cursor: "MTIz"}, "Cursor"}, // "123"
		{"UnknownOutcome", history.Query{Outcome: []history.Outcome{history.OutcomeFailed, "exploded"}}, "Outcome[1]"},
		{"NameWithoutGroup", history.Query{JobName: "a"}, "JobGroup"},
		{"EmptyRange", history.Query{From: t0, To: t0}, "From"},
		{"LongNode", history.Query{NodeID: strings.Repeat("n", 201)}, "NodeID"},
	}
	for _, tc := range tests {
		_, err := h.List(t.Context(), &tc.q)
		wantInvalid(t, tc.name, err, tc.want)
	}
}

func testMarkNodeLost(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	onN2 := execution("m4", "g", "job", t0)
	onN2.NodeID = "n2"
	start(t, h, execution("m1", "g", "job", t0), execution("m2", "g", "other", t0), execution("m3", "g", "job", t0), onN2)
	finish(t, h, "m3", history.OutcomeSucceeded, t0.Add(time.Second))
	lost := t0.Add(time.Minute)
	n, err := h.MarkNodeLost(ctx, "n1", lost)
	if err != nil || n != 2 {
		t.Fatalf("MarkNodeLost(n1) = %d, %v; want 2", n, err)
	}
	for id, want := range map[string]history.Outcome{
		"m1": history.OutcomeNodeLost, "m2": history.OutcomeNodeLost, "m3": history.OutcomeSucceeded, "m4": history.OutcomeRunning,
	} {
		got, err := h.Get(ctx, id)
		if err != nil || got.Outcome != want {
			t.Errorf("%s: %+v, %v; want outcome %s", id, got, err, want)
			continue
		}
		if want == history.OutcomeNodeLost && (!got.FinishedTime.Equal(lost) || got.Error != "node n1 lost") {
			t.Errorf("%s: finished %v with error %q; want %v and %q", id, got.FinishedTime, got.Error, lost, "node n1 lost")
		}
	}
	if n, err := h.MarkNodeLost(ctx, "n1", lost); err != nil || n != 0 {
		t.Errorf("second MarkNodeLost(n1) = %d, %v; want 0", n, err)
	}
	// The node presumed lost reports late, once the database is back: its
	// report is the truth, and a second one changes nothing.
	late := lost.Add(time.Second)
	if err := h.Finish(ctx, "m1", history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: late}); err != nil {
		t.Errorf("Finish of a node_lost execution: %v, want it to take the outcome", err)
	}
	if got, err := h.Get(ctx, "m1"); err != nil || got.Outcome != history.OutcomeSucceeded || !got.FinishedTime.Equal(late) {
		t.Errorf("m1 after its late report = %+v, %v; want succeeded at %v", got, err, late)
	}
	if err := h.Finish(ctx, "m1", history.Finish{Outcome: history.OutcomeFailed, FinishedTime: late}); !errors.Is(err, history.ErrNotRunning) {
		t.Errorf("second Finish: %v, want ErrNotRunning", err)
	}
	_, err = h.MarkNodeLost(ctx, "", lost)
	wantInvalid(t, "MarkNodeLost without node", err, "nodeID")
	_, err = h.MarkNodeLost(ctx, "n2", time.Time{})
	wantInvalid(t, "MarkNodeLost without time", err, "at")
}

func testRunningByNode(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	if got, err := h.RunningByNode(ctx); err != nil || len(got) != 0 {
		t.Fatalf("RunningByNode with no execution = %v, %v; want none", got, err)
	}
	onN2 := execution("r3", "g", "job", t0)
	onN2.NodeID = "n2"
	start(t, h, execution("r1", "g", "job", t0), execution("r2", "g", "other", t0), onN2, execution("r4", "g", "job", t0))
	finish(t, h, "r4", history.OutcomeSucceeded, t0.Add(time.Second))
	want := map[string]int{"n1": 2, "n2": 1}
	if got, err := h.RunningByNode(ctx); err != nil || !maps.Equal(got, want) {
		t.Errorf("RunningByNode = %v, %v; want %v", got, err, want)
	}
	if _, err := h.MarkNodeLost(ctx, "n1", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	want = map[string]int{"n2": 1}
	if got, err := h.RunningByNode(ctx); err != nil || !maps.Equal(got, want) {
		t.Errorf("RunningByNode after n1 was lost = %v, %v; want %v", got, err, want)
	}
}

func testLastSuccess(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	if last, err := h.LastSuccess(ctx, "g", "job"); err != nil || !last.IsZero() {
		t.Errorf("LastSuccess of an unknown job = %v, %v; want zero", last, err)
	}
	start(t, h, execution("s1", "g", "job", t0), execution("s2", "g", "job", t0.Add(time.Hour)),
		execution("s3", "g", "job", t0.Add(2*time.Hour)), execution("o1", "g", "other", t0.Add(3*time.Hour)),
		execution("s4", "g", "job", t0.Add(4*time.Hour)))
	finish(t, h, "s1", history.OutcomeSucceeded, t0.Add(time.Minute))
	// s2 started later but finished later still.
	finish(t, h, "s2", history.OutcomeSucceeded, t0.Add(90*time.Minute))
	finish(t, h, "s3", history.OutcomeFailed, t0.Add(150*time.Minute))
	finish(t, h, "o1", history.OutcomeSucceeded, t0.Add(200*time.Minute))
	last, err := h.LastSuccess(ctx, "g", "job")
	if err != nil || !last.Equal(t0.Add(90*time.Minute)) {
		t.Errorf("LastSuccess = %v, %v; want %v (s4 runs, s3 failed, o1 is another job)", last, err, t0.Add(90*time.Minute))
	}
	_, err = h.LastSuccess(ctx, "g", "")
	wantInvalid(t, "LastSuccess without name", err, "name")
}

func testStats(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	since := t0
	// Before the period: not counted.
	start(t, h, execution("old", "g", "job", since.Add(-time.Hour)))
	finish(t, h, "old", history.OutcomeSucceeded, since.Add(-59*time.Minute))
	// Twenty successes taking 1 s to 20 s, two failures of 100 s, one
	// skipped, one running, and another job's success.
	for i := 1; i <= 20; i++ {
		id := fmt.Sprint("ok", i)
		at := since.Add(time.Duration(i) * time.Minute)
		start(t, h, execution(id, "g", "job", at))
		finish(t, h, id, history.OutcomeSucceeded, at.Add(time.Duration(i)*time.Second))
	}
	for i := 1; i <= 2; i++ {
		id := fmt.Sprint("bad", i)
		at := since.Add(time.Duration(30+i) * time.Minute)
		start(t, h, execution(id, "g", "job", at))
		finish(t, h, id, history.OutcomeFailed, at.Add(100*time.Second))
	}
	start(t, h, execution("skip", "g", "job", since.Add(40*time.Minute)), execution("run", "g", "job", since.Add(41*time.Minute)),
		execution("other", "g", "other", since.Add(42*time.Minute)))
	finish(t, h, "skip", history.OutcomeSkipped, since.Add(40*time.Minute))
	finish(t, h, "other", history.OutcomeSucceeded, since.Add(43*time.Minute))

	st, err := h.Stats(ctx, "g", "job", since)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	// 22 durations: 1..20 s and 100 s twice. Nearest rank: p50 is the
	// 11th (11 s), p95 the 21st (100 s).
	want := history.Stats{
		Since: since, Total: 24,
		Counts: map[history.Outcome]int{
			history.OutcomeSucceeded: 20, history.OutcomeFailed: 2, history.OutcomeSkipped: 1, history.OutcomeRunning: 1,
		},
		P50: 11 * time.Second, P95: 100 * time.Second, Sampled: 22,
	}
	equal(t, "Stats(g.job)", *st, want)

	all, err := h.Stats(ctx, "", "", time.Time{})
	if err != nil || all.Total != 26 || all.Counts[history.OutcomeSucceeded] != 22 {
		t.Errorf("Stats of everything = %+v, %v; want 26 executions, 22 successes", all, err)
	}
	none, err := h.Stats(ctx, "g", "missing", since)
	if err != nil || none.Total != 0 || none.Sampled != 0 || none.P50 != 0 {
		t.Errorf("Stats of an unknown job = %+v, %v; want zeros", none, err)
	}
	_, err = h.Stats(ctx, "", "job", since)
	wantInvalid(t, "Stats with a name and no group", err, "group")
}

func testRecordLost(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	lost := t0.Add(time.Minute)
	e := execution("l1", "g", "job", t0)
	e.NodeID = ""
	if err := h.RecordLost(ctx, e, lost, "node lost before it recorded the execution"); err != nil {
		t.Fatalf("RecordLost: %v", err)
	}
	got, err := h.Get(ctx, "l1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Outcome != history.OutcomeNodeLost || !got.FinishedTime.Equal(lost) ||
		got.Error != "node lost before it recorded the execution" || got.Attempt != 1 || got.FirstID != "l1" {
		t.Errorf("lost execution = %+v; want node_lost at %v, attempt 1 of itself, with the reason", got, lost)
	}
	if err := h.RecordLost(ctx, e, lost, "again"); !errors.Is(err, history.ErrExists) {
		t.Errorf("second RecordLost: %v, want ErrExists", err)
	}
	// Its node, presumed lost, reports late: the report is the truth.
	if err := h.Finish(ctx, "l1", history.Finish{Outcome: history.OutcomeFailed, FinishedTime: lost, Error: "boom"}); err != nil {
		t.Errorf("Finish after RecordLost: %v", err)
	}
	bad := execution("l2", "g", "job", t0)
	bad.Attempt, bad.FirstID = 2, "l2"
	err = h.RecordLost(ctx, bad, lost, "x")
	wantInvalid(t, "RecordLost of attempt 2 naming itself first", err, "FirstID")
	if inv := (*history.InvalidError)(nil); !errors.As(err, &inv) || inv.Field != "FirstID" {
		t.Errorf("RecordLost of attempt 2 naming itself first: %#v, want an *InvalidError about FirstID", err)
	}
	err = h.RecordLost(ctx, execution("l3", "g", "job", t0), time.Time{}, "x")
	wantInvalid(t, "RecordLost without a time", err, "lostAt")
}

func testMarkLost(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	start(t, h, execution("k1", "g", "job", t0), execution("k2", "g", "job", t0))
	finish(t, h, "k2", history.OutcomeSucceeded, t0.Add(time.Second))
	lost := t0.Add(time.Minute)
	if err := h.MarkLost(ctx, "k1", lost, "node n1 lost"); err != nil {
		t.Fatalf("MarkLost: %v", err)
	}
	got, err := h.Get(ctx, "k1")
	if err != nil || got.Outcome != history.OutcomeNodeLost || got.Error != "node n1 lost" || !got.FinishedTime.Equal(lost) {
		t.Errorf("k1 = %+v, %v; want node_lost at %v with the reason", got, err, lost)
	}
	// A second node marking it, or marking a finished one, changes nothing.
	if err := h.MarkLost(ctx, "k1", lost, "again"); !errors.Is(err, history.ErrNotRunning) {
		t.Errorf("second MarkLost: %v, want ErrNotRunning", err)
	}
	if err := h.MarkLost(ctx, "k2", lost, "x"); !errors.Is(err, history.ErrNotRunning) {
		t.Errorf("MarkLost of a finished execution: %v, want ErrNotRunning", err)
	}
	if err := h.MarkLost(ctx, "nope", lost, "x"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("MarkLost of an unknown execution: %v, want ErrNotFound", err)
	}
	wantInvalid(t, "MarkLost without a time", h.MarkLost(ctx, "k1", time.Time{}, "x"), "at")
}
