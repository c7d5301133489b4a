package chime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/clock"
	"github.com/chime-scheduler/chime/internal/testkit/logtest"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// These tests cover what a node does in a cluster beyond firing: it follows
// the store's clock, reconciles the store, stops working while its lease
// is not known to be valid, rides out store outages with few log lines,
// and wakes up when the store pushes changes made by other nodes.

func TestNodeClockFiveMinutesAheadFiresOnStoreTimeAndWarnsOnce(t *testing.T) {
	tests := []struct {
		name      string
		threshold time.Duration
		wantWarns int
	}{
		{"default threshold of 1s: warned once", 0, 1},
		{"threshold above the offset: not warned", 10 * time.Minute, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				offBoundary()
				logs, logger := logtest.New(slog.LevelInfo)
				// The store keeps the bubble's true time; the node's clock is
				// five minutes ahead.
				ahead := clock.Offset{Base: clock.Real{}, Offset: func() time.Duration { return 5 * time.Minute }}
				s, rec := newScheduler(t, chime.Config{Store: memstore.New(nil), Clock: ahead, Logger: logger, ClockOffsetWarning: tt.threshold})
				scheduleJob(t, s, job("a"), trig("ten", mustCron(t, "*/10 * * * * ?")))
				simple := trig("simple", &schedule.Simple{RepeatCount: 2, RepeatInterval: 7 * time.Second})
				simple.StartTime = time.Now().Add(3 * time.Second) // store time
				scheduleJob(t, s, job("b"), simple)
				start(t, s)
				begin := time.Now()
				if got := s.ClockOffset(); got != -5*time.Minute {
					t.Errorf("ClockOffset() = %s, want -5m", got)
				}
				time.Sleep(31 * time.Second)
				stop(t, s)
				var want []time.Time
				for at := begin.Truncate(10 * time.Second).Add(10 * time.Second); !at.After(begin.Add(31 * time.Second)); at = at.Add(10 * time.Second) {
					want = append(want, at)
				}
				for i := range 3 {
					want = append(want, simple.StartTime.Add(time.Duration(i)*7*time.Second))
				}
				slices.SortFunc(want, time.Time.Compare)
				var got []time.Time
				for _, f := range rec.all() {
					if !f.At.Equal(f.Scheduled) {
						t.Errorf("%s scheduled %s ran at %s on store time", f.Trigger, f.Scheduled, f.At)
					}
					got = append(got, f.Scheduled)
				}
				if !slices.EqualFunc(got, want, time.Time.Equal) {
					t.Errorf("fired at %v, want %v", got, want)
				}
				warns := logs.Messages("node clock differs from the store's clock; firing on corrected time")
				if len(warns) != tt.wantWarns {
					t.Fatalf("offset warned %d times over 15 check-ins, want %d", len(warns), tt.wantWarns)
				}
				if tt.wantWarns > 0 && warns[0].Attrs["clock_offset"].Duration() != -5*time.Minute {
					t.Errorf("warning names offset %v, want -5m", warns[0].Attrs["clock_offset"])
				}
			})
		})
	}
}

// reconcileRecorder records what Reconcile reported, and replaces the
// answer of the call numbered cannedAt (from 1) by canned.
type reconcileRecorder struct {
	store.Store
	mu       sync.Mutex
	calls    int
	reports  []*store.Reconciliation
	cannedAt int
	canned   *store.Reconciliation
}

func (r *reconcileRecorder) Reconcile(ctx context.Context, lease store.Lease) (*store.Reconciliation, error) {
	rep, err := r.Store.Reconcile(ctx, lease)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	r.reports = append(r.reports, rep)
	if r.calls == r.cannedAt {
		return r.canned, nil
	}
	return rep, nil
}

func (r *reconcileRecorder) setCanned(rep *store.Reconciliation) {
	r.mu.Lock()
	r.canned = rep
	r.mu.Unlock()
}

func TestReconciledRecoverableExecutionRunsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		shared := memstore.New(nil)
		st := &reconcileRecorder{Store: shared, cannedAt: 2}
		logs, logger := logtest.New(slog.LevelInfo)
		s, rec := newScheduler(t, chime.Config{Store: st, NodeID: "a", Logger: logger, ReconcileInterval: 5 * time.Second})
		j := job("recovering")
		j.RequestsRecovery = true
		tr := trig("once", &schedule.Simple{})
		tr.StartTime = time.Now()
		scheduleJob(t, s, j, tr)

		// Node "gone" claims and fires the trigger itself, straight on the
		// store, before a starts.
		gone, err := shared.NodeRegister(ctx, "gone")
		if err != nil {
			t.Fatal(err)
		}
		goneLease := store.Lease{NodeID: gone.ID, Epoch: gone.Epoch}
		claimed, err := shared.TriggersAcquire(ctx, &store.TriggersAcquireParams{Lease: goneLease, NoLaterThan: time.Now(), Limit: 1})
		if err != nil || len(claimed) != 1 {
			t.Fatalf("gone acquired %v, %v; want the trigger", claimed, err)
		}
		advanced := claimed[0]
		advanced.NextFireTime, advanced.PreviousFireTime, advanced.TimesTriggered = time.Time{}, claimed[0].NextFireTime, 1
		exec := store.ExecutionRecord{ID: "x1", TriggerKey: advanced.Key, JobKey: advanced.JobKey, ScheduledTime: claimed[0].NextFireTime, FiredTime: time.Now(), NodeID: gone.ID, Epoch: gone.Epoch, State: store.ExecutionExecuting}
		if _, err := shared.TriggerFire(ctx, &store.TriggerFireParams{Lease: goneLease, Trigger: advanced, Execution: exec}); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		start(t, s) // its first recovery scan finds nothing: gone is alive
		time.Sleep(time.Second)
		// Gone leaves without finishing: its execution waits to be re-run.
		// The engine would find it at its next scan, 10s after the first;
		// the reconciliation at 5s reports it, and it runs at once.
		if err := shared.NodeUnregister(ctx, goneLease); err != nil {
			t.Fatal(err)
		}
		exec.State, exec.NodeID, exec.Epoch = store.ExecutionRecoverable, "", 0
		st.setCanned(&store.Reconciliation{Recoverable: []store.ExecutionRecord{exec}})
		time.Sleep(8 * time.Second)
		stop(t, s)

		fires := rec.all()
		if len(fires) != 1 || !fires[0].Recover || !fires[0].At.Equal(begin.Add(5*time.Second)) {
			t.Errorf("runs %+v, want one recovering run at %s", fires, begin.Add(5*time.Second))
		}
		repairs := logs.Messages("reconciliation repaired the store")
		if len(repairs) != 1 || repairs[0].Level != slog.LevelWarn ||
			repairs[0].Attrs["execution_id"].String() != "x1" || repairs[0].Attrs["job_key"].String() != "DEFAULT.recovering" ||
			repairs[0].Attrs["repair"].String() != "recoverable_execution" {
			t.Errorf("repairs logged %+v, want one Warn naming execution x1 of DEFAULT.recovering", repairs)
		}
	})
}

func TestHealthyClusterReconcilesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := &reconcileRecorder{Store: memstore.New(nil)}
		logs, logger := logtest.New(slog.LevelWarn)
		rec := &recorder{run: func(ctx context.Context, jc *chime.JobContext) error {
			time.Sleep(1500 * time.Millisecond) // jobs overlap check-ins and reconciliations
			return nil
		}}
		var nodes []*chime.Scheduler
		for i := range 3 {
			s, err := chime.New(chime.Config{Store: st, NodeID: fmt.Sprintf("n%d", i), Logger: logger, Workers: 3, ReconcileInterval: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Register("record", rec); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, s)
		}
		for i := range 12 {
			j := job(fmt.Sprintf("j%d", i))
			j.DisallowConcurrentExecution = i%2 == 0 // BLOCKED triggers
			j.RequestsRecovery = i%3 == 0
			scheduleJob(t, nodes[0], j, trig(fmt.Sprintf("t%d", i), mustCron(t, "* * * * * ?")), trig(fmt.Sprintf("u%d", i), mustCron(t, "*/2 * * * * ?")))
		}
		for _, n := range nodes {
			start(t, n)
		}
		time.Sleep(10 * time.Second)
		if err := nodes[1].PauseJobGroup(ctx, chime.DefaultGroup); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		if err := nodes[2].ResumeJobGroup(ctx, chime.DefaultGroup); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		stop(t, nodes[0]) // leaves: its claims and jobs are handed over
		time.Sleep(5 * time.Second)
		for _, n := range nodes[1:] {
			stop(t, n)
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.calls < 40 {
			t.Errorf("%d reconciliations in 23s on 3 nodes, want at least 40", st.calls)
		}
		for i, r := range st.reports {
			if !r.Empty() {
				t.Errorf("reconciliation %d repaired %+v in a healthy cluster", i, r)
			}
		}
		if got := logs.Messages("reconciliation repaired the store"); len(got) != 0 {
			t.Errorf("logged %d repairs", len(got))
		}
		if len(rec.all()) < 100 {
			t.Errorf("only %d runs: the cluster did not work", len(rec.all()))
		}
	})
}

