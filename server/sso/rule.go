package sso

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/chime-scheduler/chime/api"
)

// Rule maps a group of the identity provider to a chime role.
type Rule struct {
	// Group is the group, as the groups claim names it; "*" matches every
	// user.
	Group string
	// Role is the role the group's members get.
	Role api.Role
	// Scopes, when set, limit Role to the job groups these patterns match
	// (api.User.Scopes); only an operator may be scoped.
	Scopes []string
}

// String renders the rule as ParseRule reads it.
func (r Rule) String() string {
	s := "group " + strconv.Quote(r.Group) + " -> " + string(r.Role)
	if len(r.Scopes) > 0 {
		s += " of " + strings.Join(r.Scopes, ", ")
	}
	return s
}

// ruleSyntax is a rule: group "name" -> role [of pattern[, pattern…]].
var ruleSyntax = regexp.MustCompile(`^\s*group\s+("(?:[^"\\]|\\.)*"|\S+)\s*->\s*(\w+)(?:\s+of\s+(.+?))?\s*$`)

// ParseRule reads a role mapping rule:
//
//	group "ops" -> admin
//	group "billing-team" -> operator of billing.*
//	group "data" -> operator of etl reports.*
//	group "*" -> viewer
//
// The group may go unquoted when it has no space. Several job-group
// patterns are separated by spaces or commas (in a flag or an
// environment variable, whose values commas split, by spaces). An error
// names what is wrong with the rule.
func ParseRule(s string) (Rule, error) {
	m := ruleSyntax.FindStringSubmatch(s)
	if m == nil {
		return Rule{}, fmt.Errorf("role mapping %q: want the form: group \"NAME\" -> ROLE [of JOB-GROUP-PATTERN, …]", s)
	}
	group := m[1]
	if strings.HasPrefix(group, `"`) {
		g, err := strconv.Unquote(group)
		if err != nil {
			return Rule{}, fmt.Errorf("role mapping %q: group %s: %w", s, group, err)
		}
		group = g
	}
	r := Rule{Group: group, Role: api.Role(m[2])}
	if m[3] != "" {
		r.Scopes = strings.FieldsFunc(m[3], func(c rune) bool { return c == ',' || c == ' ' || c == '\t' })
	}
	if err := r.validate(); err != nil {
		return Rule{}, fmt.Errorf("role mapping %q: %w", s, err)
	}
	return r, nil
}

// validate checks a rule's fields.
func (r Rule) validate() error {
	if r.Group == "" {
		return fmt.Errorf("the group is empty")
	}
	if !r.Role.Valid() {
		return fmt.Errorf("unknown role %q: want viewer, operator or admin", r.Role)
	}
	if len(r.Scopes) > 0 && r.Role != api.RoleOperator {
		return fmt.Errorf("only an operator can be limited to job groups, and this rule gives %s", r.Role)
	}
	if len(r.Scopes) > api.MaxScopes {
		return fmt.Errorf("%d job-group patterns; at most %d are allowed", len(r.Scopes), api.MaxScopes)
	}
	for _, p := range r.Scopes {
		if err := api.ValidateScope(p); err != nil {
			return err
		}
	}
	return nil
}

// NoRoleError refuses a user whose groups no rule maps to a role.
type NoRoleError struct {
	// User and Groups are the user's name and groups.
	User   string
	Groups []string
}

func (e *NoRoleError) Error() string {
	groups := "no groups"
	if len(e.Groups) > 0 {
		groups = "groups " + strings.Join(e.Groups, ", ")
	}
	return fmt.Sprintf("%s (%s) has no role in chime: no role mapping matches; an admin adds one to the server's configuration", e.User, groups)
}

// mapRole returns the role and scopes rules give a user with groups: the
// highest role of the rules that match, unscoped if any rule granting it
// is, else limited to the union of their scopes. No rule matching is a
// *NoRoleError.
func mapRole(rules []Rule, user string, groups []string) (api.Role, []string, error) {
	var (
		role     api.Role
		scopes   []string
		unscoped bool
	)
	for _, r := range rules {
		if r.Group != "*" && !slices.Contains(groups, r.Group) {
			continue
		}
		switch {
		case role == "" || !role.Includes(r.Role):
			role, scopes, unscoped = r.Role, nil, false
		case r.Role != role:
			continue // a lower role than one already granted
		}
		if len(r.Scopes) == 0 {
			unscoped = true
		}
		for _, p := range r.Scopes {
			if !slices.Contains(scopes, p) {
				scopes = append(scopes, p)
			}
		}
	}
	if role == "" {
		return "", nil, &NoRoleError{User: user, Groups: groups}
	}
	if unscoped {
		scopes = nil
	}
	return role, scopes, nil
}
