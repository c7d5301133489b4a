package clustertest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
)

// Load is a set of fixed-interval triggers, one job each, whose every fire
// time is known in advance: trigger i fires Fires times, at
// StartOf(i) + j×Interval for j = 0…Fires-1. Start times are spread over
// Spread so that the instants do not all coincide.
//
// Every trigger uses schedule.MisfireIgnore: a firing that is late, for any
// reason and by any amount, still fires at its own scheduled time, so a
// late firing is never mistaken for a missed one, and a missing one is
// genuinely missing.
type Load struct {
	// Group is the group of the triggers and jobs; each trigger has the
	// name of its job.
	Group    string
	Triggers int
	Fires    int
	Interval time.Duration
	Start    time.Time
	Spread   time.Duration
	// JobType is the registered job type; defaults to "record".
	JobType            string
	RequestsRecovery   bool
	DisallowConcurrent bool
	// Durable keeps each job once its trigger has completed, so that an
	// execution waiting for recovery still finds its job.
	Durable bool
	// Data is each job's data map.
	Data chime.JobData
}

// TriggerKey returns the key of trigger i.
func (l Load) TriggerKey(i int) chime.TriggerKey {
	return chime.NewTriggerKey(l.Group, fmt.Sprintf("t%04d", i))
}

// JobKey returns the key of the job of trigger i.
func (l Load) JobKey(i int) chime.JobKey {
	return chime.NewJobKey(l.Group, fmt.Sprintf("t%04d", i))
}

// StartOf returns the first fire time of trigger i.
func (l Load) StartOf(i int) time.Time {
	var offset time.Duration
	if l.Triggers > 0 {
		offset = l.Spread * time.Duration(i) / time.Duration(l.Triggers)
	}
	return l.Start.Add(offset).Truncate(time.Millisecond)
}

// FireTimes returns the fire times of trigger i, by arithmetic.
func (l Load) FireTimes(i int) []time.Time {
	out := make([]time.Time, l.Fires)
	for j := range out {
		out[j] = l.StartOf(i).Add(time.Duration(j) * l.Interval)
	}
	return out
}

// Last returns the latest fire time of the load.
func (l Load) Last() time.Time {
	return l.StartOf(l.Triggers - 1).Add(time.Duration(l.Fires-1) * l.Interval)
}

// Expected returns every (trigger, fire time) the load must fire.
func (l Load) Expected() map[FireKey]bool {
	out := make(map[FireKey]bool, l.Triggers*l.Fires)
	for i := range l.Triggers {
		key := l.TriggerKey(i).String()
		for _, at := range l.FireTimes(i) {
			out[FireKey{Trigger: key, ScheduledMs: at.UnixMilli()}] = true
		}
	}
	return out
}

// trigger returns trigger i's schedule math, as the scheduler stores it.
func (l Load) trigger(i int) *schedule.Trigger {
	return &schedule.Trigger{
		Schedule:           &schedule.Simple{RepeatCount: l.Fires - 1, RepeatInterval: l.Interval},
		StartTime:          l.StartOf(i),
		MisfireInstruction: schedule.MisfireIgnore,
	}
}

// Seed schedules the load's jobs and triggers through s, which need not be
// started. It checks that the schedule math (package schedule) yields
// exactly the fire times Expected counts on, for every trigger, and that
// the first stored trigger's upcoming fire times do too.
func (l Load) Seed(ctx context.Context, s *chime.Scheduler) error {
	jobType := l.JobType
	if jobType == "" {
		jobType = "record"
	}
	for i := range l.Triggers {
		tr := l.trigger(i)
		tr.ComputeFirstFireTime(nil)
		if got, want := tr.Upcoming(nil, l.Fires+1), l.FireTimes(i); !slices.EqualFunc(got, want, time.Time.Equal) {
			return fmt.Errorf("seed: the schedule of trigger %s fires at %v, the test expects %v", l.TriggerKey(i), got, want)
		}
		job := chime.JobDetail{
			Key:                         l.JobKey(i),
			Type:                        jobType,
			RequestsRecovery:            l.RequestsRecovery,
			DisallowConcurrentExecution: l.DisallowConcurrent,
			Durable:                     l.Durable,
			Data:                        l.Data,
		}
		t := chime.Trigger{
			Key:                l.TriggerKey(i),
			Schedule:           tr.Schedule,
			StartTime:          tr.StartTime,
			MisfireInstruction: tr.MisfireInstruction,
		}
		if err := s.ScheduleJob(ctx, job, []chime.Trigger{t}, nil); err != nil {
			return fmt.Errorf("seed %s: %w", t.Key, err)
		}
		if i != 0 {
			continue
		}
		// Read back before it can have fired: the store keeps the timing
		// the arithmetic expects.
		got, err := s.UpcomingFireTimes(ctx, t.Key, l.Fires+1)
		if err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		if want := l.FireTimes(i); time.Now().Before(want[0]) && !slices.EqualFunc(got, want, time.Time.Equal) {
			return fmt.Errorf("seed: stored trigger %s fires at %v, the test expects %v", t.Key, got, want)
		}
	}
	return nil
}