// checkInCut is a store on which the node's check-ins and registrations
// fail while cut, and everything else works: the node cannot renew its
// lease, but could still claim triggers if it tried.
type checkInCut struct {
	store.Store
	mu         sync.Mutex
	cut        bool
	acquiredAt []time.Time // TriggersAcquire calls
}

func (c *checkInCut) setCut(cut bool) {
	c.mu.Lock()
	c.cut = cut
	c.mu.Unlock()
}

func (c *checkInCut) NodeCheckIn(ctx context.Context, l store.Lease) (time.Time, error) {
	c.mu.Lock()
	cut := c.cut
	c.mu.Unlock()
	if cut {
		return time.Time{}, errCut
	}
	return c.Store.NodeCheckIn(ctx, l)
}

func (c *checkInCut) NodeRegister(ctx context.Context, id string) (*store.NodeRecord, error) {
	c.mu.Lock()
	cut := c.cut
	c.mu.Unlock()
	if cut {
		return nil, errCut
	}
	return c.Store.NodeRegister(ctx, id)
}

func (c *checkInCut) TriggersAcquire(ctx context.Context, p *store.TriggersAcquireParams) ([]store.TriggerRecord, error) {
	c.mu.Lock()
	c.acquiredAt = append(c.acquiredAt, time.Now())
	c.mu.Unlock()
	return c.Store.TriggersAcquire(ctx, p)
}

func (c *checkInCut) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	c.mu.Lock()
	c.acquiredAt = append(c.acquiredAt, time.Now())
	c.mu.Unlock()
	return c.Store.TriggersAcquireFire(ctx, p)
}

func TestNodeThatCannotRenewItsLeaseStopsClaimingUntilItRenewsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &checkInCut{Store: memstore.New(nil)}
		s, rec := newScheduler(t, chime.Config{Store: st, NodeID: "a", CheckInInterval: time.Second, DeadAfter: 3 * time.Second})
		causes := make(chan error, 1)
		rec.run = func(ctx context.Context, jc *chime.JobContext) error {
			if jc.Job.Key.Name != "long" {
				return nil
			}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		}
		begin := time.Now()
		scheduleJob(t, s, job("tick"), trig("tick", mustCron(t, "* * * * * ?")))
		long := trig("long", &schedule.Simple{})
		long.StartTime = begin.Add(time.Second)
		scheduleJob(t, s, job("long"), long)
		start(t, s)
		time.Sleep(2500 * time.Millisecond)
		// Check-ins at 1s and 2s went through; from now on they fail. The
		// lease lapses at 5s (2s + DeadAfter); at 8.5s check-ins work again
		// and the node renews its lease at its check-in at 9s (no node
		// declared it dead).
		st.setCut(true)
		time.Sleep(6 * time.Second)
		st.setCut(false)
		time.Sleep(5 * time.Second)
		stop(t, s)

		if cause := <-causes; !errors.Is(cause, chime.ErrLeaseLost) {
			t.Errorf("running job cancelled with %v, want ErrLeaseLost", cause)
		}
		st.mu.Lock()
		for _, at := range st.acquiredAt {
			if off := at.Sub(begin); off >= 5*time.Second && off < 9*time.Second {
				t.Errorf("TriggersAcquire at %s, while the lease was not known valid", off)
			}
		}
		if !slices.ContainsFunc(st.acquiredAt, begin.Add(9*time.Second).Equal) {
			t.Errorf("no TriggersAcquire at 9s, when the node renewed its lease: %v", st.acquiredAt)
		}
		st.mu.Unlock()
		// Every second fired exactly once, from the start to the stop at
		// 13.5s: nothing ran between 5s and 9s, and what was due then ran
		// at 9s.
		var ticks []time.Time
		for _, f := range rec.all() {
			if f.Job != "tick" {
				continue
			}
			ticks = append(ticks, f.Scheduled)
			if off := f.At.Sub(begin); off > 5*time.Second && off < 9*time.Second {
				t.Errorf("%s ran at %s, while the lease was not known valid", f.Scheduled, off)
			}
		}
		slices.SortFunc(ticks, time.Time.Compare)
		var want []time.Time
		for i := range 14 {
			want = append(want, begin.Add(time.Duration(i)*time.Second))
		}
		if !slices.EqualFunc(ticks, want, time.Time.Equal) {
			t.Errorf("ticks scheduled %v, want every second from 0s to 13s once", ticks)
		}
	})
}

