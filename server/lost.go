package server

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/history"
)

// lostSweepLimit bounds the executions read per lost node incarnation
// when looking for firings it never recorded: a node dies with at most
// its workers' runs and a few fired batches in flight, which are its
// newest executions.
const lostSweepLimit = 500

// recordLostRun records a's run, which its node fired and lost before it
// recorded it, as node_lost with the reason, in one step, and alerts about
// it. When the history already holds the run (another node recorded it
// first), it does nothing. The write is retried until the database takes
// it (see writeQueue).
func (s *Server) recordLostRun(ctx context.Context, a *attempt, reason string) {
	if a.started.IsZero() {
		a.started = a.scheduled
	}
	if a.started.IsZero() {
		a.started = s.now()
	}
	at := s.now()
	recorded := false
	err := s.writes.persist(ctx, a.log, "a run lost with its node", func(ctx context.Context) error {
		err := s.history.RecordLost(ctx, a.execution(a.lostNode), at, reason)
		switch {
		case err == nil:
			recorded = true
			return nil
		case errors.Is(err, history.ErrExists):
			return nil
		case errors.Is(err, history.ErrInvalid):
			return permanent(err)
		}
		return err
	})
	if err != nil || !recorded {
		return
	}
	a.log.Warn("recorded a run its node fired and lost before recording it", "lost_node", a.lostNode, "reason", reason)
	s.metrics.executed(a.job, history.OutcomeNodeLost, time.Time{})
	s.alerts.notify(ctx, s.alertPlan(ctx, a.job), alert.Event{
		Kind: alert.KindNodeLost, JobGroup: a.job.Group, JobName: a.job.Name, ExecutionID: a.id, Attempt: a.number,
		ScheduledTime: a.scheduled, NodeID: a.lostNode, Error: reason,
	})
}

// alertPlan returns the plan of the job with key, for where its alerts
// go, or nil when the job is gone or its settings do not compile.
func (s *Server) alertPlan(ctx context.Context, key chime.JobKey) *plan {
	d, err := s.sched.Job(ctx, key)
	if err != nil {
		return nil
	}
	st, err := settingsOf(d)
	if err != nil {
		return nil
	}
	p, _ := compilePlan(d.Type, st, true, true)
	return p
}

// recordLostFirings gives the history a node_lost row for each firing of
// node that the store recorded as lost with it (the node died, or left,
// while the firing ran, and the job does not request recovery) but that
// the node never recorded: it died between firing and recording. The
// history then shows every firing the store knows of. Firings that
// request recovery get theirs when they are re-run (see newAttempt).
//
// A lost firing whose failure the node did record died after that and
// before the store recorded the execution's end: in between, the node
// schedules the retry or raises the alert, and it may not have got to.
// With follow set, afterLostFailure does it. Only one sweep of each lost
// incarnation may follow its failures, since an alert delivered once is
// sent again when raised again: the sweep of the cluster view's dead
// incarnations (once each, see sweepLostFirings), and the sweep at start
// of the incarnation before it.
func (s *Server) recordLostFirings(ctx context.Context, node string, follow bool) error {
	execs, err := s.sched.Executions(ctx, &chime.ExecutionFilter{NodeID: node, Limit: lostSweepLimit})
	if err != nil {
		return err
	}
	return s.recordLostExecutions(ctx, node, execs, follow)
}

// recordLostExecutions is recordLostFirings for the executions execs of
// node.
func (s *Server) recordLostExecutions(ctx context.Context, node string, execs []chime.Execution, follow bool) error {
	for i := range execs {
		if !execs[i].LostWithNode {
			continue
		}
		a := s.lostAttempt(ctx, &execs[i])
		switch row, err := s.history.Get(ctx, a.id); {
		case err == nil:
			if follow && decides(row.Outcome) {
				s.afterLostFailure(ctx, a, row)
			}
			continue
		case !errors.Is(err, history.ErrNotFound):
			return err
		}
		s.recordLostRun(ctx, a, "node "+node+" lost after it fired the execution, before it recorded it; the job does not request recovery, so it did not run")
	}
	return nil
}

// afterLostFailure does what follows the failed attempt a, recorded as
// row by a node that died before the store recorded the execution's end:
// it schedules the retry, or raises the alert when none is left. What the
// dead node did get to do is not done twice: the retry is named after the
// attempt (retryID), and found when it is scheduled or ran; the decisions
// and the alert are named after the execution too, and the outbox keeps
// one of each (an alert the dead node delivered already reaches the
// receivers again with the key they saw).
func (s *Server) afterLostFailure(ctx context.Context, a *attempt, row *history.Execution) {
	a.number, a.scheduled, a.manual, a.cause = row.Attempt, row.ScheduledTime, row.Manual, row.CauseID
	if row.FirstID != "" {
		a.firstID = row.FirstID
	}
	a.log = s.attemptLogger(a) // with the attempt as the history has it
	p := s.alertPlan(ctx, a.job)
	if p == nil {
		return // the job is gone, and its retries and alerts with it
	}
	if p.retryLeft(a.number) {
		id := retryID(a.id)
		if _, err := s.history.Get(ctx, id); !errors.Is(err, history.ErrNotFound) {
			return // the retry ran, or the history cannot tell: the next sweep will
		}
		if _, err := s.sched.Trigger(ctx, chime.NewTriggerKey(retryGroup, id)); !errors.Is(err, chime.ErrTriggerNotFound) {
			return // the retry is scheduled, or the store cannot tell
		}
	}
	a.log.Warn("doing what follows a failed attempt for its node, lost before it recorded the execution's end",
		"lost_node", a.lostNode, "outcome", string(row.Outcome))
	s.afterAttempt(ctx, a, p, row.Outcome, row.Error)
}

// lostAttempt is the attempt the history would have recorded for e, an
// execution its node fired and lost. A run the server asked for (a
// retry, a run by hand, a backfilled fire time) takes its identity from
// its one-shot trigger's facts, while the trigger exists.
func (s *Server) lostAttempt(ctx context.Context, e *chime.Execution) *attempt {
	a := &attempt{
		id: e.ID, number: 1,
		job:          e.JobKey,
		triggerGroup: e.TriggerKey.Group, triggerName: e.TriggerKey.Name,
		scheduled: e.ScheduledFireTime, started: e.FireTime, lostNode: e.NodeID,
	}
	if t, err := s.sched.Trigger(ctx, e.TriggerKey); err == nil {
		// The trigger's data goes to a retry (afterLostFailure).
		a.triggerData = map[string]any(t.Data.Clone())
		if facts, err := factsOf(&t.Trigger); err == nil && serverMade(t.Origin) {
			a.apply(facts)
			a.params = make(map[string]any, len(t.Data))
			maps.Copy(a.params, t.Data)
		}
	}
	if a.firstID == "" {
		a.firstID = a.id
	}
	a.log = s.attemptLogger(a)
	return a
}
