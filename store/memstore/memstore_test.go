package memstore_test

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
	"github.com/chime-scheduler/chime/store/storetest"
)

// clockedStore is a memstore on a manual clock the suite advances.
type clockedStore struct {
	*memstore.Store
	clock *storetest.Clock
}

func (s clockedStore) Advance(d time.Duration) { s.clock.Advance(d) }

func TestStore(t *testing.T) {
	t.Parallel()
	t.Run("ManualClock", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, func(t *testing.T) store.Store {
			clock := storetest.NewClock(time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC))
			s := memstore.New(&memstore.Options{Now: clock.Now})
			t.Cleanup(func() { _ = s.Close() })
			return clockedStore{Store: s, clock: clock}
		})
	})
	t.Run("RealClock", func(t *testing.T) {
		t.Parallel()
		if testing.Short() {
			t.Skip("waits for the real clock")
		}
		storetest.Run(t, func(t *testing.T) store.Store {
			s := memstore.New(nil)
			t.Cleanup(func() { _ = s.Close() })
			return s
		})
	})
}
