package server

import (
	"context"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/history"
)

// Audit actions the server records; package auth records the user and
// token ones (auth.ActionUserCreate…), package secret the secret ones.
const (
	auditJobCreate      history.AuditAction = "job.create"
	auditJobUpdate      history.AuditAction = "job.update"
	auditJobDelete      history.AuditAction = "job.delete"
	auditJobPause       history.AuditAction = "job.pause"
	auditJobResume      history.AuditAction = "job.resume"
	auditJobRun         history.AuditAction = "job.run"
	auditJobBackfill    history.AuditAction = "job.backfill"
	auditJobRollback    history.AuditAction = "job.rollback"
	auditCalendarCreate history.AuditAction = "calendar.create"
	auditCalendarUpdate history.AuditAction = "calendar.update"
	auditCalendarDelete history.AuditAction = "calendar.delete"
	auditAlertsUpdate   history.AuditAction = "alerts.update"
	auditAlertsTest     history.AuditAction = "alerts.test"
	auditExecutionRetry history.AuditAction = "execution.retry"
	auditExecutionKill  history.AuditAction = "execution.kill"
	// auditExecutionRerunFailed: the failed items of a sharded firing
	// were re-run.
	auditExecutionRerunFailed history.AuditAction = "execution.rerun_failed"
)

// audit records that actor did action to target. A failure is logged, not
// returned: the change stands, and an error would tell the client it did
// not.
func (s *Server) audit(ctx context.Context, actor string, action history.AuditAction, target string, detail map[string]any) {
	rec, done := recordCtx(ctx)
	defer done()
	if err := s.history.RecordAudit(rec, &history.AuditEntry{
		Time: s.now(), Actor: actor, Action: action, Target: target, Detail: detail,
	}); err != nil {
		s.log.Error("cannot record an audit entry", "actor", actor, "action", string(action), "target", target, "error", err)
	}
}

// auditAll records entries in the audit log in one write, as audit does
// each: a batch of jobs created gets one round trip, not one a job.
func (s *Server) auditAll(ctx context.Context, entries []*history.AuditEntry) {
	rec, done := recordCtx(ctx)
	defer done()
	if err := s.history.RecordAudits(rec, entries); err != nil {
		s.log.Error("cannot record audit entries", "entries", len(entries), "error", err)
	}
}

// ListAudit returns a page of the audit log, newest first.
func (s *Server) ListAudit(ctx context.Context, q api.AuditQuery) (*api.AuditList, error) {
	page, err := s.history.ListAudit(ctx, &history.AuditQuery{Actor: q.Actor, Target: q.Target, Cursor: q.Cursor, Limit: q.Limit})
	if err != nil {
		return nil, historyErr(err)
	}
	out := &api.AuditList{Entries: make([]api.AuditEntry, 0, len(page.Entries)), Next: page.Next}
	for _, e := range page.Entries {
		out.Entries = append(out.Entries, api.AuditEntry{
			ID: e.ID, Time: e.Time, Actor: e.Actor, Action: string(e.Action), Target: e.Target, Detail: e.Detail,
		})
	}
	return out, nil
}

// auditRecorder records the user and token changes of package auth in the
// history's audit log.
type auditRecorder struct{ h *history.History }

// RecordAudit records that actor did action to target.
func (a auditRecorder) RecordAudit(ctx context.Context, actor, action, target string, detail map[string]any) error {
	return a.h.RecordAudit(ctx, &history.AuditEntry{
		Time: time.Now().UTC(), Actor: actor, Action: history.AuditAction(action), Target: target, Detail: detail,
	})
}
