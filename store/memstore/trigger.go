package memstore

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// TriggerInsert stores a trigger; see [store.TriggerStore]. When the trigger
// would be both paused and blocked it is stored PAUSED_BLOCKED, and a zero
// NextFireTime makes it COMPLETE whatever is paused.
func (s *Store) TriggerInsert(ctx context.Context, p *store.TriggerInsertParams) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.jobs[p.Trigger.JobKey]; !ok {
		return fmt.Errorf("%w: %s, job of trigger %s", store.ErrJobNotFound, p.Trigger.JobKey, p.Trigger.Key)
	}
	if err := s.checkInsert(&p.Trigger, p.Replace); err != nil {
		return err
	}
	s.putTrigger(&p.Trigger)
	return nil
}

// TriggersInsert stores many triggers at once; see [store.TriggerStore].
// Every trigger is checked before any is stored, so that a refused call
// stores nothing.
func (s *Store) TriggersInsert(ctx context.Context, p *store.TriggersInsertParams) ([]store.Key, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	put := make([]*store.TriggerRecord, 0, len(p.Triggers))
	for i := range p.Triggers {
		rec := &p.Triggers[i]
		if _, ok := s.jobs[rec.JobKey]; !ok {
			return nil, fmt.Errorf("%w: %s, job of trigger %s", store.ErrJobNotFound, rec.JobKey, rec.Key)
		}
		if _, taken := s.triggers[rec.Key]; taken && p.SkipExisting {
			continue
		}
		if err := s.checkInsert(rec, false); err != nil {
			return nil, err
		}
		put = append(put, rec)
	}
	keys := make([]store.Key, 0, len(put))
	for _, rec := range put {
		s.putTrigger(rec)
		keys = append(keys, rec.Key)
	}
	return keys, nil
}

// checkInsert refuses to store rec, whose job exists, when its origin is
// too long, when it names a missing calendar, or when its key is taken and
// replace is not set.
func (s *Store) checkInsert(rec *store.TriggerRecord, replace bool) error {
	if len(rec.Origin) > store.MaxOriginLength {
		return fmt.Errorf("memstore: origin of trigger %s: %q is longer than %d bytes", rec.Key, rec.Origin, store.MaxOriginLength)
	}
	if rec.CalendarName != "" {
		if _, ok := s.calendars[rec.CalendarName]; !ok {
			return fmt.Errorf("%w: %q, calendar of trigger %s", store.ErrCalendarNotFound, rec.CalendarName, rec.Key)
		}
	}
	if _, ok := s.triggers[rec.Key]; ok && !replace {
		return fmt.Errorf("%w: %s", store.ErrTriggerExists, rec.Key)
	}
	return nil
}

// putTrigger stores a copy of rec, which checkInsert accepted, replacing
// a trigger with its key.
func (s *Store) putTrigger(src *store.TriggerRecord) {
	rec := copyTrigger(src)
	rec.Version = 0
	if old, ok := s.triggers[rec.Key]; ok {
		rec.Version = old.rec.Version
		s.deleteTrigger(old)
	}
	t := &trigger{rec: rec, heapIndex: -1}
	s.triggers[rec.Key] = t
	if s.jobTriggers[rec.JobKey] == nil {
		s.jobTriggers[rec.JobKey] = make(map[store.Key]struct{})
	}
	s.jobTriggers[rec.JobKey][rec.Key] = struct{}{}
	if rec.CalendarName != "" {
		s.calendarRefs[rec.CalendarName]++
	}
	s.setState(t, s.insertState(&rec))
}

// insertState is the state a trigger is stored in.
func (s *Store) insertState(rec *store.TriggerRecord) store.TriggerState {
	if rec.NextFireTime.IsZero() {
		return store.StateComplete
	}
	_, groupPaused := s.pausedTriggerGroups[rec.Key.Group]
	_, jobGroupPaused := s.pausedJobGroups[rec.JobKey.Group]
	paused := s.pausedAll || groupPaused || jobGroupPaused
	busy := s.jobBusy(rec.JobKey)
	switch {
	case paused && busy:
		return store.StatePausedBlocked
	case paused:
		return store.StatePaused
	case busy:
		return store.StateBlocked
	}
	return store.StateWaiting
}