// unreachable is a store that fails every call the scheduler makes while
// cut, as a database that restarts.
type unreachable struct {
	store.Store
	mu  sync.Mutex
	cut bool
}

var errRefused = errors.New("dial tcp 10.0.0.5:5432: connect: connection refused")

func (u *unreachable) setCut(cut bool) {
	u.mu.Lock()
	u.cut = cut
	u.mu.Unlock()
}

func (u *unreachable) down() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cut {
		return errRefused
	}
	return nil
}

func (u *unreachable) NodeRegister(ctx context.Context, id string) (*store.NodeRecord, error) {
	if err := u.down(); err != nil {
		return nil, err
	}
	return u.Store.NodeRegister(ctx, id)
}

func (u *unreachable) NodeCheckIn(ctx context.Context, l store.Lease) (time.Time, error) {
	if err := u.down(); err != nil {
		return time.Time{}, err
	}
	return u.Store.NodeCheckIn(ctx, l)
}

func (u *unreachable) NodesRecover(ctx context.Context, p *store.NodesRecoverParams) ([]store.NodeRecovery, error) {
	if err := u.down(); err != nil {
		return nil, err
	}
	return u.Store.NodesRecover(ctx, p)
}

func (u *unreachable) Reconcile(ctx context.Context, l store.Lease) (*store.Reconciliation, error) {
	if err := u.down(); err != nil {
		return nil, err
	}
	return u.Store.Reconcile(ctx, l)
}

func (u *unreachable) TriggersAcquire(ctx context.Context, p *store.TriggersAcquireParams) ([]store.TriggerRecord, error) {
	if err := u.down(); err != nil {
		return nil, err
	}
	return u.Store.TriggersAcquire(ctx, p)
}

func (u *unreachable) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	if err := u.down(); err != nil {
		return nil, err
	}
	return u.Store.TriggersFire(ctx, p)
}

func (u *unreachable) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	if err := u.down(); err != nil {
		return nil, err
	}
	return u.Store.TriggersAcquireFire(ctx, p)
}

func (u *unreachable) TriggerRelease(ctx context.Context, p *store.TriggerReleaseParams) error {
	if err := u.down(); err != nil {
		return err
	}
	return u.Store.TriggerRelease(ctx, p)
}

func (u *unreachable) TriggersRelease(ctx context.Context, p *store.TriggersReleaseParams) (int, error) {
	if err := u.down(); err != nil {
		return 0, err
	}
	return u.Store.TriggersRelease(ctx, p)
}

func (u *unreachable) ExecutionsComplete(ctx context.Context, p *store.ExecutionsCompleteParams) ([]error, error) {
	if err := u.down(); err != nil {
		return nil, err
	}
	return u.Store.ExecutionsComplete(ctx, p)
}

func (u *unreachable) ExecutionsAcquireRecoverable(ctx context.Context, p *store.ExecutionsAcquireRecoverableParams) ([]store.RecoverableExecution, error) {
	if err := u.down(); err != nil {
		return nil, err
	}
	return u.Store.ExecutionsAcquireRecoverable(ctx, p)
}

func (u *unreachable) ExecutionsRelease(ctx context.Context, p *store.ExecutionsReleaseParams) ([]error, error) {
	if err := u.down(); err != nil {
		return nil, err
	}
	return u.Store.ExecutionsRelease(ctx, p)
}

func (u *unreachable) ExecutionsPrune(ctx context.Context, before time.Time) (int, error) {
	if err := u.down(); err != nil {
		return 0, err
	}
	return u.Store.ExecutionsPrune(ctx, before)
}

