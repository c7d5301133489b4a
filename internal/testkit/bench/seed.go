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

// How the seeder creates jobs: Options.Seed.
const (
	// SeedBatch creates the jobs with Scheduler.ScheduleJobs, SeedBatchSize
	// to a call.
	SeedBatch = "batch"
	// SeedSingle creates them with one Scheduler.ScheduleJob each.
	SeedSingle = "single"
)

// SeedBatchSize is how many jobs one ScheduleJobs call of SeedBatch
// creates.
const SeedBatchSize = 1000

// seeder schedules a workload's jobs and triggers through a scheduler that
// never starts, on the run's store, from several goroutines.
type seeder struct {
	s           *chime.Scheduler
	parallelism int
	// batch is how many jobs one call creates: 1 calls ScheduleJob, more
	// ScheduleJobs.
	batch int
}

// seedSeries schedules the triggers of one series with T0 t0.
func (sd *seeder) seedSeries(ctx context.Context, s Series, t0 time.Time) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	batch := max(sd.batch, 1)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range sd.parallelism {
		wg.Go(func() {
			for {
				from := int(next.Add(int64(batch)) - int64(batch))
				if from >= s.Count || ctx.Err() != nil {
					return
				}
				var err error
				if batch == 1 {
					err = sd.seedOne(ctx, s, t0, from)
				} else {
					err = sd.seedBatch(ctx, s, t0, from, min(from+batch, s.Count))
				}
				if err != nil {
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
	e := seedJob(s, t0, i)
	if err := sd.s.ScheduleJob(ctx, e.Job, e.Triggers, nil); err != nil {
		return fmt.Errorf("bench: seed %s: %w", e.Triggers[0].Key, err)
	}
	return nil
}

// seedBatch schedules triggers [from, to) of a series and their jobs in
// one ScheduleJobs call.
func (sd *seeder) seedBatch(ctx context.Context, s Series, t0 time.Time, from, to int) error {
	jobs := make([]chime.JobToSchedule, 0, to-from)
	for i := from; i < to; i++ {
		jobs = append(jobs, seedJob(s, t0, i))
	}
	if err := sd.s.ScheduleJobs(ctx, jobs); err != nil {
		return fmt.Errorf("bench: seed %s to %s: %w", jobs[0].Triggers[0].Key, jobs[len(jobs)-1].Triggers[0].Key, err)
	}
	return nil
}

// seedJob is trigger i of a series with its job.
func seedJob(s Series, t0 time.Time, i int) chime.JobToSchedule {
	job := chime.JobDetail{
		Key:              chime.NewJobKey(s.Group, s.name(i)),
		Type:             jobRecord,
		RequestsRecovery: s.RequestsRecovery,
	}
	if s.Run > 0 {
		job.Type = jobLong
		job.Data = chime.JobData{runKey: s.Run.String()}
	}
	if s.OnExecutors {
		// As chime server keeps an executor job: its target in the
		// job's metadata.
		handler := handlerRecord
		if s.Run > 0 {
			handler = handlerLong
		}
		job.Type = "executor"
		job.Metadata = []byte(`{"executor":{"group":"` + ExecutorGroup + `","handler":"` + handler + `","routing":"round_robin"}}`)
	}
	t := chime.Trigger{
		Key:       chime.NewTriggerKey(s.Group, s.name(i)),
		Schedule:  &schedule.Simple{RepeatCount: s.Fires - 1, RepeatInterval: s.Interval},
		StartTime: s.first(t0, i),
		// A late firing still runs for its own scheduled time, so lateness
		// shows as lag and never passes for a miss.
		MisfireInstruction: schedule.MisfireIgnore,
	}
	return chime.JobToSchedule{Job: job, Triggers: []chime.Trigger{t}}
}
