package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/shard"
)

// Sharded jobs (see docs/sharding.md). A firing of a job with shards is a
// parent execution that runs nothing itself: it creates its items (package
// server/shard keeps their state) and schedules one one-shot trigger per
// item, of origin chime.OriginShard, named after the parent, the round and
// the index, whose run facts place the run among the items. The items are
// then claimed, retried and recovered as any run; the end of the last one
// decides the parent in the database, and the node that decided records
// the parent's end in the history.

// shardGroup is the trigger group of the items' one-shot triggers.
const shardGroup = "SHARD_TRIGGER"

// shardFacts place a run among the items of a sharded firing; they are
// part of the run facts of its trigger, and of its retries'.
type shardFacts struct {
	// Parent is the sharded firing (the ID of its first attempt).
	Parent string `json:"parent"`
	Index  int    `json:"index"`
	Total  int    `json:"total"`
	// Executor pins the item to one executor (sharding_broadcast).
	Executor string `json:"executor,omitempty"`
}

// itemRun is what an attempt of an item knows of its place.
type itemRun struct {
	shardFacts
	// recovers is the job's requests_recovery; runCtx is the attempt's
	// context, whose cause says why a cancelled attempt stopped.
	recovers bool
	runCtx   context.Context
}

// parentSpec is what a sharded firing needs to schedule its items, kept
// with its parent so that another node can finish the step when the node
// that began it died.
type parentSpec struct {
	FirstID      string         `json:"first_id"`
	Attempt      int            `json:"attempt"`
	TriggerGroup string         `json:"trigger_group,omitempty"`
	TriggerName  string         `json:"trigger_name,omitempty"`
	Scheduled    time.Time      `json:"scheduled,omitzero"`
	Manual       bool           `json:"manual,omitempty"`
	Params       map[string]any `json:"params,omitempty"`
	TriggerData  map[string]any `json:"trigger_data,omitempty"`
	// Executors are the executors of a sharding_broadcast firing, item i
	// pinned to Executors[i].
	Executors []string `json:"executors,omitempty"`
}

// compileShards checks a job's shards and shard parameters and sets them
// on p.
func compileShards(p *plan, st jobSettings) *api.Error {
	broadcast := p.executor != nil && p.executor.Routing == api.RoutingShardingBroadcast
	switch {
	case st.Shards < 0 || st.Shards > shard.MaxTotal:
		return invalidf("shards", "%d: want 1 to %d (or 0 for a job that is not sharded)", st.Shards, shard.MaxTotal)
	case len(st.ShardParams) > 0 && st.Shards == 0:
		return invalidf("shard_params", "is only for a job with shards")
	case len(st.ShardParams) > 0 && len(st.ShardParams) != st.Shards:
		return invalidf("shard_params", "has %d elements; want one per shard (%d)", len(st.ShardParams), st.Shards)
	case broadcast && st.Shards > 0:
		return invalidf("shards", "is set by the routing sharding_broadcast (one shard per live executor); leave it out")
	}
	if st.Shards == 0 && !broadcast {
		return nil
	}
	if st.Overlap != "" && st.Overlap != api.OverlapAllow {
		return invalidf("overlap", "%q: a sharded job's items run in parallel; only allow is possible", st.Overlap)
	}
	for i, m := range st.ShardParams {
		if m == nil {
			return invalidf(fmt.Sprintf("shard_params[%d]", i), "is not an object")
		}
	}
	p.shards, p.shardParams, p.broadcast = st.Shards, st.ShardParams, broadcast
	return nil
}

// sharded reports whether a firing of the job is a sharded firing: the
// job has shards, and the run is not itself an item.
func (p *plan) sharded() bool { return p != nil && (p.shards > 0 || p.broadcast) }

