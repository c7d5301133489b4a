package engine

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

	"github.com/chime-scheduler/chime/internal/testkit/logtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// watchingStore is a memory store that pushes the next fire time of every
// trigger inserted into it to its watchers, as a PostgreSQL store does with
// LISTEN/NOTIFY for the inserts of every node.
type watchingStore struct {
	store.Store
	mu       sync.Mutex
	watchers map[chan time.Time]struct{}
	opened   []time.Time // when each watch was opened
}

func newWatchingStore() *watchingStore {
	return &watchingStore{Store: memstore.New(nil), watchers: make(map[chan time.Time]struct{})}
}

func (s *watchingStore) WatchTriggers(ctx context.Context) (<-chan time.Time, error) {
	ch := make(chan time.Time, 16)
	s.mu.Lock()
	s.watchers[ch] = struct{}{}
	s.opened = append(s.opened, time.Now())
	s.mu.Unlock()
	go func() {
		<-ctx.Done()
		s.end(ch)
	}()
	return ch, nil
}

// end closes one watch unless it was closed already.
func (s *watchingStore) end(ch chan time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.watchers[ch]; ok {
		delete(s.watchers, ch)
		close(ch)
	}
}

// endAll ends every open watch, as a store does when its listening
// connection breaks.
func (s *watchingStore) endAll() {
	s.mu.Lock()
	var open []chan time.Time
	for ch := range s.watchers {
		open = append(open, ch)
	}
	s.mu.Unlock()
	for _, ch := range open {
		s.end(ch)
	}
}

func (s *watchingStore) openedAt() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.opened)
}

func (s *watchingStore) TriggerInsert(ctx context.Context, p *store.TriggerInsertParams) error {
	if err := s.Store.TriggerInsert(ctx, p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.watchers {
		select {
		case ch <- p.Trigger.NextFireTime:
		default: // a slow receiver misses it, as the contract allows
		}
	}
	return nil
}

func TestTriggerOfAnotherNodeFiresOnTimeWhenTheStorePushes(t *testing.T) {
	tests := []struct {
		name  string
		watch bool
		dueIn time.Duration // after the insert, one second after the start
		// wantAt is when it fires, after the start.
		wantAt time.Duration
	}{
		{"pushed, due within the look-ahead: fires at its instant", true, 2 * time.Second, 3 * time.Second},
		{"pushed, due after the look-ahead: fires at its instant", true, 10 * time.Second, 11 * time.Second},
		{"not pushed: fires when the loop polls after its idle wait", false, 2 * time.Second, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var st store.Store = memstore.New(nil)
				if tt.watch {
					st = newWatchingStore()
				}
				h := newHarness(t, st, func(c *Config) { c.IdleWait = 30 * time.Second })
				begin := time.Now()
				h.engine.Start()
				time.Sleep(time.Second)
				// Another node adds the trigger: only the store knows.
				h.addTrigger(t, "t", time.Now().Add(tt.dueIn), time.Hour, "")
				time.Sleep(40 * time.Second)
				h.engine.Standby()
				want := []time.Time{begin.Add(tt.wantAt)}
				if got := h.ranTimes(); !slices.Equal(got, want) {
					t.Errorf("ran at %v, want %v", got, want)
				}
			})
		})
	}
}

// unsupportedWatchStore is a store whose database cannot push changes.
type unsupportedWatchStore struct {
	store.Store
	mu    sync.Mutex
	calls int
}

func (s *unsupportedWatchStore) WatchTriggers(context.Context) (<-chan time.Time, error) {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	return nil, fmt.Errorf("sqlite: %w", errors.ErrUnsupported)
}

func TestUnsupportedWatchFallsBackToPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &unsupportedWatchStore{Store: memstore.New(nil)}
		logs, logger := logtest.New(slog.LevelDebug)
		h := newHarness(t, st, func(c *Config) { c.Logger = logger })
		h.engine.Start()
		time.Sleep(time.Second)
		due := time.Now().Add(5 * time.Second)
		h.addTrigger(t, "t", due, time.Hour, "")
		time.Sleep(time.Minute)
		h.engine.Standby()
		if st.calls != 1 {
			t.Errorf("WatchTriggers called %d times, want 1", st.calls)
		}
		if got := logs.Messages("store cannot push trigger changes; polling only"); len(got) != 1 || got[0].Level != slog.LevelDebug {
			t.Errorf("fallback logged %+v, want one Debug record", got)
		}
		if got := h.ranTimes(); !slices.Equal(got, []time.Time{due}) {
			t.Errorf("polling fired at %v, want %s", got, due)
		}
	})
}

func TestEndedWatchIsOpenedAgainWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newWatchingStore()
		logs, logger := logtest.New(slog.LevelInfo)
		h := newHarness(t, st, func(c *Config) {
			c.Logger = logger
			c.IdleWait = time.Hour
		})
		begin := time.Now()
		h.engine.Start()
		time.Sleep(5 * time.Second)
		st.endAll() // the store's connection broke
		time.Sleep(2 * time.Second)
		st.endAll() // and again, one second after it was opened again
		time.Sleep(3 * time.Second)
		due := time.Now().Add(2 * time.Second)
		h.addTrigger(t, "t", due, time.Hour, "")
		time.Sleep(5 * time.Second)
		h.engine.Standby()
		// Opened at the start, again 1s after the first end, again 2s
		// after the second (the watch had lasted less than a minute).
		want := []time.Time{begin, begin.Add(6 * time.Second), begin.Add(9 * time.Second)}
		if got := st.openedAt(); !slices.Equal(got, want) {
			t.Errorf("watches opened at %v, want %v", got, want)
		}
		if got := h.ranTimes(); !slices.Equal(got, []time.Time{due}) {
			t.Errorf("ran at %v, want %s: the reopened watch should wake the loop", got, due)
		}
		if got := logs.Messages("watching triggers failed; polling until the watch is back"); len(got) != 1 {
			t.Errorf("logged the ended watch %d times, want once", len(got))
		}
	})
}
