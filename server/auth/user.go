package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"golang.org/x/crypto/bcrypt"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// BootstrapUser is the name of the first admin Bootstrap creates.
const BootstrapUser = "admin"

// bootstrapActor is the actor of the first admin's audit entry: no one
// created it.
const bootstrapActor = "system"

// bootstrapPasswordLength is the length of the first admin's password.
const bootstrapPasswordLength = 20

// Bootstrap creates the first user, an admin named "admin" with a random
// 20-character password, when there is no user at all, and returns the
// password once: it is stored only as a bcrypt hash. When users exist it
// does nothing and returns created false.
//
// Nodes that start together against one database may all call it: exactly
// one creates the user (the table's primary key decides) and the others
// return created false.
func (s *Service) Bootstrap(ctx context.Context) (password string, created bool, err error) {
	password = randomPassword(bootstrapPasswordLength)
	created, err = s.bootstrap(ctx, password)
	if !created {
		password = ""
	}
	return password, created, err
}

// BootstrapWithPassword is Bootstrap with the first admin's password
// given, such as one an operator set in the server's configuration. A
// password ValidatePassword refuses is an error, and creates no user.
func (s *Service) BootstrapWithPassword(ctx context.Context, password string) (created bool, err error) {
	if e := validatePassword(password); e != nil {
		return false, fmt.Errorf("auth: the first admin's password: %w", e)
	}
	return s.bootstrap(ctx, password)
}

