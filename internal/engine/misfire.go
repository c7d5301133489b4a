package engine

import (
	"context"
	"errors"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// misfire applies the misfire instruction of a trigger this node claimed
// (never MisfireIgnore, whose missed times are all fired) and releases it
// with its new timing.
func (e *Engine) misfire(ctx context.Context, now time.Time, rec store.TriggerRecord) {
	tr, cal, err := e.timing(ctx, &rec)
	if err != nil {
		var unavailable *storeUnavailableError
		if !errors.As(err, &unavailable) {
			e.log.Error("cannot apply misfire instruction", "trigger_key", rec.Key.String(), "error", err)
		}
		e.release(ctx, rec.Key, nil)
		return
	}
	original := tr.Schedule
	tr.UpdateAfterMisfire(now, cal)
	timing := rec
	if err := storeTiming(&timing, tr, original); err != nil {
		e.log.Error("cannot store misfire outcome", "trigger_key", rec.Key.String(), "error", err)
		e.release(ctx, rec.Key, nil)
		return
	}
	e.log.Warn("trigger misfired", "trigger_key", rec.Key.String(), "fire_time", rec.NextFireTime, "next_fire_time", timing.NextFireTime, "misfire_instruction", string(tr.MisfireInstruction))
	if e.release(ctx, rec.Key, &timing) {
		e.cfg.Observer.TriggerMisfired(timing)
	}
	if timing.NextFireTime.IsZero() {
		e.cfg.Observer.TriggerFinalized(rec.Key)
	}
}

// rearmExcluded moves a claimed fixed-delay trigger whose fire time its
// calendar excludes to the calendar's next included instant, and releases
// it. The store re-armed the trigger at its run's end plus the delay
// without the calendar, which only the engine reads. It reports whether
// it moved the trigger; on an error the trigger fires as it is.
func (e *Engine) rearmExcluded(ctx context.Context, rec store.TriggerRecord) bool {
	tr, cal, err := e.timing(ctx, &rec)
	if err != nil {
		var unavailable *storeUnavailableError
		if !errors.As(err, &unavailable) {
			e.log.Error("cannot apply the calendar of a fixed-delay trigger", "trigger_key", rec.Key.String(), "error", err)
		}
		return false
	}
	next, moved := tr.Excluded(cal)
	if !moved {
		return false
	}
	timing := rec
	timing.NextFireTime = next
	e.log.Debug("fixed-delay fire time excluded by the calendar", "trigger_key", rec.Key.String(), "fire_time", rec.NextFireTime, "next_fire_time", next)
	e.release(ctx, rec.Key, &timing)
	if next.IsZero() {
		e.cfg.Observer.TriggerFinalized(rec.Key)
	}
	return true
}