func TestStoreOutageDelaysFiringsLosesNoneAndLogsLittle(t *testing.T) {
	tests := []struct {
		name   string
		outage time.Duration
	}{
		{"shorter than DeadAfter: the lease holds", 4 * time.Second},
		{"longer than DeadAfter: the node registers again", 40 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				offBoundary()
				st := &unreachable{Store: memstore.New(nil)}
				logs, logger := logtest.New(slog.LevelInfo)
				s, rec := newScheduler(t, chime.Config{Store: st, Logger: logger})
				scheduleJob(t, s, job("j"), trig("every2s", mustCron(t, "*/2 * * * * ?")))
				start(t, s)
				begin := time.Now()
				time.Sleep(3 * time.Second)
				st.setCut(true)
				cutAt := time.Now()
				time.Sleep(tt.outage)
				st.setCut(false)
				time.Sleep(10 * time.Second)
				stop(t, s)
				end := time.Now()

				// Every instant fired once: the ones due during the outage
				// late (they stay under the 60s misfire threshold).
				seen := map[int64]int{} // by Unix nanoseconds: instants, not wall clocks
				for _, f := range rec.all() {
					seen[f.Scheduled.UnixNano()]++
					if f.At.Before(f.Scheduled) {
						t.Errorf("%s fired early, at %s", f.Scheduled, f.At)
					}
					if f.At.After(f.Scheduled) && f.At.Before(cutAt.Add(tt.outage)) {
						t.Errorf("%s fired late at %s, during the outage", f.Scheduled, f.At)
					}
				}
				for at := begin.Truncate(2 * time.Second).Add(2 * time.Second); at.Before(end.Add(-time.Second)); at = at.Add(2 * time.Second) {
					if n := seen[at.UnixNano()]; n != 1 {
						t.Errorf("%s fired %d times, want once", at, n)
					}
				}
				for _, msg := range []string{
					"store unreachable; retrying", "store reachable again", // the firing loop
					"check-ins failing: store unreachable", "check-ins succeed again", // the lease
				} {
					if got := logs.Messages(msg); len(got) != 1 {
						t.Errorf("%q logged %d times, want once", msg, len(got))
					}
				}
				if got := len(logs.Messages("store still unreachable; retrying")); got > int(tt.outage/(30*time.Second)) {
					t.Errorf("%d reminders in a %s outage, want at most one per 30s", got, tt.outage)
				}
			})
		})
	}
}

// A store outage longer than DeadAfter makes the lone node cancel its
// running job (ErrLeaseLost). When the store returns, no node declared it
// dead, so it renews its lease under the same epoch. The cancelled firing
// of a job that requests recovery is re-run once, with Recovering set, and
// its execution ends SUCCEEDED instead of FAILED.
func TestJobCancelledByALongStoreOutageIsRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &unreachable{Store: memstore.New(nil)}
		s, rec := newScheduler(t, chime.Config{Store: st})
		causes := make(chan error, 1)
		rec.run = func(ctx context.Context, jc *chime.JobContext) error {
			if jc.Recovering {
				return nil
			}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return context.Cause(ctx)
		}
		j := job("j")
		j.RequestsRecovery = true
		tr := trig("once", &schedule.Simple{})
		tr.StartTime = time.Now().Add(time.Second)
		scheduleJob(t, s, j, tr)
		start(t, s)
		time.Sleep(2 * time.Second)
		st.setCut(true)
		time.Sleep(40 * time.Second)
		st.setCut(false)
		time.Sleep(20 * time.Second)
		stop(t, s)

		if cause := <-causes; !errors.Is(cause, chime.ErrLeaseLost) {
			t.Errorf("the first run was cancelled with %v, want ErrLeaseLost", cause)
		}
		fires := rec.all()
		if len(fires) != 2 || fires[0].Recover || !fires[1].Recover || !fires[1].Scheduled.Equal(fires[0].Scheduled) {
			t.Fatalf("runs %+v, want the cancelled run, then its recovery for the same instant", fires)
		}
		execs, err := st.ExecutionList(context.Background(), &store.ExecutionListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(execs) != 1 || execs[0].State != store.ExecutionSucceeded || !execs[0].Recovering {
			t.Errorf("executions %+v, want one, recovered and SUCCEEDED", execs)
		}
	})
}

// pushingStore is a memory store that tells watchers about every trigger
// inserted by any node, as PostgreSQL's LISTEN/NOTIFY does.
type pushingStore struct {
	store.Store
	mu       sync.Mutex
	watchers []chan time.Time
}

func (p *pushingStore) WatchTriggers(ctx context.Context) (<-chan time.Time, error) {
	ch := make(chan time.Time, 16)
	p.mu.Lock()
	p.watchers = append(p.watchers, ch)
	p.mu.Unlock()
	go func() {
		<-ctx.Done()
		p.mu.Lock()
		p.watchers = slices.DeleteFunc(p.watchers, func(c chan time.Time) bool { return c == ch })
		p.mu.Unlock()
		close(ch)
	}()
	return ch, nil
}

