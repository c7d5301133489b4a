package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// SourceSSO is api.User.Source of a user single sign-on created.
const SourceSSO = "sso"

// ActionSSOLogin is the audit action of a sign-on through the identity
// provider: its target is the user, its detail the provider's subject,
// e-mail, issuer, and the role and scopes mapped.
const ActionSSOLogin = "user.sso_login"

// ssoPasswordHash is the password_hash of a user single sign-on created.
// It is no bcrypt hash, so no password matches it: such a user signs in
// only through the identity provider.
const ssoPasswordHash = "sso"

// SSOLogin is a sign-on the identity provider vouched for, with the role
// and scopes the server's role mapping gave it.
type SSOLogin struct {
	// User is the chime user name: created on the first sign-on, its role
	// and scopes replaced on each one after.
	User string
	// Role and Scopes are what the role mapping gave the user.
	Role   api.Role
	Scopes []string
	// Issuer, Subject and Email identify the user at the provider; they
	// go to the audit log.
	Issuer, Subject, Email string
	// ClientAddr is the client's address, for the log.
	ClientAddr string
}

// StartSSOSession starts a session for a user the identity provider
// vouched for, as Login does for a password. The user is created on its
// first sign-on (with no password: it signs in only through the
// provider) and given l.Role and l.Scopes on each, so that a change of
// the user's groups at the provider applies at the next sign-on. A local
// user of the same name is not taken over: that is a conflict. Neither is
// the last admin demoted. Every sign-on is audit-logged.
func (s *Service) StartSSOSession(ctx context.Context, l SSOLogin) (*api.Session, error) {
	// The login may change the user's role, and so its executor tokens.
	defer s.executors.forget()
	if e := validateUserName("user", l.User); e != nil {
		return nil, e
	}
	if e := validateRole(l.Role, true); e != nil {
		return nil, e
	}
	if e := validateScopes(l.Role, l.Scopes); e != nil {
		return nil, e
	}
	now := s.now()
	created := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var role api.Role
		var hash string
		err := tx.QueryRowContext(ctx, s.q.ssoUserGet, s.sched, l.User).Scan(&role, &hash)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			created = true
			_, err = tx.ExecContext(ctx, s.q.ssoUserInsert, s.sched, l.User, string(l.Role),
				nanos(now), nanos(now), joinScopes(l.Scopes))
			return err
		case err != nil:
			return err
		case hash != ssoPasswordHash:
			return httpjson.Errorf(api.CodeConflict, "user",
				"a local user named %q exists; single sign-on does not take over a local account", l.User)
		}
		if role == api.RoleAdmin && l.Role != api.RoleAdmin {
			if _, admins, err := s.lockUser(ctx, tx, l.User); err != nil {
				return err
			} else if admins <= 1 {
				return httpjson.Errorf(api.CodeConflict, "role",
					"user %q is the last admin and the role mapping gives it %s: make another user admin first", l.User, l.Role)
			}
		}
		_, err = tx.ExecContext(ctx, s.q.ssoUserUpdate, string(l.Role), joinScopes(l.Scopes), nanos(now), s.sched, l.User)
		return err
	})
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		s.log.LogAttrs(ctx, slog.LevelWarn, "single sign-on refused", slog.String("user", l.User),
			slog.String("subject", l.Subject), slog.String("reason", apiErr.Message))
		return nil, err
	}
	if s.st.IsUniqueViolation(err) {
		// Two first sign-ons of one user at once: the other created it.
		return nil, httpjson.Errorf(api.CodeConflict, "user", "user %q was being created by another sign-on; sign in again", l.User)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: single sign-on of user %q: %w", l.User, err)
	}
	session, err := s.startSession(ctx, l.User, l.Role, now)
	if err != nil {
		return nil, err
	}
	detail := map[string]any{"issuer": l.Issuer, "subject": l.Subject, "role": l.Role}
	if l.Email != "" {
		detail["email"] = l.Email
	}
	if len(l.Scopes) > 0 {
		detail["scopes"] = l.Scopes
	}
	if created {
		detail["created"] = true
	}
	s.audit(ctx, l.User, ActionSSOLogin, userTarget(l.User), detail)
	s.log.LogAttrs(ctx, slog.LevelInfo, "login", slog.String("user", l.User), slog.String("via", "sso"),
		slog.String("subject", l.Subject), slog.String("role", string(l.Role)),
		slog.String("scopes", strings.Join(l.Scopes, ",")), slog.String("client_addr", l.ClientAddr))
	return session, nil
}

// validateScopes checks a user's job-group scopes: only an operator may
// be scoped, since a viewer reads every group anyway and an admin's work
// (users, tokens, secrets) belongs to no job group.
func validateScopes(role api.Role, scopes []string) *api.Error {
	if len(scopes) == 0 {
		return nil
	}
	if role != api.RoleOperator {
		return httpjson.Errorf(api.CodeInvalidArgument, "scopes",
			"only an operator can be limited to job groups, and the role is %s", role)
	}
	if len(scopes) > api.MaxScopes {
		return httpjson.Errorf(api.CodeInvalidArgument, "scopes", "%d patterns; at most %d are allowed", len(scopes), api.MaxScopes)
	}
	for _, p := range scopes {
		if err := api.ValidateScope(p); err != nil {
			return httpjson.Errorf(api.CodeInvalidArgument, "scopes", "%s", err)
		}
	}
	if n := len(joinScopes(scopes)); n > 2000 {
		return httpjson.Errorf(api.CodeInvalidArgument, "scopes", "are %d bytes long together; at most 2000 are allowed", n)
	}
	return nil
}

// joinScopes is the scopes column's value.
func joinScopes(scopes []string) string { return strings.Join(scopes, "\n") }

// splitScopes reads the scopes column: nil for none.
func splitScopes(col string) []string {
	if col == "" {
		return nil
	}
	return strings.Split(col, "\n")
}
