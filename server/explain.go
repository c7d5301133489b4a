package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/api/wire"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/schedule/cron"
	"github.com/chime-scheduler/chime/server/history"
)

// explainFireTimes is how many fire times Explain lists on each side of
// the instant.
const explainFireTimes = 3

// explainLookBack bounds how far back Explain looks for a fire time before
// the instant, and for the runs of that fire time after it.
const explainLookBack = 5 * 366 * 24 * time.Hour

// Explain answers "why did the job (not) run at this instant": it finds
// the fire time at or before at of the job's triggers as they are now,
// then what the history recorded about it (executions, misfires, skips,
// retries) and whether the job was paused then.
func (s *Server) Explain(ctx context.Context, group, name string, at time.Time) (*api.Explanation, error) {
	key := chime.NewJobKey(group, name)
	d, err := s.sched.Job(ctx, key)
	if err != nil {
		return nil, schedulerErr(key, err)
	}
	triggers, err := s.jobTriggers(ctx, key)
	if err != nil {
		return nil, err
	}
	ex := &api.Explanation{At: at, Decisions: []api.Decision{}, Executions: []api.Execution{}, FireTimes: []time.Time{}}

	// The fire times around the instant, of the job's schedules.
	var before, after []time.Time
	for _, t := range triggers {
		if serverMade(t.Origin) {
			continue
		}
		cal, err := s.calendarOf(ctx, t.CalendarName)
		if err != nil {
			return nil, err
		}
		timing := schedule.Trigger{Schedule: t.Schedule, StartTime: t.StartTime, EndTime: t.EndTime}
		before = append(before, fireTimesBefore(&timing, cal, at, explainFireTimes)...)
		next := at
		for range explainFireTimes {
			if next = nextIncluded(&timing, cal, next); next.IsZero() {
				break
			}
			after = append(after, next)
		}
	}
	slices.SortFunc(before, time.Time.Compare)
	slices.SortFunc(after, time.Time.Compare)
	before = slices.Compact(before)
	after = slices.Compact(after)
	if len(before) > explainFireTimes {
		before = before[len(before)-explainFireTimes:]
	}
	if len(after) > explainFireTimes {
		after = after[:explainFireTimes]
	}
	ex.FireTimes = append(append(ex.FireTimes, before...), after...)

	var fire, next time.Time
	if len(before) > 0 {
		fire = before[len(before)-1]
	}
	if len(after) > 0 {
		next = after[0]
	}

	// What the history says about that fire time.
	lo := at
	if !fire.IsZero() {
		lo = fire
	}
	decisions, err := s.history.Decisions(ctx, key.Group, key.Name, lo.Add(-time.Second), at.Add(time.Second), history.MaxLimit)
	if err != nil {
		return nil, err
	}
	for _, dec := range decisions {
		ex.Decisions = append(ex.Decisions, decisionToAPI(dec))
	}
	slices.SortFunc(ex.Decisions, func(a, b api.Decision) int { return a.At.Compare(b.At) })
	var runs []history.Execution
	if !fire.IsZero() {
		runs, err = s.runsOf(ctx, key, fire)
		if err != nil {
			return nil, err
		}
		for i := range runs {
			ex.Executions = append(ex.Executions, executionToAPI(&runs[i]))
		}
	}
	paused, err := s.pausedAt(ctx, key, fire, d)
	if err != nil {
		return nil, err
	}
	if paused != nil && !paused.At.IsZero() {
		ex.Decisions = append([]api.Decision{decisionToAPI(*paused)}, ex.Decisions...)
	}
	ex.Summary = summarize(at, fire, next, s.now(), triggers, runs, decisionsAt(decisions, fire), paused)
	return ex, nil
}

