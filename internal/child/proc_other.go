//go:build !linux

package child

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr has no process group or death signal outside Linux: the children fork
// nothing, so killing the process is enough.
func sysProcAttr(syscall.Signal) *syscall.SysProcAttr { return nil }

// killGroup kills p; a process already gone is not an error.
func killGroup(p *os.Process) {
	_ = p.Kill()
}

// killOrphans has nothing to do without process groups.
func killOrphans(int) {}

// terminate sends SIGTERM to p; where there are no signals (Windows) it fails, and Stop
// kills p instead.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// GroupAlive says whether the process pid still exists.
func GroupAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return !errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}
