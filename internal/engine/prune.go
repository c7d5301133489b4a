package engine

import (
	"context"
	"time"
)

// pruneInterval is how often the loop deletes finished executions older
// than the retention.
const pruneInterval = time.Minute

// prune deletes finished executions older than the retention. A failure
// is only logged: pruning is housekeeping, and it runs again in a minute.
func (e *Engine) prune(ctx context.Context, now time.Time) {
	n, err := e.cfg.Store.ExecutionsPrune(ctx, now.Add(-e.cfg.ExecutionRetention))
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("pruning finished executions failed", "error", err)
		}
		return
	}
	if n > 0 {
		e.log.Debug("pruned finished executions", "count", n)
	}
}
