package dispatch_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/dispatch"
)

// TestReportBatchesFenceEachResult reports results at once, so that the
// Service records them in batches (on PostgreSQL one statement a batch),
// on every database, with the database's clock and with a node's: good
// results, results under a stale token, from another executor, for no
// run at all, and results sent twice, some of them meeting a refused
// result of the same run. Each caller must be told its own result's
// fate, and the runs' rows, read back, must hold exactly the results
// recorded, each in its own run's row: a statement that recorded a
// result in another run's row, dropped one, or recorded a refused one
// fails it.
func TestReportBatchesFenceEachResult(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.Shared(t)
			t.Run("DatabaseClock", func(t *testing.T) {
				t.Parallel()
				reportBatches(t, url(t), db.Dialect, nil)
			})
			t.Run("NodeClock", func(t *testing.T) {
				t.Parallel()
				// A day ahead of the database's, so that a result's end
				// shows which clock it was read from.
				reportBatches(t, url(t), db.Dialect, func() time.Time { return time.Now().Add(24 * time.Hour) })
			})
		})
	}
}

// What a test report's caller must be told.
const (
	wantRecorded = iota // nil
	wantStale           // ErrStale
	wantOneOf           // nil for exactly one of the run's copies, ErrStale for the others
)

// sentReport is one Report of reportBatches.
type sentReport struct {
	run          int // index of the run, -1 for a run that does not exist
	id, executor string
	res          api.ExecutorResult
	want         int
	err          error
}

// resultOf is a result of run i, told apart from any other run's or
// variant's by each of its fields; some have no log lines.
func resultOf(i int, token int64, variant string) api.ExecutorResult {
	r := api.ExecutorResult{
		Token:   token,
		Outcome: []string{"succeeded", "failed", "cancelled"}[i%3],
		Error:   fmt.Sprintf("error of run %d, %s", i, variant),
		Output:  fmt.Sprintf("output of run %d, %s", i, variant),
	}
	if i%4 != 0 {
		r.Logs = []api.LogLine{{Time: time.Unix(int64(i), 0).UTC(), Level: "INFO", Message: fmt.Sprintf("log of run %d, %s", i, variant)}}
	}
	return r
}

