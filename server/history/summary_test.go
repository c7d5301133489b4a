package history_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/history"
)

func testJobSummaries(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	// g.a: a success, a later failure, and one running.
	start(t, h, execution("a1", "g", "a", at(0)), execution("a2", "g", "a", at(time.Hour)), execution("a3", "g", "a", at(2*time.Hour)))
	finish(t, h, "a1", history.OutcomeSucceeded, at(time.Minute))
	finish(t, h, "a2", history.OutcomeFailed, at(61*time.Minute))
	// g.c: lost with its node, then two running that started together.
	start(t, h, execution("c0", "g", "c", at(0)), execution("c1", "g", "c", at(time.Hour)), execution("c2", "g", "c", at(time.Hour)))
	finish(t, h, "c0", history.OutcomeNodeLost, at(time.Minute))
	// g.d: two that started together; the greater ID is the later one.
	start(t, h, execution("d2", "g", "d", at(0)), execution("d1", "g", "d", at(0)))
	finish(t, h, "d1", history.OutcomeSucceeded, at(time.Minute))
	finish(t, h, "d2", history.OutcomeFailed, at(time.Minute))
	// g.e: a cancelled run does not count as finished.
	start(t, h, execution("e1", "g", "e", at(0)), execution("e2", "g", "e", at(time.Hour)))
	finish(t, h, "e1", history.OutcomeSucceeded, at(time.Minute))
	finish(t, h, "e2", history.OutcomeCancelled, at(61*time.Minute))
	// h.a: another group, same name.
	start(t, h, execution("h1", "h", "a", at(0)))
	finish(t, h, "h1", history.OutcomeTimedOut, at(time.Minute))

	jobs := []history.JobRef{{"g", "a"}, {"g", "b"}, {"g", "c"}, {"g", "d"}, {"g", "e"}, {"h", "a"}}
	want := map[history.JobRef]history.JobSummary{
		{"g", "a"}: {LastSuccess: at(time.Minute), LastFinished: history.OutcomeFailed, LastRun: at(2 * time.Hour),
			LastOutcome: history.OutcomeRunning, Running: 1},
		{"g", "b"}: {},
		{"g", "c"}: {LastFinished: history.OutcomeNodeLost, LastRun: at(time.Hour), LastOutcome: history.OutcomeRunning, Running: 2},
		{"g", "d"}: {LastSuccess: at(time.Minute), LastFinished: history.OutcomeFailed, LastRun: at(0), LastOutcome: history.OutcomeFailed},
		{"g", "e"}: {LastSuccess: at(time.Minute), LastFinished: history.OutcomeSucceeded, LastRun: at(time.Hour),
			LastOutcome: history.OutcomeCancelled},
		{"h", "a"}: {LastFinished: history.OutcomeTimedOut, LastRun: at(0), LastOutcome: history.OutcomeTimedOut},
	}
	got, err := h.JobSummaries(ctx, jobs)
	if err != nil {
		t.Fatalf("JobSummaries: %v", err)
	}
	equal(t, "JobSummaries", got, want)

	// More jobs than one statement takes, each agreeing with what the
	// one-job queries say.
	var many []history.JobRef
	for i := range 130 {
		j := history.JobRef{Group: fmt.Sprintf("m%d", i%3), Name: fmt.Sprintf("j%d", i)}
		many = append(many, j)
		if i%5 == 0 {
			continue
		}
		id := fmt.Sprintf("m%d", i)
		start(t, h, execution(id, j.Group, j.Name, at(time.Duration(i)*time.Minute)))
		if i%2 == 1 {
			finish(t, h, id, history.OutcomeSucceeded, at(time.Duration(i+1)*time.Minute))
		}
	}
	got, err = h.JobSummaries(ctx, many)
	if err != nil {
		t.Fatalf("JobSummaries of %d jobs: %v", len(many), err)
	}
	if len(got) != len(many) {
		t.Errorf("JobSummaries of %d jobs returned %d", len(many), len(got))
	}
	for _, j := range many {
		equal(t, "summary of "+j.Group+"."+j.Name, got[j], oneJobSummary(t, h, j))
	}

	_, err = h.JobSummaries(ctx, []history.JobRef{{"g", "a"}, {"", "a"}})
	wantInvalid(t, "JobSummaries of a job without a group", err, "jobs[1].Group")
}

// oneJobSummary computes a job's summary from the one-job queries.
func oneJobSummary(t *testing.T, h *history.History, j history.JobRef) history.JobSummary {
	t.Helper()
	ctx := t.Context()
	var s history.JobSummary
	var err error
	if s.LastSuccess, err = h.LastSuccess(ctx, j.Group, j.Name); err != nil {
		t.Fatal(err)
	}
	finished, err := h.List(ctx, &history.Query{JobGroup: j.Group, JobName: j.Name, Limit: 1,
		Outcome: []history.Outcome{history.OutcomeSucceeded, history.OutcomeFailed, history.OutcomeTimedOut, history.OutcomeNodeLost}})
	if err != nil {
		t.Fatal(err)
	}
	if len(finished.Executions) == 1 {
		s.LastFinished = finished.Executions[0].Outcome
	}
	last, err := h.List(ctx, &history.Query{JobGroup: j.Group, JobName: j.Name, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(last.Executions) == 1 {
		s.LastRun, s.LastOutcome = last.Executions[0].StartedTime, last.Executions[0].Outcome
	}
	running, err := h.List(ctx, &history.Query{JobGroup: j.Group, JobName: j.Name, Limit: history.MaxLimit,
		Outcome: []history.Outcome{history.OutcomeRunning}})
	if err != nil {
		t.Fatal(err)
	}
	s.Running = len(running.Executions)
	return s
}
