package server

import (
	"context"

	"github.com/chime-scheduler/chime/api"
)

// SetPassword sets the password of the user named user and ends the
// user's sessions, as an admin's PUT /api/v1/users/{name} does, for a
// program that has the database but no login: `chime users passwd
// --database-url` recovers a lost admin password with it. actor is who the
// audit log records. The error is an *api.Error naming the field for an
// unknown user or a password that is too short or too long, and nothing
// changes then.
func (s *Server) SetPassword(ctx context.Context, actor, user, password string) error {
	if password == "" {
		return invalidf("password", "required")
	}
	_, err := s.auth.UpdateUser(ctx, actor, api.User{Name: user, Password: password})
	return err
}
