package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/history"
)

// countingRecorder is the server's history, counting its transactions:
// each RecordBatch is one.
type countingRecorder struct {
	h batchRecorder

	mu    sync.Mutex
	calls []int // the records of each call
}

func (c *countingRecorder) RecordBatch(ctx context.Context, recs []history.Record) ([]error, error) {
	c.mu.Lock()
	c.calls = append(c.calls, len(recs))
	c.mu.Unlock()
	return c.h.RecordBatch(ctx, recs)
}

func (c *countingRecorder) transactions() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.calls...)
}

// testAttempt returns the first attempt of a firing of job g.j, with ID id.
func testAttempt(id string, started time.Time) *attempt {
	return &attempt{
		id: id, firstID: id, number: 1, job: chime.NewJobKey("g", "j"),
		scheduled: started, started: started, log: quietLogger,
	}
}

// TestHistoryWriterBatches queues the starts and ends of many executions
// before the writer runs, and checks that they cost one transaction per
// batch, not one per execution: an end whose start is still queued joins
// it (the execution is written once, finished), and the ends of
// executions already recorded are written together.
func TestHistoryWriterBatches(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		const n = 100
		s := newServer(t, url)
		ctx := t.Context()
		t0 := time.Now().UTC().Truncate(time.Millisecond)
		end := history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: t0.Add(time.Second)}

		// Ends that join their queued starts, in batches of at most 64.
		rec := &countingRecorder{h: s.history}
		w := newHistoryWriter(rec, quietLogger, newWriteQueue(), nil)
		w.maxBatch = 64
		t.Cleanup(w.stop)
		var waits []<-chan error
		for i := range n {
			a := testAttempt(fmt.Sprintf("joined-%03d", i), t0)
			w.start(a, a.execution("n1"))
			waits = append(waits, w.submit(a, history.Record{ID: a.id, End: &end}))
		}
		w.run()
		for i, ch := range waits {
			if err := <-ch; err != nil {
				t.Errorf("end %d: %v", i, err)
			}
		}
		if got, want := rec.transactions(), []int{64, n - 64}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%d executions started and ended: transactions of %v records, want %v", n, got, want)
		}

		// Ends of executions whose starts are recorded.
		var starts []history.Record
		for i := range n {
			a := testAttempt(fmt.Sprintf("started-%03d", i), t0)
			starts = append(starts, history.Record{Start: a.execution("n1")})
		}
		if _, err := s.history.RecordBatch(ctx, starts); err != nil {
			t.Fatal(err)
		}
		rec2 := &countingRecorder{h: s.history}
		w2 := newHistoryWriter(rec2, quietLogger, newWriteQueue(), nil)
		t.Cleanup(w2.stop)
		waits = waits[:0]
		for i := range n {
			a := testAttempt(fmt.Sprintf("started-%03d", i), t0)
			waits = append(waits, w2.submit(a, history.Record{ID: a.id, End: &end}))
		}
		w2.run()
		for i, ch := range waits {
			if err := <-ch; err != nil {
				t.Errorf("end %d: %v", i, err)
			}
		}
		if got := rec2.transactions(); len(got) != 1 {
			t.Errorf("%d ends: transactions of %v records, want one of %d", n, got, n)
		}

		st, err := s.history.Stats(ctx, "g", "j", t0)
		if err != nil {
			t.Fatal(err)
		}
		if st.Total != 2*n || st.Counts[history.OutcomeSucceeded] != 2*n {
			t.Errorf("history: %d executions, by outcome %v; want %d, all succeeded", st.Total, st.Counts, 2*n)
		}
	})
}

// failingFirst is the server's history whose first transaction waits
// for release and then fails, as a database that went away while the
// batch committed; the others are written. It counts transactions.
type failingFirst struct {
	countingRecorder
	entered, release chan struct{}
	once             sync.Once
}

func (f *failingFirst) RecordBatch(ctx context.Context, recs []history.Record) ([]error, error) {
	first := false
	f.once.Do(func() { first = true })
	if first {
		f.mu.Lock()
		f.calls = append(f.calls, len(recs))
		f.mu.Unlock()
		close(f.entered)
		<-f.release
		return make([]error, len(recs)), errors.New("connection reset by peer")
	}
	return f.countingRecorder.RecordBatch(ctx, recs)
}

