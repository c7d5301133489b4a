package api

import (
	"fmt"
	"path"
	"strings"
)

// MaxScopes bounds how many job-group patterns one user may carry.
const MaxScopes = 32

// ValidateScope reports whether pattern is a job-group pattern a user's
// Scopes may hold: a glob in the syntax of Go's path.Match ("billing",
// "billing.*", "team-?"), not empty, at most 200 bytes, without '/' or
// spaces at either end (a job group has neither).
func ValidateScope(pattern string) error {
	switch {
	case pattern == "":
		return fmt.Errorf("an empty job-group pattern matches no group")
	case len(pattern) > 200:
		return fmt.Errorf("job-group pattern %.20q… is %d bytes long; at most 200 are allowed", pattern, len(pattern))
	case strings.ContainsRune(pattern, '/'):
		return fmt.Errorf("job-group pattern %q contains '/', which no job group has", pattern)
	case strings.TrimSpace(pattern) != pattern:
		return fmt.Errorf("job-group pattern %q starts or ends with a space", pattern)
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("job-group pattern %q is not a valid glob: %w", pattern, err)
	}
	return nil
}

// ScopeMatches reports whether the job group matches pattern (a glob of
// Go's path.Match: '*' any run of characters, '?' one, [a-z] a class).
// A malformed pattern matches nothing.
func ScopeMatches(pattern, group string) bool {
	ok, err := path.Match(pattern, group)
	return err == nil && ok
}

// Scoped reports whether u's role applies only to the job groups its
// Scopes match. An unscoped user has its role everywhere.
func (u *User) Scoped() bool { return u != nil && len(u.Scopes) > 0 }

// MayChangeGroup reports whether u's role reaches job group: true for an
// unscoped user, and for a scoped one when a pattern of Scopes matches.
// Outside its scopes a scoped user acts as a viewer.
func (u *User) MayChangeGroup(group string) bool {
	if !u.Scoped() {
		return true
	}
	for _, p := range u.Scopes {
		if ScopeMatches(p, group) {
			return true
		}
	}
	return false
}

// ScopeList is Scopes as one readable string, "billing.*, payroll".
func (u *User) ScopeList() string { return strings.Join(u.Scopes, ", ") }
