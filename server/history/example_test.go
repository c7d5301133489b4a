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
