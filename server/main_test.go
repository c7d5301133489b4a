package server

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// goroutine the server starts must be stopped by Close or Shutdown.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
