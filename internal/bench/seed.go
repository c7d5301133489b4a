package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
)

// seeder schedules a workload's jobs and triggers through a scheduler that
// never starts, on the run's store, from several goroutines.
type seeder struct {
	s           *chime.Scheduler
	parallelism int
}

// seedSeries schedules the triggers of one series with T0 t0.
func (sd *seeder) seedSeries(ctx context.Context, s Series, t0 time.Time) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range sd.parallelism {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= s.Count || ctx.Err() != nil {
					return
				}
				if err := sd.seedOne(ctx, s, t0, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// seedOne schedules trigger i of a series and its job.
func (sd *seeder) seedOne(ctx context.Context, s Series, t0 time.Time, i int) error {
	job := chime.JobDetail{
		Key:              chime.NewJobKey(s.Group, s.name(i)),
		Type:             jobRecord,
		RequestsRecovery: s.RequestsRecovery,
	}
	if s.Run > 0 {
		job.Type = jobLong
		job.Data = chime.JobData{runKey: s.Run.String()}
	}
	t := chime.Trigger{
		Key:       chime.NewTriggerKey(s.Group, s.name(i)),
		Schedule:  &schedule.Simple{RepeatCount: s.Fires - 1, RepeatInterval: s.Interval},
		StartTime: s.first(t0, i),
		// A late firing still runs for its own scheduled time, so lateness
		// shows as lag and never passes for a miss.
		MisfireInstruction: schedule.MisfireIgnore,
	}
	if err := sd.s.ScheduleJob(ctx, job, []chime.Trigger{t}, nil); err != nil {
		return fmt.Errorf("bench: seed %s: %w", t.Key, err)
	}
	return nil
}