func (p *pushingStore) TriggerInsert(ctx context.Context, params *store.TriggerInsertParams) error {
	if err := p.Store.TriggerInsert(ctx, params); err != nil {
		return err
	}
	p.push(params.Trigger.NextFireTime)
	return nil
}

func (p *pushingStore) JobWrite(ctx context.Context, params *store.JobWriteParams) (*store.JobWriteResult, error) {
	res, err := p.Store.JobWrite(ctx, params)
	if err != nil {
		return nil, err
	}
	for _, t := range params.Triggers {
		p.push(t.NextFireTime)
	}
	return res, nil
}

func (p *pushingStore) JobsInsert(ctx context.Context, params *store.JobsInsertParams) error {
	if err := p.Store.JobsInsert(ctx, params); err != nil {
		return err
	}
	for _, e := range params.Jobs {
		for _, t := range e.Triggers {
			p.push(t.NextFireTime)
		}
	}
	return nil
}

// push tells the watchers of a trigger due at next, as a store that
// pushes does on commit.
func (p *pushingStore) push(next time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ch := range p.watchers {
		select {
		case ch <- next:
		default:
		}
	}
}

func TestTriggerAddedOnAnotherNodeWakesThisOne(t *testing.T) {
	tests := []struct {
		name string
		push bool
		want time.Duration // when it fires, after a started
	}{
		{"store pushes: fires at its instant", true, 3 * time.Second},
		{"store does not push: fires at the next poll", false, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var st store.Store = memstore.New(nil)
				if tt.push {
					st = &pushingStore{Store: st}
				}
				a, rec := newScheduler(t, chime.Config{Store: st, NodeID: "a", IdleWait: 30 * time.Second})
				// Node b shares the store but is not started: its
				// ScheduleJob wakes only its own engine.
				b, _ := newScheduler(t, chime.Config{Store: st, NodeID: "b"})
				start(t, a)
				begin := time.Now()
				time.Sleep(time.Second)
				tr := trig("soon", &schedule.Simple{})
				tr.StartTime = time.Now().Add(2 * time.Second)
				scheduleJob(t, b, job("j"), tr)
				time.Sleep(40 * time.Second)
				stop(t, a)
				stop(t, b)
				fires := rec.all()
				if len(fires) != 1 || !fires[0].At.Equal(begin.Add(tt.want)) {
					t.Errorf("fires %+v, want one at %s", fires, begin.Add(tt.want))
				}
			})
		})
	}
}

func TestClusterConfigValidation(t *testing.T) {
	t.Parallel()
	for _, cfg := range []struct {
		field string
		cfg   chime.Config
	}{
		{"Config.ReconcileInterval", chime.Config{ReconcileInterval: -time.Second}},
		{"Config.ClockOffsetWarning", chime.Config{ClockOffsetWarning: -time.Second}},
	} {
		_, err := chime.New(cfg.cfg)
		var ve *chime.ValidationError
		if !errors.As(err, &ve) || ve.Field != cfg.field {
			t.Errorf("New with a negative %s = %v, want a ValidationError naming it", cfg.field, err)
		}
	}
}

// recoveryClock records when NodesRecover first declared a node dead.
type recoveryClock struct {
	store.Store
	mu        sync.Mutex
	recovered time.Time
}

func (r *recoveryClock) NodesRecover(ctx context.Context, p *store.NodesRecoverParams) ([]store.NodeRecovery, error) {
	out, err := r.Store.NodesRecover(ctx, p)
	r.mu.Lock()
	if len(out) > 0 && r.recovered.IsZero() {
		r.recovered = time.Now()
	}
	r.mu.Unlock()
	return out, err
}

func (r *recoveryClock) at() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recovered
}