// fanOut runs the parent of a sharded firing: it creates the parent and
// its items, records the parent's execution as running, schedules the
// items' triggers and marks the parent running. Each step can be taken
// again without doing anything twice, by this attempt, a recovered one,
// or another node's watch (see watchShards).
func (s *Server) fanOut(ctx context.Context, a *attempt, p *plan) error {
	spec := parentSpec{
		FirstID: a.firstID, Attempt: a.number, TriggerGroup: a.triggerGroup, TriggerName: a.triggerName,
		Scheduled: a.scheduled, Manual: a.manual, Params: a.params, TriggerData: a.triggerData,
	}
	total := p.shards
	if p.broadcast {
		ids, err := s.dispatch.LiveExecutors(ctx, *p.executor)
		if err != nil {
			return err
		}
		spec.Executors, total = ids, len(ids)
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("server: encoding the sharded firing: %w", err)
	}
	parent := &shard.Parent{
		ID: a.firstID, ExecutionID: a.id, JobGroup: a.job.Group, JobName: a.job.Name,
		Total: total, NodeID: s.NodeID(), Spec: raw,
	}
	if err := s.writes.persist(ctx, a.log, "the sharded firing", func(ctx context.Context) error {
		_, err := s.shards.Create(ctx, parent)
		return err
	}); err != nil {
		return err
	}
	stored, err := s.shards.Get(ctx, parent.ID)
	if err != nil {
		return err
	}
	a.started = s.now()
	if err := s.recorder.record(a, history.Record{Start: a.execution("")}); err != nil && !errors.Is(err, history.ErrExists) {
		return err
	}
	if stored.State.Decided() {
		// A recovered attempt of a firing that was decided meanwhile.
		s.recordParentEnd(ctx, stored, a.id)
		return nil
	}
	a.log.Info("sharded firing", "items", total)
	return s.scheduleItems(ctx, stored, &spec, p)
}

