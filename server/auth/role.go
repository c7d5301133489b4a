package auth

import "github.com/chime-scheduler/chime/api"

// lesser returns the lower of two roles.
func lesser(a, b api.Role) api.Role {
	if !a.Valid() || b.Includes(a) {
		return a
	}
	return b
}
