//go:build !unix

package shelljob

import (
	"os"
	"os/exec"
)

// Without process groups only the command itself can be stopped; what it
// started may outlive it.

func startInGroup(*exec.Cmd) {}

func terminateGroup(p *os.Process) { _ = p.Kill() }

func killGroup(p *os.Process) { _ = p.Kill() }

func exitSignal(*os.ProcessState) os.Signal { return nil }