// TestHistoryWriterWritesAStartBeforeItsEnd gives the writer an
// execution's end while the transaction that writes its start is under
// way, and fails that transaction: the start goes back to the queue, the
// end joins it, and the execution is written once, finished, on the
// retry. An end is never written before its start.
func TestHistoryWriterWritesAStartBeforeItsEnd(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url)
		t0 := time.Now().UTC().Truncate(time.Millisecond)
		rec := &failingFirst{countingRecorder: countingRecorder{h: s.history}, entered: make(chan struct{}), release: make(chan struct{})}
		w := newHistoryWriter(rec, quietLogger, newWriteQueue(), nil)
		w.startDelay = 0 // the start is written at once
		t.Cleanup(w.stop)
		w.run()
		a := testAttempt("e1", t0)
		w.start(a, a.execution("n1"))
		<-rec.entered
		done := w.submit(a, history.Record{ID: a.id, End: &history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: t0.Add(time.Second)}})
		close(rec.release)
		if err := <-done; err != nil {
			t.Fatalf("the end: %v", err)
		}
		if got, want := rec.transactions(), []int{1, 1}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("transactions of %v records, want %v: the failed start, then the start and end together", got, want)
		}
		e, err := s.history.Get(t.Context(), "e1")
		if err != nil || e.Outcome != history.OutcomeSucceeded || !e.StartedTime.Equal(t0) {
			t.Errorf("e1: %+v, %v; want it started at %v and succeeded", e, err, t0)
		}
	})
}

// TestHistoryWriterIsolatesARefusedRecord gives the writer a record the
// database refuses (an attempt number beyond its INTEGER column) among
// good ones: the good ones are recorded, and the refused one is retried
// alone until the server stops waiting for it.
func TestHistoryWriterIsolatesARefusedRecord(t *testing.T) {
	t.Parallel()
	for _, db := range []testDB{{"Postgres", dbtest.PostgresURL}, {"MySQL", dbtest.MySQLURL}} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, db.url(t))
			t0 := time.Now().UTC().Truncate(time.Millisecond)
			end := &history.Finish{Outcome: history.OutcomeFailed, FinishedTime: t0.Add(time.Second), Error: "boom"}
			rec := &countingRecorder{h: s.history}
			q := newWriteQueue()
			w := newHistoryWriter(rec, quietLogger, q, nil)
			t.Cleanup(w.stop)

			good1, good2 := testAttempt("good-1", t0), testAttempt("good-2", t0)
			bad := testAttempt("bad", t0)
			bad.firstID, bad.number = "good-1", 1<<40
			w.start(good1, good1.execution("n1"))
			ch1 := w.submit(good1, history.Record{ID: good1.id, End: end})
			chBad := w.submit(bad, history.Record{Start: bad.execution("n1"), End: end})
			ch2 := w.submit(good2, history.Record{Start: good2.execution("n1"), End: end})
			w.run()
			for _, ch := range []<-chan error{ch1, ch2} {
				if err := <-ch; err != nil {
					t.Errorf("a good record: %v", err)
				}
			}
			select {
			case err := <-chBad:
				t.Fatalf("the refused record was answered (%v), want it still retried", err)
			default:
			}
			for _, id := range []string{"good-1", "good-2"} {
				e, err := s.history.Get(t.Context(), id)
				if err != nil || e.Outcome != history.OutcomeFailed {
					t.Errorf("%s: %+v, %v; want it failed", id, e, err)
				}
			}
			if calls := rec.transactions(); len(calls) < 2 || calls[0] != 3 {
				t.Errorf("transactions of %v records, want one of 3 that failed, then one record each", calls)
			}
			q.abandon()
			if err := <-chBad; !errors.Is(err, errWriterStopped) {
				t.Errorf("the refused record, abandoned: %v, want errWriterStopped", err)
			}
			if _, err := s.history.Get(t.Context(), "bad"); !errors.Is(err, history.ErrNotFound) {
				t.Errorf("the refused record: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestServerRecordsExecutionsInBatches runs 50 firings due together
// through a real server and checks, in its metrics, that their history
// records shared transactions: one transaction per record (or per
// execution) fails it.
func TestServerRecordsExecutionsInBatches(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		const triggers = 50
		s := newServer(t, url)
		ok := newEndpoint(t, 200)
		at := time.Now().Add(2 * time.Second).Truncate(time.Second)
		j := api.Job{Group: "batch", Name: "noop", Type: "http", HTTP: httpSpec(t, map[string]any{"url": ok.URL})}
		for i := range triggers {
			j.Triggers = append(j.Triggers, api.Trigger{Name: fmt.Sprintf("t%02d", i), Schedule: json.RawMessage(`{"kind":"once"}`), StartTime: &at})
		}
		if _, err := s.CreateJob(t.Context(), "alice", j); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		start(t, s)
		waitFor(t, "every execution to be recorded finished", func() bool {
			st, err := s.history.Stats(t.Context(), "batch", "noop", time.Time{})
			return err == nil && st.Counts[history.OutcomeSucceeded] == triggers
		})
		m := scrape(t, s)
		calls := metricValue(t, m, "chime_history_batch_size_count")
		single := metricValue(t, m, `chime_history_batch_size_bucket{le="1"}`)
		records := metricValue(t, m, "chime_history_batch_size_sum")
		if records < triggers || records > 2*triggers {
			t.Errorf("the history transactions wrote %v records, want %d to %d (a start and an end, or both at once, per execution)", records, triggers, 2*triggers)
		}
		if single >= calls {
			t.Errorf("%v of %v history transactions wrote a single record, want some to write several", single, calls)
		}
		t.Logf("%d executions recorded in %v records by %v transactions", triggers, records, calls)
	})
}

