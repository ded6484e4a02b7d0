//go:build !linux

package kubetest

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr has no process group outside Linux: the servers fork nothing, so killing
// the process is enough.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills p; a process already gone is not an error.
func killGroup(p *os.Process) {
	_ = p.Kill()
}

// groupAlive says whether the process pid still exists.
func groupAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return !errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}