// scheduleItems schedules the triggers of parent's items that have not
// started, then marks the parent running.
func (s *Server) scheduleItems(ctx context.Context, parent *shard.Parent, spec *parentSpec, p *plan) error {
	items, err := s.shards.Items(ctx, parent.ID)
	if err != nil {
		return err
	}
	var todo []int
	for _, it := range items {
		if it.State == shard.ItemPending && it.FirstID == "" {
			todo = append(todo, it.Index)
		}
	}
	key := chime.NewJobKey(parent.JobGroup, parent.JobName)
	// A few at a time: each is one write, and a firing may have 10,000.
	const parallel = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int)
	)
	for range parallel {
		wg.Go(func() {
			for i := range next {
				err := s.scheduleItem(ctx, key, parent, spec, p, i)
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return s.shards.Created(ctx, parent.ID)
}

// cmpErr keeps the first error.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// itemTrigger names the trigger of item i of parent in round.
func itemTrigger(parent string, round, i int) chime.TriggerKey {
	return chime.NewTriggerKey(shardGroup, parent+"-r"+strconv.Itoa(round)+"-"+strconv.Itoa(i))
}

// scheduleItem schedules the one-shot trigger of item i. A trigger that
// exists already was scheduled before: it is left alone.
func (s *Server) scheduleItem(ctx context.Context, key chime.JobKey, parent *shard.Parent, spec *parentSpec, p *plan, i int) error {
	sf := &shardFacts{Parent: parent.ID, Index: i, Total: parent.Total}
	if i < len(spec.Executors) {
		sf.Executor = spec.Executors[i]
	}
	id := newID()
	meta, err := factsMeta(runFacts{
		ID: id, FirstID: id, Attempt: 1, ScheduledTime: spec.Scheduled,
		TriggerGroup: spec.TriggerGroup, TriggerName: spec.TriggerName, Manual: spec.Manual, Shard: sf,
	})
	if err != nil {
		return err
	}
	data := maps.Clone(spec.TriggerData)
	if p != nil && i < len(p.shardParams) {
		if data == nil {
			data = make(map[string]any, len(p.shardParams[i]))
		}
		maps.Copy(data, p.shardParams[i])
	}
	t := chime.Trigger{
		Key: itemTrigger(parent.ID, parent.Round, i), JobKey: key,
		Schedule: &schedule.Simple{}, StartTime: s.now(), Origin: chime.OriginShard, Metadata: meta,
	}
	if len(data) > 0 {
		t.Data = chime.JobData(data)
	}
	return s.writes.persist(ctx, s.log, "an item of a sharded firing", func(ctx context.Context) error {
		return s.scheduleOneShot(ctx, t)
	})
}

// startItem records that a's item starts. It reports false, having
// recorded the run as skipped, for an item that must not run: it ended,
// or another trigger of the same index runs it.
func (s *Server) startItem(ctx context.Context, a *attempt) bool {
	var refused error
	err := s.writes.persist(ctx, a.log, "the start of an item", func(ctx context.Context) error {
		err := s.shards.Start(ctx, a.shard.Parent, a.shard.Index, a.firstID, a.id, s.NodeID())
		if errors.Is(err, shard.ErrDone) || errors.Is(err, shard.ErrTaken) || errors.Is(err, shard.ErrNotFound) {
			refused = err
			return nil
		}
		return err
	})
	if err == nil && refused == nil {
		return true
	}
	if refused == nil {
		refused = err
	}
	s.recordSkipped(ctx, a, fmt.Sprintf("item %d of sharded firing %s does not run: %v", a.shard.Index, a.shard.Parent, refused))
	return false
}

// afterItem follows the end of an attempt of an item, once its end is
// recorded (done): a success or a failure with no retry left ends the
// item, which may decide its parent; a failure with a retry left
// schedules it; an attempt cancelled because its node stopped or lost
// its lease runs again, by recovery when the job requests it and as a new
// attempt otherwise.
func (s *Server) afterItem(ctx context.Context, a *attempt, p *plan, f history.Finish, done <-chan error) {
	if err := <-done; err != nil {
		return
	}
	switch {
	case f.Outcome == history.OutcomeSucceeded:
		s.endItem(ctx, a, true, "")
		return
	case decides(f.Outcome) && p.retryLeft(a.number):
		s.afterAttempt(ctx, a, p, f.Outcome, f.Error)
		return
	case f.Outcome == history.OutcomeCancelled:
		cause := context.Cause(a.shard.runCtx)
		if errors.Is(cause, chime.ErrLeaseLost) && a.shard.recovers {
			return // the cluster recovers the firing
		}
		if errors.Is(cause, chime.ErrLeaseLost) || errors.Is(cause, chime.ErrStopped) {
			id, next := retryID(a.id), s.now()
			if err := s.writes.persist(ctx, a.log, "the next attempt of an item", func(ctx context.Context) error {
				return s.scheduleRetry(ctx, a, id, a.number+1, next)
			}); err == nil {
				s.decide(ctx, a, history.DecisionRetryScheduled, fmt.Sprintf("item %d was cancelled (%v); attempt %d runs on another node", a.shard.Index, cause, a.number+1), a.id)
				return
			}
		}
	}
	if p != nil && p.retry.maxAttempts > 1 && decides(f.Outcome) {
		s.decide(ctx, a, history.DecisionRetriesExhausted, fmt.Sprintf("item %d: attempt %d of %d %s: %s; no retry is left",
			a.shard.Index, a.number, p.retry.maxAttempts, f.Outcome, f.Error), a.id)
	}
	msg := fmt.Sprintf("%s: %s", f.Outcome, f.Error)
	if f.Error == "" {
		msg = string(f.Outcome)
	}
	s.endItem(ctx, a, false, msg)
}

// endItem records the final end of a's item; the end that decides the
// parent records the parent's end.
func (s *Server) endItem(ctx context.Context, a *attempt, succeeded bool, msg string) {
	var decided *shard.Parent
	err := s.writes.persist(ctx, a.log, "the end of an item", func(ctx context.Context) error {
		d, err := s.shards.End(ctx, a.shard.Parent, a.shard.Index, a.id, succeeded, msg)
		if errors.Is(err, shard.ErrNotFound) {
			return permanent(err)
		}
		decided = d
		return err
	})
	if err != nil || decided == nil {
		return
	}
	s.recordParentEnd(ctx, decided, decided.ExecutionID)
}

// recordParentEnd records the end of a decided parent's execution id in
// the history, alerts about a failure, and marks the decision recorded.
// Another node may do it too (see watchShards): the one whose end the
// history takes alerts.
func (s *Server) recordParentEnd(ctx context.Context, parent *shard.Parent, id string) {
	log := s.log.With("job_key", chime.NewJobKey(parent.JobGroup, parent.JobName).String(), "execution_id", id)
	f := history.Finish{Outcome: history.OutcomeSucceeded, FinishedTime: s.now(),
		Output: fmt.Sprintf("%d items succeeded", parent.Total)}
	if parent.State == shard.ParentFailed {
		f.Outcome, f.Error, f.Output = history.OutcomeFailed, parent.Error, ""
	}
	finished := false
	err := s.writes.persist(ctx, log, "the end of a sharded firing", func(ctx context.Context) error {
		err := s.history.Finish(ctx, id, f)
		switch {
		case err == nil:
			finished = true
			return nil
		case errors.Is(err, history.ErrNotRunning), errors.Is(err, history.ErrNotFound):
			return nil
		case errors.Is(err, history.ErrInvalid):
			return permanent(err)
		}
		return err
	})
	if err != nil {
		return
	}
	key := chime.NewJobKey(parent.JobGroup, parent.JobName)
	if finished {
		s.metrics.executed(key, f.Outcome, f.FinishedTime)
		log.Info("sharded firing ended", "outcome", string(f.Outcome), "items", parent.Total, "failed", parent.Failed)
		if f.Outcome == history.OutcomeFailed {
			e, gerr := s.history.Get(ctx, id)
			ev := alert.Event{Kind: alert.KindFailure, JobGroup: parent.JobGroup, JobName: parent.JobName, ExecutionID: id,
				NodeID: s.NodeID(), Error: parent.Error}
			if gerr == nil {
				ev.Attempt, ev.ScheduledTime = e.Attempt, e.ScheduledTime
			}
			s.alerts.notify(ctx, s.alertPlan(ctx, key), ev)
		}
	}
	_ = s.writes.persist(ctx, log, "the record of a sharded firing's end", func(ctx context.Context) error {
		return s.shards.Recorded(ctx, parent.ID, id)
	})
}

// shardWatchEvery is how often each node looks for sharded firings that
// should have moved on, and shardStallAfter how long one may take to.
const (
	shardWatchEvery = 5 * time.Second
	shardStallAfter = 20 * time.Second
	// shardOwnStallAfter is how long this node lets its own parent stay
	// creating before it takes the step again.
	shardOwnStallAfter = 5 * time.Minute
)

// watchShards finishes, until ctx ends, the steps that a node that died
// left undone: it schedules the items of a parent still creating whose
// node is dead or gone, and records the end of a parent decided and not
// recorded.
func (s *Server) watchShards(ctx context.Context) {
	t := time.NewTicker(shardWatchEvery)
	defer t.Stop()
	var pruned time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.sweepShards(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("cannot look for stalled sharded firings", "error", err)
		}
		if now := s.now(); now.Sub(pruned) >= shardPruneEvery {
			pruned = now
			s.pruneShards(ctx, now)
		}
	}
}

// shardPruneEvery is how often each node prunes the state of sharded
// firings older than the history's retention.
const shardPruneEvery = time.Hour

// pruneShards deletes the state of the sharded firings decided longer
// ago than the history keeps executions (Config.Retention.MaxAge): their
// items are gone from the history too.
func (s *Server) pruneShards(ctx context.Context, now time.Time) {
	s.pruneRetained(ctx, now, "the state of old sharded firings", s.shards.Prune)
}

// sweepShards is one look of watchShards.
func (s *Server) sweepShards(ctx context.Context) error {
	cut := s.now().Add(-shardStallAfter)
	stalled, err := s.shards.Stalled(ctx, cut, cut, 100)
	if err != nil {
		return err
	}
	for i := range stalled {
		p := &stalled[i]
		if p.State.Decided() {
			s.recordParentEnd(ctx, p, p.ExecutionID)
			continue
		}
		// Another node's parent once that node is gone; this node's own
		// after a long while: its previous incarnation (it restarted
		// under its ID) left it, or its scheduling failed. Every step
		// can be taken twice.
		if p.NodeID == s.NodeID() {
			if p.Created.After(s.now().Add(-shardOwnStallAfter)) {
				continue
			}
		} else if !s.nodeGone(ctx, p.NodeID) {
			continue
		}
		if err := s.resumeFanOut(ctx, p); err != nil {
			s.log.Warn("cannot schedule the items of a sharded firing whose node was lost", "execution_id", p.ExecutionID,
				"lost_node", p.NodeID, "error", err)
		}
	}
	return nil
}

// nodeGone reports whether node is dead or has left the cluster.
func (s *Server) nodeGone(ctx context.Context, node string) bool {
	view, err := s.sched.Cluster(ctx)
	if err != nil {
		return false
	}
	n, ok := view.Node(node)
	return !ok || n.Dead
}

// resumeFanOut takes the steps of fanOut that the node of a parent still
// creating did not take: the parent's execution in the history, its
// items' triggers.
func (s *Server) resumeFanOut(ctx context.Context, parent *shard.Parent) error {
	var spec parentSpec
	if err := json.Unmarshal(parent.Spec, &spec); err != nil {
		return fmt.Errorf("server: reading the sharded firing %s: %w", parent.ID, err)
	}
	key := chime.NewJobKey(parent.JobGroup, parent.JobName)
	a := &attempt{
		id: parent.ExecutionID, firstID: spec.FirstID, number: max(spec.Attempt, 1), job: key,
		triggerGroup: spec.TriggerGroup, triggerName: spec.TriggerName, scheduled: spec.Scheduled,
		manual: spec.Manual, params: spec.Params, started: s.now(),
	}
	a.log = s.attemptLogger(a)
	a.log.Warn("scheduling the items of a sharded firing whose node was lost", "lost_node", parent.NodeID)
	if err := s.recorder.record(a, history.Record{Start: a.execution("")}); err != nil && !errors.Is(err, history.ErrExists) {
		return err
	}
	return s.scheduleItems(ctx, parent, &spec, s.alertPlan(ctx, key))
}

// shardParent returns the sharded firing whose parent execution (any
// attempt of it) is id, or not_found.
func (s *Server) shardParent(ctx context.Context, id string) (*shard.Parent, error) {
	e, err := s.execution(ctx, id)
	if err != nil {
		return nil, err
	}
	parent, err := s.shards.Get(ctx, e.FirstID)
	if errors.Is(err, shard.ErrNotFound) {
		return nil, httpjson.Errorf(api.CodeNotFound, "", "execution %s is not the parent of a sharded firing", id)
	}
	return parent, err
}

// ShardItems returns the items of the sharded firing whose parent
// execution (any attempt of it) is id.
func (s *Server) ShardItems(ctx context.Context, id string) (*api.ShardItems, error) {
	parent, err := s.shardParent(ctx, id)
	if err != nil {
		return nil, err
	}
	items, err := s.shards.Items(ctx, parent.ID)
	if err != nil {
		return nil, err
	}
	out := &api.ShardItems{
		ExecutionID: parent.ExecutionID, FirstID: parent.ID, Total: parent.Total, Round: parent.Round,
		State: string(parent.State), Remaining: parent.Remaining, Failed: parent.Failed, Error: parent.Error,
		Items: make([]api.ShardItem, 0, len(items)),
	}
	for _, it := range items {
		ai := api.ShardItem{
			Index: it.Index, State: string(it.State), ExecutionID: it.ExecutionID, FirstID: it.FirstID,
			NodeID: it.NodeID, Attempts: it.Attempts, Error: it.Error,
		}
		if !it.Started.IsZero() {
			ai.StartedTime = new(it.Started)
		}
		if !it.Finished.IsZero() {
			ai.FinishedTime = new(it.Finished)
			if !it.Started.IsZero() {
				ai.Duration = it.Finished.Sub(it.Started).String()
			}
		}
		out.Items = append(out.Items, ai)
	}
	return out, nil
}

// RerunFailedItems re-runs the failed items of the failed sharded firing
// whose parent execution (any attempt of it) is id, as the parent's next
// attempt, which it returns. actor is who asked.
func (s *Server) RerunFailedItems(ctx context.Context, id, actor string) (*api.Execution, error) {
	parent, err := s.shardParent(ctx, id)
	if err != nil {
		return nil, err
	}
	var spec parentSpec
	if err := json.Unmarshal(parent.Spec, &spec); err != nil {
		return nil, fmt.Errorf("server: reading the sharded firing %s: %w", parent.ID, err)
	}
	key := chime.NewJobKey(parent.JobGroup, parent.JobName)
	prior, err := s.history.Attempts(ctx, parent.ID)
	if err != nil {
		return nil, err
	}
	a := &attempt{
		id: newID(), firstID: parent.ID, job: key, triggerGroup: spec.TriggerGroup, triggerName: spec.TriggerName,
		scheduled: spec.Scheduled, manual: true, params: spec.Params,
	}
	for _, p := range prior {
		a.number = max(a.number, p.Attempt+1)
	}
	spec.Attempt = a.number
	a.log = s.attemptLogger(a)
	rerun, items, err := s.shards.RerunFailed(ctx, parent.ID, a.id, s.NodeID())
	if errors.Is(err, shard.ErrNotFailed) {
		return nil, httpjson.Errorf(api.CodeConflict, "", "sharded firing %s is %s: only a failed one re-runs its failed items", parent.ID, parent.State)
	}
	if err != nil {
		return nil, err
	}
	a.started = s.now()
	if err := s.recorder.record(a, history.Record{Start: a.execution("")}); err != nil {
		return nil, err
	}
	s.audit(ctx, actor, auditExecutionRerunFailed, "executions/"+id, map[string]any{"execution_id": a.id, "attempt": a.number, "items": items})
	s.decide(ctx, a, "rerun_failed_items", fmt.Sprintf("%s re-ran %d failed items of the sharded firing as attempt %d", actor, len(items), a.number), a.id)
	if err := s.scheduleItems(ctx, rerun, &spec, s.alertPlan(ctx, key)); err != nil {
		return nil, err
	}
	return s.GetExecution(ctx, a.id)
}

// runParent runs the parent of a sharded firing (see fanOut). A firing
// that cannot fan out (no live executor for sharding_broadcast, the job
// deleted meanwhile) is recorded as its parent's end.
//
// A recovered run whose trigger is gone (noTrigger) does not fan out: it
// may be an item, whose trigger carried its place, and fanning out would
// start a whole new firing. A parent whose node died while it scheduled
// its items is finished by the watch of the other nodes (watchShards).
func (s *Server) runParent(ctx context.Context, a *attempt, p *plan, noTrigger bool) error {
	if a.recovering && noTrigger {
		s.recordSkipped(ctx, a, "a recovered run of a sharded job whose trigger is gone: not run, so that no firing fans out twice")
		return nil
	}
	err := s.fanOut(ctx, a, p)
	if err == nil {
		return nil
	}
	outcome, msg := outcomeOf(ctx, err, 0)
	f := history.Finish{Outcome: outcome, FinishedTime: s.now(), Error: msg}
	rec, done := recordCtx(ctx)
	defer done()
	if ferr := s.history.Finish(rec, a.id, f); errors.Is(ferr, history.ErrNotFound) {
		a.started = f.FinishedTime
		_ = s.recorder.record(a, history.Record{Start: a.execution(""), End: &f})
	}
	s.metrics.executed(a.job, outcome, f.FinishedTime)
	a.log.Error("the sharded firing did not start its items", "error", err)
	return err
}
