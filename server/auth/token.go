package auth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// tokenTarget names a token in audit entries.
func tokenTarget(id string) string { return "tokens/" + id }

// CreateToken creates an API token and returns it with its secret, which
// is shown this once: only its SHA-256 is stored. The token acts for its
// User (defaults to actor), deleted with it, with the lower of its own
// Role and the user's current one; Role defaults to the user's, and may
// not exceed it. Shell gives the token the shell capability, which its
// user must have; it acts with it only while the user still does.
// Expires, if set, must be in the future. A taken name is a conflict.
func (s *Service) CreateToken(ctx context.Context, actor string, t api.Token) (*api.Token, error) {
	if e := validateTokenName(t.Name); e != nil {
		return nil, e
	}
	executor := t.Role == api.RoleExecutor
	if executor {
		if e := validateGroups(t.Groups); e != nil {
			return nil, e
		}
		if t.Shell {
			return nil, httpjson.Errorf(api.CodeInvalidArgument, "shell", "a token of role executor cannot have the shell capability")
		}
	} else {
		if e := validateRole(t.Role, false); e != nil {
			return nil, e
		}
		if len(t.Groups) > 0 {
			return nil, httpjson.Errorf(api.CodeInvalidArgument, "groups", "only a token of role executor serves executor groups")
		}
	}
	if t.User == "" {
		t.User = actor
	}
	if e := validateUserName("user", t.User); e != nil {
		return nil, e
	}
	now := s.now()
	if t.Expires != nil && !t.Expires.After(now) {
		return nil, httpjson.Errorf(api.CodeInvalidArgument, "expires", "%s is not in the future", t.Expires.Format(time.RFC3339))
	}
	var (
		owner      api.Role
		ownerShell bool
	)
	err := s.db.QueryRowContext(ctx, s.q.userGet, s.sched, t.User).Scan(&owner, new(string), &ownerShell)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, httpjson.Errorf(api.CodeInvalidArgument, "user", "no user named %q", t.User)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: reading user %q: %w", t.User, err)
	}
	if t.Role == "" {
		t.Role = owner
	}
	if executor && owner != api.RoleAdmin {
		return nil, httpjson.Errorf(api.CodeInvalidArgument, "role",
			"a token of role executor must belong to an admin; user %q is %s", t.User, owner)
	}
	if !executor && !owner.Includes(t.Role) {
		return nil, httpjson.Errorf(api.CodeInvalidArgument, "role",
			"%s exceeds the role of user %q (%s)", t.Role, t.User, owner)
	}
	if t.Shell && !ownerShell {
		return nil, httpjson.Errorf(api.CodeInvalidArgument, "shell",
			"user %q does not have the shell capability, so neither can the token; an admin grants it to the user first", t.User)
	}
	secret := TokenPrefix + randomToken()
	out := api.Token{ID: randomID(), Name: t.Name, Role: t.Role, User: t.User, Shell: t.Shell, Groups: t.Groups, Secret: secret}
	created := instant(nanos(now))
	out.Created = &created
	var expires sql.NullInt64
	if t.Expires != nil {
		expires = sql.NullInt64{Int64: nanos(*t.Expires), Valid: true}
		out.Expires = nullInstant(expires)
	}
	_, err = s.db.ExecContext(ctx, s.q.tokenInsert, s.sched, out.ID, out.Name, string(out.Role), out.User,
		hashSecret(secret), nanos(now), expires, out.Shell, groupsArg(out.Groups))
	if s.st.IsUniqueViolation(err) {
		// The ID is 64 random bits: the clash is the name's.
		return nil, httpjson.Errorf(api.CodeConflict, "name", "a token named %q already exists", t.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: creating token %q: %w", t.Name, err)
	}
	detail := map[string]any{"name": out.Name, "role": out.Role, "user": out.User}
	if out.Shell {
		detail["shell"] = true
	}
	if len(out.Groups) > 0 {
		detail["groups"] = out.Groups
	}
	if out.Expires != nil {
		detail["expires"] = out.Expires.Format(time.RFC3339)
	}
	s.audit(ctx, actor, ActionTokenCreate, tokenTarget(out.ID), detail)
	return &out, nil
}

