package chime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
)

// oneShot is a one-shot trigger "run-i" of job users.remind-i, due at
// the given instant.
func oneShot(i int, due time.Time) chime.Trigger {
	return chime.Trigger{
		Key:      chime.NewTriggerKey("runs", fmt.Sprintf("run-%d", i)),
		JobKey:   chime.NewJobKey("users", fmt.Sprintf("remind-%d", i)),
		Schedule: &schedule.Simple{}, StartTime: due,
	}
}

// durableJobs stores durable jobs users.remind-0 to remind-(n-1).
func durableJobs(t *testing.T, s *chime.Scheduler, n int) {
	t.Helper()
	for i := range n {
		job := chime.JobDetail{Key: chime.NewJobKey("users", fmt.Sprintf("remind-%d", i)), Type: "record", Durable: true}
		if err := s.AddJob(t.Context(), job, nil); err != nil {
			t.Fatalf("AddJob: %v", err)
		}
	}
}

func TestScheduleTriggersStoresAndFiresEveryTrigger(t *testing.T) {
	t.Parallel()
	for name, cfg := range batchStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, rec := newScheduler(t, cfg)
			var (
				mu        sync.Mutex
				scheduled []chime.TriggerKey
			)
			s.AddSchedulerListener("count", func(ctx context.Context, ev chime.SchedulerEvent) {
				if ev.Type == chime.EventJobScheduled {
					mu.Lock()
					defer mu.Unlock()
					scheduled = append(scheduled, ev.TriggerKey)
				}
			})
			const n = 5
			durableJobs(t, s, n)
			// Trigger 0 exists: SkipExisting leaves it, due in an hour.
			if _, err := s.Schedule(t.Context(), oneShot(0, time.Now().Add(time.Hour))); err != nil {
				t.Fatalf("Schedule: %v", err)
			}
			triggers := make([]chime.Trigger, 0, n)
			for i := range n {
				triggers = append(triggers, oneShot(i, time.Now()))
			}
			keys, err := s.ScheduleTriggers(t.Context(), triggers, &chime.ScheduleTriggersOptions{SkipExisting: true})
			if err != nil {
				t.Fatalf("ScheduleTriggers: %v", err)
			}
			var want []chime.TriggerKey
			for _, tr := range triggers[1:] {
				want = append(want, tr.Key)
			}
			if fmt.Sprint(keys) != fmt.Sprint(want) {
				t.Errorf("ScheduleTriggers stored %v, want %v", keys, want)
			}
			ran := make(chan string, n)
			rec.run = func(_ context.Context, jc *chime.JobContext) error {
				ran <- jc.Job.Key.Name
				return nil
			}
			start(t, s)
			timeout := time.After(30 * time.Second)
			fired := map[string]bool{}
			for range n - 1 {
				select {
				case job := <-ran:
					fired[job] = true
				case <-timeout:
					t.Fatalf("only %d of the %d triggers due now fired in 30s", len(fired), n-1)
				}
			}
			stop(t, s)
			for i := 1; i < n; i++ {
				if !fired[fmt.Sprintf("remind-%d", i)] {
					t.Errorf("remind-%d did not fire; fired: %v", i, fired)
				}
			}
			if fired["remind-0"] {
				t.Errorf("remind-0, whose trigger existed and is due in an hour, fired")
			}
			// One event per stored trigger: Schedule's of run-0, then
			// ScheduleTriggers' of the others.
			mu.Lock()
			defer mu.Unlock()
			if got, want := fmt.Sprint(scheduled), fmt.Sprint(append([]chime.TriggerKey{triggers[0].Key}, want...)); got != want {
				t.Errorf("EventJobScheduled for %v, want %v", got, want)
			}
		})
	}
}

func TestScheduleTriggersRefusesTheWholeBatch(t *testing.T) {
	t.Parallel()
	due := time.Now().Add(time.Hour)
	tests := []struct {
		name     string
		triggers func() []chime.Trigger
		// field is the ValidationError's field; "" when the store
		// refuses the batch with err.
		field string
		err   error
	}{
		{"EmptyTriggerName", func() []chime.Trigger {
			bad := oneShot(1, due)
			bad.Key.Name = ""
			return []chime.Trigger{oneShot(0, due), bad}
		}, "triggers[1].Key.Name", nil},
		{"NoSchedule", func() []chime.Trigger {
			bad := oneShot(1, due)
			bad.Schedule = nil
			return []chime.Trigger{oneShot(0, due), bad}
		}, "triggers[1].Schedule", nil},
		{"KeyTwice", func() []chime.Trigger {
			again := oneShot(1, due)
			again.Key = oneShot(0, due).Key
			return []chime.Trigger{oneShot(0, due), again}
		}, "triggers[1].Key", nil},
		{"JobMissing", func() []chime.Trigger {
			return []chime.Trigger{oneShot(0, due), oneShot(7, due)}
		}, "", chime.ErrJobNotFound},
		{"KeyTaken", func() []chime.Trigger {
			taken := oneShot(1, due)
			taken.Key = chime.NewTriggerKey("runs", "taken")
			return []chime.Trigger{oneShot(0, due), taken}
		}, "", chime.ErrTriggerExists},
	}
	for name, cfg := range batchStores(t) {
		t.Run(name, func(t *testing.T) {
			s, _ := newScheduler(t, cfg)
			ctx := t.Context()
			durableJobs(t, s, 2)
			taken := oneShot(0, due)
			taken.Key = chime.NewTriggerKey("runs", "taken")
			if _, err := s.Schedule(ctx, taken); err != nil {
				t.Fatalf("Schedule: %v", err)
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					_, err := s.ScheduleTriggers(ctx, tc.triggers(), nil)
					var ve *chime.ValidationError
					switch {
					case tc.field != "" && !errors.As(err, &ve):
						t.Fatalf("ScheduleTriggers: %v, want a ValidationError of %s", err, tc.field)
					case tc.field != "" && ve.Field != tc.field:
						t.Errorf("ScheduleTriggers: ValidationError of %q (%v), want %q", ve.Field, err, tc.field)
					case tc.err != nil && !errors.Is(err, tc.err):
						t.Fatalf("ScheduleTriggers: %v, want %v", err, tc.err)
					}
					for i := range 2 {
						key := oneShot(i, due).Key
						if _, err := s.Trigger(ctx, key); !errors.Is(err, chime.ErrTriggerNotFound) {
							t.Errorf("Trigger(%s) after the refused batch: %v, want ErrTriggerNotFound", key, err)
						}
					}
				})
			}
		})
	}
}
