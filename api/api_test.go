package api

import "testing"

// TestRoleIncludes checks every pair of roles, and that unknown roles allow
// nothing.
func TestRoleIncludes(t *testing.T) {
	t.Parallel()
	roles := []Role{RoleViewer, RoleOperator, RoleAdmin, "root", ""}
	want := map[[2]Role]bool{
		{RoleViewer, RoleViewer}:     true,
		{RoleOperator, RoleViewer}:   true,
		{RoleOperator, RoleOperator}: true,
		{RoleAdmin, RoleViewer}:      true,
		{RoleAdmin, RoleOperator}:    true,
		{RoleAdmin, RoleAdmin}:       true,
	}
	for _, have := range roles {
		for _, need := range roles {
			if got := have.Includes(need); got != want[[2]Role{have, need}] {
				t.Errorf("%q.Includes(%q) = %v, want %v", have, need, got, !got)
			}
		}
	}
}
