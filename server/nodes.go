package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/history"
)

// Nodes returns the cluster's nodes, alive or not, with what each last
// reported about itself and the executions each runs now.
func (s *Server) Nodes(ctx context.Context) ([]api.Node, error) {
	view, err := s.sched.Cluster(ctx)
	if err != nil {
		return nil, err
	}
	reports, err := s.state.reports(ctx)
	if err != nil {
		return nil, err
	}
	running, err := s.history.RunningByNode(ctx)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	out := make([]api.Node, 0, len(view.Nodes))
	for _, n := range view.Nodes {
		an := api.Node{ID: n.ID, Epoch: n.Epoch, LastCheckIn: n.LastCheckIn, Alive: n.Alive, Running: running[n.ID]}
		r, reported := reports[n.ID]
		if reported {
			an.Version, an.Workers = r.Version, r.Workers
		}
		if n.ID == s.NodeID() {
			an.Self = true
			an.ClockOffset = s.clockOffset().String()
			an.Version, an.Workers = s.version, s.cfg.Workers
		} else if reported && an.Alive && view.At.Sub(r.Reported) <= s.sched.DeadAfter() {
			// A live node reports its offset every DeadAfter/3; an older
			// report is of no use.
			an.ClockOffset = r.Offset.String()
		}
		out = append(out, an)
	}
	return out, nil
}

// clockOffset is this node's clock minus the database's.
func (s *Server) clockOffset() time.Duration { return -s.sched.ClockOffset() }

// report stores this node's clock offset, version and worker count for
// the other nodes' Nodes.
func (s *Server) report(ctx context.Context, now time.Time) error {
	return s.state.report(ctx, s.NodeID(), nodeReport{
		Offset: s.clockOffset(), Reported: now, Version: s.version, Workers: s.cfg.Workers,
	})
}

// buildVersion is the version of chime in this binary: the chime module's
// version as the build recorded it, or "devel" and the VCS revision for a
// build of chime's own source tree without a version.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if bi.Main.Path != chimeModule {
		for _, m := range bi.Deps {
			if m.Path == chimeModule {
				if m.Replace != nil && m.Replace.Version != "" {
					return m.Replace.Version
				}
				return m.Version
			}
		}
		return "unknown"
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	v := "devel"
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			v += " " + kv.Value[:min(12, len(kv.Value))]
		case "vcs.modified":
			if kv.Value == "true" {
				v += "+dirty"
			}
		}
	}
	return v
}

// chimeModule is the path of chime's Go module.
const chimeModule = "github.com/chime-scheduler/chime"

// watchNodes watches the cluster until ctx ends: it counts the live
// nodes and records the executions of nodes that died as node_lost (with
// an alert for each). The alert about the node itself is schedulerEvent's.
func (s *Server) watchNodes(ctx context.Context) {
	interval := s.sched.DeadAfter() / 3
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.sweepNow:
		}
		s.runLostSweeps(ctx)
		if err := s.checkNodes(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("cannot check the cluster's nodes", "error", err)
		}
		if err := s.report(ctx, s.now()); err != nil && ctx.Err() == nil {
			s.log.Warn("cannot report the node's clock offset, version and workers", "error", err)
		}
	}
}

// checkNodes is one pass of watchNodes.
func (s *Server) checkNodes(ctx context.Context) error {
	view, err := s.sched.Cluster(ctx)
	if err != nil {
		return err
	}
	live := 0
	for _, n := range view.Nodes {
		if n.Alive {
			live++
		}
	}
	s.metrics.liveNodes.Set(float64(live))

	page, err := s.history.List(ctx, &history.Query{Outcome: []history.Outcome{history.OutcomeRunning}, Limit: history.MaxLimit})
	if err != nil {
		return err
	}
	lost := make(map[string]bool)
	for _, e := range page.Executions {
		if e.NodeID == "" {
			continue // the parent of a sharded firing runs on no node (see shards.go)
		}
		n, ok := view.Node(e.NodeID)
		// Only a node declared dead (and fenced) or gone is lost: a node
		// merely late checking in may still finish what it runs.
		if e.NodeID != s.NodeID() && (!ok || n.Dead) {
			lost[e.NodeID] = true
		}
	}
	for node := range lost {
		// The view was read first: the executions started before it
		// are the lost incarnation's.
		s.markNodeLost(ctx, node, view.At)
	}
	for _, n := range view.Nodes {
		if n.Dead {
			s.sweepLostFirings(ctx, n)
		}
	}
	return nil
}

