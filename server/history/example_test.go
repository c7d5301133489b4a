package history_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// An execution recorded from start to finish, then listed, and the
// decision that explains a firing.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "history-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler)
	st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "chime.db"), &sqlstore.Options{Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	h, err := history.New(ctx, st, &history.Options{Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}

	two := time.Date(2030, 3, 1, 2, 0, 0, 0, time.UTC)
	err = h.Start(ctx, &history.Execution{
		ID: "exec-1", JobGroup: "reports", JobName: "nightly", NodeID: "node-a",
		ScheduledTime: two, StartedTime: two.Add(40 * time.Millisecond),
	})
	if err != nil {
		log.Fatal(err)
	}
	err = h.Finish(ctx, "exec-1", history.Finish{
		Outcome: history.OutcomeSucceeded, FinishedTime: two.Add(3 * time.Second), Output: "42 rows\n",
	})
	if err != nil {
		log.Fatal(err)
	}
	err = h.RecordDecision(ctx, &history.Decision{
		JobGroup: "reports", JobName: "nightly", ScheduledTime: two, At: two,
		Kind: history.DecisionFired, NodeID: "node-a", ExecutionID: "exec-1",
	})
	if err != nil {
		log.Fatal(err)
	}

	page, err := h.List(ctx, &history.Query{JobGroup: "reports", JobName: "nightly"})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range page.Executions {
		fmt.Println(e.ID, e.Outcome, e.FinishedTime.Sub(e.StartedTime))
	}
	ds, err := h.Decisions(ctx, "reports", "nightly", two.Add(-time.Minute), two.Add(time.Minute), 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range ds {
		fmt.Println(d.ScheduledTime.Format("15:04"), d.Kind, d.ExecutionID)
	}
	last, err := h.LastSuccess(ctx, "reports", "nightly")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("last success", last.Format(time.RFC3339))
	// Output:
	// exec-1 succeeded 2.96s
	// 02:00 fired exec-1
	// last success 2030-03-01T02:00:03Z
}

// Starts and ends of several executions recorded in one transaction:
// one still running, one started and finished at once, and the end of an
// execution recorded earlier. A record the history refuses gets its own
// error; the others are written.
func ExampleHistory_RecordBatch() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "history-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler)
	st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "chime.db"), &sqlstore.Options{Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	h, err := history.New(ctx, st, &history.Options{Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}

	at := time.Date(2030, 3, 1, 2, 0, 0, 0, time.UTC)
	run := func(id string) *history.Execution {
		return &history.Execution{ID: id, JobGroup: "reports", JobName: "nightly", NodeID: "node-a", StartedTime: at}
	}
	if err := h.Start(ctx, run("exec-0")); err != nil {
		log.Fatal(err)
	}
	done := &history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: at.Add(time.Second)}
	errs, err := h.RecordBatch(ctx, []history.Record{
		{Start: run("exec-1")},
		{Start: run("exec-2"), End: done},
		{ID: "exec-0", End: done},
		{ID: "exec-9", End: done},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exec-9:", errs[3])
	for _, id := range []string{"exec-0", "exec-1", "exec-2"} {
		e, err := h.Get(ctx, id)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(e.ID, e.Outcome)
	}
	// Output:
	// exec-9: history: not found: execution "exec-9"
	// exec-0 succeeded
	// exec-1 running
	// exec-2 succeeded
}
