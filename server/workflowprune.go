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
	s.pruneRetained(ctx, now, "the old workflow instances", s.workflows.Prune)
}

// pruneRetained calls prune with the cut at the history's retention
// (Config.Retention.MaxAge before now), in batches until one comes back
// short, and logs a failure as a warning naming what it prunes. A
// retention of zero prunes nothing.
func (s *Server) pruneRetained(ctx context.Context, now time.Time, what string, prune func(context.Context, time.Time, int) (int, error)) {
	if s.cfg.Retention.MaxAge <= 0 {
		return
	}
	const batch = 500
	for {
		n, err := prune(ctx, now.Add(-s.cfg.Retention.MaxAge), batch)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("cannot prune "+what, "error", err)
			}
			return
		}
		if n < batch {
			return
		}
	}
}