// reportBatches is TestReportBatchesFenceEachResult on the database of
// url, of dialect, with the node's clock (nil for the database's).
func reportBatches(t *testing.T, url, dialect string, clock func() time.Time) {
	s, st := newServiceOn(t, url, &dispatch.Options{Clock: clock})
	ctx := t.Context()
	start := time.Now()
	execs := []*dispatch.Executor{register(t, s, "reports", nil, "h"), register(t, s, "reports", nil, "h")}
	other := map[string]string{execs[0].ID: execs[1].ID, execs[1].ID: execs[0].ID}
	const runs = 72
	asgs := make([]*dispatch.Assignment, runs)
	for i := range asgs {
		a, err := handover(t, s, api.ExecutorTarget{Group: "reports", Handler: "h", Routing: api.RoutingRoundRobin}, nil)
		if err != nil {
			t.Fatalf("Handover: %v", err)
		}
		asgs[i] = a
	}
	taken := 0
	for _, e := range execs {
		for range 10 {
			work, err := s.Take(ctx, e.ID, runs, 0)
			if err != nil {
				t.Fatalf("Take: %v", err)
			}
			if len(work.Runs) == 0 {
				break
			}
			taken += len(work.Runs)
		}
	}
	if taken != runs {
		t.Fatalf("took %d runs, want %d", taken, runs)
	}

	// recorded is the result each run's row must hold once done, by
	// run; a run without one must be left as it was. A run sent twice
	// holds the accepted copy's (see below).
	recorded := make(map[int]api.ExecutorResult)
	var sent []*sentReport
	send := func(run int, executor string, res api.ExecutorResult, want int) {
		id := fmt.Sprint("no-such-run-", len(sent))
		if run >= 0 {
			id = asgs[run].RunID
		}
		sent = append(sent, &sentReport{run: run, id: id, executor: executor, res: res, want: want})
	}
	for i, a := range asgs {
		owner, tok := a.ExecutorID, a.Token
		switch i % 6 {
		case 0: // a good result
			recorded[i] = resultOf(i, tok, "good")
			send(i, owner, recorded[i], wantRecorded)
		case 1: // under a stale token only
			send(i, owner, resultOf(i, tok+1, "stale token"), wantStale)
		case 2: // from the executor the run is not leased to only
			send(i, other[owner], resultOf(i, tok, "other executor"), wantStale)
		case 3: // the same result sent twice: only the copies' outputs differ
			for _, c := range []string{"copy 1", "copy 2"} {
				r := resultOf(i, tok, "copy")
				r.Output += ", " + c
				send(i, owner, r, wantOneOf)
			}
		case 4: // a good result and one under a stale token
			recorded[i] = resultOf(i, tok, "good")
			send(i, owner, resultOf(i, tok+1, "stale token"), wantStale)
			send(i, owner, recorded[i], wantRecorded)
		case 5: // a good result and one from the other executor
			recorded[i] = resultOf(i, tok, "good")
			send(i, other[owner], resultOf(i, tok, "other executor"), wantStale)
			send(i, owner, recorded[i], wantRecorded)
		}
	}
	for i := range 4 {
		send(-1, execs[i%2].ID, resultOf(1000+i, 1, "no such run"), wantStale)
	}

	// All at once, so that the results wait for each other's batches
	// and are recorded together.
	begin := make(chan struct{})
	var wg sync.WaitGroup
	for _, r := range sent {
		wg.Go(func() {
			<-begin
			r.err = s.Report(ctx, r.executor, r.id, r.res)
		})
	}
	close(begin)
	wg.Wait()
	end := time.Now()

	accepted := make(map[int][]*sentReport)
	for _, r := range sent {
		switch {
		case r.want == wantRecorded && r.err != nil:
			t.Errorf("Report of %q by its executor under its token: %v, want it recorded", r.res.Output, r.err)
		case r.want == wantStale && !errors.Is(r.err, dispatch.ErrStale):
			t.Errorf("Report of %q: %v, want ErrStale", r.res.Output, r.err)
		case r.want == wantOneOf && r.err == nil:
			accepted[r.run] = append(accepted[r.run], r)
		case r.want == wantOneOf && !errors.Is(r.err, dispatch.ErrStale):
			t.Errorf("Report of %q: %v, want nil or ErrStale", r.res.Output, r.err)
		}
	}
	for i := range asgs {
		if i%6 != 3 {
			continue
		}
		if len(accepted[i]) != 1 {
			t.Errorf("run %d: %d of its 2 copies were recorded, want 1", i, len(accepted[i]))
			continue
		}
		recorded[i] = accepted[i][0].res
	}

	// The rows, read back.
	type row struct {
		state, outcome, errMsg, output, executor string
		logs                                     sql.NullString
		finished                                 sql.NullInt64
		token                                    int64
	}
	rows, err := st.DB().QueryContext(ctx, st.SQL(`SELECT id, state, outcome, error_message, output, logs, finished, token, executor_id
		FROM {p}dispatch_runs WHERE sched_name = ?`), st.SchedulerName())
	if err != nil {
		t.Fatalf("reading the runs: %v", err)
	}
	byID := make(map[string]row)
	for rows.Next() {
		var id string
		var r row
		if err := rows.Scan(&id, &r.state, &r.outcome, &r.errMsg, &r.output, &r.logs, &r.finished, &r.token, &r.executor); err != nil {
			t.Fatalf("reading the runs: %v", err)
		}
		byID[id] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading the runs: %v", err)
	}
	rows.Close()
	if len(byID) != runs {
		t.Errorf("%d runs in the table, want %d", len(byID), runs)
	}
	// A result's end is read from the node's clock when it has one.
	lo, hi := start.Add(-time.Minute), end.Add(time.Minute)
	if clock != nil {
		lo, hi = start.Add(24*time.Hour), end.Add(24*time.Hour)
	}
	for i, a := range asgs {
		r, ok := byID[a.RunID]
		if !ok {
			t.Errorf("run %d: no row", i)
			continue
		}
		if r.executor != a.ExecutorID || r.token != a.Token {
			t.Errorf("run %d: leased to %s under token %d, want %s and %d", i, r.executor, r.token, a.ExecutorID, a.Token)
		}
		want, done := recorded[i]
		if !done {
			if r.state != string(dispatch.StateRunning) || r.outcome != "" || r.errMsg != "" || r.output != "" || r.logs.Valid || r.finished.Valid {
				t.Errorf("run %d, whose results were all refused: %+v, want it running, with no result", i, r)
			}
			continue
		}
		var logs []api.LogLine
		if r.logs.Valid {
			if err := json.Unmarshal([]byte(r.logs.String), &logs); err != nil {
				t.Errorf("run %d: log lines %q: %v", i, r.logs.String, err)
			}
		}
		if r.state != string(dispatch.StateDone) || r.outcome != want.Outcome || r.errMsg != want.Error || r.output != want.Output ||
			len(logs) != len(want.Logs) || len(logs) == 1 && (logs[0].Message != want.Logs[0].Message || !logs[0].Time.Equal(want.Logs[0].Time)) {
			t.Errorf("run %d: %+v (log lines %+v), want it done with %+v", i, r, logs, want)
		}
		if !r.finished.Valid {
			t.Errorf("run %d: done with no end", i)
		} else if f := time.Unix(0, r.finished.Int64); f.Before(lo) || f.After(hi) {
			t.Errorf("run %d: ended at %s, want between %s and %s", i, f, lo, hi)
		}
	}

	// The test tests batches only if some formed: on PostgreSQL, the rows
	// that one transaction changed have its ID as xmin, and each batch is
	// one transaction.
	if dialect == "postgres" {
		var most int
		err := st.DB().QueryRowContext(ctx, st.SQL(`SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n FROM {p}dispatch_runs
			WHERE sched_name = ? AND state = 'done' GROUP BY xmin::text) AS x`), st.SchedulerName()).Scan(&most)
		if err != nil {
			t.Fatalf("reading the runs' transactions: %v", err)
		}
		t.Logf("the largest batch recorded %d runs", most)
		if most < 2 {
			t.Errorf("no two results were recorded by one statement: the batches went untested")
		}
	}
}
