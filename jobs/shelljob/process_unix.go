//go:build unix

package shelljob

import (
	"os"
	"os/exec"
	"syscall"
)

// startInGroup makes the command the leader of a new process group, whose
// id is the command's pid, so that it and every process it starts can be
// signalled together, and, where the OS allows, has it killed when the
// node's process dies (see dieWithNode).
func startInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithNode(cmd.SysProcAttr)
}

// terminateGroup asks every process in p's group to stop. An error means
// the group is already gone.
func terminateGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

// killGroup kills every process in p's group. An error means the group is
// already gone.
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }

// exitSignal returns the signal that ended a process, or nil.
func exitSignal(ps *os.ProcessState) os.Signal {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return nil
}
