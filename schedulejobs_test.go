package chime_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// batchStores are the stores ScheduleJobs is tested on: the default
// in-memory store, and SQLite, whose JobsInsert is the SQL one.
func batchStores(t *testing.T) map[string]chime.Config {
	t.Helper()
	st, err := sqlstore.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "chime.db"), &sqlstore.Options{Logger: quietLogger})
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return map[string]chime.Config{"Memory": {}, "SQLite": {Store: st}}
}

// remindJob is element i of a batch: job and trigger "remind-i", due at
// the given instant.
func remindJob(i int, due time.Time) chime.JobToSchedule {
	name := fmt.Sprintf("remind-%d", i)
	return chime.JobToSchedule{
		Job:      chime.JobDetail{Key: chime.NewJobKey("users", name), Type: "record"},
		Triggers: []chime.Trigger{{Key: chime.NewTriggerKey("users", name), Schedule: &schedule.Simple{}, StartTime: due}},
	}
}

func TestScheduleJobsStoresAndFiresEveryJob(t *testing.T) {
	t.Parallel()
	for name, cfg := range batchStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, rec := newScheduler(t, cfg)
			var (
				mu     sync.Mutex
				events = map[chime.EventType]int{}
			)
			s.AddSchedulerListener("count", func(ctx context.Context, ev chime.SchedulerEvent) {
				mu.Lock()
				defer mu.Unlock()
				events[ev.Type]++
			})
			const n = 5
			jobs := make([]chime.JobToSchedule, 0, n)
			for i := range n {
				jobs = append(jobs, remindJob(i, time.Now()))
			}
			paused := remindJob(n, time.Now())
			paused.Pause = chime.PauseTriggers
			jobs = append(jobs, paused)
			if err := s.ScheduleJobs(t.Context(), jobs); err != nil {
				t.Fatalf("ScheduleJobs: %v", err)
			}
			info, err := s.Trigger(t.Context(), chime.NewTriggerKey("users", fmt.Sprintf("remind-%d", n)))
			if err != nil {
				t.Fatalf("Trigger: %v", err)
			}
			if info.State != chime.TriggerPaused {
				t.Errorf("trigger of the job scheduled with PauseTriggers is %s, want %s", info.State, chime.TriggerPaused)
			}
			ran := make(chan struct{}, n+1)
			rec.run = func(context.Context, *chime.JobContext) error {
				ran <- struct{}{}
				return nil
			}
			start(t, s)
			timeout := time.After(30 * time.Second)
			for range n {
				select {
				case <-ran:
				case <-timeout:
					t.Fatalf("only %d of the %d jobs due now fired in 30s", len(rec.all()), n)
				}
			}
			stop(t, s)
			fired := map[string]bool{}
			for _, f := range rec.all() {
				fired[f.Job] = true
			}
			for i := range n {
				if !fired[fmt.Sprintf("remind-%d", i)] {
					t.Errorf("remind-%d did not fire; fired: %v", i, fired)
				}
			}
			if fired[fmt.Sprintf("remind-%d", n)] {
				t.Errorf("the paused remind-%d fired", n)
			}
			mu.Lock()
			defer mu.Unlock()
			want := map[chime.EventType]int{chime.EventJobAdded: n + 1, chime.EventJobScheduled: n + 1, chime.EventJobPaused: 1}
			for typ, count := range want {
				if events[typ] != count {
					t.Errorf("%d %s events, want %d (all: %v)", events[typ], typ, count, events)
				}
			}
		})
	}
}

func TestScheduleJobsRefusesTheWholeBatch(t *testing.T) {
	t.Parallel()
	due := time.Now().Add(time.Hour)
	tests := []struct {
		name string
		jobs func() []chime.JobToSchedule
		// field is the ValidationError's field; "" when the store
		// refuses the batch with err.
		field string
		err   error
	}{
		{"EmptyTriggerName", func() []chime.JobToSchedule {
			bad := remindJob(1, due)
			bad.Triggers[0].Key.Name = ""
			return []chime.JobToSchedule{remindJob(0, due), bad}
		}, "jobs[1].triggers[0].Key.Name", nil},
		{"EmptyJobType", func() []chime.JobToSchedule {
			bad := remindJob(1, due)
			bad.Job.Type = ""
			return []chime.JobToSchedule{remindJob(0, due), bad}
		}, "jobs[1].Job.Type", nil},
		{"NonDurableWithoutTriggers", func() []chime.JobToSchedule {
			bad := remindJob(1, due)
			bad.Triggers = nil
			return []chime.JobToSchedule{remindJob(0, due), bad}
		}, "jobs[1].triggers", nil},
		{"JobKeyTwice", func() []chime.JobToSchedule {
			again := remindJob(0, due)
			again.Triggers[0].Key.Name = "other"
			return []chime.JobToSchedule{remindJob(0, due), remindJob(1, due), again}
		}, "jobs[2].Job.Key", nil},
		{"TriggerKeyTwice", func() []chime.JobToSchedule {
			bad := remindJob(1, due)
			bad.Triggers[0].Key = chime.NewTriggerKey("users", "remind-0")
			return []chime.JobToSchedule{remindJob(0, due), bad}
		}, "jobs[1].triggers[0].Key", nil},
		{"UnknownPause", func() []chime.JobToSchedule {
			bad := remindJob(1, due)
			bad.Pause = "sometimes"
			return []chime.JobToSchedule{remindJob(0, due), bad}
		}, "jobs[1].Pause", nil},
		{"JobKeyTaken", func() []chime.JobToSchedule {
			return []chime.JobToSchedule{remindJob(0, due), remindJob(1, due), remindJob(99, due)}
		}, "", chime.ErrJobExists},
		{"TriggerKeyTaken", func() []chime.JobToSchedule {
			bad := remindJob(1, due)
			bad.Triggers[0].Key = chime.NewTriggerKey("users", "remind-99")
			return []chime.JobToSchedule{remindJob(0, due), bad}
		}, "", chime.ErrTriggerExists},
	}
	for name, cfg := range batchStores(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					s, _ := newScheduler(t, cfg)
					ctx := t.Context()
					existing := remindJob(99, due)
					if err := s.ScheduleJob(ctx, existing.Job, existing.Triggers, nil); err != nil {
						t.Fatalf("ScheduleJob: %v", err)
					}
					defer func() {
						if _, err := s.DeleteJob(ctx, existing.Job.Key); err != nil {
							t.Errorf("DeleteJob: %v", err)
						}
					}()
					err := s.ScheduleJobs(ctx, tc.jobs())
					var ve *chime.ValidationError
					switch {
					case tc.field != "" && !errors.As(err, &ve):
						t.Fatalf("ScheduleJobs: %v, want a ValidationError of %s", err, tc.field)
					case tc.field != "" && ve.Field != tc.field:
						t.Errorf("ScheduleJobs: ValidationError of %q (%v), want %q", ve.Field, err, tc.field)
					case tc.err != nil && !errors.Is(err, tc.err):
						t.Fatalf("ScheduleJobs: %v, want %v", err, tc.err)
					}
					for i := range 2 {
						key := chime.NewJobKey("users", fmt.Sprintf("remind-%d", i))
						if _, err := s.Job(ctx, key); !errors.Is(err, chime.ErrJobNotFound) {
							t.Errorf("Job(%s) after the refused batch: %v, want ErrJobNotFound", key, err)
						}
					}
				})
			}
		})
	}
}
