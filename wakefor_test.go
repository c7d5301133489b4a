package chime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// claimCounter is a store that counts the engine's looks for due
// triggers.
type claimCounter struct {
	store.Store
	looks atomic.Int64
}

func (c *claimCounter) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	c.looks.Add(1)
	return c.Store.TriggersAcquireFire(ctx, p)
}

// TestNewJobsForLaterCostNoLookEach schedules 100 jobs one at a time and
// 100 in one call, all due in an hour: the scheduler does not look at
// the store for due triggers after each (it did, a look of several
// statements per job created through the API). A job due within the
// look-ahead still wakes it at once, and fires on time.
func TestNewJobsForLaterCostNoLookEach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &claimCounter{Store: memstore.New(nil)}
		s, rec := newScheduler(t, chime.Config{Store: st})
		start(t, s)
		defer stop(t, s)
		synctest.Wait()
		before := st.looks.Load()

		later := time.Now().Add(time.Hour)
		onceAt := func(name string, at time.Time) chime.Trigger {
			tr := trig(name, &schedule.Simple{})
			tr.StartTime = at
			return tr
		}
		for i := range 100 {
			scheduleJob(t, s, job(fmt.Sprintf("one-%d", i)), onceAt(fmt.Sprintf("one-%d", i), later))
			synctest.Wait()
		}
		batch := make([]chime.JobToSchedule, 100)
		for i := range batch {
			batch[i] = chime.JobToSchedule{Job: job(fmt.Sprintf("many-%d", i)), Triggers: []chime.Trigger{onceAt(fmt.Sprintf("many-%d", i), later)}}
		}
		if err := s.ScheduleJobs(t.Context(), batch); err != nil {
			t.Fatalf("ScheduleJobs: %v", err)
		}
		synctest.Wait()
		if looks := st.looks.Load() - before; looks != 0 {
			t.Errorf("200 jobs due in an hour made %d looks for due triggers; want none before the idle wait", looks)
		}

		soon := time.Now().Add(500 * time.Millisecond)
		scheduleJob(t, s, job("soon"), onceAt("soon", soon))
		synctest.Wait()
		if st.looks.Load() == before {
			t.Error("a job due within the look-ahead did not wake the scheduler")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		fires := rec.all()
		if len(fires) != 1 || fires[0].Job != "soon" || !fires[0].At.Equal(soon) {
			t.Errorf("fires %+v; want job soon once at %v", fires, soon)
		}
	})
}
