package chime_test

import (
	"fmt"
	"regexp"

	"github.com/chime-scheduler/chime"
)

// NewExecutionID names a run in the scheduler's format.
func ExampleNewExecutionID() {
	id := chime.NewExecutionID()
	fmt.Println(regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id))
	// Output: true
}