// TestHistoryWriterHoldsStartsBack checks that a start waits in the
// writer for its execution's end up to the start delay: an execution that
// ends within it costs one record, one that does not is recorded running
// once the delay passed, and flushStart writes a held start at once.
func TestHistoryWriterHoldsStartsBack(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url)
		ctx := t.Context()
		t0 := time.Now().UTC().Truncate(time.Millisecond)
		rec := &countingRecorder{h: s.history}
		w := newHistoryWriter(rec, quietLogger, newWriteQueue(), nil)
		w.startDelay = time.Hour
		t.Cleanup(w.stop)
		w.run()

		// Ends within the delay: one record each, with the end.
		for i := range 3 {
			a := testAttempt(fmt.Sprintf("quick-%d", i), t0)
			w.start(a, a.execution("n1"))
			if err := w.record(a, history.Record{ID: a.id, End: &history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: t0}}); err != nil {
				t.Fatalf("the end of %s: %v", a.id, err)
			}
			if e, err := s.history.Get(ctx, a.id); err != nil || e.Outcome != history.OutcomeSucceeded {
				t.Fatalf("%s: %+v, %v; want it succeeded", a.id, e, err)
			}
		}
		if got := rec.transactions(); fmt.Sprint(got) != "[1 1 1]" {
			t.Errorf("3 executions that ended within the delay: transactions of %v records, want [1 1 1]", got)
		}

		// A start held back is not written until flushed.
		held := testAttempt("held", t0)
		w.start(held, held.execution("n1"))
		if w.backlogged() {
			t.Error("backlogged with only a start held back")
		}
		time.Sleep(50 * time.Millisecond)
		if _, err := s.history.Get(ctx, held.id); !errors.Is(err, history.ErrNotFound) {
			t.Fatalf("a start held back for an hour is in the history after 50 ms: %v", err)
		}
		if w.flushStart("no-such-execution") != nil {
			t.Error("flushStart of an execution the writer does not hold returned a channel")
		}
		written := w.flushStart(held.id)
		if written == nil {
			t.Fatal("flushStart of a held start returned nil")
		}
		<-written
		if e, err := s.history.Get(ctx, held.id); err != nil || e.Outcome != history.OutcomeRunning {
			t.Fatalf("%s after flushStart: %+v, %v; want it running", held.id, e, err)
		}
		if w.flushStart(held.id) != nil {
			t.Error("flushStart of a start already written returned a channel")
		}
		if err := w.record(held, history.Record{ID: held.id, End: &history.Finish{Outcome: history.OutcomeFailed, FinishedTime: t0, Error: "boom"}}); err != nil {
			t.Fatalf("the end of %s: %v", held.id, err)
		}
		if e, err := s.history.Get(ctx, held.id); err != nil || e.Outcome != history.OutcomeFailed {
			t.Fatalf("%s: %+v, %v; want it failed", held.id, e, err)
		}

		// A start whose end does not come within the delay is written
		// once the delay passed, without another record to wake the
		// writer.
		w2 := newHistoryWriter(s.history, quietLogger, newWriteQueue(), nil)
		w2.startDelay = 100 * time.Millisecond
		t.Cleanup(w2.stop)
		w2.run()
		slow := testAttempt("slow", t0)
		w2.start(slow, slow.execution("n1"))
		waitFor(t, "the held start to be written after its delay", func() bool {
			e, err := s.history.Get(ctx, slow.id)
			return err == nil && e.Outcome == history.OutcomeRunning
		})
	})
}

