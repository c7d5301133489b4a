//go:build unix && !linux

package shelljob

import "syscall"

// dieWithNode does nothing: only Linux can signal a process when its
// parent dies. A shell job of a node killed with kill -9 runs on.
func dieWithNode(*syscall.SysProcAttr) {}