// ListTokens returns every API token, by name, without secrets.
func (s *Service) ListTokens(ctx context.Context) ([]api.Token, error) {
	rows, err := s.db.QueryContext(ctx, s.q.tokenList, s.sched)
	if err != nil {
		return nil, fmt.Errorf("auth: listing tokens: %w", err)
	}
	defer rows.Close()
	tokens := []api.Token{}
	for rows.Next() {
		var (
			t                 api.Token
			created           int64
			lastUsed, expires sql.NullInt64
			groups            sql.NullString
		)
		if err := rows.Scan(&t.ID, &t.Name, &t.Role, &t.Shell, &t.User, &created, &lastUsed, &expires, &groups); err != nil {
			return nil, fmt.Errorf("auth: listing tokens: %w", err)
		}
		if t.Groups, err = parseGroups(groups); err != nil {
			return nil, fmt.Errorf("auth: listing tokens: %w", err)
		}
		c := instant(created)
		t.Created = &c
		t.LastUsed = nullInstant(lastUsed)
		t.Expires = nullInstant(expires)
		tokens = append(tokens, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: listing tokens: %w", err)
	}
	return tokens, nil
}

// DeleteToken revokes an API token: requests carrying it are refused from
// then on, on this node; an executor token may still be trusted for up to
// a second on the other nodes of a cluster (see executorTokenFor).
func (s *Service) DeleteToken(ctx context.Context, actor, id string) error {
	defer s.executors.forget()
	if id == "" {
		return httpjson.Errorf(api.CodeInvalidArgument, "id", "required")
	}
	var name string
	err := s.db.QueryRowContext(ctx, s.q.tokenName, s.sched, id).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return httpjson.Errorf(api.CodeNotFound, "id", "no token with ID %q", id)
	}
	if err != nil {
		return fmt.Errorf("auth: reading token %s: %w", id, err)
	}
	res, err := s.db.ExecContext(ctx, s.q.tokenDelete, s.sched, id)
	if err != nil {
		return fmt.Errorf("auth: deleting token %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return httpjson.Errorf(api.CodeNotFound, "id", "no token with ID %q", id) // deleted meanwhile
	}
	s.audit(ctx, actor, ActionTokenDelete, tokenTarget(id), map[string]any{"name": name})
	return nil
}

// Limits of a token's executor groups.
const (
	maxGroups     = 20
	maxGroupBytes = 200
)

// validateGroups checks the groups of a token of role executor.
func validateGroups(groups []string) *api.Error {
	if len(groups) == 0 || len(groups) > maxGroups {
		return httpjson.Errorf(api.CodeInvalidArgument, "groups", "has %d groups; a token of role executor serves 1 to %d", len(groups), maxGroups)
	}
	for i, g := range groups {
		field := fmt.Sprintf("groups[%d]", i)
		switch {
		case g == "" || len(g) > maxGroupBytes:
			return httpjson.Errorf(api.CodeInvalidArgument, field, "want 1 to %d bytes", maxGroupBytes)
		case !utf8.ValidString(g) || strings.IndexFunc(g, unicode.IsControl) >= 0 || strings.TrimSpace(g) != g:
			return httpjson.Errorf(api.CodeInvalidArgument, field, "%q: want UTF-8 without control characters or surrounding spaces", g)
		}
	}
	return nil
}

// groupsArg is the stored form of a token's groups: JSON, or NULL for
// none.
func groupsArg(groups []string) any {
	if len(groups) == 0 {
		return nil
	}
	b, _ := json.Marshal(groups) // strings always encode
	return string(b)
}

// parseGroups reads a token's stored groups.
func parseGroups(s sql.NullString) ([]string, error) {
	if !s.Valid || s.String == "" {
		return nil, nil
	}
	var groups []string
	if err := json.Unmarshal([]byte(s.String), &groups); err != nil {
		return nil, fmt.Errorf("auth: reading a token's groups: %w", err)
	}
	return groups, nil
}
