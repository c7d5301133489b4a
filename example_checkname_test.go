package chime_test

import (
	"fmt"
	"strings"

	"github.com/chime-scheduler/chime"
)

// CheckName tells a name every store keeps from one none can.
func ExampleCheckName() {
	fmt.Println(chime.CheckName("JobDetail.Key.Name", "nightly-report"))
	fmt.Println(chime.CheckName("JobDetail.Key.Name", strings.Repeat("x", chime.MaxKeyLength+1)))
	// Output:
	// <nil>
	// chime: JobDetail.Key.Name: is 201 characters long; at most 200 are allowed
}
