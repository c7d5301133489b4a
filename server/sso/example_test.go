package sso_test

import (
	"fmt"

	"github.com/chime-scheduler/chime/server/sso"
)

// ExampleParseRule reads the role mapping of a server's configuration.
func ExampleParseRule() {
	for _, s := range []string{
		`group "ops" -> admin`,
		`group "billing-team" -> operator of billing.* payroll`,
		`group "*" -> viewer`,
		`group "ops" -> admin of billing.*`,
	} {
		r, err := sso.ParseRule(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%s: role %s, job groups %q\n", r.Group, r.Role, r.Scopes)
	}
	// Output:
	// ops: role admin, job groups []
	// billing-team: role operator, job groups ["billing.*" "payroll"]
	// *: role viewer, job groups []
	// error: role mapping "group \"ops\" -> admin of billing.*": only an operator can be limited to job groups, and this rule gives admin
}
