package server

import (
	"context"
	"errors"

	"github.com/chime-scheduler/chime/server/dispatch"
)

// checkExecutorAdvertised refuses an executor job whose group no executor
// has ever registered in, or whose handler none of the group's has ever
// advertised, naming executor.group or executor.handler, unless the job
// sets executor.allow_unregistered.
func (s *Server) checkExecutorAdvertised(ctx context.Context, p *plan) error {
	if p.executor == nil {
		return nil
	}
	err := s.dispatch.CheckAdvertised(ctx, "executor", *p.executor)
	var fe *dispatch.FieldError
	if errors.As(err, &fe) {
		return invalidf(fe.Field, "%s", fe.Message)
	}
	return err
}