// TriggerGet returns a trigger or [store.ErrTriggerNotFound].
func (s *Store) TriggerGet(ctx context.Context, key store.Key) (*store.TriggerRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	t, ok := s.triggers[key]
	if !ok {
		return nil, fmt.Errorf("%w: %s", store.ErrTriggerNotFound, key)
	}
	c := copyTrigger(&t.rec)
	return &c, nil
}

// TriggerDelete deletes a trigger and, when its job is not durable and has
// no trigger left, the job. It reports whether the trigger existed.
func (s *Store) TriggerDelete(ctx context.Context, key store.Key) (bool, error) {
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	t, ok := s.triggers[key]
	if !ok {
		return false, nil
	}
	s.deleteTrigger(t)
	s.deleteJobIfOrphan(t.rec.JobKey)
	return true, nil
}

// TriggerList returns triggers ordered by key, filtered by p.
func (s *Store) TriggerList(ctx context.Context, p *store.TriggerListParams) ([]store.TriggerRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []store.TriggerRecord
	keep := func(t *trigger) {
		if (p.Group == "" || t.rec.Key.Group == p.Group) && (p.JobKey == nil || t.rec.JobKey == *p.JobKey) &&
			(p.ClaimedUnder == nil || claimedUnder(&t.rec, *p.ClaimedUnder)) {
			out = append(out, copyTrigger(&t.rec))
		}
	}
	jobs := p.JobKeys
	if p.JobKey != nil && len(jobs) == 0 {
		jobs = []store.Key{*p.JobKey}
	}
	if len(jobs) > 0 {
		for _, jk := range slices.Compact(slices.SortedFunc(slices.Values(jobs), keyCompare)) {
			for tk := range s.jobTriggers[jk] {
				keep(s.triggers[tk])
			}
		}
	} else {
		for _, t := range s.triggers {
			keep(t)
		}
	}
	slices.SortFunc(out, func(a, b store.TriggerRecord) int { return keyCompare(a.Key, b.Key) })
	return out, nil
}

// claimedUnder reports whether the trigger is ACQUIRED under lease.
func claimedUnder(rec *store.TriggerRecord, lease store.Lease) bool {
	return rec.State == store.StateAcquired && rec.ClaimedBy == lease.NodeID && rec.ClaimEpoch == lease.Epoch
}

// TriggersPause pauses the selected triggers; see [store.TriggerStore]. A
// selector naming a trigger or job that does not exist pauses nothing.
func (s *Store) TriggersPause(ctx context.Context, sel *store.TriggerSelector) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	ts, err := s.selectTriggers(sel)
	if err != nil {
		return 0, err
	}
	switch {
	case sel.All:
		s.pausedAll = true
	case sel.Group != "":
		s.pausedTriggerGroups[sel.Group] = struct{}{}
	case sel.JobGroup != "":
		s.pausedJobGroups[sel.JobGroup] = struct{}{}
	}
	return s.pauseTriggers(ts), nil
}

// pauseTriggers pauses ts and returns how many changed state.
func (s *Store) pauseTriggers(ts []*trigger) int {
	n := 0
	for _, t := range ts {
		switch t.rec.State {
		case store.StateWaiting, store.StateAcquired:
			s.setState(t, store.StatePaused)
			n++
		case store.StateBlocked:
			s.setState(t, store.StatePausedBlocked)
			n++
		}
	}
	return n
}

// TriggersResume undoes TriggersPause; see [store.TriggerStore]. Resuming
// everything also forgets every paused trigger group and job group.
func (s *Store) TriggersResume(ctx context.Context, sel *store.TriggerSelector) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	ts, err := s.selectTriggers(sel)
	if err != nil {
		return 0, err
	}
	switch {
	case sel.All:
		s.pausedAll = false
		clear(s.pausedTriggerGroups)
		clear(s.pausedJobGroups)
	case sel.Group != "":
		delete(s.pausedTriggerGroups, sel.Group)
	case sel.JobGroup != "":
		delete(s.pausedJobGroups, sel.JobGroup)
	}
	return s.resumeTriggers(ts), nil
}

// resumeTriggers resumes ts and returns how many changed state.
func (s *Store) resumeTriggers(ts []*trigger) int {
	n := 0
	for _, t := range ts {
		if t.rec.State == store.StatePaused || t.rec.State == store.StatePausedBlocked {
			s.setState(t, s.unpausedState(t.rec.JobKey))
			n++
		}
	}
	return n
}

