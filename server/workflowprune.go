package server

import (
	"context"
	"time"
)

// workflowPruneEvery is how often each node prunes the workflow
// instances that ended longer ago than the history's retention.
const workflowPruneEvery = time.Hour

// pruneWorkflows deletes the workflow instances that ended longer ago
// than the history keeps executions (Config.Retention.MaxAge), with their
// tasks: their tasks' executions are gone from the history too. Every
// node runs it; an instance goes once whichever node gets it first.
func (s *Server) pruneWorkflows(ctx context.Context, now time.Time) {
	if s.cfg.Retention.MaxAge <= 0 {
		return
	}
	const batch = 500
	for {
		n, err := s.workflows.Prune(ctx, now.Add(-s.cfg.Retention.MaxAge), batch)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("cannot prune the old workflow instances", "error", err)
			}
			return
		}
		if n < batch {
			return
		}
	}
}
