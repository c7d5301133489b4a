package chime_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// These tests starve a node at each step between claiming work and starting
// its job, as a node starved of CPU or stopped with SIGSTOP would be: the
// node's goroutine at that step, and its check-ins, make no progress until
// the test lets them go. Its lease lapses meanwhile. The node must not start
// the job once its lease has lapsed, whether or not another node declared it
// dead and took the work over, and the firing must not be lost.

// Where a starved node stalls.
const (
	stallFireAnswer    = "the fire transaction committed, its answer not yet read"
	stallFireSend      = "the fire transaction not yet sent"
	stallRecoverAnswer = "a recovered execution claimed, the answer not yet read"
	stallWorker        = "the only worker busy, the job queued behind it"
	stallListener      = "a trigger listener running before the job"
)

// starvedStore is the starved node's view of the shared store. The first
// call of its step stalls until the test closes resume; from that moment the
// node's check-ins and registrations stall too, until the test closes
// checkIns. It records when the node's lease lapsed by the store's reckoning
// and when the store next accepted a check-in or registration of the node.
type starvedStore struct {
	store.Store
	step string
	// failCheckIns makes the stalled node's check-ins fail rather than
	// hang, so that its check-in loop notices the lapse.
	failCheckIns bool
	stalled      chan struct{} // closed when the step stalls
	resume       chan struct{} // closed by the test: the step goes on
	checkIns     chan struct{} // closed by the test: check-ins go on

	mu          sync.Mutex
	starved     bool
	lastRenewal time.Time // when the last renewal before the stall was sent
	renewed     time.Time // when the store next accepted one, after the stall
}

func newStarvedStore(shared *memstore.Store, step string) *starvedStore {
	return &starvedStore{Store: shared, step: step,
		stalled: make(chan struct{}), resume: make(chan struct{}), checkIns: make(chan struct{})}
}

// stall starves the node here if step is the store's step and it has not
// stalled yet.
func (s *starvedStore) stall(step string) {
	s.mu.Lock()
	if step != s.step || s.starved {
		s.mu.Unlock()
		return
	}
	s.starved = true
	s.mu.Unlock()
	close(s.stalled)
	<-s.resume
}

// renewal runs a check-in or registration, stalled while the
// node is starved, and records it.
func (s *starvedStore) renewal(ctx context.Context, call func(context.Context) error) error {
	sent := time.Now()
	s.mu.Lock()
	starved := s.starved
	s.mu.Unlock()
	switch {
	case starved && s.failCheckIns:
		select {
		case <-s.checkIns:
		default:
			return errRefused
		}
	case starved:
		// The answer is read late, as by a starved process: the call's
		// deadline may have passed, but the store did answer.
		<-s.checkIns
		ctx = context.WithoutCancel(ctx)
	}
	err := call(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
	case !starved:
		s.lastRenewal = sent
	case s.renewed.IsZero():
		s.renewed = time.Now()
	}
	return err
}

// unsafe returns the interval in which the node must start no job: from
// its lease's lapse until the store accepted its lease again.
func (s *starvedStore) unsafe(deadAfter time.Duration) (from, to time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastRenewal.Add(deadAfter), s.renewed
}

func (s *starvedStore) NodeRegister(ctx context.Context, id string) (rec *store.NodeRecord, err error) {
	err = s.renewal(ctx, func(ctx context.Context) error {
		rec, err = s.Store.NodeRegister(ctx, id)
		return err
	})
	return rec, err
}

func (s *starvedStore) NodeCheckIn(ctx context.Context, l store.Lease) (at time.Time, err error) {
	err = s.renewal(ctx, func(ctx context.Context) error {
		at, err = s.Store.NodeCheckIn(ctx, l)
		return err
	})
	return at, err
}

func (s *starvedStore) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	s.stall(stallFireSend)
	out, err := s.Store.TriggersFire(ctx, p)
	s.stall(stallFireAnswer)
	return out, err
}

// TriggersAcquireFire claims without firing, so that every firing takes
// TriggersFire, where the test stalls it.
func (s *starvedStore) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	recs, err := s.TriggersAcquire(ctx, &p.TriggersAcquireParams)
	if err != nil {
		return nil, err
	}
	return &store.TriggersAcquireFireResult{Claimed: recs}, nil
}

