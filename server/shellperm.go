package server

import (
	"context"
	"errors"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/httpapi"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// Shell jobs run commands on the servers' hosts as the server's user, so
// the role operator is not enough to write them: creating, changing or
// deleting a shell job, or running one with parameters (which its
// templates expand into the command), also needs the shell capability
// (api.User.Shell), which only an admin grants. Running, backfilling,
// retrying, pausing and resuming a shell job as it was saved stay with the
// operator role. Calls that do not come through the API (a program
// embedding the server) are trusted.

// shellCaller returns the API caller when it lacks the shell capability,
// and nil when the call may touch shell jobs.
func shellCaller(ctx context.Context) *api.User {
	u, ok := httpapi.Caller(ctx)
	if !ok || u.CanShell() {
		return nil
	}
	return u
}

// denyShell is the error of a caller without the shell capability.
func denyShell(u *api.User, doing string, key chime.JobKey) error {
	return httpjson.Errorf(api.CodePermissionDenied, "",
		"%s shell job %s/%s needs the shell capability, which %s does not have; an admin grants it (chime users set-shell %s yes)",
		doing, key.Group, key.Name, u.Name, u.Name)
}

// checkShellWrite refuses a write to the job key, which is to have type
// typ, by a caller without the shell capability when the job is or was a
// shell job. It reads the stored job only for such a caller.
func (s *Server) checkShellWrite(ctx context.Context, key chime.JobKey, typ, doing string) error {
	if typ == typeShell && !s.cfg.EnableShellJobs {
		// No capability would let it run here: say so first.
		return errShellDisabled()
	}
	u := shellCaller(ctx)
	if u == nil {
		return nil
	}
	if typ == typeShell {
		return denyShell(u, doing, key)
	}
	d, err := s.sched.Job(ctx, key)
	switch {
	case errors.Is(err, chime.ErrJobNotFound):
		return nil
	case err != nil:
		return err
	case d.Type == typeShell:
		return denyShell(u, doing, key)
	}
	return nil
}