// schedulerEvent alerts about a node this node declared dead and whose
// work it recovered. The library tells exactly one node of the cluster
// about each dead node incarnation, the one that recovered it.
//
// It also has the history given the firings that the recovery (or this
// node's registering again) recorded as lost and their node never recorded
// (see recordLostFirings). checkNodes finds them too, but only while the
// view shows the dead incarnation: a node that registers again at once
// hides it.
func (s *Server) schedulerEvent(ctx context.Context, ev chime.SchedulerEvent) {
	if ev.Type == chime.EventNodeRegisteredAgain {
		s.queueLostSweep(lostSweep{node: s.NodeID()})
		return
	}
	if ev.Type != chime.EventNodeRecovered || ev.Recovered == nil {
		return
	}
	n := ev.Recovered.Node
	if len(ev.Recovered.Failed) > 0 {
		s.queueLostSweep(lostSweep{node: n.ID, execs: ev.Recovered.Failed})
	}
	s.alerts.notify(ctx, nil, alert.Event{
		Kind: alert.KindNodeLost, NodeID: n.ID, At: s.now(),
		Detail: fmt.Sprintf("Node %s (lease epoch %d) stopped checking in at %s and was declared dead; %d of its runs will be re-run, %d were lost.",
			n.ID, n.Epoch, n.LastCheckIn.Format(time.RFC3339), len(ev.Recovered.Recoverable), len(ev.Recovered.Failed)),
	})
}

// lostSweep is a look for the firings that node lost before it recorded
// them: among execs, which a recovery reported, or, when execs is nil,
// among the node's newest executions. It records the firings the history
// lacks, and leaves the failures the node did record to the sweep that
// follows them (see recordLostFirings): this node, registered again, follows
// its own, and a node that stays dead is swept again from the view.
type lostSweep struct {
	node  string
	execs []chime.Execution
}

// queueLostSweep has watchNodes make the sweep w at once, and again at
// each of its passes until it succeeds. Listeners must not wait on the
// database, so the event's listener does not make it.
func (s *Server) queueLostSweep(w lostSweep) {
	s.mu.Lock()
	s.lostSweeps = append(s.lostSweeps, w)
	s.mu.Unlock()
	select {
	case s.sweepNow <- struct{}{}:
	default:
	}
}

// runLostSweeps makes the queued sweeps; those that fail stay queued.
func (s *Server) runLostSweeps(ctx context.Context) {
	s.mu.Lock()
	queued := s.lostSweeps
	s.lostSweeps = nil
	s.mu.Unlock()
	var failed []lostSweep
	for _, w := range queued {
		var err error
		if w.execs == nil {
			err = s.recordLostFirings(ctx, w.node, false)
		} else {
			err = s.recordLostExecutions(ctx, w.node, w.execs, false)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("cannot look for the firings a lost node did not record; trying again", "lost_node", w.node, "error", err)
			failed = append(failed, w)
		}
	}
	if len(failed) > 0 {
		s.mu.Lock()
		s.lostSweeps = append(failed, s.lostSweeps...)
		s.mu.Unlock()
	}
}

// sweepLostFirings records the firings that the dead node n lost before
// it recorded them (see recordLostFirings), once per node incarnation.
func (s *Server) sweepLostFirings(ctx context.Context, n chime.Node) {
	k := lostKey{node: n.ID, epoch: n.Epoch}
	s.mu.Lock()
	done := s.swept[k]
	s.mu.Unlock()
	if done {
		return
	}
	if err := s.recordLostFirings(ctx, n.ID, true); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cannot look for the firings a lost node did not record", "lost_node", n.ID, "error", err)
		}
		return
	}
	s.mu.Lock()
	s.swept[k] = true
	s.mu.Unlock()
}

