package engine

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/logtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

var errUnreachable = errors.New("dial tcp 10.0.0.5:5432: connect: connection refused")

// flakyStore fails the next calls of the loop's store methods, then
// answers again, as a database does while it restarts.
type flakyStore struct {
	store.Store
	mu       sync.Mutex
	failures int         // calls still to fail
	only     string      // when set, only this method fails
	failedAt []time.Time // instants of the failed calls
}

// failNext makes the next n calls of method fail, or of every method when
// method is "".
func (s *flakyStore) failNext(n int, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures, s.only = n, method
}

func (s *flakyStore) fail(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures == 0 || (s.only != "" && s.only != method) {
		return nil
	}
	s.failures--
	s.failedAt = append(s.failedAt, time.Now())
	return errUnreachable
}

func (s *flakyStore) failedCalls() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failedAt)
}

func (s *flakyStore) TriggersAcquire(ctx context.Context, p *store.TriggersAcquireParams) ([]store.TriggerRecord, error) {
	if err := s.fail("TriggersAcquire"); err != nil {
		return nil, err
	}
	return s.Store.TriggersAcquire(ctx, p)
}

func (s *flakyStore) ExecutionsAcquireRecoverable(ctx context.Context, p *store.ExecutionsAcquireRecoverableParams) ([]store.RecoverableExecution, error) {
	if err := s.fail("ExecutionsAcquireRecoverable"); err != nil {
		return nil, err
	}
	return s.Store.ExecutionsAcquireRecoverable(ctx, p)
}

func (s *flakyStore) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	if err := s.fail("TriggersFire"); err != nil {
		return nil, err
	}
	return s.Store.TriggersFire(ctx, p)
}

func (s *flakyStore) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	return acquireOnly(ctx, s, p)
}

func (s *flakyStore) TriggerRelease(ctx context.Context, p *store.TriggerReleaseParams) error {
	if err := s.fail("TriggerRelease"); err != nil {
		return err
	}
	return s.Store.TriggerRelease(ctx, p)
}

func (s *flakyStore) TriggersRelease(ctx context.Context, p *store.TriggersReleaseParams) (int, error) {
	if err := s.fail("TriggersRelease"); err != nil {
		return 0, err
	}
	return s.Store.TriggersRelease(ctx, p)
}

func (s *flakyStore) ExecutionsPrune(ctx context.Context, before time.Time) (int, error) {
	if err := s.fail("ExecutionsPrune"); err != nil {
		return 0, err
	}
	return s.Store.ExecutionsPrune(ctx, before)
}

func (s *flakyStore) ExecutionsComplete(ctx context.Context, p *store.ExecutionsCompleteParams) ([]error, error) {
	if err := s.fail("ExecutionsComplete"); err != nil {
		return nil, err
	}
	return s.Store.ExecutionsComplete(ctx, p)
}

func offsets(begin time.Time, ts []time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(begin)
	}
	return out
}

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, n := range v {
		out[i] = time.Duration(n) * time.Millisecond
	}
	return out
}

