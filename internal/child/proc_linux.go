//go:build linux

package child

import (
	"os"
	"syscall"
)

// sysProcAttr puts a child in its own process group, so that stopping it stops
// everything it started and Ctrl-C at a terminal reaches the parent alone (which stops
// its children in order), and has the kernel kill it if the parent dies first (a panic,
// `go test -timeout`), when no cleanup runs.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to p's process group; a group already gone is not an error.
func killGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}

// terminate sends SIGTERM to p.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// GroupAlive says whether any process of the group led by pid still exists.
func GroupAlive(pid int) bool {
	return syscall.Kill(-pid, 0) != syscall.ESRCH
}
