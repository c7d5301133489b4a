package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
	"github.com/google/go-cmp/cmp"
)

// Advancer is implemented by a store under test whose clock the suite may
// move forward, typically a test wrapper around a store built on a [Clock].
// Stores that run on a real clock (SQL stores use the database's) do not
// implement it; the suite then waits, in real time, until the store's own
// clock has moved far enough, which costs about a second per test that needs
// it.
type Advancer interface {
	// Advance moves the store's clock forward by d.
	Advance(d time.Duration)
}

// Clock is a manual clock for stores that take an injected clock. It is
// safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads start until advanced.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Run checks a store implementation against the contract of package store.
//
// newStore must return a new, empty store each time it is called; the suite
// calls it once per subtest and runs subtests in parallel. It should close
// the store in a t.Cleanup, tolerating a store the suite closed already. A
// store that implements [Advancer] has its clock advanced instead of the
// suite waiting for time to pass.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	s := &suite{newStore: newStore}
	groups := []struct {
		name  string
		tests []test
	}{
		{"Job", jobTests},
		{"JobWrite", jobWriteTests},
		{"JobsInsert", jobsInsertTests},
		{"TriggersInsert", triggersInsertTests},
		{"Calendar", calendarTests},
		{"Trigger", triggerTests},
		{"Pause", pauseTests},
		{"Acquire", acquireTests},
		{"Release", releaseTests},
		{"Fire", fireTests},
		{"Execution", executionTests},
		{"Batch", batchTests},
		{"AcquireFire", acquireFireTests},
		{"Node", nodeTests},
		{"Recovery", recoveryTests},
		{"Reconcile", reconcileTests},
		{"FixedDelay", fixedDelayTests},
		{"Lifecycle", lifecycleTests},
		{"Concurrency", concurrencyTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, s.harness(t))
				})
			}
		})
	}
}

// test is one subtest of the suite; it gets a fresh, empty store.
type test struct {
	name string
	run  func(t *testing.T, h *harness)
}

type suite struct {
	newStore func(t *testing.T) store.Store
}

func (s *suite) harness(t *testing.T) *harness {
	t.Helper()
	st := s.newStore(t)
	adv, _ := st.(Advancer)
	return &harness{t: t, ctx: t.Context(), s: st, adv: adv, suite: s}
}

// harness wraps one store for one test with helpers that fail the test on
// unexpected errors.
type harness struct {
	t     *testing.T
	ctx   context.Context
	s     store.Store
	adv   Advancer
	suite *suite
	ids   atomic.Int64
}

// fresh returns a harness on a new store, for table rows.
func (h *harness) fresh(t *testing.T) *harness { return h.suite.harness(t) }

// t0 is the base instant of every schedule in the suite. The store never
// compares fire times with its clock, so any instant will do.
var t0 = time.Date(2030, time.March, 4, 5, 6, 7, 0, time.UTC)

// at returns t0 plus n seconds.
func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

func key(group, name string) store.Key { return store.Key{Group: group, Name: name} }

// job stores a job with the given options and returns its key.
func (h *harness) job(k store.Key, mods ...func(*store.JobRecord)) store.Key {
	h.t.Helper()
	j := store.JobRecord{Key: k, Type: "noop", Durable: true}
	for _, m := range mods {
		m(&j)
	}
	if err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: j}); err != nil {
		h.t.Fatalf("JobUpsert(%s): %v", k, err)
	}
	return k
}

func nonDurable(j *store.JobRecord)       { j.Durable = false }
func nonConcurrent(j *store.JobRecord)    { j.DisallowConcurrent = true }
func requestsRecovery(j *store.JobRecord) { j.RequestsRecovery = true }
func withType(typ string) func(*store.JobRecord) {
	return func(j *store.JobRecord) { j.Type = typ }
}
func withJobData(d string) func(*store.JobRecord) {
	return func(j *store.JobRecord) { j.Data = []byte(d) }
}

// trig returns a trigger record of job jk due at next.
func trig(k, jk store.Key, next time.Time) store.TriggerRecord {
	return store.TriggerRecord{
		Key:                k,
		JobKey:             jk,
		Kind:               "simple",
		Schedule:           []byte(`{"repeatCount":-1,"repeatIntervalMs":1000}`),
		MisfireInstruction: "SMART_POLICY",
		StartTime:          t0,
		NextFireTime:       next,
	}
}