func (s *starvedStore) ExecutionsAcquireRecoverable(ctx context.Context, p *store.ExecutionsAcquireRecoverableParams) ([]store.RecoverableExecution, error) {
	out, err := s.Store.ExecutionsAcquireRecoverable(ctx, p)
	s.stall(stallRecoverAnswer)
	return out, err
}

func TestStarvedNodeStartsNoJobAfterItsLeaseLapsed(t *testing.T) {
	const (
		checkIn   = time.Second
		deadAfter = 3 * time.Second
	)
	// Node c starts at 0 and checks in every second. Unless a row says
	// otherwise, its job "j" fires at 1.5s and c stalls then, so its last
	// renewal is the check-in at 1s and its lease lapses at 4s. Node a
	// starts when c stalls and declares c dead at its first check-in
	// after 4s, then re-runs j, which requests recovery.
	tests := []struct {
		name string
		step string
		// resume is when c's stalled step goes on, checkIns when its
		// check-ins do.
		resume, checkIns time.Duration
		// survivor: node a runs, declares c dead and re-runs j; otherwise c
		// is alone and renews its lease under the same epoch.
		survivor bool
		// failCheckIns: c's check-ins fail while it is starved, rather
		// than hang (see starvedStore).
		failCheckIns bool
	}{
		{name: "fire answered after the node was declared dead", step: stallFireAnswer, resume: 5 * time.Second, checkIns: 6 * time.Second, survivor: true},
		{name: "fire sent after the lease lapsed, committed before the node was declared dead", step: stallFireSend, resume: 4200 * time.Millisecond, checkIns: 6 * time.Second, survivor: true},
		{name: "recovered execution answered after the node was declared dead", step: stallRecoverAnswer, resume: 5 * time.Second, checkIns: 6 * time.Second, survivor: true},
		{name: "job queued for a worker while the node was declared dead", step: stallWorker, resume: 5 * time.Second, checkIns: 6 * time.Second, survivor: true},
		{name: "listener running when the node was declared dead", step: stallListener, resume: 5 * time.Second, checkIns: 6 * time.Second, survivor: true},
		{name: "fire answered after the lease lapsed, lease renewed under the same epoch", step: stallFireAnswer, resume: 4200 * time.Millisecond, checkIns: 4600 * time.Millisecond},
		{name: "fire answered after the lease lapsed and the node noticed, lease renewed under the same epoch", step: stallFireAnswer, resume: 4200 * time.Millisecond, checkIns: 4600 * time.Millisecond, failCheckIns: true},
		{name: "job queued for a worker when the lease lapsed and the node noticed, lease renewed under the same epoch", step: stallWorker, resume: 4200 * time.Millisecond, checkIns: 4600 * time.Millisecond, failCheckIns: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				begin := time.Now()
				shared := memstore.New(nil)
				st := newStarvedStore(shared, tt.step)
				st.failCheckIns = tt.failCheckIns
				cfg := chime.Config{NodeID: "c", Store: st, CheckInInterval: checkIn, DeadAfter: deadAfter}
				if tt.step == stallWorker {
					cfg.Workers = 1
				}
				c, cRuns := newScheduler(t, cfg)
				var a *chime.Scheduler
				aRuns := &recorder{}
				if tt.survivor {
					a, aRuns = newScheduler(t, chime.Config{NodeID: "a", Store: shared, CheckInInterval: checkIn, DeadAfter: deadAfter})
				}
				c.AddTriggerListener(chime.TriggerListener{Name: "starved", Fired: func(context.Context, *chime.JobContext) {
					st.stall(stallListener)
				}})
				cRuns.run = func(ctx context.Context, jc *chime.JobContext) error {
					if jc.Job.Key.Name == "stall" {
						st.stall(stallWorker)
					}
					// A job that starts once the lease was renewed starts
					// with a live context.
					return context.Cause(ctx)
				}

				j := job("j")
				j.RequestsRecovery = true
				tr := trig("j", &schedule.Simple{})
				tr.StartTime = begin.Add(1500 * time.Millisecond)
				switch tt.step {
				case stallRecoverAnswer:
					// Node "gone" fired j and left without running it: its
					// execution waits to be re-run, and c claims it as it
					// starts.
					scheduleJob(t, c, j, tr)
					goneRecoverable(t, shared, tr.StartTime)
					tr.StartTime = begin
				case stallWorker:
					// A job that ran once makes c fire both due triggers in one
					// store call with its single worker: "stall" runs first (it
					// has the higher priority), j waits in the queue.
					warm := trig("warm", &schedule.Simple{})
					warm.StartTime = begin.Add(500 * time.Millisecond)
					scheduleJob(t, c, job("warm"), warm)
					first := trig("stall", &schedule.Simple{})
					first.StartTime, first.Priority = tr.StartTime, 10
					scheduleJob(t, c, job("stall"), first)
					scheduleJob(t, c, j, tr)
				default:
					scheduleJob(t, c, j, tr)
				}
				start(t, c)
				<-st.stalled
				if got, want := time.Since(begin), tr.StartTime.Sub(begin); got != want {
					t.Fatalf("c stalled at %s, want %s", got, want)
				}
				if tt.survivor {
					start(t, a)
				}
				time.Sleep(time.Until(begin.Add(tt.resume)))
				close(st.resume)
				time.Sleep(time.Until(begin.Add(tt.checkIns)))
				close(st.checkIns)
				time.Sleep(time.Until(begin.Add(10 * time.Second)))
				stop(t, c)
				if tt.survivor {
					stop(t, a)
				}

				lapsed, renewed := st.unsafe(deadAfter)
				if renewed.IsZero() {
					t.Fatal("the store never accepted c's lease again")
				}
				for _, f := range cRuns.all() {
					if !f.At.Before(lapsed) && f.At.Before(renewed) {
						t.Errorf("c started %s (scheduled %s) at %s, after its lease lapsed at %s and before the store accepted it again at %s",
							f.Job, f.Scheduled.Sub(begin), f.At.Sub(begin), lapsed.Sub(begin), renewed.Sub(begin))
					}
				}
				// The firing is not lost: j runs once, re-run by a with
				// Recovering set when a declared c dead, on c once its lease
				// was renewed otherwise.
				var jRuns []string
				for node, runs := range map[string]*recorder{"a": aRuns, "c": cRuns} {
					for _, f := range runs.all() {
						if f.Job == "j" {
							jRuns = append(jRuns, node)
							if f.Recover != tt.survivor {
								t.Errorf("j ran on %s with Recovering %v, want %v", node, f.Recover, tt.survivor)
							}
						}
					}
				}
				want := "c"
				if tt.survivor {
					want = "a"
				}
				if len(jRuns) != 1 || jRuns[0] != want {
					t.Errorf("j ran on %v, want once on %s", jRuns, want)
				}
				execs, err := shared.ExecutionList(ctx, &store.ExecutionListParams{JobKey: &store.Key{Group: j.Key.Group, Name: j.Key.Name}})
				if err != nil {
					t.Fatal(err)
				}
				if len(execs) != 1 || execs[0].State != store.ExecutionSucceeded || execs[0].NodeID != want {
					t.Errorf("j's executions %+v, want one SUCCEEDED on %s", execs, want)
				}
			})
		})
	}
}

