package auth

import "github.com/chime-scheduler/chime/api"

// rank orders the roles: each may do everything the ones below it may.
// Unknown roles rank 0 and are allowed nothing.
func rank(r api.Role) int {
	switch r {
	case api.RoleViewer:
		return 1
	case api.RoleOperator:
		return 2
	case api.RoleAdmin:
		return 3
	default:
		return 0
	}
}

// Allows reports whether a caller with role have may use what needs role
// need. An unknown role, on either side, allows nothing.
func Allows(have, need api.Role) bool {
	h, n := rank(have), rank(need)
	return h > 0 && n > 0 && h >= n
}

// lesser returns the lower of two roles.
func lesser(a, b api.Role) api.Role {
	if rank(a) <= rank(b) {
		return a
	}
	return b
}
