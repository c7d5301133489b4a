package engine

import (
	"context"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// recoveryScan is how often the loop looks for executions of lost nodes
// that no node has re-run yet, besides when WakeRecovery asks.
const recoveryScan = 10 * time.Second

// acquireRecoverable claims executions of lost nodes and runs them again.
// It reports whether it saw all of them (it had slots to spare).
func (e *Engine) acquireRecoverable(ctx context.Context) (bool, error) {
	free := e.freeWorkers()
	if free <= 0 {
		return false, nil
	}
	lease := e.cfg.Membership.Lease()
	recovered, err := e.cfg.Store.ExecutionsAcquireRecoverable(ctx, &store.ExecutionsAcquireRecoverableParams{
		Lease: lease, Limit: free, ExcludeJobTypes: e.cfg.ExcludeJobTypes,
	})
	if err != nil {
		e.storeError(ctx, "acquire recoverable executions", lease, err)
		return false, err
	}
	for _, r := range recovered {
		e.log.Info("re-running execution of a lost node", "execution_id", r.Execution.ID, "job_key", r.Execution.JobKey.String(), "scheduled_fire_time", r.Execution.ScheduledTime)
		f := &Firing{Execution: r.Execution, Job: r.Job}
		if r.Trigger != nil {
			sched, err := e.decoded.decode(r.Trigger.Schedule)
			if err != nil {
				e.log.Error("cannot decode the schedule of a recovered execution's trigger; running it without", "trigger_key", r.Trigger.Key.String(), "error", err)
			} else {
				f.Trigger, f.Schedule = r.Trigger, sched
				f.PreviousFireTime = r.Trigger.PreviousFireTime
			}
		}
		e.dispatch(f)
	}
	return len(recovered) < free, nil
}
