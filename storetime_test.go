package chime_test

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/store/memstore"
)

// A check-in that measures a smaller clock offset than the one before does
// not turn StoreTime back: it holds, increasing, until the corrected clock
// passes it, and then follows the new offset.
func TestStoreTimeNeverGoesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var storeAhead atomic.Int64 // how far the store's clock is ahead of the node's
		storeAhead.Store(int64(time.Second))
		st := memstore.New(&memstore.Options{Now: func() time.Time { return time.Now().Add(time.Duration(storeAhead.Load())) }})
		s, _ := newScheduler(t, chime.Config{Store: st, CheckInInterval: time.Second})
		start(t, s)
		defer stop(t, s)
		before := s.StoreTime()
		if want := time.Now().Add(time.Second); !before.Equal(want) {
			t.Fatalf("StoreTime = %s, want the store's %s", before, want)
		}

		storeAhead.Store(int64(-time.Second)) // the next check-in measures -1s
		time.Sleep(1500 * time.Millisecond)
		if got := s.ClockOffset(); got != -time.Second {
			t.Fatalf("ClockOffset = %s after the check-in, want -1s", got)
		}
		held := s.StoreTime()
		if !held.After(before) {
			t.Fatalf("StoreTime went back from %s to %s", before, held)
		}
		if again := s.StoreTime(); !again.After(held) {
			t.Errorf("StoreTime %s then %s: want increasing", held, again)
		}

		time.Sleep(2 * time.Second) // the corrected clock passes the held time
		if got, want := s.StoreTime(), time.Now().Add(-time.Second); !got.Equal(want) {
			t.Errorf("StoreTime = %s once the corrected clock passed it, want %s", got, want)
		}
	})
}
