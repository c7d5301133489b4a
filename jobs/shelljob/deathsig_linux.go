package shelljob

import "syscall"

// dieWithNode asks Linux to SIGKILL the command when the node's process
// dies (PR_SET_PDEATHSIG), so that a node killed with kill -9 does not
// leave its shell jobs running while their recovered attempts run
// elsewhere. The signal reaches the command itself, which keeps it across
// exec; processes the command started in the background are not its
// signal's targets and outlive it (see the package documentation).
//
// Linux sends the signal when the thread that started the command exits,
// not only the process; the Go runtime does not end its threads while the
// process lives, except one locked by a goroutine that exits, which Run
// never does.
func dieWithNode(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