// markNodeLost records the executions of the lost node that are
// recorded running and started before startedBefore as node_lost, and
// alerts about each, and withdraws the runs it handed to executors
// before then (see dispatch.Service.ForgetNode). The bound leaves out the executions of a later
// incarnation of a node that restarted under the same ID. Several nodes
// may do it at once: the one whose write changes an execution alerts
// about it.
func (s *Server) markNodeLost(ctx context.Context, node string, startedBefore time.Time) {
	if node == "" {
		return // the history's query would read every node's executions
	}
	page, err := s.history.List(ctx, &history.Query{NodeID: node, Outcome: []history.Outcome{history.OutcomeRunning}, To: startedBefore, Limit: history.MaxLimit})
	if err != nil {
		s.log.Warn("cannot list the executions of a lost node", "lost_node", node, "error", err)
		return
	}
	marked := 0
	for _, e := range page.Executions {
		if s.markLost(ctx, &e, "node "+node+" lost") {
			marked++
		}
	}
	if marked > 0 {
		s.log.Warn("recorded the executions of a lost node as node_lost", "lost_node", node, "executions", marked)
	}
	// Its pool slots and places in the pools' queues are not freed here:
	// a node presumed dead may still run in them. They go back to their
	// pools when their lease lapses, which a node still alive learns of in
	// time to cancel its runs (see pool.Service.Hold and docs/pools.md).
	// The runs it handed to executors: their executors are told to stop.
	if n, err := s.dispatch.ForgetNode(ctx, node, startedBefore); err != nil {
		s.log.Warn("cannot withdraw the executor runs of a lost node", "lost_node", node, "error", err)
	} else if n > 0 {
		s.log.Warn("withdrew the executor runs of a lost node", "lost_node", node, "runs", n)
	}
}

// markLost records the running execution e as lost with its node, and
// alerts about it, unless it is no longer running. It reports whether it
// marked it.
func (s *Server) markLost(ctx context.Context, e *history.Execution, reason string) bool {
	if err := s.history.MarkLost(ctx, e.ID, s.now(), reason); err != nil {
		if !errors.Is(err, history.ErrNotRunning) && !errors.Is(err, history.ErrNotFound) {
			s.log.Warn("cannot record an execution of a lost node", "lost_node", e.NodeID, "execution_id", e.ID, "error", err)
		}
		return false
	}
	key := chime.NewJobKey(e.JobGroup, e.JobName)
	s.metrics.executed(key, history.OutcomeNodeLost, time.Time{})
	s.alerts.notify(ctx, s.alertPlan(ctx, key), alert.Event{
		Kind: alert.KindNodeLost, JobGroup: e.JobGroup, JobName: e.JobName, ExecutionID: e.ID, Attempt: e.Attempt,
		ScheduledTime: e.ScheduledTime, NodeID: e.NodeID, Error: reason,
	})
	return true
}

// misfired records a trigger's misfire: the decision, the metric and the
// alert. It runs on the scheduler's event goroutine.
func (s *Server) misfired(ctx context.Context, t chime.TriggerInfo) {
	s.metrics.misfires.Inc()
	timing := schedule.Trigger{Schedule: t.Schedule, StartTime: t.StartTime, EndTime: t.EndTime}
	from := t.PreviousFireTime
	if from.IsZero() {
		from = t.StartTime.Add(-time.Millisecond)
	}
	missed := timing.FireTimeAfter(from)
	instr := t.MisfireInstruction
	if instr == "" {
		instr = schedule.MisfireSmartPolicy
	}
	next := "none: the trigger will not fire again"
	if !t.NextFireTime.IsZero() {
		next = t.NextFireTime.Format(time.RFC3339Nano)
	}
	reason := fmt.Sprintf("not fired within the misfire threshold of its fire time (the cluster was down, busy, or the trigger paused); misfire instruction %s applied, next fire time %s", instr, next)
	a := &attempt{job: t.JobKey, triggerGroup: t.Key.Group, triggerName: t.Key.Name, scheduled: missed}
	rec, done := recordCtx(ctx)
	defer done()
	s.decide(rec, a, history.DecisionMisfired, reason, "")
	if serverMade(t.Origin) {
		return // a run someone asked for, which runs late: nothing to alert
	}
	s.alerts.notify(rec, s.alertPlan(rec, t.JobKey), alert.Event{
		Kind: alert.KindMisfire, JobGroup: t.JobKey.Group, JobName: t.JobKey.Name,
		ScheduledTime: missed, NodeID: s.NodeID(), Detail: "Trigger " + t.Key.String() + ": " + reason,
	})
}