// TestServerWritesAQuickRunOnce runs one firing of a job that ends at once
// through a real server and checks, in its metrics, that the history wrote
// it in one record: its start waited for its end.
func TestServerWritesAQuickRunOnce(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url)
		ok := newEndpoint(t, 200)
		at := time.Now().Add(time.Second)
		j := api.Job{Group: "once", Name: "quick", Type: "http", HTTP: httpSpec(t, map[string]any{"url": ok.URL}),
			Triggers: []api.Trigger{{Name: "t", Schedule: json.RawMessage(`{"kind":"once"}`), StartTime: &at}}}
		if _, err := s.CreateJob(t.Context(), "alice", j); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		start(t, s)
		waitFor(t, "the execution to be recorded finished", func() bool {
			st, err := s.history.Stats(t.Context(), "once", "quick", time.Time{})
			return err == nil && st.Counts[history.OutcomeSucceeded] == 1
		})
		if records := metricValue(t, scrape(t, s), "chime_history_batch_size_sum"); records != 1 {
			t.Errorf("the history wrote %v records for one quick execution, want 1 (its start and end at once)", records)
		}
	})
}

// TestHistoryWriterBacklog checks that a writer holding more than
// maxHistoryBacklog records says so, so that who records an end waits,
// and that stopping it answers every record.
func TestHistoryWriterBacklog(t *testing.T) {
	t.Parallel()
	q := newWriteQueue()
	w := newHistoryWriter(nil, quietLogger, q, nil) // never run: nothing is written
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var waits []<-chan error
	for i := range maxHistoryBacklog + 1 {
		if w.backlogged() {
			t.Fatalf("backlogged with %d records queued, want only beyond %d", i, maxHistoryBacklog)
		}
		a := testAttempt(fmt.Sprintf("e%04d", i), t0)
		waits = append(waits, w.submit(a, history.Record{Start: a.execution("n1"),
			End: &history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: t0}}))
	}
	if !w.backlogged() {
		t.Errorf("not backlogged with %d records queued", maxHistoryBacklog+1)
	}
	w.stop()
	for _, ch := range waits {
		if err := <-ch; !errors.Is(err, errWriterStopped) {
			t.Fatalf("a record of a stopped writer: %v, want errWriterStopped", err)
		}
	}
	select {
	case <-q.whenIdle():
	default:
		t.Error("the write queue still counts records of the stopped writer")
	}
}

// closedHistory is the server's history behind a gate: while the gate is
// shut, every transaction fails as if the database did not answer.
type closedHistory struct {
	h    batchRecorder
	open chan struct{}
}

func (c *closedHistory) RecordBatch(ctx context.Context, recs []history.Record) ([]error, error) {
	select {
	case <-c.open:
		return c.h.RecordBatch(ctx, recs)
	default:
		return nil, errors.New("the history does not answer (test)")
	}
}

// TestSucceededRunEndsInTheSchedulerOnlyAfterItsHistory checks that the
// scheduler records a succeeded run's end only once the history took it:
// while the history cannot be written, the execution stays running in the
// scheduler's store, so that a node that died then would leave it to
// recovery rather than ended with no record (docs/reliability.md).
func TestSucceededRunEndsInTheSchedulerOnlyAfterItsHistory(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		gate := &closedHistory{h: s.recorder.h, open: make(chan struct{})}
		s.recorder.h = gate
		var runs sync.WaitGroup
		runs.Add(1)
		if err := s.RegisterJobType("quick", chime.JobFunc(func(context.Context, *chime.JobContext) error {
			runs.Done()
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		start(t, s)
		if _, err := s.CreateJob(ctx, "alice", api.Job{Group: "g", Name: "quick", Type: "quick"}); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		if _, err := s.RunJob(ctx, "alice", "g", "quick", api.RunRequest{}); err != nil {
			t.Fatalf("RunJob: %v", err)
		}
		runs.Wait()
		key := chime.NewJobKey("g", "quick")
		running := func() int {
			execs, err := s.sched.Executions(ctx, &chime.ExecutionFilter{JobKey: &key, Running: true})
			if err != nil {
				t.Fatalf("Executions: %v", err)
			}
			return len(execs)
		}
		// Long enough for the scheduler's batched completion to commit.
		time.Sleep(500 * time.Millisecond)
		if n := running(); n != 1 {
			t.Fatalf("%d executions running in the scheduler while the history holds no end, want 1", n)
		}

		close(gate.open)
		waitFor(t, "the history to record the run and the scheduler its end", func() bool {
			st, err := s.history.Stats(ctx, "g", "quick", time.Time{})
			return err == nil && st.Counts[history.OutcomeSucceeded] == 1 && running() == 0
		})
	})
}