// TestKilledNodeIsRecoveredWithinDeadAfterPlusOneCheckIn kills a node at
// different points of its check-in interval, with a survivor checking in at
// different points of its own, under the default CheckInInterval (2s) and
// DeadAfter (6s). The killed node's last check-in is at most one interval
// before the kill, and the survivor declares it dead at its first check-in
// at least DeadAfter after that last check-in: recovery comes between
// DeadAfter − CheckInInterval and DeadAfter + CheckInInterval after the kill
// (4s to 8s), as README.md and docs/cluster.md state.
func TestKilledNodeIsRecoveredWithinDeadAfterPlusOneCheckIn(t *testing.T) {
	const (
		checkIn   = 2 * time.Second // the default
		deadAfter = 3 * checkIn     // the default
	)
	var worst, best time.Duration
	for _, survivorPhase := range []time.Duration{100 * time.Millisecond, time.Second, 1900 * time.Millisecond} {
		for _, killPhase := range []time.Duration{time.Millisecond, time.Second, 1999 * time.Millisecond} {
			t.Run(fmt.Sprintf("survivor_at_%s/kill_at_%s", survivorPhase, killPhase), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					shared := memstore.New(nil)
					killed := &unreachable{Store: shared}
					survivorStore := &recoveryClock{Store: shared}
					k, _ := newScheduler(t, chime.Config{NodeID: "k", Store: killed})
					a, _ := newScheduler(t, chime.Config{NodeID: "a", Store: survivorStore})
					begin := time.Now()
					start(t, k)
					time.Sleep(survivorPhase)
					start(t, a)
					// k checks in at 2s and 4s; it dies killPhase after the
					// one at 4s.
					time.Sleep(time.Until(begin.Add(4*time.Second + killPhase)))
					killed.setCut(true)
					killedAt := time.Now()
					time.Sleep(3 * deadAfter)
					stop(t, a)
					_ = k.Stop(context.Background()) // its store is gone: unregistering fails

					recovered := survivorStore.at()
					if recovered.IsZero() {
						t.Fatal("k was never declared dead")
					}
					took := recovered.Sub(killedAt)
					if took < deadAfter-checkIn || took > deadAfter+checkIn {
						t.Errorf("k declared dead %s after it was killed, want between %s and %s", took, deadAfter-checkIn, deadAfter+checkIn)
					}
					worst = max(worst, took)
					if best == 0 || took < best {
						best = took
					}
				})
			})
		}
	}
	t.Logf("recovery after the kill: %s to %s (bound %s)", best, worst, deadAfter+checkIn)
}

func TestExcludedJobTypeRunsOnlyOnNodesThatRunIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		offBoundary()
		st := memstore.New(nil)
		// Both nodes register "shell", so both can store such jobs; the
		// limited one excludes it, as chime server does without
		// --enable-shell-jobs.
		limited, limitedRec := newScheduler(t, chime.Config{Store: st, NodeID: "limited", ExcludeJobTypes: []string{"shell"}})
		full, fullRec := newScheduler(t, chime.Config{Store: st, NodeID: "full"})
		limitedShell, fullShell := &recorder{}, &recorder{}
		for s, r := range map[*chime.Scheduler]*recorder{limited: limitedShell, full: fullShell} {
			if err := s.Register("shell", r); err != nil {
				t.Fatalf("Register(shell): %v", err)
			}
		}
		every := &schedule.Simple{RepeatCount: 9, RepeatInterval: time.Second}
		scheduleJob(t, limited, chime.JobDetail{Key: chime.NewJobKey("", "sh"), Type: "shell"}, trig("sh", every))
		scheduleJob(t, limited, job("plain"), trig("plain", every))
		start(t, limited)
		start(t, full)
		time.Sleep(15 * time.Second)
		stop(t, limited)
		stop(t, full)

		if got := limitedShell.all(); len(got) != 0 {
			t.Errorf("the node excluding shell ran %d shell firings, want none", len(got))
		}
		var scheduled []time.Time
		for _, f := range fullShell.all() {
			scheduled = append(scheduled, f.Scheduled)
		}
		if len(scheduled) != 10 || len(slices.CompactFunc(slices.Clone(scheduled), time.Time.Equal)) != 10 {
			t.Errorf("shell firings on the full node at %v, want 10 distinct instants", scheduled)
		}
		if n := len(limitedRec.all()) + len(fullRec.all()); n != 10 {
			t.Errorf("plain job fired %d times over both nodes, want 10", n)
		}
	})
}

func TestExcludeJobTypesRefusesAnEmptyName(t *testing.T) {
	_, err := chime.New(chime.Config{ExcludeJobTypes: []string{"shell", ""}})
	var verr *chime.ValidationError
	if !errors.As(err, &verr) || verr.Field != "Config.ExcludeJobTypes[1]" {
		t.Fatalf("New with an empty excluded type: %v, want a ValidationError on Config.ExcludeJobTypes[1]", err)
	}
}