// errSelector reports a TriggerSelector without exactly one field set.
var errSelector = errors.New("store: trigger selector must set exactly one field")

// selectTriggers returns the triggers sel selects.
func (s *Store) selectTriggers(sel *store.TriggerSelector) ([]*trigger, error) {
	set := 0
	for _, b := range []bool{sel.Trigger != nil, sel.Job != nil, sel.Group != "", sel.JobGroup != "", sel.All} {
		if b {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("%w: %d set", errSelector, set)
	}
	var out []*trigger
	switch {
	case sel.Trigger != nil:
		if t, ok := s.triggers[*sel.Trigger]; ok {
			out = append(out, t)
		}
	case sel.Job != nil:
		for tk := range s.jobTriggers[*sel.Job] {
			out = append(out, s.triggers[tk])
		}
	default:
		for _, t := range s.triggers {
			if sel.All || (sel.Group != "" && t.rec.Key.Group == sel.Group) ||
				(sel.JobGroup != "" && t.rec.JobKey.Group == sel.JobGroup) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// PausedGroups returns the trigger groups and job groups recorded as paused,
// each sorted, and whether everything is paused.
func (s *Store) PausedGroups(ctx context.Context) (*store.PausedGroups, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	pg := &store.PausedGroups{All: s.pausedAll}
	for g := range s.pausedTriggerGroups {
		pg.TriggerGroups = append(pg.TriggerGroups, g)
	}
	for g := range s.pausedJobGroups {
		pg.JobGroups = append(pg.JobGroups, g)
	}
	slices.Sort(pg.TriggerGroups)
	slices.Sort(pg.JobGroups)
	return pg, nil
}

// TriggersAcquire claims up to Limit due WAITING triggers, earliest first
// and, at the same instant, highest priority first (then by key). It pops
// them off the due queue: O(k log n) for k claimed out of n waiting.
func (s *Store) TriggersAcquire(ctx context.Context, p *store.TriggersAcquireParams) ([]store.TriggerRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return nil, err
	}
	return s.acquire(p), nil
}

// acquire claims due triggers under the store's lock, once the lease was
// checked.
func (s *Store) acquire(p *store.TriggersAcquireParams) []store.TriggerRecord {
	var (
		out     []store.TriggerRecord
		skipped []*trigger // excluded by job type, out of the queue meanwhile
	)
	for len(out) < p.Limit && len(s.due) > 0 {
		t := s.due[0]
		if t.rec.NextFireTime.After(p.NoLaterThan) {
			break
		}
		if len(p.ExcludeJobTypes) > 0 && s.excluded(t.rec.JobKey, p.ExcludeJobTypes) {
			heap.Pop(&s.due)
			skipped = append(skipped, t)
			continue
		}
		t.rec.ClaimedBy = p.Lease.NodeID
		t.rec.ClaimEpoch = p.Lease.Epoch
		s.setState(t, store.StateAcquired)
		out = append(out, copyTrigger(&t.rec))
	}
	for _, t := range skipped {
		heap.Push(&s.due, t)
	}
	return out
}

// excluded reports whether the job jk has one of the types listed.
func (s *Store) excluded(jk store.Key, types []string) bool {
	j, ok := s.jobs[jk]
	return ok && slices.Contains(types, j.Type)
}

// TriggerRelease returns an acquired trigger to WAITING (BLOCKED when its
// job is busy), or COMPLETE when the new timing has no next fire time.
func (s *Store) TriggerRelease(ctx context.Context, p *store.TriggerReleaseParams) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return err
	}
	t, err := s.claimed(p.Key, p.Lease)
	if err != nil {
		return err
	}
	if p.Timing != nil {
		applyTiming(&t.rec, p.Timing)
	}
	if t.rec.NextFireTime.IsZero() {
		s.setState(t, store.StateComplete)
		return nil
	}
	s.setState(t, s.unpausedState(t.rec.JobKey))
	return nil
}

// TriggersRelease returns several claims at once; see [store.Batcher].
func (s *Store) TriggersRelease(ctx context.Context, p *store.TriggersReleaseParams) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return 0, err
	}
	n := 0
	for _, k := range p.Keys {
		t, err := s.claimed(k, p.Lease)
		if err != nil {
			continue
		}
		if t.rec.NextFireTime.IsZero() {
			s.setState(t, store.StateComplete)
		} else {
			s.setState(t, s.unpausedState(t.rec.JobKey))
		}
		n++
	}
	return n, nil
}