// trigger stores tr and returns it as stored.
func (h *harness) trigger(tr store.TriggerRecord) store.TriggerRecord {
	h.t.Helper()
	if err := h.s.TriggerInsert(h.ctx, &store.TriggerInsertParams{Trigger: tr}); err != nil {
		h.t.Fatalf("TriggerInsert(%s): %v", tr.Key, err)
	}
	return h.get(tr.Key)
}

// simple stores a trigger of a durable job (created if need be) due at next.
func (h *harness) simple(k, jk store.Key, next time.Time) store.TriggerRecord {
	h.t.Helper()
	if _, err := h.s.JobGet(h.ctx, jk); errors.Is(err, store.ErrJobNotFound) {
		h.job(jk)
	}
	return h.trigger(trig(k, jk, next))
}

func (h *harness) get(k store.Key) store.TriggerRecord {
	h.t.Helper()
	tr, err := h.s.TriggerGet(h.ctx, k)
	if err != nil {
		h.t.Fatalf("TriggerGet(%s): %v", k, err)
	}
	return *tr
}

func (h *harness) getJob(k store.Key) store.JobRecord {
	h.t.Helper()
	j, err := h.s.JobGet(h.ctx, k)
	if err != nil {
		h.t.Fatalf("JobGet(%s): %v", k, err)
	}
	return *j
}

// wantState fails the test unless every trigger is in state want.
func (h *harness) wantState(want store.TriggerState, keys ...store.Key) {
	h.t.Helper()
	for _, k := range keys {
		if got := h.get(k).State; got != want {
			h.t.Errorf("trigger %s state = %s, want %s", k, got, want)
		}
	}
}

// wantNoTrigger fails the test unless the trigger is gone.
func (h *harness) wantNoTrigger(k store.Key) {
	h.t.Helper()
	if _, err := h.s.TriggerGet(h.ctx, k); !errors.Is(err, store.ErrTriggerNotFound) {
		h.t.Errorf("TriggerGet(%s) error = %v, want ErrTriggerNotFound", k, err)
	}
}

// node registers a node and returns its lease.
func (h *harness) node(id string) store.Lease {
	h.t.Helper()
	n, err := h.s.NodeRegister(h.ctx, id)
	if err != nil {
		h.t.Fatalf("NodeRegister(%q): %v", id, err)
	}
	return store.Lease{NodeID: n.ID, Epoch: n.Epoch}
}

// acquire claims up to limit triggers due at or before noLaterThan.
func (h *harness) acquire(l store.Lease, noLaterThan time.Time, limit int) []store.TriggerRecord {
	h.t.Helper()
	got, err := h.s.TriggersAcquire(h.ctx, &store.TriggersAcquireParams{Lease: l, NoLaterThan: noLaterThan, Limit: limit})
	if err != nil {
		h.t.Fatalf("TriggersAcquire(%s): %v", l.NodeID, err)
	}
	return got
}

// acquireOne claims trigger k at its next fire time; it fails the test
// when another trigger comes first.
func (h *harness) acquireOne(l store.Lease, k store.Key) store.TriggerRecord {
	h.t.Helper()
	got := h.acquire(l, h.get(k).NextFireTime, 1)
	if len(got) != 1 || got[0].Key != k {
		h.t.Fatalf("TriggersAcquire = %v, want %s", keysOf(got), k)
	}
	return got[0]
}

// fireParams are the parameters an engine would pass to fire tr, due at
// its NextFireTime, with next as the following fire time.
func (h *harness) fireParams(l store.Lease, tr store.TriggerRecord, next time.Time) *store.TriggerFireParams {
	adv := tr
	adv.PreviousFireTime = tr.NextFireTime
	adv.NextFireTime = next
	adv.TimesTriggered = tr.TimesTriggered + 1
	return &store.TriggerFireParams{
		Lease:   l,
		Trigger: adv,
		Execution: store.ExecutionRecord{
			ID:            fmt.Sprintf("exec-%d", h.ids.Add(1)),
			TriggerKey:    tr.Key,
			JobKey:        tr.JobKey,
			ScheduledTime: tr.NextFireTime,
			FiredTime:     tr.NextFireTime,
			NodeID:        l.NodeID,
			Epoch:         l.Epoch,
			State:         store.ExecutionExecuting,
			Priority:      tr.Priority,
		},
	}
}

// fire fires tr and returns the result and the execution ID.
func (h *harness) fire(l store.Lease, tr store.TriggerRecord, next time.Time) (*store.TriggerFireResult, string, error) {
	p := h.fireParams(l, tr, next)
	res, err := h.s.TriggerFire(h.ctx, p)
	return res, p.Execution.ID, err
}