// bootstrap creates the first admin with password when there is no user.
func (s *Service) bootstrap(ctx context.Context, password string) (created bool, err error) {
	var n int
	if err := s.db.QueryRowContext(ctx, s.q.userCount, s.sched).Scan(&n); err != nil {
		return false, fmt.Errorf("auth: counting users: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.opts.BcryptCost)
	if err != nil {
		return false, fmt.Errorf("auth: hashing the first admin's password: %w", err)
	}
	now := nanos(s.now())
	_, err = s.db.ExecContext(ctx, s.q.userInsert, s.sched, BootstrapUser, string(api.RoleAdmin), string(hash), now, now, false, "")
	if s.st.IsUniqueViolation(err) {
		return false, nil // another node created it first
	}
	if err != nil {
		return false, fmt.Errorf("auth: creating the first admin: %w", err)
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "created the first admin user", slog.String("user", BootstrapUser))
	s.audit(ctx, bootstrapActor, ActionUserCreate, userTarget(BootstrapUser), map[string]any{"role": api.RoleAdmin, "bootstrap": true})
	return true, nil
}

// userTarget names a user in audit entries.
func userTarget(name string) string { return "users/" + name }

// ListUsers returns every user, by name, without passwords.
func (s *Service) ListUsers(ctx context.Context) ([]api.User, error) {
	rows, err := s.db.QueryContext(ctx, s.q.userList, s.sched)
	if err != nil {
		return nil, fmt.Errorf("auth: listing users: %w", err)
	}
	defer rows.Close()
	users := []api.User{}
	for rows.Next() {
		var (
			u       api.User
			shell   bool
			sso     bool
			scopes  string
			created int64
		)
		if err := rows.Scan(&u.Name, &u.Role, &shell, &created, &scopes, &sso); err != nil {
			return nil, fmt.Errorf("auth: listing users: %w", err)
		}
		t := instant(created)
		u.Created = &t
		u.Shell = &shell
		u.Scopes = splitScopes(scopes)
		if sso {
			u.Source = SourceSSO
		}
		users = append(users, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: listing users: %w", err)
	}
	return users, nil
}

// CreateUser creates a user with a name, a role, a password of at least
// MinPasswordLength characters and, when Shell is true, the shell
// capability, and returns it without the password. A taken name is a
// conflict.
func (s *Service) CreateUser(ctx context.Context, actor string, u api.User) (*api.User, error) {
	if e := validateUserName("name", u.Name); e != nil {
		return nil, e
	}
	if e := validateRole(u.Role, true); e != nil {
		return nil, e
	}
	if e := validatePassword(u.Password); e != nil {
		return nil, e
	}
	if e := validateScopes(u.Role, u.Scopes); e != nil {
		return nil, e
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(u.Password), s.opts.BcryptCost)
	if err != nil {
		return nil, fmt.Errorf("auth: hashing the password of user %q: %w", u.Name, err)
	}
	now := s.now()
	shell := u.CanShell()
	_, err = s.db.ExecContext(ctx, s.q.userInsert, s.sched, u.Name, string(u.Role), string(hash), nanos(now), nanos(now), shell, joinScopes(u.Scopes))
	if s.st.IsUniqueViolation(err) {
		return nil, httpjson.Errorf(api.CodeConflict, "name", "a user named %q already exists", u.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: creating user %q: %w", u.Name, err)
	}
	detail := map[string]any{"role": u.Role}
	if shell {
		detail["shell"] = true
	}
	if len(u.Scopes) > 0 {
		detail["scopes"] = u.Scopes
	}
	s.audit(ctx, actor, ActionUserCreate, userTarget(u.Name), detail)
	created := instant(nanos(now))
	return &api.User{Name: u.Name, Role: u.Role, Shell: &shell, Scopes: splitScopes(joinScopes(u.Scopes)), Created: &created}, nil
}

// UpdateUser changes a user's role, password, shell capability, job-group
// scopes or several (an empty Role or Password and a nil Shell or Scopes
// keep the current one; an empty, non-nil Scopes clears them) and returns
// the user. A user given a role other than operator loses its scopes. A new password ends every session of the user; the
// user's API tokens stay, and act without the shell capability while the
// user lacks it. The last admin cannot be demoted.
func (s *Service) UpdateUser(ctx context.Context, actor string, u api.User) (*api.User, error) {
	// A change of an owner changes what its executor tokens may do.
	defer s.executors.forget()
	if e := validateUserName("name", u.Name); e != nil {
		return nil, e
	}
	if u.Role == "" && u.Password == "" && u.Shell == nil && u.Scopes == nil {
		return nil, httpjson.Errorf(api.CodeInvalidArgument, "", "nothing to change: set role, password, shell, scopes or several")
	}
	if e := validateRole(u.Role, false); e != nil {
		return nil, e
	}
	var hash []byte
	if u.Password != "" {
		if e := validatePassword(u.Password); e != nil {
			return nil, e
		}
		var err error
		if hash, err = bcrypt.GenerateFromPassword([]byte(u.Password), s.opts.BcryptCost); err != nil {
			return nil, fmt.Errorf("auth: hashing the password of user %q: %w", u.Name, err)
		}
	}
	now := nanos(s.now())
	var out api.User
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		current, admins, err := s.lockUser(ctx, tx, u.Name)
		if err != nil {
			return err
		}
		out = current
		if u.Role != "" && u.Role != current.Role {
			if current.Role == api.RoleAdmin && admins <= 1 {
				return errLastAdmin
			}
			if _, err := tx.ExecContext(ctx, s.q.userSetRole, string(u.Role), now, s.sched, u.Name); err != nil {
				return err
			}
			out.Role = u.Role
		}
		scopes := current.Scopes
		if u.Scopes != nil {
			scopes = u.Scopes
		}
		if out.Role != api.RoleOperator && u.Scopes == nil {
			scopes = nil // a new role of viewer or admin is not limited
		}
		if e := validateScopes(out.Role, scopes); e != nil {
			return e
		}
		if joinScopes(scopes) != joinScopes(current.Scopes) {
			if _, err := tx.ExecContext(ctx, s.q.userSetScopes, joinScopes(scopes), now, s.sched, u.Name); err != nil {
				return err
			}
		}
		out.Scopes = splitScopes(joinScopes(scopes))
		if u.Shell != nil && *u.Shell != current.CanShell() {
			if _, err := tx.ExecContext(ctx, s.q.userSetShell, *u.Shell, now, s.sched, u.Name); err != nil {
				return err
			}
			out.Shell = u.Shell
		}
		if hash != nil {
			if _, err := tx.ExecContext(ctx, s.q.userSetPassword, string(hash), now, s.sched, u.Name); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.q.sessionDeleteUser, s.sched, u.Name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.userError("updating", u.Name, err)
	}
	detail := map[string]any{}
	if u.Role != "" {
		detail["role"] = out.Role
	}
	if u.Shell != nil {
		detail["shell"] = out.CanShell()
	}
	if hash != nil {
		detail["password_changed"] = true
	}
	if u.Scopes != nil {
		detail["scopes"] = out.Scopes
	}
	s.audit(ctx, actor, ActionUserUpdate, userTarget(u.Name), detail)
	return &out, nil
}

// DeleteUser deletes a user with its sessions and API tokens. The last
// admin cannot be deleted.
func (s *Service) DeleteUser(ctx context.Context, actor, name string) error {
	// A change of an owner changes what its executor tokens may do.
	defer s.executors.forget()
	if e := validateUserName("name", name); e != nil {
		return e
	}
	var role api.Role
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		u, admins, err := s.lockUser(ctx, tx, name)
		if err != nil {
			return err
		}
		role = u.Role
		if role == api.RoleAdmin && admins <= 1 {
			return errLastAdmin
		}
		for _, q := range []string{s.q.sessionDeleteUser, s.q.tokenDeleteUser, s.q.userDelete} {
			if _, err := tx.ExecContext(ctx, q, s.sched, name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.userError("deleting", name, err)
	}
	s.audit(ctx, actor, ActionUserDelete, userTarget(name), map[string]any{"role": role})
	return nil
}

// errNoUser is returned inside user transactions for a missing user.
var errNoUser = errors.New("no such user")

// errLastAdmin is returned inside user transactions that would leave no
// admin.
var errLastAdmin = errors.New("last admin")

// lockUser locks the rows of every admin and of the named user (see
// queries.userLockAdmins) and returns the user, or errNoUser, and the
// number of admins. The locks last until tx ends.
func (s *Service) lockUser(ctx context.Context, tx *sql.Tx, name string) (u api.User, admins int, err error) {
	rows, err := tx.QueryContext(ctx, s.q.userLockAdmins, s.sched, name)
	if err != nil {
		return u, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			row     api.User
			shell   bool
			scopes  string
			created int64
		)
		if err := rows.Scan(&row.Name, &row.Role, &shell, &created, &scopes); err != nil {
			return u, 0, err
		}
		row.Shell = &shell
		row.Scopes = splitScopes(scopes)
		if row.Role == api.RoleAdmin {
			admins++
		}
		if row.Name == name {
			t := instant(created)
			row.Created = &t
			u = row
		}
	}
	if err := rows.Err(); err != nil {
		return u, 0, err
	}
	if u.Name == "" {
		return u, 0, errNoUser
	}
	return u, admins, nil
}

// userError turns an error of a user transaction into the API's.
func (s *Service) userError(doing, name string, err error) error {
	switch {
	case errors.Is(err, errNoUser):
		return httpjson.Errorf(api.CodeNotFound, "name", "no user named %q", name)
	case errors.Is(err, errLastAdmin) && doing == "deleting":
		return httpjson.Errorf(api.CodeConflict, "",
			"user %q is the last admin and cannot be deleted: make another user admin first", name)
	case errors.Is(err, errLastAdmin):
		return httpjson.Errorf(api.CodeConflict, "role",
			"user %q is the last admin and cannot be demoted: make another user admin first", name)
	default:
		return fmt.Errorf("auth: %s user %q: %w", doing, name, err)
	}
}