func TestStoreOutageBacksOffLogsOnceAndLosesNothing(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		jitter   func(time.Duration) time.Duration
		// wantFailedAt are the instants of the failed calls after the
		// start; the store answers at wantBackAt.
		wantFailedAt []time.Duration
		wantBackAt   time.Duration
		// wantStill counts the "still unreachable" lines (one per 30s).
		wantStill int
	}{
		{
			name:         "short outage: doubling from 100ms",
			failures:     6,
			wantFailedAt: ms(0, 100, 300, 700, 1500, 3100),
			wantBackAt:   6300 * time.Millisecond,
		},
		{
			name:     "long outage: capped at 5s, one reminder every 30s",
			failures: 14,
			wantFailedAt: ms(0, 100, 300, 700, 1500, 3100, 6300,
				11300, 16300, 21300, 26300, 31300, 36300, 41300),
			wantBackAt: 46300 * time.Millisecond,
			wantStill:  1, // at 31.3s
		},
		{
			name:         "injected jitter halves each wait",
			failures:     4,
			jitter:       func(d time.Duration) time.Duration { return d / 2 },
			wantFailedAt: ms(0, 50, 150, 350),
			wantBackAt:   750 * time.Millisecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := &flakyStore{Store: memstore.New(nil)}
				logs, logger := logtest.New(slog.LevelInfo)
				failures := &failureLog{}
				h := newHarness(t, st, func(c *Config) {
					c.Logger = logger
					c.Jitter = tt.jitter
					c.Observer = failures
				})
				begin := time.Now()
				due := begin.Add(500 * time.Millisecond) // due during the outage
				h.addTrigger(t, "t", due, time.Hour, "")
				st.failNext(tt.failures, "")
				h.engine.Start()
				time.Sleep(time.Minute)
				h.engine.Standby()

				if got := offsets(begin, st.failedCalls()); !slices.Equal(got, tt.wantFailedAt) {
					t.Errorf("failed calls at %v, want %v", got, tt.wantFailedAt)
				}
				// Nothing was claimed during the outage; the trigger due
				// in it fired as soon as the store answered.
				if got, want := offsets(begin, h.ranTimes()), []time.Duration{tt.wantBackAt}; !slices.Equal(got, want) {
					t.Errorf("trigger ran at %v, want %v", got, want)
				}
				if got := h.firedTimes(); !slices.Equal(got, []time.Time{due}) {
					t.Errorf("fired scheduled times %v, want %s", got, due)
				}
				down := logs.Messages("store unreachable; retrying")
				if len(down) != 1 || down[0].Level != slog.LevelWarn || down[0].Attrs["error"].String() != errUnreachable.Error() {
					t.Errorf("outage start logged as %+v, want one Warn with the error", down)
				}
				if got := logs.Messages("store still unreachable; retrying"); len(got) != tt.wantStill {
					t.Errorf("%d reminders while the store was down, want %d", len(got), tt.wantStill)
				}
				back := logs.Messages("store reachable again")
				if len(back) != 1 || back[0].Level != slog.LevelInfo {
					t.Fatalf("outage end logged as %+v, want one Info", back)
				}
				if got := back[0].Attrs["outage"].Duration(); got != tt.wantBackAt {
					t.Errorf("outage logged as lasting %s, want %s", got, tt.wantBackAt)
				}
				if got := back[0].Attrs["attempts"].Int64(); got != int64(tt.failures) {
					t.Errorf("outage logged with %d attempts, want %d", got, tt.failures)
				}
				if got := failures.reported; len(got) != 1+tt.wantStill || !errors.Is(got[0], errUnreachable) {
					t.Errorf("StoreFailed called with %v, want once per logged failure", got)
				}
			})
		})
	}
}

func TestFiringRefusedByAnOutageIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &flakyStore{Store: memstore.New(nil)}
		h := newHarness(t, st)
		begin := time.Now()
		due := begin.Add(5 * time.Second)
		h.addTrigger(t, "t", due, time.Hour, "")
		h.engine.Start()
		st.failNext(3, "TriggersFire")
		time.Sleep(15 * time.Second)
		h.engine.Standby()
		// TriggersFire failed at 5s, the retries at 5.1s and 5.3s; it
		// fired at 5.7s.
		if got, want := offsets(begin, st.failedCalls()), ms(5000, 5100, 5300); !slices.Equal(got, want) {
			t.Errorf("failed calls at %v, want %v", got, want)
		}
		if got, want := offsets(begin, h.ranTimes()), ms(5700); !slices.Equal(got, want) {
			t.Errorf("ran at %v, want %v", got, want)
		}
		if got := h.firedTimes(); !slices.Equal(got, []time.Time{due}) {
			t.Errorf("fired scheduled times %v, want %s", got, due)
		}
		if got := h.engine.freeWorkers(); got != h.engine.cfg.Workers {
			t.Errorf("%d free workers after the outage, want all %d", got, h.engine.cfg.Workers)
		}
	})
}

func TestOutcomeIsRecordedAfterALongOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &flakyStore{Store: memstore.New(nil)}
		logs, logger := logtest.New(slog.LevelInfo)
		h := newHarness(t, st, func(c *Config) { c.Logger = logger })
		h.engine.cfg.Runner = runFunc(func(context.Context, *Firing) Outcome {
			st.failNext(20, "ExecutionsComplete") // more than the old limit of 10 attempts
			return Outcome{}
		})
		h.addTrigger(t, "t", time.Now().Add(time.Second), time.Hour, "")
		h.engine.Start()
		time.Sleep(3 * time.Minute)
		h.engine.Standby()
		execs, err := st.Store.ExecutionList(context.Background(), &store.ExecutionListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(execs) != 1 || execs[0].State != store.ExecutionSucceeded {
			t.Errorf("executions %+v, want one SUCCEEDED", execs)
		}
		if got := logs.Messages("recorded execution outcome after store failures"); len(got) != 1 || got[0].Attrs["attempts"].Int64() != 20 {
			t.Errorf("late record logged as %+v, want once after 20 attempts", got)
		}
		// One line when recording started failing and one 30s later each
		// while it lasted (76.3s): not one per attempt.
		if got := logs.Messages("recording execution outcome failed; retrying"); len(got) != 3 {
			t.Errorf("logged %d failed attempts, want 3", len(got))
		}
	})
}