// mustFire fires tr, expecting a real firing, and returns the execution ID.
func (h *harness) mustFire(l store.Lease, tr store.TriggerRecord, next time.Time) string {
	h.t.Helper()
	res, id, err := h.fire(l, tr, next)
	if err != nil {
		h.t.Fatalf("TriggerFire(%s at %s): %v", tr.Key, tr.NextFireTime, err)
	}
	if res.Blocked {
		h.t.Fatalf("TriggerFire(%s at %s): Blocked, want fired", tr.Key, tr.NextFireTime)
	}
	return id
}

// acquireFire acquires the one due trigger k and fires it.
func (h *harness) acquireFire(l store.Lease, k store.Key, next time.Time) string {
	h.t.Helper()
	return h.mustFire(l, h.acquireOne(l, k), next)
}

// complete finishes an execution.
func (h *harness) complete(l store.Lease, id string, st store.ExecutionState, in store.Instruction, data []byte) error {
	return h.s.ExecutionComplete(h.ctx, &store.ExecutionCompleteParams{
		Lease:        l,
		ID:           id,
		State:        st,
		FinishedTime: at(3600),
		Instruction:  in,
		JobData:      data,
	})
}

func (h *harness) mustComplete(l store.Lease, id string) {
	h.t.Helper()
	if err := h.complete(l, id, store.ExecutionSucceeded, store.InstructionNoop, nil); err != nil {
		h.t.Fatalf("ExecutionComplete(%s): %v", id, err)
	}
}

func (h *harness) executions(p store.ExecutionListParams) []store.ExecutionRecord {
	h.t.Helper()
	got, err := h.s.ExecutionList(h.ctx, &p)
	if err != nil {
		h.t.Fatalf("ExecutionList: %v", err)
	}
	return got
}

// execution returns the execution with the given ID.
func (h *harness) execution(id string) store.ExecutionRecord {
	h.t.Helper()
	for _, e := range h.executions(store.ExecutionListParams{}) {
		if e.ID == id {
			return e
		}
	}
	h.t.Fatalf("execution %s not listed", id)
	return store.ExecutionRecord{}
}

func (h *harness) now() time.Time {
	h.t.Helper()
	now, err := h.s.Now(h.ctx)
	if err != nil {
		h.t.Fatalf("Now: %v", err)
	}
	return now
}

// elapse lets d pass on the store's clock: it advances a manual clock, or
// waits in real time until the store's clock has moved by d.
func (h *harness) elapse(d time.Duration) {
	h.t.Helper()
	if h.adv != nil {
		h.adv.Advance(d)
		return
	}
	until := h.now().Add(d)
	for {
		now := h.now()
		if !now.Before(until) {
			return
		}
		// The store's clock is not ours to move: wait for it, in short
		// steps so that a clock running ahead of ours ends the wait early.
		time.Sleep(min(until.Sub(now), 20*time.Millisecond))
	}
}

// wantErr fails the test unless errors.Is(err, target).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s error = %v, want %v", what, err, target)
	}
}

// keysOf returns the keys of triggers, nil for none.
func keysOf(trs []store.TriggerRecord) []store.Key {
	var out []store.Key
	for _, tr := range trs {
		out = append(out, tr.Key)
	}
	return out
}

// execIDs returns the IDs of executions, nil for none.
func execIDs(es []store.ExecutionRecord) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// normTime makes instants comparable with ==: UTC, no monotonic reading.
func normTime(t time.Time) time.Time { return t.Round(0).UTC() }

func normBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func normTrigger(r store.TriggerRecord) store.TriggerRecord {
	r.StartTime = normTime(r.StartTime)
	r.EndTime = normTime(r.EndTime)
	r.NextFireTime = normTime(r.NextFireTime)
	r.PreviousFireTime = normTime(r.PreviousFireTime)
	r.Schedule = normBytes(r.Schedule)
	r.Data = normBytes(r.Data)
	r.Meta = normBytes(r.Meta)
	return r
}

func normJob(r store.JobRecord) store.JobRecord {
	r.Data = normBytes(r.Data)
	r.Meta = normBytes(r.Meta)
	return r
}

func normExecution(r store.ExecutionRecord) store.ExecutionRecord {
	r.ScheduledTime = normTime(r.ScheduledTime)
	r.FiredTime = normTime(r.FiredTime)
	r.FinishedTime = normTime(r.FinishedTime)
	return r
}

// wantEqual fails the test unless got equals want after normalization,
// printing the difference (-want +got).
func wantEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, diff)
	}
}

func bytesEqual(a, b []byte) bool { return bytes.Equal(a, b) }
