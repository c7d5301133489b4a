package chime

import (
	"slices"
	"time"
)

// ExecutingJob is a job running on this node.
type ExecutingJob struct {
	ExecutionID       string
	JobKey            JobKey
	TriggerKey        TriggerKey
	ScheduledFireTime time.Time
	FireTime          time.Time
	Recovering        bool
	RefireCount       int
}

// ExecutingJobs returns the jobs running on this node, oldest first.
func (s *Scheduler) ExecutingJobs() []ExecutingJob {
	running := s.engine.Running()
	out := make([]ExecutingJob, 0, len(running))
	for _, r := range running {
		out = append(out, ExecutingJob{
			ExecutionID:       r.Firing.Execution.ID,
			JobKey:            jobKeyOf(r.Firing.Execution.JobKey),
			TriggerKey:        triggerKeyOf(r.Firing.Execution.TriggerKey),
			ScheduledFireTime: r.Firing.Execution.ScheduledTime,
			FireTime:          r.Started,
			Recovering:        r.Firing.Execution.Recovering,
			RefireCount:       r.Firing.RefireCount,
		})
	}
	slices.SortFunc(out, func(a, b ExecutingJob) int { return a.FireTime.Compare(b.FireTime) })
	return out
}

// Interrupt cancels the context of one execution running on this node
// (context.Cause is ErrInterrupted). It reports whether it was running here.
func (s *Scheduler) Interrupt(executionID string) bool { return s.engine.Interrupt(executionID) }

// InterruptJob cancels every execution of a job running on this node and
// returns how many it cancelled.
func (s *Scheduler) InterruptJob(key JobKey) int {
	n := 0
	for _, r := range s.ExecutingJobs() {
		if r.JobKey == key.normalized() && s.engine.Interrupt(r.ExecutionID) {
			n++
		}
	}
	return n
}
