package history_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

func testRecordBatch(t *testing.T, open opener) {
	h := open(&history.Options{MaxOutputBytes: 64})
	ctx := t.Context()
	start(t, h, execution("running", "g", "j", t0), execution("done", "g", "j", t0),
		execution("taken", "g", "j", t0), execution("taken-end", "g", "j", t0))
	finish(t, h, "done", history.OutcomeSucceeded, t0.Add(time.Second))

	end := func(o history.Outcome, out string) *history.Finish {
		return &history.Finish{Outcome: o, FinishedTime: t0.Add(2 * time.Second), Error: "e-" + string(o), Output: out}
	}
	other := execution("taken", "g", "j", t0.Add(time.Hour))
	other.NodeID = "n2"
	long := string(make([]byte, 100))
	recs := []history.Record{
		{Start: execution("new", "g", "j", t0)},
		{Start: execution("whole", "g", "j", t0), End: end(history.OutcomeFailed, long)},
		{ID: "running", End: end(history.OutcomeSucceeded, "out")},
		{ID: "done", End: end(history.OutcomeFailed, "")},
		{ID: "unknown", End: end(history.OutcomeFailed, "")},
		{Start: &history.Execution{ID: "no-job", StartedTime: t0}},
		{Start: other},
		{Start: execution("taken-end", "g", "j", t0), End: end(history.OutcomeTimedOut, "")},
		{ID: "running", End: &history.Finish{Outcome: history.OutcomeRunning, FinishedTime: t0}},
		{},
	}
	errs, err := h.RecordBatch(ctx, recs)
	if err != nil {
		t.Fatalf("RecordBatch: %v", err)
	}
	for i, want := range []error{nil, nil, nil, history.ErrNotRunning, history.ErrNotFound, history.ErrInvalid, nil, nil,
		history.ErrInvalid, history.ErrInvalid} {
		if !errors.Is(errs[i], want) || (want == nil && errs[i] != nil) {
			t.Errorf("record %d: error %v, want %v", i, errs[i], want)
		}
	}
	wantInvalid(t, "a start without JobGroup", errs[5], "JobGroup")
	wantInvalid(t, "an end that is running", errs[8], "Finish.Outcome")
	wantInvalid(t, "an empty record", errs[9], "Record[9]")

	for _, w := range []struct {
		id             string
		outcome        history.Outcome
		errText, node  string
		started        time.Time
		outputTruncate bool
	}{
		{"new", history.OutcomeRunning, "", "n1", t0, false},
		{"whole", history.OutcomeFailed, "e-failed", "n1", t0, true},
		{"running", history.OutcomeSucceeded, "e-succeeded", "n1", t0, false},
		{"done", history.OutcomeSucceeded, "", "n1", t0, false},
		{"taken", history.OutcomeRunning, "", "n1", t0, false},
		{"taken-end", history.OutcomeTimedOut, "e-timed_out", "n1", t0, false},
	} {
		got, err := h.Get(ctx, w.id)
		if err != nil {
			t.Errorf("Get(%s): %v", w.id, err)
			continue
		}
		if got.Outcome != w.outcome || got.Error != w.errText || got.NodeID != w.node || !got.StartedTime.Equal(w.started) ||
			got.OutputTruncated != w.outputTruncate {
			t.Errorf("%s: outcome %s, error %q, node %s, started %v, truncated %v; want %s, %q, %s, %v, %v", w.id,
				got.Outcome, got.Error, got.NodeID, got.StartedTime, got.OutputTruncated,
				w.outcome, w.errText, w.node, w.started, w.outputTruncate)
		}
	}
	for _, id := range []string{"unknown", "no-job"} {
		if _, err := h.Get(ctx, id); !errors.Is(err, history.ErrNotFound) {
			t.Errorf("Get(%s): %v, want ErrNotFound: a refused record wrote nothing", id, err)
		}
	}

	// The same batch again, as after a commit whose answer was lost:
	// nothing changes, and what was written reports no error.
	errs, err = h.RecordBatch(ctx, recs[:2])
	if err != nil || errs[0] != nil || errs[1] != nil {
		t.Errorf("RecordBatch again: %v, %v; want no error", errs, err)
	}
	got, err := h.Get(ctx, "whole")
	if err != nil || got.Outcome != history.OutcomeFailed {
		t.Errorf("whole after the retry: %+v, %v; want failed", got, err)
	}
}

// testRecordBatchMany writes more records than one INSERT takes: starts,
// then their ends, then executions started and ended at once.
func testRecordBatchMany(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	const n = 120
	var starts, ends, whole []history.Record
	for i := range n {
		starts = append(starts, history.Record{Start: execution(fmt.Sprintf("s%03d", i), "g", "j", t0.Add(time.Duration(i)))})
		ends = append(ends, history.Record{ID: fmt.Sprintf("s%03d", i), End: &history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: t0.Add(time.Hour)}})
		whole = append(whole, history.Record{
			Start: execution(fmt.Sprintf("w%03d", i), "g", "j", t0.Add(time.Duration(i))),
			End:   &history.Finish{Outcome: history.OutcomeFailed, FinishedTime: t0.Add(time.Hour)},
		})
	}
	for _, step := range []struct {
		name string
		recs []history.Record
	}{{"starts", starts}, {"ends", ends}, {"whole", whole}} {
		errs, err := h.RecordBatch(ctx, step.recs)
		if err != nil {
			t.Fatalf("RecordBatch(%s): %v", step.name, err)
		}
		for i, err := range errs {
			if err != nil {
				t.Errorf("%s[%d]: %v", step.name, i, err)
			}
		}
	}
	st, err := h.Stats(ctx, "g", "j", t0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[history.Outcome]int{history.OutcomeSucceeded: n, history.OutcomeFailed: n}
	equal(t, "outcomes", st.Counts, want)
}

// TestRecordBatchIsOneTransaction proves on PostgreSQL, whose rows carry
// the transaction that wrote them (xmin), that a batch of starts and a
// batch of ends each commit once, whatever their size.
func TestRecordBatchIsOneTransaction(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	st, err := sqlstore.Open(t.Context(), url, &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: quiet()})
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h, err := history.New(t.Context(), st, &history.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const n = 120
	var starts, ends []history.Record
	for i := range n {
		id := fmt.Sprintf("e%03d", i)
		starts = append(starts, history.Record{Start: execution(id, "g", "j", t0)})
		ends = append(ends, history.Record{ID: id, End: &history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: t0}})
	}
	transactions := func() int {
		t.Helper()
		var k int
		err := st.DB().QueryRowContext(ctx, st.SQL(`SELECT COUNT(DISTINCT xmin::text) FROM {p}server_executions WHERE sched_name = ?`),
			st.SchedulerName()).Scan(&k)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, step := range []struct {
		name string
		recs []history.Record
	}{{"starts", starts}, {"ends", ends}} {
		if _, err := h.RecordBatch(ctx, step.recs); err != nil {
			t.Fatalf("RecordBatch(%s): %v", step.name, err)
		}
		if got := transactions(); got != 1 {
			t.Errorf("after the %s: the %d rows were written by %d transactions, want 1", step.name, n, got)
		}
	}
}
