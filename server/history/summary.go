package history

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// JobRef names a job for JobSummaries.
type JobRef struct {
	Group, Name string
}

// JobSummary is what the history knows of a job's recent executions.
type JobSummary struct {
	// LastSuccess is when the latest successful execution finished; zero
	// when none is recorded.
	LastSuccess time.Time
	// LastFinished is the outcome of the latest execution (by StartedTime,
	// then ID) that came to an end: succeeded, failed, timed out or lost
	// with its node. It is "" when there is none.
	LastFinished Outcome
	// LastRun and LastOutcome are the StartedTime and Outcome of the latest
	// execution; zero and "" when there is none.
	LastRun     time.Time
	LastOutcome Outcome
	// Running counts the executions of the job running now.
	Running int
}

// summaryJobsPerStatement bounds the jobs of one statement of
// JobSummaries: each job is three terms of a UNION ALL, the running
// counts one more, and SQLite allows at most 500 terms in one.
const summaryJobsPerStatement = 100

// JobSummaries returns the summaries of jobs, by job: every job listed has
// one, the zero JobSummary when no execution of it is recorded. It runs one
// statement per 100 jobs, whatever the size of the history, reading a few
// index entries per job: the latest executions, and the count of the
// running ones. It is one snapshot, so a last success always comes with a
// last finished outcome and a last run.
func (h *History) JobSummaries(ctx context.Context, jobs []JobRef) (map[JobRef]JobSummary, error) {
	for i, j := range jobs {
		if err := checkKey(fmt.Sprintf("jobs[%d].Group", i), j.Group, true); err != nil {
			return nil, err
		}
		if err := checkKey(fmt.Sprintf("jobs[%d].Name", i), j.Name, true); err != nil {
			return nil, err
		}
	}
	out := make(map[JobRef]JobSummary, len(jobs))
	for _, j := range jobs {
		out[j] = JobSummary{}
	}
	for chunk := range slices.Chunk(jobs, summaryJobsPerStatement) {
		if err := h.summaries(ctx, chunk, out); err != nil {
			return nil, dbErr("reading the latest and running executions of jobs", err)
		}
	}
	return out, nil
}

// Kinds of the rows the statement of summaries returns.
const (
	latestRun      = "run"
	latestFinished = "finished"
	latestSuccess  = "success"
	runningCount   = "running"
)

// summaries reads the latest execution, latest finished execution and
// latest success of jobs, and counts their running executions, into out,
// in one statement. Each latest is its own ORDER BY … LIMIT 1 on the job's
// index, so the statement reads a few entries per job; the count is one
// term per job group, so that the condition stays shallow, whose count
// comes in the started time's column (and MIN(finished_time), ignored, in
// the finished time's: a column of the same type on every dialect). SQLite takes a LIMIT inside a UNION
// only in a subquery, hence SELECT * FROM (…).
func (h *History) summaries(ctx context.Context, jobs []JobRef, out map[JobRef]JobSummary) error {
	const cols = "job_group, job_name, started_time, finished_time, outcome FROM {p}server_executions " +
		"WHERE job_group = ? AND job_name = ? AND sched_name = ?"
	finished := fmt.Sprintf(" AND outcome IN ('%s', '%s', '%s', '%s')",
		OutcomeSucceeded, OutcomeFailed, OutcomeTimedOut, OutcomeNodeLost)
	var (
		terms []string
		args  []any
	)
	for _, j := range jobs {
		n := len(terms)
		terms = append(terms,
			fmt.Sprintf("SELECT * FROM (SELECT '%s' AS kind, %s ORDER BY started_time DESC, id DESC LIMIT 1) b%d", latestRun, cols, n),
			fmt.Sprintf("SELECT * FROM (SELECT '%s' AS kind, %s%s ORDER BY started_time DESC, id DESC LIMIT 1) b%d", latestFinished, cols, finished, n+1),
			fmt.Sprintf("SELECT * FROM (SELECT '%s' AS kind, %s AND outcome = '%s' AND finished_time IS NOT NULL "+
				"ORDER BY finished_time DESC LIMIT 1) b%d", latestSuccess, cols, OutcomeSucceeded, n+2))
		for range 3 {
			args = append(args, j.Group, j.Name, h.sched)
		}
	}
	where, args := sqlstore.KeysWhere("job_group", "job_name", len(jobs), func(i int) (string, string) { return jobs[i].Group, jobs[i].Name },
		append(args, string(OutcomeRunning), h.sched))
	terms = append(terms, fmt.Sprintf("SELECT * FROM (SELECT '%s' AS kind, job_group, job_name, COUNT(*) AS started_time, "+
		"MIN(finished_time) AS finished_time, '' AS outcome FROM {p}server_executions WHERE outcome = ? AND sched_name = ? AND %s "+
		"GROUP BY job_group, job_name) r", runningCount, where))
	rows, err := h.db.QueryContext(ctx, h.st.SQL(strings.Join(terms, " UNION ALL ")), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			kind, outcome string
			j             JobRef
			started       int64
			finishedAt    sql.NullInt64
		)
		if err := rows.Scan(&kind, &j.Group, &j.Name, &started, &finishedAt, &outcome); err != nil {
			return err
		}
		s := out[j]
		switch kind {
		case latestRun:
			s.LastRun, s.LastOutcome = time.Unix(0, started).UTC(), Outcome(outcome)
		case latestFinished:
			s.LastFinished = Outcome(outcome)
		case latestSuccess:
			s.LastSuccess = timeOf(finishedAt)
		case runningCount:
			s.Running = int(started)
		}
		out[j] = s
	}
	return rows.Err()
}