// TriggerFire fires an acquired trigger; see [store.TriggerStore].
//
// The store fills the execution's TriggerKey, JobKey, NodeID and Epoch (from
// the lease), State (EXECUTING), Priority (the trigger's) and
// RequestsRecovery (the job's), and clears FinishedTime, Recovering and
// Error. FiredTime defaults to the store's clock. When Execution.ID is empty
// the store generates a unique ID and writes it back to p.Execution.ID, since
// the result does not carry it; a given ID that is taken is an error.
func (s *Store) TriggerFire(ctx context.Context, p *store.TriggerFireParams) (*store.TriggerFireResult, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return nil, err
	}
	f := store.TriggerFiring{Trigger: p.Trigger, Execution: p.Execution}
	res, err := s.fire(p.Lease, &f)
	p.Execution.ID = f.Execution.ID
	return res, err
}

// TriggersFire fires several acquired triggers at once; see
// [store.Batcher]. The store's one lock makes the batch atomic.
func (s *Store) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return nil, err
	}
	out := make([]store.TriggerFireOutcome, len(p.Firings))
	for i := range p.Firings {
		out[i].Result, out[i].Err = s.fire(p.Lease, &p.Firings[i])
	}
	return out, nil
}

// fire fires one trigger under the store's lock, once the lease was
// checked, and writes a generated execution ID back to f.
func (s *Store) fire(l store.Lease, f *store.TriggerFiring) (*store.TriggerFireResult, error) {
	t, err := s.claimed(f.Trigger.Key, l)
	if err != nil {
		return nil, err
	}
	e := f.Execution
	if e.ScheduledTime.IsZero() {
		return nil, fmt.Errorf("store: firing trigger %s: execution has no scheduled time", t.rec.Key)
	}
	fk := firedKey{trigger: t.rec.Key, scheduled: e.ScheduledTime.UnixNano()}
	if id, ok := s.fired[fk]; ok {
		return nil, fmt.Errorf("%w: trigger %s at %s (execution %s)", store.ErrAlreadyFired, t.rec.Key, e.ScheduledTime, id)
	}
	job := s.jobs[t.rec.JobKey]
	res := &store.TriggerFireResult{Job: copyJob(job)}
	if s.jobBusy(job.Key) {
		s.setState(t, store.StateBlocked)
		res.Blocked = true
		return res, nil
	}
	if e.ID == "" {
		e.ID = s.newExecutionID()
	} else if _, ok := s.executions[e.ID]; ok {
		return nil, fmt.Errorf("store: firing trigger %s: execution ID %q is taken", t.rec.Key, e.ID)
	}
	e.TriggerKey = t.rec.Key
	e.JobKey = job.Key
	e.NodeID = l.NodeID
	e.Epoch = l.Epoch
	e.State = store.ExecutionExecuting
	e.Priority = t.rec.Priority
	e.RequestsRecovery = job.RequestsRecovery
	e.FinishedTime = time.Time{}
	e.Recovering = false
	e.Error = ""
	if e.FiredTime.IsZero() {
		e.FiredTime = s.now()
	}
	s.executions[e.ID] = &e
	s.fired[fk] = e.ID
	s.running[e.ID] = struct{}{}
	s.runningJobs[job.Key]++
	f.Execution.ID = e.ID

	applyTiming(&t.rec, &f.Trigger)
	switch {
	case t.rec.RearmDelay > 0 && t.rec.NextFireTime.IsZero():
		s.setState(t, store.StateBlocked) // awaiting its run: see rearm
	case t.rec.NextFireTime.IsZero():
		s.setState(t, store.StateComplete)
	case job.DisallowConcurrent:
		s.setState(t, store.StateBlocked)
	default:
		s.setState(t, store.StateWaiting)
	}
	if job.DisallowConcurrent {
		s.blockJob(job.Key)
	}
	return res, nil
}

// claimed returns the trigger when this lease holds its claim.
func (s *Store) claimed(key store.Key, l store.Lease) (*trigger, error) {
	t, ok := s.triggers[key]
	if !ok {
		return nil, fmt.Errorf("%w: trigger %s no longer exists", store.ErrNotClaimed, key)
	}
	if !claimedUnder(&t.rec, l) {
		return nil, fmt.Errorf("%w: trigger %s is %s (claimed by %q epoch %d)",
			store.ErrNotClaimed, key, t.rec.State, t.rec.ClaimedBy, t.rec.ClaimEpoch)
	}
	return t, nil
}

