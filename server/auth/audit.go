package auth

import (
	"context"
	"log/slog"
)

// Audit actions the service records.
const (
	ActionUserCreate  = "user.create"
	ActionUserUpdate  = "user.update"
	ActionUserDelete  = "user.delete"
	ActionTokenCreate = "token.create"
	ActionTokenDelete = "token.delete"
)

// AuditRecorder records who changed what. The server's execution history
// implements it.
type AuditRecorder interface {
	// RecordAudit records that actor did action to target; detail holds
	// what changed, never a secret.
	RecordAudit(ctx context.Context, actor, action, target string, detail map[string]any) error
}

// audit records a change that has been made. A failure to record it is
// logged at Error rather than returned: the change stands, and an error
// would tell the client it did not.
func (s *Service) audit(ctx context.Context, actor, action, target string, detail map[string]any) {
	if s.opts.Audit == nil {
		return
	}
	if err := s.opts.Audit.RecordAudit(context.WithoutCancel(ctx), actor, action, target, detail); err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "recording an audit entry failed",
			slog.String("actor", actor), slog.String("action", action), slog.String("target", target),
			slog.Any("error", err))
	}
}