// runsOf returns the executions of the job for the fire time, first
// attempt first.
func (s *Server) runsOf(ctx context.Context, key chime.JobKey, fire time.Time) ([]history.Execution, error) {
	var out []history.Execution
	q := &history.Query{JobGroup: key.Group, JobName: key.Name, From: fire.Add(-time.Second), Limit: history.MaxLimit}
	for range 10 { // pages
		page, err := s.history.List(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, e := range page.Executions {
			if e.ScheduledTime.Equal(fire) {
				out = append(out, e)
			}
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	slices.SortFunc(out, func(a, b history.Execution) int {
		if c := a.StartedTime.Compare(b.StartedTime); c != 0 {
			return c
		}
		return a.Attempt - b.Attempt
	})
	return out, nil
}

// pausedAt returns the decision that paused the job before the fire time
// when it was still paused then, from the decisions its pauses and
// resumes recorded; a job paused when it was saved, which recorded none,
// gets a decision made up from its settings.
func (s *Server) pausedAt(ctx context.Context, key chime.JobKey, fire time.Time, d *chime.JobDetail) (*history.Decision, error) {
	if fire.IsZero() {
		return nil, nil
	}
	decisions, err := s.history.Decisions(ctx, key.Group, key.Name, fire.Add(-explainLookBack), fire.Add(time.Second), history.MaxLimit)
	if err != nil {
		return nil, err
	}
	// Decisions are newest first: the first pause or resume at or before
	// the fire time says whether the job was paused then.
	for _, dec := range decisions {
		if dec.At.After(fire) || !dec.ScheduledTime.IsZero() {
			continue
		}
		switch dec.Kind {
		case history.DecisionPaused:
			return &dec, nil
		case decisionResumed:
			return nil, nil
		}
	}
	if st, err := settingsOf(d); err == nil && st.Paused {
		return &history.Decision{JobGroup: key.Group, JobName: key.Name, Kind: history.DecisionPaused,
			Reason: "saved as paused"}, nil
	}
	return nil, nil
}

// decisionsAt returns the decisions about the fire time.
func decisionsAt(ds []history.Decision, fire time.Time) []history.Decision {
	var out []history.Decision
	for _, d := range ds {
		if !fire.IsZero() && d.ScheduledTime.Equal(fire) {
			out = append(out, d)
		}
	}
	return out
}

// summarize says in one sentence why the job did or did not run.
func summarize(at, fire, next, now time.Time, triggers []chime.TriggerInfo, runs []history.Execution, decisions []history.Decision, paused *history.Decision) string {
	const layout = time.RFC3339Nano
	nextText := "it will not fire again"
	if !next.IsZero() {
		nextText = "the next is " + next.Format(layout)
	}
	schedules := 0
	for _, t := range triggers {
		if !serverMade(t.Origin) {
			schedules++
		}
	}
	switch {
	case schedules == 0:
		return "Not scheduled: the job has no trigger, so it runs only when asked (run now, backfill)"
	case fire.IsZero():
		return fmt.Sprintf("Not due: the job has no fire time at or before %s; %s", at.Format(layout), nextText)
	}
	prefix := ""
	if !fire.Equal(at) {
		prefix = fmt.Sprintf("Not due at %s: the last fire time before it was %s (%s). At %s: ", at.Format(layout), fire.Format(layout), nextText, fire.Format(layout))
	}
	var what string
	switch {
	case len(runs) > 0:
		first, last := runs[0], runs[len(runs)-1]
		if first.Outcome == history.OutcomeSkipped && len(runs) == 1 {
			what = "Skipped: " + first.Error
			break
		}
		what = fmt.Sprintf("Fired at %s on node %s", first.StartedTime.Format(layout), first.NodeID)
		switch {
		case len(runs) == 1:
			what += "; " + outcomeText(first)
		default:
			what += fmt.Sprintf("; %d attempts, the last (attempt %d on node %s) %s", len(runs), last.Attempt, last.NodeID, outcomeText(last))
		}
	case hasKind(decisions, history.DecisionSkipped) != nil:
		what = "Skipped: " + hasKind(decisions, history.DecisionSkipped).Reason
	case hasKind(decisions, history.DecisionMisfired) != nil:
		what = "Misfired: " + hasKind(decisions, history.DecisionMisfired).Reason
	case paused != nil && paused.At.IsZero():
		what = "Not run: the job was paused (" + paused.Reason + ")"
	case paused != nil:
		what = fmt.Sprintf("Not run: the job was paused at %s (%s)", paused.At.Format(layout), paused.Reason)
	case fire.After(now):
		what = "Not yet due"
	default:
		what = "No run is recorded: no node fired it (were all nodes down?) or its history was pruned"
	}
	return prefix + what
}

// outcomeText describes how an execution ended.
func outcomeText(e history.Execution) string {
	switch e.Outcome {
	case history.OutcomeRunning:
		return "still running"
	case history.OutcomeSucceeded:
		return "succeeded"
	case history.OutcomeNodeLost:
		return "was lost with its node"
	}
	text := strings.ReplaceAll(string(e.Outcome), "_", " ")
	if e.Error != "" {
		text += ": " + e.Error
	}
	return text
}

// hasKind returns the first decision of a kind, or nil.
func hasKind(ds []history.Decision, kind history.DecisionKind) *history.Decision {
	for i := range ds {
		if ds[i].Kind == kind {
			return &ds[i]
		}
	}
	return nil
}

// decisionToAPI translates a recorded decision.
func decisionToAPI(d history.Decision) api.Decision {
	return api.Decision{
		JobGroup: d.JobGroup, JobName: d.JobName, TriggerGroup: d.TriggerGroup, TriggerName: d.TriggerName,
		ScheduledTime: d.ScheduledTime, At: d.At, Kind: string(d.Kind), Reason: d.Reason,
		NodeID: d.NodeID, ExecutionID: d.ExecutionID,
	}
}

// nextIncluded returns the trigger's first fire time after t that the
// calendar includes, or zero.
func nextIncluded(timing *schedule.Trigger, cal schedule.Calendar, t time.Time) time.Time {
	for range 10_000 {
		t = timing.FireTimeAfter(t)
		if t.IsZero() || cal == nil || cal.Includes(t) {
			return t
		}
	}
	return time.Time{}
}

// fireTimesBefore returns up to n of the trigger's fire times at or
// before at, oldest first, looking back in widening windows.
func fireTimesBefore(timing *schedule.Trigger, cal schedule.Calendar, at time.Time, n int) []time.Time {
	for _, window := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, 366 * 24 * time.Hour, explainLookBack} {
		var found []time.Time
		t := at.Add(-window - time.Millisecond)
		for range 100_000 {
			t = nextIncluded(timing, cal, t)
			if t.IsZero() || t.After(at) {
				break
			}
			found = append(found, t)
		}
		if len(found) >= n || window == explainLookBack {
			if len(found) > n {
				found = found[len(found)-n:]
			}
			return found
		}
	}
	return nil
}

// ExplainCron describes a cron expression and lists its next fire times in
// a time zone, marking those next to a UTC offset change.
func (s *Server) ExplainCron(_ context.Context, expression, timeZone string, count int) (*api.CronExplanation, error) {
	switch {
	case count == 0:
		count = defaultUpcoming
	case count < 0 || count > maxUpcoming:
		return nil, invalidf("count", "%d: want 1 to %d", count, maxUpcoming)
	}
	if timeZone == "" {
		timeZone = "UTC"
	}
	loc, err := wire.LoadZone(timeZone)
	if err != nil {
		return nil, invalidf("time_zone", "%v", err)
	}
	if expression == "" {
		return nil, invalidf("expression", "is required")
	}
	expr, err := cron.Parse(expression)
	if err != nil {
		return nil, invalidf("expression", "%v", err)
	}
	ex := &api.CronExplanation{Expression: expression, TimeZone: loc.String(), Description: expr.Explain(), Next: []api.FireTime{}}
	now := s.now()
	for t, changed := range schedule.OffsetChanges(now, expr.NextN(now.In(loc), count), loc) {
		ex.Next = append(ex.Next, api.FireTime{Time: t, DST: changed})
	}
	return ex, nil
}
