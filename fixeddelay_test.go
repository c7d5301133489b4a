package chime_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

func scheduledTimes(fires []fire) []time.Time {
	var out []time.Time
	for _, f := range fires {
		out = append(out, f.Scheduled)
	}
	return out
}

// A job that takes 2s on a trigger with a fixed delay of 3s fires at t,
// t+5 and t+10: each run starts 3s after the one before ended.
func TestFixedDelayFiresADelayAfterEachRunEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := newScheduler(t, chime.Config{})
		rec.run = func(ctx context.Context, _ *chime.JobContext) error {
			time.Sleep(2 * time.Second)
			return nil
		}
		tr := trig("delayed", &schedule.FixedDelay{Delay: 3 * time.Second})
		first := time.Now().Add(time.Second)
		tr.StartTime = first
		scheduleJob(t, s, job("slow"), tr)
		start(t, s)
		time.Sleep(12 * time.Second)
		stop(t, s)

		want := []time.Time{first, first.Add(5 * time.Second), first.Add(10 * time.Second)}
		fires := rec.all()
		if got := scheduledTimes(fires); !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Fatalf("fired at %v, want %v", got, want)
		}
		for _, f := range fires {
			if !f.At.Equal(f.Scheduled) {
				t.Errorf("run scheduled at %s started at %s", f.Scheduled, f.At)
			}
		}
	})
}

// The calendar applies to the re-armed fire time: one it excludes moves to
// the calendar's next included instant.
func TestFixedDelaySkipsTheCalendarsExclusions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		midnight := time.Now() // the bubble starts at midnight UTC
		s, rec := newScheduler(t, chime.Config{})
		quiet, err := calendar.NewDaily(time.UTC, 3*time.Second, 9999*time.Millisecond, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddCalendar(context.Background(), "quiet", quiet, nil); err != nil {
			t.Fatal(err)
		}
		tr := trig("delayed", &schedule.FixedDelay{Delay: 3 * time.Second})
		tr.StartTime = midnight.Add(time.Second)
		tr.CalendarName = "quiet"
		scheduleJob(t, s, job("quick"), tr)
		start(t, s)
		time.Sleep(14 * time.Second)
		stop(t, s)
		// 00:00:01 ends at once; 00:00:04 is excluded until 00:00:10.
		want := []time.Time{midnight.Add(time.Second), midnight.Add(10 * time.Second), midnight.Add(13 * time.Second)}
		if got := scheduledTimes(rec.all()); !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Fatalf("fired at %v, want %v", got, want)
		}
	})
}

// When the node running a fixed-delay trigger's job dies, recovery ends the
// run (FAILED "node lost", or re-run when the job requests recovery) and
// the chain goes on from that end on the surviving node.
func TestFixedDelayChainSurvivesNodeDeath(t *testing.T) {
	for _, requestsRecovery := range []bool{false, true} {
		name := "node lost"
		if requestsRecovery {
			name = "re-run"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				shared := memstore.New(nil)
				cutStore := &faultyStore{Store: shared}
				a, recA := newScheduler(t, chime.Config{Store: cutStore, NodeID: "a", CheckInInterval: time.Second})
				b, recB := newScheduler(t, chime.Config{Store: shared, NodeID: "b", CheckInInterval: time.Second})
				recA.run = func(ctx context.Context, _ *chime.JobContext) error {
					<-ctx.Done()
					return ctx.Err()
				}
				j := job("chained")
				j.RequestsRecovery = requestsRecovery
				tr := trig("delayed", &schedule.FixedDelay{Delay: 3 * time.Second})
				first := time.Now().Add(time.Second)
				tr.StartTime = first
				scheduleJob(t, a, j, tr)

				start(t, a) // only a runs: it takes the first run
				time.Sleep(2 * time.Second)
				start(t, b)
				cutStore.mu.Lock()
				cutStore.cut = true
				cutStore.mu.Unlock()
				time.Sleep(20 * time.Second)
				stop(t, b)
				cutStore.mu.Lock()
				cutStore.cut = false
				cutStore.mu.Unlock()
				stop(t, a)

				if got := scheduledTimes(recA.all()); len(got) != 1 || !got[0].Equal(first) {
					t.Fatalf("node a ran %v, want only the first run at %s", got, first)
				}
				execs, err := shared.ExecutionList(ctx, &store.ExecutionListParams{})
				if err != nil {
					t.Fatal(err)
				}
				slices.Reverse(execs) // oldest first
				if len(execs) < 3 {
					t.Fatalf("%d executions, want the lost one and at least two more: %+v", len(execs), execs)
				}
				lost := execs[0]
				if !lost.ScheduledTime.Equal(first) {
					t.Fatalf("first execution %+v, want the one scheduled at %s", lost, first)
				}
				if requestsRecovery {
					if lost.State != store.ExecutionSucceeded || !lost.Recovering || lost.NodeID != "b" {
						t.Errorf("lost run %+v, want re-run to success on b", lost)
					}
				} else if lost.State != store.ExecutionFailed || lost.Error != store.ErrorNodeLost {
					t.Errorf("lost run %+v, want FAILED node lost", lost)
				}
				// Every later run is scheduled a delay after the end of the
				// one before, the lost one's recorded end included, and runs
				// on b exactly once.
				for i := 1; i < len(execs); i++ {
					want := execs[i-1].FinishedTime.Truncate(time.Millisecond).Add(3 * time.Second)
					if e := execs[i]; !e.ScheduledTime.Equal(want) || e.NodeID != "b" {
						t.Errorf("run %d: scheduled %s on %q, want %s on b (previous ended %s)", i, e.ScheduledTime, e.NodeID, want, execs[i-1].FinishedTime)
					}
				}
				wantB := len(execs) - 1 // all but the lost run
				if requestsRecovery {
					wantB = len(execs) // and its re-run
				}
				if n := len(recB.all()); n != wantB {
					t.Errorf("node b ran %d jobs, want %d for %d executions", n, wantB, len(execs))
				}
			})
		})
	}
}
