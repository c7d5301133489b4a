package cluster

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// goroutine the code starts must be stopped by its owner.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