func TestClaimWhoseReleaseFailedIsHandedBackLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &flakyStore{Store: memstore.New(nil)}
		h := newHarness(t, st, func(c *Config) { c.LookAhead = time.Minute })
		due := time.Now().Add(30 * time.Second)
		h.addTrigger(t, "t", due, time.Hour, "")
		h.engine.Start() // claims the trigger at once
		time.Sleep(5 * time.Second)
		st.failNext(1, "TriggersRelease")
		h.engine.Standby() // cannot hand the claim back
		rec, err := st.Store.TriggerGet(context.Background(), store.Key{Group: "g", Name: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if rec.State != store.StateAcquired {
			t.Fatalf("trigger %s after the failed release, want still ACQUIRED", rec.State)
		}
		time.Sleep(time.Second)
		h.engine.Start()
		time.Sleep(time.Minute)
		h.engine.Standby()
		if got := h.ranTimes(); !slices.Equal(got, []time.Time{due}) {
			t.Errorf("ran at %v, want %s", got, due)
		}
	})
}

// lostAnswerStore fires the triggers but loses the answer of its first
// TriggersFire calls, as when the connection breaks during COMMIT.
type lostAnswerStore struct {
	store.Store
	mu   sync.Mutex
	lose int
}

func (s *lostAnswerStore) TriggersFire(ctx context.Context, p *store.TriggersFireParams) ([]store.TriggerFireOutcome, error) {
	res, err := s.Store.TriggersFire(ctx, p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && s.lose > 0 {
		s.lose--
		return nil, errUnreachable
	}
	return res, err
}

func (s *lostAnswerStore) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	return acquireOnly(ctx, s, p)
}

func TestFiringWhoseAnswerWasLostStillRuns(t *testing.T) {
	tests := []struct {
		name    string
		standby bool // the engine goes to standby before its retry
	}{
		{"found at the retry", false},
		{"found when going to standby", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := &lostAnswerStore{Store: memstore.New(nil), lose: 1}
				h := newHarness(t, st)
				due := time.Now().Add(5 * time.Second)
				h.addTrigger(t, "t", due, time.Hour, "")
				h.engine.Start()
				if tt.standby {
					time.Sleep(time.Until(due) + 50*time.Millisecond) // before the retry at +100ms
					h.engine.Standby()
				}
				time.Sleep(10 * time.Second)
				h.engine.Standby()
				want := due.Add(100 * time.Millisecond) // the retry looks first
				if tt.standby {
					want = due.Add(50 * time.Millisecond)
				}
				if got := h.ranTimes(); !slices.Equal(got, []time.Time{want}) {
					t.Errorf("ran at %v, want once at %s", got, want)
				}
				execs, err := st.Store.ExecutionList(context.Background(), &store.ExecutionListParams{})
				if err != nil {
					t.Fatal(err)
				}
				if len(execs) != 1 || execs[0].State != store.ExecutionSucceeded {
					t.Errorf("executions %+v, want the one fired, SUCCEEDED", execs)
				}
				rec, err := st.Store.TriggerGet(context.Background(), store.Key{Group: "g", Name: "t"})
				if err != nil {
					t.Fatal(err)
				}
				if !rec.NextFireTime.Equal(due.Add(time.Hour)) || rec.State != store.StateWaiting {
					t.Errorf("trigger %s next at %s, want WAITING for %s", rec.State, rec.NextFireTime, due.Add(time.Hour))
				}
			})
		})
	}
}

// failureLog is an Observer that keeps the store failures reported.
type failureLog struct {
	noObserver
	reported []error
}

func (l *failureLog) StoreFailed(_ string, err error) { l.reported = append(l.reported, err) }

func (s *flakyStore) ExecutionsRelease(ctx context.Context, p *store.ExecutionsReleaseParams) ([]error, error) {
	if err := s.fail("ExecutionsRelease"); err != nil {
		return nil, err
	}
	return s.Store.ExecutionsRelease(ctx, p)
}