// newExecutionID returns an execution ID no stored execution has.
func (s *Store) newExecutionID() string {
	for {
		s.lastExecID++
		id := "mem-" + strconv.FormatUint(s.lastExecID, 10)
		if _, ok := s.executions[id]; !ok {
			return id
		}
	}
}

// setState moves t to st, counts the write, drops the claim unless st is
// ACQUIRED, and keeps the due queue in step.
func (s *Store) setState(t *trigger, st store.TriggerState) {
	t.rec.State = st
	if st != store.StateAcquired {
		t.rec.ClaimedBy = ""
		t.rec.ClaimEpoch = 0
	}
	t.rec.Version++
	s.due.sync(t)
}

// deleteTrigger removes t and its index entries; it leaves the job alone.
func (s *Store) deleteTrigger(t *trigger) {
	s.due.remove(t)
	delete(s.triggers, t.rec.Key)
	if ks := s.jobTriggers[t.rec.JobKey]; ks != nil {
		delete(ks, t.rec.Key)
		if len(ks) == 0 {
			delete(s.jobTriggers, t.rec.JobKey)
		}
	}
	if name := t.rec.CalendarName; name != "" {
		s.calendarRefs[name]--
		if s.calendarRefs[name] <= 0 {
			delete(s.calendarRefs, name)
		}
	}
}

// applyTiming copies the timing fields of src onto dst.
func applyTiming(dst, src *store.TriggerRecord) {
	dst.NextFireTime = src.NextFireTime
	dst.PreviousFireTime = src.PreviousFireTime
	dst.TimesTriggered = src.TimesTriggered
	dst.StartTime = src.StartTime
	dst.EndTime = src.EndTime
	dst.Schedule = bytes.Clone(src.Schedule)
	dst.MisfireInstruction = src.MisfireInstruction
}

// awaitingRun reports whether rec is a fixed-delay trigger that fired and
// waits for the end of its run to be re-armed.
func awaitingRun(rec *store.TriggerRecord) bool {
	return rec.RearmDelay > 0 && rec.NextFireTime.IsZero() &&
		(rec.State == store.StateBlocked || rec.State == store.StatePausedBlocked)
}

// rearm re-arms the fixed-delay trigger key, when it awaits its run, at
// end plus its delay: WAITING (BLOCKED while its job is busy, PAUSED when
// it was paused meanwhile), or COMPLETE past its end time.
func (s *Store) rearm(key store.Key, end time.Time) {
	t, ok := s.triggers[key]
	if !ok || !awaitingRun(&t.rec) {
		return
	}
	next := end.Truncate(time.Millisecond).Add(t.rec.RearmDelay)
	if !t.rec.EndTime.IsZero() && next.After(t.rec.EndTime) {
		s.setState(t, store.StateComplete)
		return
	}
	t.rec.NextFireTime = next
	paused := t.rec.State == store.StatePausedBlocked
	busy := s.jobBusy(t.rec.JobKey)
	switch {
	case paused && busy:
		s.setState(t, store.StatePausedBlocked)
	case paused:
		s.setState(t, store.StatePaused)
	case busy:
		s.setState(t, store.StateBlocked)
	default:
		s.setState(t, store.StateWaiting)
	}
}

// TriggersAcquireFire claims due triggers and fires those p.Fire asks to
// fire, under the store's one lock; see [store.Batcher].
func (s *Store) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if _, err := s.checkLease(p.Lease); err != nil {
		return nil, err
	}
	res := &store.TriggersAcquireFireResult{}
	for _, rec := range s.acquire(&p.TriggersAcquireParams) {
		var (
			f  store.TriggerFiring
			ok bool
		)
		if p.Fire != nil {
			f, ok = p.Fire(rec)
		}
		if !ok {
			res.Claimed = append(res.Claimed, rec)
			continue
		}
		var out store.TriggerFireOutcome
		out.Result, out.Err = s.fire(p.Lease, &f)
		res.Firings = append(res.Firings, f)
		res.Outcomes = append(res.Outcomes, out)
	}
	return res, nil
}