// checkDeadMen runs the dead-man's switches and the running-longer-than
// checks every Config.DeadManInterval, until ctx ends. Every node runs
// them: their state is in the database, and each alert is claimed there
// by one node. On every node, it drops the per-job metrics of deleted
// jobs at the same pace.
func (s *Server) checkDeadMen(ctx context.Context) {
	t := time.NewTicker(s.cfg.DeadManInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.sweepJobMetrics(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("cannot drop the metrics of deleted jobs", "error", err)
		}
		if err := s.checkDeadMenOnce(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("cannot check the dead-man's switches", "error", err)
		}
	}
}

// claimRetention is how long a claimed running-longer-than alert is
// remembered: an execution still running after that alerts again.
const claimRetention = 30 * 24 * time.Hour

// checkDeadMenOnce is one pass of checkDeadMen: the dead-man's switches,
// then the executions running longer than their job allows.
func (s *Server) checkDeadMenOnce(ctx context.Context) error {
	now := s.now()
	var (
		watches []alert.DeadManWatch
		long    []alertedJob
		errs    []error
	)
	plans := make(map[alert.JobKey]*plan)
	err := s.eachJob(ctx, "", chime.MaxJobPageLimit, func(d *chime.JobDetail) error {
		// A job whose settings do not decode or compile alerts nothing.
		st, err := settingsOf(d)
		if err != nil || st.Paused || st.Alerts == nil {
			return nil //nolint:nilerr // not an error of the pass
		}
		p, perr := compilePlan(d.Type, st, true, true)
		if perr != nil || p.alertsOff {
			return nil //nolint:nilerr // not an error of the pass
		}
		key := alert.JobKey{Group: d.Key.Group, Name: d.Key.Name}
		plans[key] = p
		if p.deadMan > 0 {
			watches = append(watches, alert.DeadManWatch{JobGroup: d.Key.Group, JobName: d.Key.Name, Window: p.deadMan})
		}
		if p.runningLong > 0 {
			long = append(long, alertedJob{key: key, plan: p})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("server: listing jobs: %w", err)
	}
	events, err := s.deadMan.Check(ctx, now, watches)
	errs = append(errs, err)
	for _, ev := range events {
		s.alerts.notify(ctx, plans[ev.JobKey()], ev)
	}
	for _, j := range long {
		errs = append(errs, s.checkRunningLong(ctx, now, j))
	}
	if len(long) > 0 {
		errs = append(errs, s.alertState.pruneClaims(ctx, now.Add(-claimRetention)))
	}
	return errors.Join(errs...)
}

// roundForHumans rounds d to the second, or under a minute to the
// millisecond.
func roundForHumans(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// alertedJob is a job and its plan.
type alertedJob struct {
	key  alert.JobKey
	plan *plan
}

// checkRunningLong raises one KindRunningLong alert, cluster-wide, for
// each execution of j that is still running at now and started more than
// its running_longer_than ago.
func (s *Server) checkRunningLong(ctx context.Context, now time.Time, j alertedJob) error {
	page, err := s.history.List(ctx, &history.Query{
		JobGroup: j.key.Group, JobName: j.key.Name, Outcome: []history.Outcome{history.OutcomeRunning}, Limit: history.MaxLimit,
	})
	if err != nil {
		return fmt.Errorf("server: listing the running executions of job %s: %w", j.key, err)
	}
	for _, e := range page.Executions {
		ran := now.Sub(e.StartedTime)
		if ran < j.plan.runningLong {
			continue
		}
		won, err := s.alertState.claim(ctx, "running_long/"+e.ID, now)
		if err != nil {
			return err
		}
		if !won {
			continue // alerted before, by this node or another
		}
		s.alerts.notify(ctx, j.plan, alert.Event{
			Kind: alert.KindRunningLong, JobGroup: e.JobGroup, JobName: e.JobName, ExecutionID: e.ID, Attempt: e.Attempt,
			ScheduledTime: e.ScheduledTime, NodeID: e.NodeID, At: now,
			Detail: fmt.Sprintf("Running for %s since %s; the job alerts after %s.",
				roundForHumans(ran), e.StartedTime.UTC().Format(time.RFC3339), j.plan.runningLong),
		})
	}
	return nil
}