// goneRecoverable leaves an execution of the trigger DEFAULT.j scheduled at
// at for re-running: node "gone" fires it straight on the store and
// unregisters without running it.
func goneRecoverable(t *testing.T, st *memstore.Store, at time.Time) {
	t.Helper()
	ctx := context.Background()
	gone, err := st.NodeRegister(ctx, "gone")
	if err != nil {
		t.Fatal(err)
	}
	lease := store.Lease{NodeID: gone.ID, Epoch: gone.Epoch}
	claimed, err := st.TriggersAcquire(ctx, &store.TriggersAcquireParams{Lease: lease, NoLaterThan: at, Limit: 1})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("gone acquired %v, %v; want the trigger", claimed, err)
	}
	advanced := claimed[0]
	advanced.NextFireTime, advanced.PreviousFireTime, advanced.TimesTriggered = time.Time{}, claimed[0].NextFireTime, 1
	exec := store.ExecutionRecord{ID: "gone1", TriggerKey: advanced.Key, JobKey: advanced.JobKey, ScheduledTime: claimed[0].NextFireTime,
		FiredTime: time.Now(), NodeID: gone.ID, Epoch: gone.Epoch, State: store.ExecutionExecuting}
	if _, err := st.TriggerFire(ctx, &store.TriggerFireParams{Lease: lease, Trigger: advanced, Execution: exec}); err != nil {
		t.Fatal(err)
	}
	if err := st.NodeUnregister(ctx, lease); err != nil {
		t.Fatal(err)
	}
}
